/* v1_docs.h - what the v1 endpoints write and answer (pure, json-c trees):
 * the provider's tenant namespace (the signer's nonce controller makes its
 * liqo-nonce Secret), the record of a token's nonces,
 * the DELETE that spends a single-use token, and the two answers
 * (docs/auth.md "v1 one-string peering"). */
#ifndef TG_AUTH_V1_DOCS_H
#define TG_AUTH_V1_DOCS_H

#include <stddef.h>

#include <json-c/json.h>

#define TG_AUTH_NONCE_SECRET "liqo-nonce"

/* Namespace liqo-tenant-<id>, labelled as a tenant namespace of <id>
 * (issue_docs.h) and with the token id that made it: the signer makes the
 * nonce Secret in such a namespace, and removes the namespace when the token
 * is gone and no Tenant came (docs/auth.md "Bounds and cleanup"). */
json_object *tg_auth_v1_namespace_doc(const char *cluster_id, const char *token_id);

/* The merge patch that records cluster_id among the token's nonce ids
 * (recorded: the list as read, "" for none), with resourceVersion as its
 * precondition: of racing patches from one read, one gets on. */
json_object *tg_auth_v1_record_nonce_doc(const char *recorded, const char *cluster_id, const char *resource_version);

/* DeleteOptions with preconditions uid and resourceVersion: the DELETE
 * succeeds for one caller only, however many race. */
json_object *tg_auth_v1_consume_doc(const char *uid, const char *resource_version);

/* data.nonce of the nonce Secret, decoded, NUL-terminated into out; 0, or
 * -1 when not there yet (or not text). */
int tg_auth_v1_nonce_of(json_object *secret, char *out, size_t len);

/* 1 when the Tenant's status holds a certificate and its tenant namespace:
 * the signer has signed it. The consumer checks the certificate's key. */
int tg_auth_v1_tenant_signed(json_object *tenant);

/* 200 {"clusterID":<provider>,"nonce"}. */
char *tg_auth_v1_answer_nonce(const char *provider_id, const char *nonce, size_t *len);

/* 201 {"clusterID":<provider>,"tenant":{...as read, status included},
 * "apiServerUrl","apiServerCA"(base64 PEM, "" when none)}. */
char *tg_auth_v1_answer_tenant(const char *provider_id, json_object *tenant, const char *api_server_url,
                               const char *ca_pem, size_t ca_len, size_t *len);

/* The "message" of a Kubernetes Status body, at most len-1 bytes, control
 * characters replaced; "" when none. */
void tg_auth_v1_status_message(const char *body, size_t body_len, char *out, size_t len);

#endif
