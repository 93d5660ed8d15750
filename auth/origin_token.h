/* origin_token.h - after an identity was issued, keep the consumer's own
 * token (originClusterToken), as Liqo v0.10.3's auth service does so that
 * the provider could peer back (docs/auth.md "The consumer's token"): create
 * Secret remote-token-<id> in the token namespace (issue_docs.h), or, when
 * one is there from an earlier identity, replace its token (merge patch).
 * On the loop; the answer to the consumer does not wait for it: the identity
 * is issued whatever happens here, and a failure is logged and counted. */
#ifndef TG_AUTH_ORIGIN_TOKEN_H
#define TG_AUTH_ORIGIN_TOKEN_H

#include <stddef.h>

#include "kube/client.h"

/* ok: 1 stored, 0 not (why says what failed; never the token). */
typedef void (*tg_auth_origin_token_done)(int ok, const char *why, void *data);

/* Start; done is called once, later. -1 when it could not start (done is
 * then not called). The token is copied and wiped after use. */
int tg_auth_origin_token_store(tg_kube_client *c, const char *ns, const char *cluster_id, const char *token,
                               size_t len, tg_auth_origin_token_done done, void *data);

#endif
