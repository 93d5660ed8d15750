/* issue.h - issue an identity to a consumer whose token matched, as a chain
 * of API requests on the loop (never blocking it):
 *   0. the name's owner (name_check.h): reserved, bound, owned by another
 *      path: NameReserved, NameBound, NameOwned, nothing written;
 *   1. create Namespace liqo-tenant-<id> (already there is fine);
 *      then claim the name for the token path (NameOwned when another
 *      path won it);
 *   2. create RoleBinding tenantgate-auth-identity in it: already there means
 *      this cluster has an identity (IdentityAlreadyIssued, 403); it binds
 *      the CSR's per-certificate group when it carries one (pki/cert_group.h,
 *      checked by csr_policy.h), after reading the revocation records: a
 *      revoked group is NameRevoked, nothing written; else User <id>;
 *   3. create the CSR (kubernetes.io/kube-apiserver-client);
 *   4. approve it (reason TenantgateTokenMatched);
 *   5. read it until kube-controller-manager has written the certificate.
 * A failure after step 2 deletes the RoleBinding again, so the consumer may
 * retry. Objects and names: issue_docs.h. */
#ifndef TG_AUTH_ISSUE_H
#define TG_AUTH_ISSUE_H

#include <stddef.h>
#include <stdint.h>

#include "auth/reason.h"
#include "kube/client.h"

typedef struct tg_auth_issue_config {
    const char *cluster_role;      /* bound to the consumer in its tenant namespace */
    long expiration_s;             /* the CSR's expirationSeconds; 0: the signer's default */
    uint64_t cert_wait_ms;         /* step 5's bound */
    uint64_t poll_ms;              /* step 5's period */
    const char *records_namespace; /* ConfigMap tenantgate-revoked-certificates (docs/revocation.md) */
} tg_auth_issue_config;

typedef struct tg_auth_issue_result {
    tg_auth_reason reason;         /* Issued, IdentityAlreadyIssued, IssuanceFailed, CertificateTimeout,
                                    * NameReserved, NameBound, NameOwned, NameRevoked */
    char why[768];                 /* for the log and the answer; no secrets */
    const char *cert_pem;          /* Issued: the certificate (valid during the callback) */
    size_t cert_len;
} tg_auth_issue_result;

typedef void (*tg_auth_issue_done)(const tg_auth_issue_result *res, void *data);

/* Start; done is called once, later, on the loop. -1 when it could not start
 * (done is then not called). cfg and c must outlive the chain. */
int tg_auth_issue_start(tg_kube_client *c, const tg_auth_issue_config *cfg, const char *cluster_id,
                        const unsigned char *csr_pem, size_t csr_len, tg_auth_issue_done done, void *data);

#endif
