/* token.c - see token.h. */
#include "token.h"

#include <sodium.h>

void tg_auth_token_new(char out[TG_AUTH_TOKEN_LEN + 1])
{
    unsigned char raw[TG_AUTH_TOKEN_LEN / 2];

    randombytes_buf(raw, sizeof(raw));
    sodium_bin2hex(out, TG_AUTH_TOKEN_LEN + 1, raw, sizeof(raw));
    sodium_memzero(raw, sizeof(raw));
}

int tg_auth_token_well_formed(const char *s, size_t len)
{
    if (len != TG_AUTH_TOKEN_LEN)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return 0;
    }
    return 1;
}

int tg_auth_token_equal(const char *expected, size_t expected_len, const char *given, size_t given_len)
{
    unsigned char a[crypto_generichash_BYTES], b[crypto_generichash_BYTES];
    int same;

    /* Hashing first makes the comparison length-independent: a memcmp of
     * unequal lengths would have to return early. */
    crypto_generichash(a, sizeof(a), (const unsigned char *)expected, expected_len, NULL, 0);
    crypto_generichash(b, sizeof(b), (const unsigned char *)given, given_len, NULL, 0);
    same = sodium_memcmp(a, b, sizeof(a)) == 0;
    sodium_memzero(a, sizeof(a));
    sodium_memzero(b, sizeof(b));
    return same && expected_len > 0;
}
