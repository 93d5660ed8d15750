/* v1_flow.h - the API side of POST /v1/nonce and /v1/tenant, as chains of
 * requests on the loop (docs/auth.md "v1 one-string peering"):
 *   both:   GET <token_ns>/tenantgate-token-<ID>, accepted or InvalidToken;
 *   nonce:  the id recorded in the token's Secret (a PATCH with its
 *           resourceVersion: the per-token bound holds under races, over it
 *           TokenExhausted), Namespace liqo-tenant-<id> labelled with the
 *           token id, whose Secret liqo-nonce the signer makes; read until
 *           data.nonce;
 *   tenant: a single-use token is spent first (DELETE with uid and
 *           resourceVersion preconditions: one racer wins, the others get
 *           InvalidToken), then the Tenant is created (the webhook admits
 *           it or not) and read until the signer wrote its status. */
#ifndef TG_AUTH_V1_FLOW_H
#define TG_AUTH_V1_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "auth/reason.h"
#include "auth/v1_request.h"
#include "kube/client.h"

typedef struct tg_auth_v1_config {
    const char *token_ns;          /* where create token stores tokens */
    const char *provider_id;       /* this cluster's id, in the answers */
    const char *api_server_url;
    const char *api_server_ca;     /* PEM or NULL */
    size_t api_server_ca_len;
    uint64_t wait_ms;              /* for the nonce, or the signed Tenant */
    uint64_t poll_ms;
    int max_nonces;                /* tenant namespaces per reusable token (single-use: 1) */
} tg_auth_v1_config;

typedef struct tg_auth_v1_result {
    tg_auth_reason reason;         /* NonceIssued, TenantSigned, or a failure */
    char why[768];                 /* for the log and the answer; no secrets */
    char *body;                    /* successes: the answer (owned by the chain) */
    size_t len;
} tg_auth_v1_result;

typedef void (*tg_auth_v1_done)(const tg_auth_v1_result *res, void *data);

typedef enum tg_auth_v1_kind { TG_AUTH_V1_NONCE, TG_AUTH_V1_TENANT } tg_auth_v1_kind;

/* Start; takes req's contents (req is cleared). done is called once, later,
 * on the loop. -1 when it could not start (done not called). */
int tg_auth_v1_start(tg_kube_client *c, const tg_auth_v1_config *cfg, tg_auth_v1_kind kind,
                     tg_auth_v1_request *req, tg_auth_v1_done done, void *data);

#endif
