/* pem_block.h - internal: the strict "exactly one PEM block and nothing else"
 * reading that spec.publicKey and spec.csr both need, and PEM output. */
#ifndef TG_PKI_PEM_BLOCK_H
#define TG_PKI_PEM_BLOCK_H

#include <stddef.h>

#include <openssl/bio.h>

/* Upper bound on PEM text we are willing to decode: a CSR with an RSA-8192 key
 * is about 3 KiB, so anything near this is hostile. */
#define TG_PEM_MAX_LEN (64 * 1024)

/* Decode text that is one PEM block labelled `label`, with nothing but
 * whitespace before and after it and no PEM headers. On success returns 0 and
 * *der (OPENSSL_malloc'd, free with OPENSSL_free) / *der_len hold the body.
 * On failure returns -1 and writes what was found instead, as a short phrase
 * ("text after the END line", "a \"CERTIFICATE\" block", ...), into found. */
int tg_pem_single_block(const unsigned char *text, size_t len, const char *label,
                        unsigned char **der, long *der_len, char *found, size_t found_len);

/* The contents of a memory BIO as a malloc'd NUL-terminated string (what the
 * public headers hand out); *len, if not NULL, excludes the NUL. NULL when
 * empty or out of memory. */
char *tg_mem_bio_string(BIO *bio, size_t *len);

#endif
