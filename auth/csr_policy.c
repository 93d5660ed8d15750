/* csr_policy.c - see csr_policy.h. The structural checks are pki's (the
 * same steps 7-9 a Tenant's CSR goes through), and so is the key strength
 * policy (step 4 for spec.publicKey): the certificate this CSR buys is as
 * good as a Tenant's, so its key must be too. */
#include "csr_policy.h"

#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "pki/csr_check.h"

/* pki's verdict as the auth server's reason. */
static tg_auth_reason auth_reason(tg_reason r)
{
    switch (r) {
    case TG_INVALID_CSR:
        return TG_AUTH_INVALID_CSR;
    case TG_WEAK_KEY:
        return TG_AUTH_WEAK_KEY;
    case TG_INVALID_PUBLIC_KEY:
        return TG_AUTH_UNSUPPORTED_KEY;
    case TG_NAME_RESERVED:
        return TG_AUTH_NAME_RESERVED;   /* a per-certificate group of another identity */
    default:
        return TG_AUTH_CSR_SUBJECT_MISMATCH;
    }
}

int tg_auth_csr_check(const unsigned char *pem, size_t len, const char *cluster_id, tg_auth_reason *reason,
                      char *why, size_t why_len)
{
    tg_csr_subject want = {.cn = cluster_id, .cn_source = "cluster.clusterID", .org = TG_CSR_ORGANIZATION,
                           .any_key = 1, .allow_cert_group = 1};
    tg_verdict v;
    X509_REQ *req = NULL;
    EVP_PKEY *key;
    int rc = 0;

    tg_verdict_init(&v);
    /* any_key: pki holds the CSR's key to the strength policy (WeakKey, InvalidPublicKey).
     * allow_cert_group: a revocable consumer's second O, the CN's own per-certificate
     * group (docs/revocation.md), on the Tenant CSR's rules; its revocation record is
     * read before it is bound (issue.c). */
    if (tg_csr_check_subject(pem, len, &want, NULL, 0, NULL, &v, &req) != 0) {
        *reason = auth_reason(v.reason);
        snprintf(why, why_len, "%s", v.message);
        return -1;
    }
    key = X509_REQ_get0_pubkey(req);
    if (!key) {
        *reason = TG_AUTH_UNSUPPORTED_KEY;
        snprintf(why, why_len, "expected an Ed25519, RSA or ECDSA key in the CSR, found one OpenSSL cannot load");
        rc = -1;
    }
    X509_REQ_free(req);
    return rc;
}
