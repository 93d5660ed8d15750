/* issue.h - own-signer mode: issue a client certificate from an approved CSR
 * with the operator's CA (PROTOCOL.md 6): KU digitalSignature (+keyEncipherment for
 * RSA keys), EKU clientAuth, CA:FALSE, AKI from the CA, random 128-bit serial,
 * NotBefore = now - 5 min, lifetime clamped to the configured maximum. */
#ifndef TG_PKI_ISSUE_H
#define TG_PKI_ISSUE_H

#include <stddef.h>
#include <time.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#define TG_ISSUE_BACKDATE_SECONDS 300

typedef struct tg_ca {
    X509 *cert;
    EVP_PKEY *key;
    long max_lifetime_seconds;     /* clamp; > 0 */
} tg_ca;

/* Load a CA from PEM cert and key text; 0 on success. */
int tg_ca_load(tg_ca *ca, const char *cert_pem, size_t cert_len,
               const char *key_pem, size_t key_len, long max_lifetime_seconds);
void tg_ca_clear(tg_ca *ca);

/* Issue for req. requested_seconds <= 0 means "the maximum". `now` is passed in
 * so the function stays pure and testable. Returns malloc'd PEM "CERTIFICATE"
 * text or NULL with a reason in err. */
char *tg_issue_client_cert(const tg_ca *ca, X509_REQ *req, long requested_seconds,
                           time_t now, size_t *pem_len, char *err, size_t err_len);

#endif
