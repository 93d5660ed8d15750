/* v1_docs.h - what the v1 endpoints write and answer (pure, json-c trees):
 * the provider's liqo-nonce Secret (the signer's nonce controller fills it),
 * the DELETE that spends a single-use token, and the two answers
 * (docs/auth.md "v1 one-string peering"). */
#ifndef TG_AUTH_V1_DOCS_H
#define TG_AUTH_V1_DOCS_H

#include <stddef.h>

#include <json-c/json.h>

#define TG_AUTH_NONCE_SECRET "liqo-nonce"

/* Secret liqo-nonce in liqo-tenant-<id>, labelled liqo.io/nonce=true and
 * liqo.io/remote-cluster-id=<id>, no data. */
json_object *tg_auth_v1_nonce_secret_doc(const char *cluster_id);

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
