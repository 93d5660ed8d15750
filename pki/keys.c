/* keys.c - cluster keys and the two forms of spec.publicKey. */
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "keys_internal.h"
#include "pem_block.h"
#include "signature.h"
#include "spki.h"

#define ED25519_RAW_LEN 32
#define RSA_MIN_BITS 2048
/* Above this an RSA verify costs milliseconds per admission for no security
 * gain: refuse it rather than let a Tenant buy CPU time. */
#define RSA_MAX_BITS 8192

int tg_key_type_parse(const char *name, tg_key_type *out)
{
    static const struct {
        const char *name;
        tg_key_type type;
    } names[] = {
        {"ed25519", TG_KEY_ED25519},
        {"rsa2048", TG_KEY_RSA2048},
        {"ecdsa-p256", TG_KEY_ECDSA_P256},
    };

    if (name == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].type;
            return 0;
        }
    }
    return -1;
}

const char *tg_key_type_name(tg_key_type type)
{
    switch (type) {
    case TG_KEY_ED25519:
        return "ed25519";
    case TG_KEY_RSA2048:
        return "rsa2048";
    case TG_KEY_ECDSA_P256:
        return "ecdsa-p256";
    }
    return "unknown";
}

/* The NID of an EC key's named curve, or NID_undef (explicit parameters). */
static int ec_curve_nid(EVP_PKEY *key, char *group, size_t group_len)
{
    int nid;

    if (!EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, group_len, NULL)) {
        ERR_clear_error();
        snprintf(group, group_len, "(unnamed)");
        return NID_undef;
    }
    nid = OBJ_txt2nid(group);
    return nid != NID_undef ? nid : EC_curve_nist2nid(group);
}

int tg_key_type_of(EVP_PKEY *key, tg_key_type *out)
{
    char group[64];

    if (key == NULL)
        return -1;
    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_ED25519:
        *out = TG_KEY_ED25519;
        return 0;
    case EVP_PKEY_RSA:
        *out = TG_KEY_RSA2048;
        return EVP_PKEY_get_bits(key) == 2048 ? 0 : -1;
    case EVP_PKEY_EC:
        *out = TG_KEY_ECDSA_P256;
        return ec_curve_nid(key, group, sizeof(group)) == NID_X9_62_prime256v1 ? 0 : -1;
    default:
        return -1;
    }
}

EVP_PKEY *tg_key_generate(tg_key_type type)
{
    switch (type) {
    case TG_KEY_ED25519:
        return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    case TG_KEY_RSA2048:
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    case TG_KEY_ECDSA_P256:
        return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    }
    return NULL;
}

static void wipe_mem_bio(BIO *bio)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);

    if (n > 0)
        OPENSSL_cleanse(data, (size_t)n);
}

char *tg_key_private_pem(EVP_PKEY *key, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;

    if (bio == NULL)
        return NULL;
    if (PEM_write_bio_PKCS8PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL))
        pem = tg_mem_bio_string(bio, len);
    wipe_mem_bio(bio);   /* it held the private key */
    BIO_free(bio);
    return pem;
}

char *tg_key_public_pem(EVP_PKEY *key, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;

    if (bio == NULL)
        return NULL;
    if (PEM_write_bio_PUBKEY(bio, key))
        pem = tg_mem_bio_string(bio, len);
    BIO_free(bio);
    return pem;
}

int tg_pubkey_format_parse(const char *name, tg_pubkey_format *out)
{
    if (name != NULL && strcmp(name, "raw") == 0)
        *out = TG_PUBKEY_RAW;
    else if (name != NULL && strcmp(name, "pem") == 0)
        *out = TG_PUBKEY_PEM;
    else
        return -1;
    return 0;
}

unsigned char *tg_key_public_spec(EVP_PKEY *key, tg_pubkey_format format, size_t *len)
{
    unsigned char *raw;
    size_t n = ED25519_RAW_LEN;

    if (key == NULL)
        return NULL;
    if (format == TG_PUBKEY_PEM || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519)
        return (unsigned char *)tg_key_public_pem(key, len);
    if ((raw = malloc(ED25519_RAW_LEN + 1)) == NULL)
        return NULL;
    if (EVP_PKEY_get_raw_public_key(key, raw, &n) != 1 || n != ED25519_RAW_LEN) {
        ERR_clear_error();
        free(raw);
        return NULL;
    }
    raw[n] = '\0';
    if (len != NULL)
        *len = n;
    return raw;
}

