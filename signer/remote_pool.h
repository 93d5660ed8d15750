/* remote_pool.h - the workers' API clients for remote clusters, built from
 * kubeconfig Secrets (the consumer's ControlPlane kubeconfig of a provider).
 *
 * A worker takes a client for one Secret, uses it alone (own-loop tg_api:
 * its own connection, no sharing between threads) and gives it back. Clients
 * are kept per Secret and reused while the Secret's content is the same;
 * when it changes (a renewed or re-issued certificate) or a caller drops the
 * Secret (a 401/403 from the remote), the clients made from the old content
 * are freed as they come back. At most one idle client per worker and Secret.
 * Thread-safe. The kubeconfig is never logged; errors never quote it. */
#ifndef TG_SIGNER_REMOTE_POOL_H
#define TG_SIGNER_REMOTE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "signer/api.h"

typedef struct tg_remote_pool tg_remote_pool;

typedef struct tg_remote_client {
    tg_api *api;
    char key[320];                  /* the Secret: "ns/name" */
    unsigned char digest[32];       /* of the kubeconfig it was made from */
} tg_remote_client;

tg_remote_pool *tg_remote_pool_new(void);
void tg_remote_pool_free(tg_remote_pool *p);

/* SHA-256 of a Secret's kubeconfig bytes: what "changed" means. */
void tg_remote_pool_digest(const void *kubeconfig, size_t len, unsigned char digest[32]);

/* A client for Secret key made from this kubeconfig (YAML or JSON, in
 * memory). Returns 0 with *out filled, or -1 with err (a parse or client
 * error, without key material). */
int tg_remote_pool_take(tg_remote_pool *p, const char *key, const char *kubeconfig, size_t len,
                        tg_remote_client *out, char *err, size_t err_len);

/* Give a client back (kept if its Secret's content is still current). */
void tg_remote_pool_give(tg_remote_pool *p, tg_remote_client *c);

/* Forget what is known of Secret key: idle clients are freed, busy ones
 * when given back. Call on a 401/403 from the remote, or a deleted Secret. */
void tg_remote_pool_drop(tg_remote_pool *p, const char *key);

#endif
