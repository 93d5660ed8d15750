/* signature.h - signing and verifying a nonce. The signed message is the ASCII
 * nonce text itself (88 bytes), not its decoded bytes. Ed25519: pure; RSA:
 * PKCS#1 v1.5 over SHA-256; ECDSA: DER signature over SHA-256. */
#ifndef TG_PKI_SIGNATURE_H
#define TG_PKI_SIGNATURE_H

#include <stddef.h>
#include <openssl/evp.h>

/* malloc'd signature in *sig; 0 on success, -1 on error. */
int tg_nonce_sign(EVP_PKEY *priv, const char *nonce, size_t nonce_len,
                  unsigned char **sig, size_t *sig_len);

/* 1 when sig is a valid signature of nonce by pub, 0 otherwise (never -1: any
 * error is a failed verification). */
int tg_nonce_verify(EVP_PKEY *pub, const char *nonce, size_t nonce_len,
                    const unsigned char *sig, size_t sig_len);

#endif
