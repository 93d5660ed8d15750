/* token.h - the peering token of Secret liqo/auth-token (key `token`): 128
 * lowercase hex characters from libsodium's CSPRNG, and its comparison with
 * what a client sent. Pure apart from the random bytes; call sodium_init()
 * first. */
#ifndef TG_AUTH_TOKEN_H
#define TG_AUTH_TOKEN_H

#include <stddef.h>

#define TG_AUTH_TOKEN_LEN 128          /* hex characters: 64 random bytes */

/* A fresh token into out (TG_AUTH_TOKEN_LEN characters and a NUL). */
void tg_auth_token_new(char out[TG_AUTH_TOKEN_LEN + 1]);

/* 1 when s[0..len) has the shape of a token: TG_AUTH_TOKEN_LEN hex digits. */
int tg_auth_token_well_formed(const char *s, size_t len);

/* 1 when given equals expected. Time does not depend on where they differ
 * nor on given's length: both are hashed (BLAKE2b) and the digests compared
 * with sodium_memcmp. An empty expected never matches. */
int tg_auth_token_equal(const char *expected, size_t expected_len, const char *given, size_t given_len);

#endif
