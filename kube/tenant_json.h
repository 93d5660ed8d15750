/* tenant_json.h - a Tenant object (PROTOCOL.md 2) to and from its json-c tree.
 *
 * Decoding is the admission check's step 1 (PROTOCOL.md 5): anything that is not a
 * well-formed authentication.liqo.io/v1beta1 Tenant is MalformedTenant, with a
 * message naming the field, what was expected and what was found (never the
 * content of a key, CSR or signature). The rest of the decision is
 * tg_tenant_check() in pki/tenant.h. */
#ifndef TG_KUBE_TENANT_JSON_H
#define TG_KUBE_TENANT_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#include "pki/tenant.h"
#include "pki/verdict.h"

#define TG_TENANT_API_VERSION "authentication.liqo.io/v1beta1"
#define TG_TENANT_KIND "Tenant"
#define TG_LABEL_REMOTE_CLUSTER_ID "liqo.io/remote-cluster-id"
#define TG_TENANT_NAMESPACE_PREFIX "liqo-tenant-"

/* Decoded size limits of the bytes fields, and of the string fields. */
#define TG_TENANT_MAX_PUBLIC_KEY (16u * 1024)
#define TG_TENANT_MAX_CSR (16u * 1024)
#define TG_TENANT_MAX_SIGNATURE 1024u       /* RSA-8192 */
#define TG_TENANT_MAX_STRING 2048u          /* names, clusterID, proxyURL */

/* Decode obj into out (zeroed first; malloc'd copies, free with
 * tg_tenant_clear). Returns 0, or -1 with v = MalformedTenant and out cleared.
 * Required: apiVersion, kind, spec.clusterID, and spec.publicKey, spec.csr,
 * spec.signature unless spec.authzPolicy is TolerateNoHandshake. A JSON null
 * counts as absent, as the API server prunes nulls. */
int tg_tenant_from_json(json_object *obj, tg_tenant *out, tg_verdict *v);

/* The Tenant a consumer hands to its provider (PROTOCOL.md 3): name = cluster_id,
 * namespace liqo-tenant-<cluster_id>, label liqo.io/remote-cluster-id, spec
 * clusterID and the base64 of publicKey (either form of PROTOCOL.md 4, see
 * tg_key_public_spec), csr (PEM text) and the raw signature. A new reference,
 * or NULL on allocation failure. */
json_object *tg_tenant_to_json(const char *cluster_id, const unsigned char *pubkey, size_t pubkey_len,
                               const char *csr_pem, const unsigned char *sig, size_t sig_len);

#endif
