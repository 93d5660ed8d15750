/* keys.h - cluster keys: generation and the `authentication-keys` formats
 * (private key PEM PKCS#8, public key PEM PKIX), and the two forms a Tenant's
 * spec.publicKey comes in (raw 32-byte Ed25519, or PEM PKIX). */
#ifndef TG_PKI_KEYS_H
#define TG_PKI_KEYS_H

#include <stddef.h>
#include <openssl/evp.h>

#include "verdict.h"

typedef enum tg_key_type {
    TG_KEY_ED25519 = 0,   /* default */
    TG_KEY_RSA2048,
    TG_KEY_ECDSA_P256,
} tg_key_type;

/* The one spelling of a key type on every command line (--key-type):
 * "ed25519" | "rsa2048" | "ecdsa-p256" -> type; -1 when unknown. */
int tg_key_type_parse(const char *name, tg_key_type *out);

/* The spelling tg_key_type_parse reads back. */
const char *tg_key_type_name(tg_key_type type);

/* Which of the three types key is (RSA of exactly 2048 bits, EC on P-256);
 * -1 for any other key (an RSA-4096 or P-384 key Liqo or a user made). */
int tg_key_type_of(EVP_PKEY *key, tg_key_type *out);

/* The strength policy of PROTOCOL.md 5 step 4 for any key: Ed25519, RSA of
 * 2048 to 8192 bits, EC on P-256 or P-384. field names the key in the
 * message ("spec.publicKey", "the CSR's key"). 0, or -1 with v:
 * WeakKey (RSA too short, another curve) or InvalidPublicKey. */
int tg_key_check_strength(EVP_PKEY *key, const char *field, tg_verdict *v);

/* A new private key from the CSPRNG, or NULL. */
EVP_PKEY *tg_key_generate(tg_key_type type);

/* malloc'd NUL-terminated PEM text; *len (if not NULL) excludes the NUL. NULL on error. */
char *tg_key_private_pem(EVP_PKEY *key, size_t *len);   /* PKCS#8 "PRIVATE KEY" */
char *tg_key_public_pem(EVP_PKEY *key, size_t *len);    /* PKIX "PUBLIC KEY" */

/* The form a Tenant's spec.publicKey is written in (PROTOCOL.md 4). */
typedef enum tg_pubkey_format {
    TG_PUBKEY_RAW = 0,    /* default: 32 raw bytes for Ed25519, which every Liqo provider reads */
    TG_PUBKEY_PEM,        /* PEM PKIX "PUBLIC KEY", read by Liqo 1.0.2 and later */
} tg_pubkey_format;

/* "raw" | "pem" -> format; -1 when unknown. */
int tg_pubkey_format_parse(const char *name, tg_pubkey_format *out);

/* spec.publicKey of key: the raw 32 bytes of an Ed25519 key when format is
 * TG_PUBKEY_RAW, else PEM PKIX text. RSA and ECDSA keys have no raw form and
 * are always PEM. malloc'd (NUL-terminated, *len excludes the NUL); NULL on error. */
unsigned char *tg_key_public_spec(EVP_PKEY *key, tg_pubkey_format format, size_t *len);

/* Parse PEM PKCS#8 (also accepts traditional RSA/EC PEM). NULL on error. */
EVP_PKEY *tg_key_private_from_pem(const char *pem, size_t len);

/* Parse spec.publicKey: exactly 32 bytes -> raw Ed25519; otherwise one PEM
 * "PUBLIC KEY" block. Enforces key strength: RSA >= 2048 bits, EC only P-256
 * or P-384. On failure returns NULL and fills v with InvalidPublicKey or WeakKey.
 * *was_raw is set to 1 for the legacy raw form. */
EVP_PKEY *tg_public_key_parse(const unsigned char *data, size_t len, int *was_raw, tg_verdict *v);

/* PKIX SubjectPublicKeyInfo DER of a key; malloc'd, NULL on error. */
unsigned char *tg_key_public_der(EVP_PKEY *key, size_t *len);

#endif
