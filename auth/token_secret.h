/* token_secret.h - the token the auth server compares against: Secret
 * <namespace>/auth-token, key `token`, read at start and every period after;
 * created with a fresh token (token.h) when absent, so deleting the Secret
 * rotates the token. Until a read succeeds there is no token, and POSTs are
 * answered 503 TokenUnavailable (never "any token goes"). */
#ifndef TG_AUTH_TOKEN_SECRET_H
#define TG_AUTH_TOKEN_SECRET_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "auth/request.h"
#include "kube/client.h"

#define TG_AUTH_TOKEN_SECRET "auth-token"

typedef struct tg_auth_token_secret {
    tg_kube_client *c;
    char path[256];                /* /api/v1/namespaces/<ns>/secrets */
    char ns[64];
    uint64_t period_ms;
    uv_timer_t timer;
    int busy, stopping;
    char token[TG_AUTH_MAX_TOKEN + 1];  /* secret: wiped when replaced */
    size_t len;
    int loaded;
} tg_auth_token_secret;

/* Start reading (the first read at once). 0, or -1 (ns too long). */
int tg_auth_token_secret_start(tg_auth_token_secret *ts, tg_kube_client *c, const char *ns, uint64_t period_ms);

/* The current token, or NULL before the first successful read. */
const char *tg_auth_token_secret_get(const tg_auth_token_secret *ts, size_t *len);

/* Close the timer (the loop finishes the close). */
void tg_auth_token_secret_stop(tg_auth_token_secret *ts);

#endif