/* Never prompt on a terminal for a passphrase: an encrypted key is an error. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

EVP_PKEY *tg_key_private_from_pem(const char *pem, size_t len)
{
    BIO *bio;
    EVP_PKEY *key;

    if (pem == NULL || len == 0 || len > TG_PEM_MAX_LEN)
        return NULL;
    bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL)
        return NULL;
    key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (key == NULL)
        ERR_clear_error();
    return key;
}

/* Key strength and algorithm policy (PROTOCOL.md 5 step 4). */
int tg_key_check_strength(EVP_PKEY *key, const char *field, tg_verdict *v)
{
    char group[64];
    int bits, nid;

    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_ED25519:
        return 0;
    case EVP_PKEY_RSA:
        bits = EVP_PKEY_get_bits(key);
        if (bits < RSA_MIN_BITS)
            return tg_verdict_deny(v, TG_WEAK_KEY, "%s: expected an RSA key of at least %d bits, found %d bits",
                                   field, RSA_MIN_BITS, bits);
        if (bits > RSA_MAX_BITS)
            return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                                   "%s: expected an RSA key of at most %d bits, found %d bits", field,
                                   RSA_MAX_BITS, bits);
        return 0;
    case EVP_PKEY_EC:
        nid = ec_curve_nid(key, group, sizeof(group));
        if (nid != NID_X9_62_prime256v1 && nid != NID_secp384r1)
            return tg_verdict_deny(v, TG_WEAK_KEY, "%s: expected an EC key on P-256 or P-384, found curve %s",
                                   field, group);
        return 0;
    default:
        return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                               "%s: expected an Ed25519, RSA or ECDSA key, found algorithm %s", field,
                               OBJ_nid2sn(EVP_PKEY_get_base_id(key)));
    }
}

static void set_ed25519(tg_pubkey *out, const unsigned char *raw)
{
    memcpy(out->ed_spki, TG_ED25519_SPKI_PREFIX, TG_ED25519_SPKI_PREFIX_LEN);
    memcpy(out->ed_spki + TG_ED25519_SPKI_PREFIX_LEN, raw, TG_ED25519_KEY_LEN);
    out->is_ed25519 = 1;
    out->spki_der = out->ed_spki;
    out->spki_len = TG_ED25519_SPKI_LEN;
}

static int deny_spki(const TG_SPKI *spki, tg_spki_status status, tg_verdict *v)
{
    char alg[80];

    switch (status) {
    case TG_SPKI_EXPLICIT_CURVE:
        return tg_verdict_deny(v, TG_WEAK_KEY, "spec.publicKey: expected an EC key on the named curve P-256 or P-384, "
                                               "found explicit curve parameters");
    case TG_SPKI_UNSUPPORTED:
        return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                               "spec.publicKey: expected an Ed25519, RSA or ECDSA key, found algorithm %s",
                               tg_spki_algorithm(spki, alg, sizeof(alg)));
    default:
        return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY, "spec.publicKey: expected a valid %s key, found %s",
                               tg_spki_algorithm(spki, alg, sizeof(alg)), tg_spki_status_text(status));
    }
}

/* The key in a PKIX SPKI (already out of its PEM armour). */
static int key_from_spki_der(const unsigned char *der, long der_len, tg_pubkey *out, tg_verdict *v)
{
    const unsigned char *p = der, *raw;
    TG_SPKI *spki = d2i_TG_SPKI(NULL, &p, der_len);
    tg_spki_status status = TG_SPKI_BAD_KEY;
    int canon_len, rc = -1;

    if (spki == NULL || p != der + der_len) {
        TG_SPKI_free(spki);
        ERR_clear_error();
        return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                               "spec.publicKey: expected a PKIX SubjectPublicKeyInfo, found %ld bytes of DER that do "
                               "not parse as one", der_len);
    }
    switch (tg_spki_ed25519_raw(spki, &raw)) {
    case 1:
        set_ed25519(out, raw);
        rc = 0;
        goto out;
    case 0:
        out->pkey = tg_spki_to_pkey(spki, &status);
        break;
    default:
        break;
    }
    if (out->pkey == NULL) {
        deny_spki(spki, status, v);
        goto out;
    }
    if (tg_key_check_strength(out->pkey, "spec.publicKey", v) != 0)
        goto out;
    /* Re-encoded, so a BER-ish input still compares equal to the same key in DER. */
    canon_len = i2d_TG_SPKI(spki, &out->spki_der);
    if (canon_len <= 0) {
        tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY, "spec.publicKey: expected an encodable key, found one that is not");
        goto out;
    }
    out->spki_len = (size_t)canon_len;
    rc = 0;
out:
    TG_SPKI_free(spki);
    if (rc != 0)
        tg_pubkey_clear(out);
    return rc;
}

