/* nonce.c - the provider's challenge (PROTOCOL.md 4). */
#include "nonce.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

int tg_nonce_generate(char out[TG_NONCE_TEXT_LEN + 1])
{
    unsigned char raw[TG_NONCE_RAW_LEN];
    int n;

    /* The private DRBG: nonce bytes are never shown to anyone before use. */
    if (RAND_priv_bytes(raw, sizeof(raw)) != 1)
        return -1;
    n = EVP_EncodeBlock((unsigned char *)out, raw, sizeof(raw));
    OPENSSL_cleanse(raw, sizeof(raw));
    if (n != TG_NONCE_TEXT_LEN) {
        OPENSSL_cleanse(out, TG_NONCE_TEXT_LEN + 1);
        return -1;
    }
    out[TG_NONCE_TEXT_LEN] = '\0';
    return 0;
}

static int is_b64(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int tg_nonce_text_valid(const char *s, size_t len)
{
    unsigned char raw[TG_NONCE_RAW_LEN + 2];
    int n;

    if (s == NULL || len != TG_NONCE_TEXT_LEN)
        return 0;
    /* 64 bytes = 21 full groups + one byte: 86 alphabet characters and "==".
     * EVP_DecodeBlock alone would also accept surrounding whitespace. */
    for (size_t i = 0; i < TG_NONCE_TEXT_LEN - 2; i++)
        if (!is_b64((unsigned char)s[i]))
            return 0;
    if (s[TG_NONCE_TEXT_LEN - 2] != '=' || s[TG_NONCE_TEXT_LEN - 1] != '=')
        return 0;
    /* Decodes to 66 bytes: the two padding bytes come out as zeros. */
    n = EVP_DecodeBlock(raw, (const unsigned char *)s, TG_NONCE_TEXT_LEN);
    OPENSSL_cleanse(raw, sizeof(raw));
    return n == TG_NONCE_RAW_LEN + 2;
}
