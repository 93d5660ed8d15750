/* signature.c - the nonce signature (PROTOCOL.md 4): the message is the 88-byte
 * ASCII nonce text. Ed25519 signs it directly; RSA (PKCS#1 v1.5) and ECDSA
 * (DER) sign its SHA-256. */
#include "signature.h"

#include <stdlib.h>

#include <openssl/err.h>

#include "digest_cache.h"
#include "ed25519.h"

/* NULL for Ed25519 (no pre-hash), SHA-256 for RSA and EC; -1 for anything else. */
static int digest_for(EVP_PKEY *key, const EVP_MD **md)
{
    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_ED25519:
        *md = NULL;
        return 0;
    case EVP_PKEY_RSA:
    case EVP_PKEY_EC:
        *md = tg_sha256();
        return *md ? 0 : -1;
    default:
        return -1;
    }
}

int tg_nonce_sign(EVP_PKEY *priv, const char *nonce, size_t nonce_len,
                  unsigned char **sig, size_t *sig_len)
{
    EVP_MD_CTX *ctx = NULL;
    const EVP_MD *md;
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = -1;

    *sig = NULL;
    *sig_len = 0;
    if (priv == NULL || nonce == NULL || digest_for(priv, &md) != 0)
        return -1;
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL || EVP_DigestSignInit(ctx, NULL, md, NULL, priv) != 1)
        goto out;
    if (EVP_DigestSign(ctx, NULL, &len, (const unsigned char *)nonce, nonce_len) != 1)
        goto out;
    buf = malloc(len);
    if (buf == NULL || EVP_DigestSign(ctx, buf, &len, (const unsigned char *)nonce, nonce_len) != 1)
        goto out;
    *sig = buf;
    *sig_len = len;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    EVP_MD_CTX_free(ctx);
    if (rc != 0)
        ERR_clear_error();
    return rc;
}

/* Ed25519 goes to libsodium (ed25519.h says why and what it refuses). */
static int verify_ed25519(EVP_PKEY *pub, const char *nonce, size_t nonce_len, const unsigned char *sig,
                          size_t sig_len)
{
    unsigned char raw[TG_ED25519_KEY_LEN];
    size_t raw_len = sizeof(raw);

    if (EVP_PKEY_get_raw_public_key(pub, raw, &raw_len) != 1 || raw_len != sizeof(raw)) {
        ERR_clear_error();
        return 0;
    }
    return tg_ed25519_verify(raw, (const unsigned char *)nonce, nonce_len, sig, sig_len);
}

int tg_nonce_verify(EVP_PKEY *pub, const char *nonce, size_t nonce_len,
                    const unsigned char *sig, size_t sig_len)
{
    EVP_MD_CTX *ctx;
    const EVP_MD *md;
    int ok = 0;

    if (pub == NULL || nonce == NULL || sig == NULL || sig_len == 0 || digest_for(pub, &md) != 0)
        return 0;
    if (md == NULL)
        return verify_ed25519(pub, nonce, nonce_len, sig, sig_len);
    ctx = EVP_MD_CTX_new();
    if (ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, md, NULL, pub) == 1)
        ok = EVP_DigestVerify(ctx, sig, sig_len, (const unsigned char *)nonce, nonce_len) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        ERR_clear_error();
    return ok;
}
