/* csr_check.h - internal: tg_csr_check with the Tenant's already-decoded key.
 * When the CSR carries the very key the Tenant declared, verifying its
 * self-signature with that EVP_PKEY saves re-importing the CSR's copy. */
#ifndef TG_PKI_CSR_CHECK_H
#define TG_PKI_CSR_CHECK_H

#include "csr.h"
#include "keys_internal.h"

/* As tg_csr_check; expected_key (may be NULL) must be the key whose SPKI DER
 * is expected_spki. */
int tg_csr_check_with_key(const unsigned char *pem, size_t pem_len, const char *cluster_id,
                          const unsigned char *expected_spki, size_t spki_len, const tg_pubkey *expected_key,
                          tg_verdict *v, X509_REQ **out_req);

/* What step 9 expects, and what the message says each value comes from
 * (cn_source/org_source may be NULL). any_key: skip step 10, and hold the
 * CSR's own key to step 4's strength policy instead (WeakKey, InvalidPublicKey). */
typedef struct tg_csr_subject {
    const char *cn;
    const char *cn_source;
    const char *org;
    const char *org_source;
    int any_key;
    int allow_cert_group;   /* one more O: the CN's per-certificate group (pki/cert_group.h) */
    int group_replaces_org; /* with allow_cert_group: a CSR carrying the group carries no O=org
                             * (a revocable slice, docs/revocation.md "Slices") */
} tg_csr_subject;

/* Steps 7-10 with any expected subject: the Tenant's (CN=<cluster id>,
 * O=liqo.io) and the ResourceSlice's (pki/slice.h). */
int tg_csr_check_subject(const unsigned char *pem, size_t pem_len, const tg_csr_subject *want,
                         const unsigned char *expected_spki, size_t spki_len, const tg_pubkey *expected_key,
                         tg_verdict *v, X509_REQ **out_req);

#endif
