/* auth_token_plan.h - what the consumer's token procedure (Liqo's first
 * documents, docs/auth.md "Consumer side") records for an answer of the
 * provider's authentication server, and the names it records. Pure. */
#ifndef TG_SIGNER_AUTH_TOKEN_PLAN_H
#define TG_SIGNER_AUTH_TOKEN_PLAN_H

#include <stddef.h>

#include <json-c/json.h>

/* On the token Secret (labels: Liqo's; annotations: ours). */
#define TG_LABEL_AUTH_TOKEN "discovery.liqo.io/auth-token"
#define TG_LABEL_AUTH_CLUSTER_ID "discovery.liqo.io/cluster-id"
#define TG_ANN_AUTH_URL "tenantgate.io/auth-url"
#define TG_ANN_AUTH_CA "tenantgate.io/auth-ca"
/* "true": the CSR carries a fresh per-certificate group beside O=liqo.io, which
 * tenantgate-auth binds instead of the user (docs/revocation.md). */
#define TG_ANN_AUTH_REVOCABLE "tenantgate.io/revocable"
#define TG_ANN_AUTH_STATUS "tenantgate.io/auth-status"
#define TG_ANN_AUTH_REASON "tenantgate.io/auth-reason"
/* A digest of the token that was denied: another token tries again. */
#define TG_ANN_AUTH_DENIED_TOKEN "tenantgate.io/auth-denied-token"
/* The result Secret: remote-identity-<provider id>, labelled so. */
#define TG_AUTH_RESULT_PREFIX "remote-identity-"
#define TG_LABEL_AUTH_IDENTITY "tenantgate.io/auth-identity"

typedef enum tg_auth_status {
    TG_AUTH_NONE = 0,        /* not started: the Secret lacks what the procedure needs */
    TG_AUTH_PENDING,         /* sent, or to be sent again (no answer, or not a final one) */
    TG_AUTH_EMPTY_DENIED,    /* refused, and no token was sent */
    TG_AUTH_ESTABLISHED,     /* the identity is in the result Secret */
    TG_AUTH_DENIED,          /* refused with a token: final until the token changes */
} tg_auth_status;

/* "None", "Pending", "EmptyDenied", "Established", "Denied". */
const char *tg_auth_status_name(tg_auth_status st);
/* The status a name stands for; TG_AUTH_NONE for NULL or anything else. */
tg_auth_status tg_auth_status_parse(const char *name);

/* What an answer means, as Liqo v0.10.3's consumer reads it
 * (foreign-cluster-operator/auth.go): 202/201 Established,
 * 401/403 Denied (EmptyDenied when the token was empty), anything else,
 * a transport failure (-1) included, Pending (to be tried again). */
tg_auth_status tg_auth_outcome(long http_status, int token_empty);

/* 1 when the procedure stops for good at this status (the queue forgets it). */
int tg_auth_status_final(tg_auth_status st);

/* The result Secret's data (base64 values, a new object) for the answer of
 * a 2xx: certificate and apiServerCA as sent (base64 PEM), apiServerUrl and
 * namespace, and a kubeconfig for provider_id with the key (self_id: its
 * user). NULL with err when the answer is not an object, lacks certificate
 * or apiServerUrl, or a value is not base64 of PEM. Secret: the kubeconfig
 * holds the key. */
json_object *tg_auth_result_data(json_object *answer, const char *provider_id, const char *self_id,
                                 const char *key_pem, size_t key_len, char *err, size_t err_len);

/* This cluster's own token, sent as originClusterToken so that the provider
 * could peer back (as Liqo v0.10's consumer sends its liqo/auth-token):
 * Secret TG_AUTH_OWN_TOKEN_SECRET, key token, in the signer's token namespace
 * (--token-namespace), where this cluster's tenantgate-auth keeps its token;
 * Liqo v0.10 keeps it in liqo/auth-token. */
#define TG_AUTH_OWN_TOKEN_SECRET "auth-token"

/* Liqo v0.10.3's CertificateIdentityRequest (pkg/auth/identityrequest.go),
 * in its struct's field order so that it serializes as Go's encoding/json
 * does: cluster {clusterID, clusterName}, originClusterToken (omitted when
 * empty: omitempty), destinationClusterToken (the provider's token, the one
 * it checks), certificateSigningRequest (base64 of the PEM CSR). A new
 * object holding both tokens: put it, then cleanse nothing more (json-c
 * frees its copies). */
json_object *tg_auth_identity_request(const char *cluster_id, const char *cluster_name, const char *own_token,
                                      size_t own_len, const char *provider_token, size_t provider_len,
                                      const char *csr_b64);

/* The first 16 hex digits of SHA-256 over the token, into out[17]: enough to
 * tell a changed token, nothing to guess a 512-bit one from. */
void tg_auth_token_digest(const char *token, size_t len, char out[17]);

#endif
