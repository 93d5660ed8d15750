/* bootstrap_token.c - see bootstrap_token.h. */
#include "pki/bootstrap_token.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sodium.h>

static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";

static void fill(char *out, size_t n)
{
    /* randombytes_uniform draws without modulo bias. */
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[randombytes_uniform(sizeof(alphabet) - 1)];
    out[n] = '\0';
}

int tg_btoken_generate(tg_btoken *t)
{
    if (sodium_init() < 0)
        return -1;
    fill(t->id, TG_BTOKEN_ID_LEN);
    fill(t->secret, TG_BTOKEN_SECRET_LEN);
    return 0;
}

void tg_btoken_format(const tg_btoken *t, char out[TG_BTOKEN_LEN + 1])
{
    snprintf(out, TG_BTOKEN_LEN + 1, "%s.%s", t->id, t->secret);
}

static int all_token_chars(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

int tg_btoken_id_valid(const char *id, size_t len)
{
    return id && len == TG_BTOKEN_ID_LEN && all_token_chars(id, len);
}

int tg_btoken_parse(const char *text, size_t len, tg_btoken *t, char *why, size_t why_len)
{
    if (text == NULL || len != TG_BTOKEN_LEN || text[TG_BTOKEN_ID_LEN] != '.' ||
        !all_token_chars(text, TG_BTOKEN_ID_LEN) ||
        !all_token_chars(text + TG_BTOKEN_ID_LEN + 1, TG_BTOKEN_SECRET_LEN)) {
        snprintf(why, why_len, "expected a token of the form ID.SECRET: %d and %d characters "
                 "of a-z and 0-9, %zu characters in all", TG_BTOKEN_ID_LEN, TG_BTOKEN_SECRET_LEN,
                 (size_t)TG_BTOKEN_LEN);
        return -1;
    }
    memcpy(t->id, text, TG_BTOKEN_ID_LEN);
    t->id[TG_BTOKEN_ID_LEN] = '\0';
    memcpy(t->secret, text + TG_BTOKEN_ID_LEN + 1, TG_BTOKEN_SECRET_LEN);
    t->secret[TG_BTOKEN_SECRET_LEN] = '\0';
    return 0;
}

void tg_btoken_hash_hex(const char *secret, char out[TG_BTOKEN_HASH_HEX_LEN + 1])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)secret, strlen(secret), md);
    for (size_t i = 0; i < sizeof(md); i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    OPENSSL_cleanse(md, sizeof(md));
}

int tg_btoken_secret_matches(const char *stored_hex, const char *secret)
{
    char got[TG_BTOKEN_HASH_HEX_LEN + 1];
    int same;

    if (stored_hex == NULL || secret == NULL || strlen(stored_hex) != TG_BTOKEN_HASH_HEX_LEN)
        return 0;
    tg_btoken_hash_hex(secret, got);
    same = CRYPTO_memcmp(got, stored_hex, TG_BTOKEN_HASH_HEX_LEN) == 0;
    OPENSSL_cleanse(got, sizeof(got));
    return same;
}