int tg_pubkey_parse(const unsigned char *data, size_t len, int *was_raw, tg_verdict *v, tg_pubkey *out)
{
    unsigned char *der = NULL;
    long der_len = 0;
    char found[128];
    int rc;

    memset(out, 0, sizeof(*out));
    *was_raw = 0;
    if (data != NULL && len == ED25519_RAW_LEN) {
        set_ed25519(out, data);
        *was_raw = 1;
        return 0;
    }
    if (tg_pem_single_block(data, len, "PUBLIC KEY", &der, &der_len, found, sizeof(found)) != 0)
        return tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                               "spec.publicKey: expected a raw 32-byte Ed25519 key or one PEM \"PUBLIC KEY\" block, "
                               "found %s (%zu bytes)", found, len);
    rc = key_from_spki_der(der, der_len, out, v);
    OPENSSL_free(der);
    return rc;
}

int tg_pubkey_from_spki(const TG_SPKI *spki, tg_pubkey *out, tg_spki_status *status)
{
    const unsigned char *raw;
    int ed = tg_spki_ed25519_raw(spki, &raw);

    memset(out, 0, sizeof(*out));
    *status = TG_SPKI_OK;
    if (ed == 1) {
        out->is_ed25519 = 1;
        memcpy(TG_PUBKEY_ED25519_RAW(out), raw, TG_ED25519_KEY_LEN);
        return 0;
    }
    if (ed < 0) {
        *status = TG_SPKI_BAD_KEY;
        return -1;
    }
    out->pkey = tg_spki_to_pkey_any(spki, status);
    return out->pkey != NULL ? 0 : -1;
}

void tg_pubkey_clear(tg_pubkey *key)
{
    if (key == NULL)
        return;
    if (key->spki_der != key->ed_spki)
        OPENSSL_free(key->spki_der);
    EVP_PKEY_free(key->pkey);
    memset(key, 0, sizeof(*key));
}

int tg_pubkey_verify(const tg_pubkey *key, const unsigned char *msg, size_t msg_len, const unsigned char *sig,
                     size_t sig_len)
{
    if (key->is_ed25519)
        return tg_ed25519_verify(TG_PUBKEY_ED25519_RAW(key), msg, msg_len, sig, sig_len);
    return tg_nonce_verify(key->pkey, (const char *)msg, msg_len, sig, sig_len);
}

const char *tg_pubkey_describe(const tg_pubkey *key, char *buf, size_t len)
{
    char group[32];

    if (key == NULL || (!key->is_ed25519 && key->pkey == NULL))
        return "an undecodable key";
    if (key->is_ed25519)
        return "Ed25519";
    switch (EVP_PKEY_get_base_id(key->pkey)) {
    case EVP_PKEY_RSA:
        snprintf(buf, len, "RSA-%d", EVP_PKEY_get_bits(key->pkey));
        return buf;
    case EVP_PKEY_EC:
        if (EVP_PKEY_get_group_name(key->pkey, group, sizeof(group), NULL))
            snprintf(buf, len, "EC %s", group);
        else
            snprintf(buf, len, "EC (explicit curve)");
        return buf;
    default:
        snprintf(buf, len, "%s", OBJ_nid2sn(EVP_PKEY_get_base_id(key->pkey)));
        return buf;
    }
}

EVP_PKEY *tg_public_key_parse(const unsigned char *data, size_t len, int *was_raw, tg_verdict *v)
{
    tg_pubkey key;
    EVP_PKEY *pkey;

    if (tg_pubkey_parse(data, len, was_raw, v, &key) != 0)
        return NULL;
    if (key.is_ed25519) {
        pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, TG_PUBKEY_ED25519_RAW(&key), TG_ED25519_KEY_LEN);
        if (pkey == NULL) {
            ERR_clear_error();
            tg_verdict_deny(v, TG_INVALID_PUBLIC_KEY,
                            "spec.publicKey: expected an Ed25519 key, found 32 bytes OpenSSL rejects");
        }
    } else {
        pkey = key.pkey;
        key.pkey = NULL;
    }
    tg_pubkey_clear(&key);
    return pkey;
}

unsigned char *tg_key_public_der(EVP_PKEY *key, size_t *len)
{
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(key, &der);
    unsigned char *out;

    if (n <= 0)
        return NULL;
    /* Hand out malloc'd memory as the header promises, not OPENSSL_malloc'd. */
    out = malloc((size_t)n);
    if (out != NULL) {
        memcpy(out, der, (size_t)n);
        *len = (size_t)n;
    }
    OPENSSL_free(der);
    return out;
}
