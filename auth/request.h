/* request.h - the body of POST /identity/certificate, Liqo v0.10's wire
 * format (docs/auth.md "Wire format"):
 *   {"cluster":{"clusterID":"...","clusterName":"..."},
 *    "originClusterToken":"...","destinationClusterToken":"...",
 *    "certificateSigningRequest":"<base64 of the PEM CSR>"}
 * As Liqo v0.10.3 (pkg/auth/identityrequest.go): destinationClusterToken is
 * the token of the cluster asked (ours: it is what GetToken() returns and
 * the server checks); originClusterToken is the asking cluster's own token,
 * which the server stores so that it could peer back. Both may be absent
 * (Go's zero value; the origin token is omitempty).
 * Parsing only (pure): the token is compared and the CSR checked elsewhere
 * (token.h, csr_policy.h). Unknown fields are ignored, as Go's decoder does. */
#ifndef TG_AUTH_REQUEST_H
#define TG_AUTH_REQUEST_H

#include <stddef.h>

#include "auth/reason.h"

#define TG_AUTH_MAX_BODY ((size_t)64 << 10)   /* a CSR is ~1 KiB; 413 above */
#define TG_AUTH_MAX_HEAD ((size_t)16 << 10)   /* request line and headers; 431 above */
#define TG_AUTH_MAX_TOKEN 1024                /* longer tokens are not ours: refused unread */
#define TG_AUTH_MAX_CLUSTER_NAME 253
#define TG_AUTH_MAX_CLUSTER_ID 63

typedef struct tg_auth_request {
    char cluster_id[TG_AUTH_MAX_CLUSTER_ID + 1];
    char cluster_name[TG_AUTH_MAX_CLUSTER_NAME + 1];
    char *token;                   /* destinationClusterToken: ours; secret, wiped by clear */
    size_t token_len;
    char *origin_token;            /* originClusterToken: the consumer's own; secret, wiped by clear */
    size_t origin_token_len;
    unsigned char *csr_pem;        /* decoded certificateSigningRequest */
    size_t csr_len;
} tg_auth_request;

/* Parse body[0..len). 0, or -1 with *reason (MalformedRequest or
 * InvalidClusterID) and one line in why saying what was expected; why never
 * quotes the token. out is cleared first and must be cleared after. */
int tg_auth_request_parse(const char *body, size_t len, tg_auth_request *out, tg_auth_reason *reason, char *why,
                          size_t why_len);

void tg_auth_request_clear(tg_auth_request *r);

/* 1 when id is a lowercase UUID (8-4-4-4-12 hex), the shape of the cluster
 * ids Liqo v0.10 generates. The id becomes a Kubernetes user name: by
 * default only such ids are signed, so that a token holder cannot ask for a
 * name like "admin" that the cluster may have bound to other rights. */
int tg_auth_cluster_id_is_uuid(const char *id);

#endif
