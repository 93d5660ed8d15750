/* issue_docs.h - the objects the auth server writes to issue an identity,
 * and the reading of a CSR's status (pure: json-c trees, no I/O). Names and
 * labels are docs/auth.md's ("What the server writes"). */
#ifndef TG_AUTH_ISSUE_DOCS_H
#define TG_AUTH_ISSUE_DOCS_H

#include <stddef.h>

#include <json-c/json.h>

#define TG_AUTH_TENANT_NS_PREFIX "liqo-tenant-"
#define TG_AUTH_ROLEBINDING "tenantgate-auth-identity"
#define TG_AUTH_CSR_SIGNER "kubernetes.io/kube-apiserver-client"
#define TG_AUTH_APPROVAL_REASON "TenantgateTokenMatched"
#define TG_AUTH_LABEL_CSR "tenantgate.io/auth-identity"

/* "liqo-tenant-<id>" into buf (>= 76 bytes). */
void tg_auth_tenant_namespace(const char *cluster_id, char *buf, size_t len);

/* Namespace liqo-tenant-<id>, labelled as Liqo labels a tenant namespace. */
json_object *tg_auth_namespace_doc(const char *cluster_id);

/* RoleBinding TG_AUTH_ROLEBINDING in the tenant namespace: ClusterRole
 * cluster_role to User <id>, or to Group <group> alone when group is not
 * NULL (the certificate's per-certificate group, docs/revocation.md): the
 * user is then not bound, so removing the group ends that certificate's rights. */
json_object *tg_auth_rolebinding_doc(const char *cluster_id, const char *cluster_role, const char *group);

/* CSR "tenantgate-auth-<id>-" (generateName) for TG_AUTH_CSR_SIGNER, usage
 * client auth, request = base64(pem); expiration_s 0: the signer's default. */
json_object *tg_auth_csr_doc(const char *cluster_id, const unsigned char *pem, size_t len, long expiration_s);

/* Add the Approved condition (reason TG_AUTH_APPROVAL_REASON) to the CSR as
 * read back, for PUT .../approval. 0, or -1 (not a CSR, out of memory). */
int tg_auth_csr_approve(json_object *csr);

/* The consumer's own token (originClusterToken), kept as Liqo v0.10.3's
 * auth service keeps it (pkg/utils/authenticationtoken/tokensecret.go):
 * Secret remote-token-<id>, key token, labels discovery.liqo.io/cluster-id
 * and discovery.liqo.io/auth-token; here Opaque and in the namespace given
 * (tenantgate-auth's --token-namespace), not Liqo's. Also the merge patch
 * that replaces an older one. NULL when out of memory. */
#define TG_AUTH_ORIGIN_TOKEN_PREFIX "remote-token-"
json_object *tg_auth_origin_token_doc(const char *ns, const char *cluster_id, const char *token, size_t len);

typedef enum tg_auth_csr_state {
    TG_AUTH_CSR_WAITING = 0,       /* no certificate yet */
    TG_AUTH_CSR_ISSUED,            /* *cert_b64 set (borrowed from csr) */
    TG_AUTH_CSR_REFUSED,           /* Denied or Failed condition */
} tg_auth_csr_state;

tg_auth_csr_state tg_auth_csr_read(json_object *csr, const char **cert_b64);

#endif
