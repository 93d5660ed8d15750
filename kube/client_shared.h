/* client_shared.h - what both API clients (client_curl.c over libcurl, client_h1.c
 * over OpenSSL on libuv) need beside their transport: their own copy of the
 * configuration, the bearer token's re-reads, the buffered response body and
 * the Content-Type values. Private to kube/. */
#ifndef TG_KUBE_CLIENT_SHARED_H
#define TG_KUBE_CLIENT_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"

/* A deep copy (the caller may free src). 0, or -1 out of memory. */
int tg_kube_config_copy(tg_kube_config *dst, const tg_kube_config *src);

/* n bytes and a NUL, malloc'd. */
char *tg_kube_memdup_nul(const char *p, size_t n);

typedef struct tg_kube_token {
    char *value;          /* the token read from the file (secret), or NULL */
    uint64_t read_ms;     /* loop time of the last read */
} tg_kube_token;

/* Re-read cfg->token_file when a minute has passed (or force): a failed
 * re-read keeps the last good token. No-op without a token file. */
void tg_kube_token_refresh(tg_kube_token *t, const tg_kube_config *cfg, uv_loop_t *loop, int force);

/* The token to send: the file's, else the configuration's, else NULL. */
const char *tg_kube_token_current(const tg_kube_token *t, const tg_kube_config *cfg);

/* Wipe and free. */
void tg_kube_token_free(tg_kube_token *t);

/* Append n bytes to a buffered response body (kept NUL-terminated), at most
 * max in all. 0, or -1 with *why (over max, out of memory). */
int tg_kube_body_append(char **buf, size_t *len, size_t *cap, size_t max, const char *p, size_t n,
                        const char **why);

/* The Content-Type header's value for a request body. */
const char *tg_kube_content_type_value(tg_kube_content_type ct);

#endif
