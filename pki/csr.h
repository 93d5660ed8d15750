/* csr.h - the consumer's certificate signing request: build it, and check one
 * (PROTOCOL.md 5, steps 7-10). */
#ifndef TG_PKI_CSR_H
#define TG_PKI_CSR_H

#include <stddef.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "verdict.h"

#define TG_CSR_ORGANIZATION "liqo.io"

/* PEM "CERTIFICATE REQUEST" with subject O=liqo.io, CN=cluster_id and nothing
 * else, signed by key. malloc'd, NUL-terminated; NULL on error. */
char *tg_csr_build(EVP_PKEY *key, const char *cluster_id, size_t *pem_len);

/* The same with any subject O=org, CN=cn (a ResourceSlice's, pki/slice.h). */
char *tg_csr_build_subject(EVP_PKEY *key, const char *cn, const char *org, size_t *pem_len);

/* The same with a second O, the per-certificate group (pki/cert_group.h;
 * group NULL: none), after O=org. */
char *tg_csr_build_group(EVP_PKEY *key, const char *cn, const char *org, const char *group, size_t *pem_len);

/* The per-certificate group a CSR carries (an O in the form of
 * pki/cert_group.h) into out: 1 found, 0 none, -1 unreadable or several.
 * Reads only; the CSR is checked by tg_csr_check. */
int tg_csr_cert_group(const unsigned char *pem, size_t pem_len, char *out, size_t out_len);

/* The SubjectPublicKeyInfo of a PEM CSR (exactly one CERTIFICATE REQUEST
 * block), DER-encoded into *der (OPENSSL_free): 0, or -1 when the request
 * does not parse or its key cannot be read. Reads only, without OpenSSL
 * 3.0's decoder chain for Ed25519, RSA and named-curve EC keys (spki.h):
 * the signer compares it with the key of the certificate issued for it. */
int tg_csr_public_key(const unsigned char *pem, size_t pem_len, unsigned char **der, size_t *der_len);

/* Steps 7-10 over PEM text: exactly one CERTIFICATE REQUEST block and nothing
 * after it (7), valid self-signature (7), subject only O and CN, no extensions,
 * no other attributes (8), exactly one CN == cluster_id and one O == liqo.io,
 * besides at most one O that is cluster_id's per-certificate group (9),
 * SubjectPublicKeyInfo DER equal to expected_spki (10). Returns 0 or -1 with v.
 * On success and if out_req is not NULL, *out_req receives the parsed request. */
int tg_csr_check(const unsigned char *pem, size_t pem_len, const char *cluster_id,
                 const unsigned char *expected_spki, size_t spki_len,
                 tg_verdict *v, X509_REQ **out_req);

#endif
