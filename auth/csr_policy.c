/* csr_policy.c - see csr_policy.h. The structural checks are pki's (the
 * same steps 7-9 a Tenant's CSR goes through); the key type is ours. */
#include "csr_policy.h"

#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "pki/csr_check.h"

int tg_auth_csr_check(const unsigned char *pem, size_t len, const char *cluster_id, tg_auth_reason *reason,
                      char *why, size_t why_len)
{
    tg_csr_subject want = {.cn = cluster_id, .cn_source = "cluster.clusterID", .org = TG_CSR_ORGANIZATION,
                           .any_key = 1};
    tg_verdict v;
    X509_REQ *req = NULL;
    EVP_PKEY *key;
    int rc = 0;

    tg_verdict_init(&v);
    if (tg_csr_check_subject(pem, len, &want, NULL, 0, NULL, &v, &req) != 0) {
        *reason = v.reason == TG_INVALID_CSR ? TG_AUTH_INVALID_CSR : TG_AUTH_CSR_SUBJECT_MISMATCH;
        snprintf(why, why_len, "%s", v.message);
        return -1;
    }
    key = X509_REQ_get0_pubkey(req);
    if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_ED25519) {
        *reason = TG_AUTH_UNSUPPORTED_KEY;
        snprintf(why, why_len, "expected an Ed25519 key in the CSR (Liqo's consumer key), found another type");
        rc = -1;
    }
    X509_REQ_free(req);
    return rc;
}
