/* bootstrap_token.h - the one string a provider hands a consumer to peer
 * (`kubectl tenantgate create token`), as kubeadm's join tokens: "ID.SECRET",
 * ID 6 and SECRET 32 characters of [a-z0-9]. The ID names the stored record
 * and may be shown; the SECRET (about 165 bits) is shown once and stored only
 * as its SHA-256. */
#ifndef TG_PKI_BOOTSTRAP_TOKEN_H
#define TG_PKI_BOOTSTRAP_TOKEN_H

#include <stddef.h>

#define TG_BTOKEN_ID_LEN 6
#define TG_BTOKEN_SECRET_LEN 32
#define TG_BTOKEN_LEN (TG_BTOKEN_ID_LEN + 1 + TG_BTOKEN_SECRET_LEN)
#define TG_BTOKEN_HASH_HEX_LEN 64
/* Where the tokens are kept: a namespace of their own, so that whoever reads
 * them (tenantgate-auth) reads no other Secret. */
#define TG_BTOKEN_NAMESPACE "tenantgate-tokens"
/* The label tenantgate-auth's /v1/nonce puts on the tenant namespace it
 * makes: the id of the token that made it (the signer makes the nonce there,
 * and removes the namespace when the token is gone and no Tenant came). */
#define TG_BTOKEN_NS_LABEL "tenantgate.io/bootstrap-token-id"

typedef struct tg_btoken {
    char id[TG_BTOKEN_ID_LEN + 1];
    char secret[TG_BTOKEN_SECRET_LEN + 1];
} tg_btoken;

/* A new token from the CSPRNG. 0 on success. */
int tg_btoken_generate(tg_btoken *t);

/* "ID.SECRET" into out (TG_BTOKEN_LEN + 1 bytes). */
void tg_btoken_format(const tg_btoken *t, char out[TG_BTOKEN_LEN + 1]);

/* Split and check text of len bytes. 0, or -1 with why (what was expected,
 * never the text itself: it may be a mistyped secret). */
int tg_btoken_parse(const char *text, size_t len, tg_btoken *t, char *why, size_t why_len);

/* 1 when id is a well-formed token id. */
int tg_btoken_id_valid(const char *id, size_t len);

/* Lowercase hex SHA-256 of the secret, as stored. */
void tg_btoken_hash_hex(const char *secret, char out[TG_BTOKEN_HASH_HEX_LEN + 1]);

/* 1 when secret hashes to stored_hex, compared in constant time. */
int tg_btoken_secret_matches(const char *stored_hex, const char *secret);

#endif
