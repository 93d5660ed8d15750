/* keys_internal.h - internal: spec.publicKey parsing that also hands back the
 * key's SubjectPublicKeyInfo DER, so step 10 needs no second encoding. */
#ifndef TG_PKI_KEYS_INTERNAL_H
#define TG_PKI_KEYS_INTERNAL_H

#include "keys.h"

/* As tg_public_key_parse; when spki_der is not NULL it receives the key's
 * canonical SPKI DER (OPENSSL_malloc'd, free with OPENSSL_free). */
EVP_PKEY *tg_public_key_parse_spki(const unsigned char *data, size_t len, int *was_raw, tg_verdict *v,
                                   unsigned char **spki_der, size_t *spki_len);

#endif
