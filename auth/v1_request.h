/* v1_request.h - the bodies of the v1 one-string peering (docs/auth.md "v1
 * one-string peering"), parsed and checked without I/O:
 *   POST /v1/nonce  {"token":"ID.SECRET","clusterID":"<consumer id>"}
 *   POST /v1/tenant {"token":"ID.SECRET","tenant":{<a v1beta1 Tenant>}}
 * The Tenant is not trusted as sent: only its spec is kept, under a name,
 * namespace and label the server sets from spec.clusterID, so that a body
 * cannot place it in another tenant's namespace. The webhook checks the spec
 * when the server creates it. Unknown top-level fields are ignored. */
#ifndef TG_AUTH_V1_REQUEST_H
#define TG_AUTH_V1_REQUEST_H

#include <stddef.h>

#include <json-c/json.h>

#include "auth/reason.h"
#include "auth/request.h"
#include "pki/bootstrap_token.h"

#define TG_AUTH_TENANT_API "authentication.liqo.io/v1beta1"

/* The one message of InvalidToken, whatever was wrong with the token. */
#define TG_AUTH_V1_INVALID_TOKEN_MSG                                                                \
    "expected a valid bootstrap token of this cluster (kubectl tenantgate create token; unknown, "   \
    "expired, revoked, used and mistyped tokens are not told apart)"

typedef struct tg_auth_v1_request {
    tg_btoken token;               /* secret: wiped by clear */
    char cluster_id[TG_AUTH_MAX_CLUSTER_ID + 1];  /* the consumer's */
    json_object *tenant;           /* /v1/tenant: the Tenant to create */
} tg_auth_v1_request;

/* 0, or -1 with *reason (MalformedRequest, InvalidClusterID or
 * InvalidToken) and why (what was expected; never the token). out is
 * cleared first and must be cleared after, either way. */
int tg_auth_v1_parse_nonce(const char *body, size_t len, tg_auth_v1_request *out, tg_auth_reason *reason,
                           char *why, size_t why_len);
int tg_auth_v1_parse_tenant(const char *body, size_t len, tg_auth_v1_request *out, tg_auth_reason *reason,
                            char *why, size_t why_len);

void tg_auth_v1_request_clear(tg_auth_v1_request *r);

#endif
