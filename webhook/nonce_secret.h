/* nonce_secret.h - which Secret holds the nonce a Tenant is checked against,
 * and reading it (PROTOCOL.md 3 and 5, step 5). Pure: a Secret object in, the
 * nonce text out; no I/O.
 *
 * The nonce for a Tenant of consumer C in namespace N is the Secret N/liqo-nonce
 * (the name Liqo and `kubectl tenantgate create nonce` give it), labelled
 * liqo.io/nonce=true and liqo.io/remote-cluster-id=C, data key "nonce".
 * Nothing else counts: a Secret with those labels in any other namespace, or
 * under another name, is neither used nor in the way. Whoever may create a
 * Secret somewhere must not be able to choose the nonce a Tenant is signed
 * over, nor hide the real one. */
#ifndef TG_WEBHOOK_NONCE_SECRET_H
#define TG_WEBHOOK_NONCE_SECRET_H

#include <stddef.h>
#include <json-c/json.h>

#include "webhook/lookup.h"

#define TG_NONCE_SECRET_NAME "liqo-nonce"

/* Judge secret (a Secret object, NULL when there is none) as the nonce for
 * (ns, cluster_id). A Secret of another namespace or name is TG_NONCE_ABSENT.
 * On TG_NONCE_FOUND the base64-decoded data.nonce is copied into nonce,
 * NUL-terminated, with its length in *len; it must be non-empty, shorter than
 * TG_LOOKUP_NONCE_MAX and free of NUL bytes. */
tg_nonce_state tg_nonce_secret_read(json_object *secret, const char *ns, const char *cluster_id,
                                    char nonce[TG_LOOKUP_NONCE_MAX], size_t *len);

/* What a nonce Secret says, read once when it is stored (the webhook's cache
 * keeps this beside each Secret), so that each admission judges it without a
 * parse: tg_nonce_secret_read is tg_nonce_digest_new then tg_nonce_digest_read
 * for a Secret of the right namespace and name. Sized to its nonce (a Liqo
 * nonce is tens of bytes, the limit TG_LOOKUP_NONCE_MAX): the cache holds one
 * per consumer. */
typedef struct tg_nonce_digest {
    int labelled;                  /* liqo.io/nonce=true */
    int has_cluster;               /* a liqo.io/remote-cluster-id under TG_LABEL_VALUE_MAX */
    char cluster_id[TG_LABEL_VALUE_MAX];
    tg_nonce_state data;           /* TG_NONCE_FOUND (nonce, len) or TG_NONCE_EMPTY */
    size_t len;                    /* of nonce, 0 unless TG_NONCE_FOUND */
    char nonce[];                  /* len + 1 bytes, NUL-terminated */
} tg_nonce_digest;

/* malloc'd; NULL when out of memory. It holds a secret: free it with
 * tg_nonce_digest_free, which wipes it. */
tg_nonce_digest *tg_nonce_digest_new(json_object *secret);
void tg_nonce_digest_free(tg_nonce_digest *d);
tg_nonce_state tg_nonce_digest_read(const tg_nonce_digest *d, const char *cluster_id,
                                    char nonce[TG_LOOKUP_NONCE_MAX], size_t *len);

/* What was found, as the end of a denial message: "found none", "found it
 * without label liqo.io/nonce=true", ... */
const char *tg_nonce_state_found(tg_nonce_state s);

#endif
