/* keys_internal.h - internal: spec.publicKey as the admission path needs it.
 *
 * An Ed25519 key is kept as its 32 raw bytes and verified with libsodium: no
 * EVP_PKEY is built for it (importing one costs as much as the rest of the
 * request, only to hand the same bytes back). RSA and EC keys are EVP_PKEYs.
 * Either way the canonical SubjectPublicKeyInfo DER comes along, so step 10
 * compares bytes without encoding the key again. */
#ifndef TG_PKI_KEYS_INTERNAL_H
#define TG_PKI_KEYS_INTERNAL_H

#include "ed25519.h"
#include "keys.h"
#include "spki.h"

/* SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING (0 unused bits) } header
 * of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the raw key follows. */
#define TG_ED25519_SPKI_PREFIX "\x30\x2a\x30\x05\x06\x03\x2b\x65\x70\x03\x21\x00"
#define TG_ED25519_SPKI_PREFIX_LEN 12
#define TG_ED25519_SPKI_LEN (TG_ED25519_SPKI_PREFIX_LEN + TG_ED25519_KEY_LEN)

typedef struct tg_pubkey {
    int is_ed25519;
    EVP_PKEY *pkey;                 /* RSA or EC; NULL for Ed25519 */
    unsigned char *spki_der;        /* canonical SPKI DER: points to ed_spki, or OPENSSL_malloc'd */
    size_t spki_len;
    unsigned char ed_spki[TG_ED25519_SPKI_LEN];   /* Ed25519: prefix + raw key */
} tg_pubkey;

/* The raw Ed25519 key inside an Ed25519 tg_pubkey. */
#define TG_PUBKEY_ED25519_RAW(k) ((k)->ed_spki + TG_ED25519_SPKI_PREFIX_LEN)

/* Parse spec.publicKey as tg_public_key_parse does (same verdicts); 0 with *out
 * filled, or -1 with v. */
int tg_pubkey_parse(const unsigned char *data, size_t len, int *was_raw, tg_verdict *v, tg_pubkey *out);

/* The key of a CSR's SPKI: Ed25519 as raw bytes, anything else through
 * tg_spki_to_pkey_any. spki_der is left NULL. 0, or -1 with *status. */
int tg_pubkey_from_spki(const TG_SPKI *spki, tg_pubkey *out, tg_spki_status *status);

/* 1 when sig over msg verifies with key (Ed25519: pure; RSA/EC: over SHA-256). */
int tg_pubkey_verify(const tg_pubkey *key, const unsigned char *msg, size_t msg_len, const unsigned char *sig,
                     size_t sig_len);

/* "Ed25519", "RSA-2048", "EC P-256": which key a message talks about. */
const char *tg_pubkey_describe(const tg_pubkey *key, char *buf, size_t len);

void tg_pubkey_clear(tg_pubkey *key);

#endif
