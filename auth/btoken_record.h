/* btoken_record.h - whether a bootstrap token's Secret (`kubectl tenantgate
 * create token`: <ns>/tenantgate-token-<ID>, type
 * tenantgate.io/bootstrap-token, data token-id, secret-sha256, expiration,
 * usage) accepts a token presented to /v1/nonce or /v1/tenant (pure). */
#ifndef TG_AUTH_BTOKEN_RECORD_H
#define TG_AUTH_BTOKEN_RECORD_H

#include <time.h>

#include <json-c/json.h>

#include "pki/bootstrap_token.h"

#define TG_AUTH_BTOKEN_SECRET_PREFIX "tenantgate-token-"
#define TG_AUTH_BTOKEN_TYPE "tenantgate.io/bootstrap-token"

typedef struct tg_auth_btoken_record {
    int single_use;
    char uid[64];                  /* preconditions of the consuming DELETE */
    char resource_version[64];
} tg_auth_btoken_record;

/* "<prefix><id>" into buf. */
void tg_auth_btoken_secret_name(const char *id, char *buf, size_t len);

/* 1 when secret (the Secret as read, data base64) accepts t at now: the
 * type, token-id equal to t's id, the SHA-256 of t's secret equal to
 * secret-sha256 (constant time), expiration (RFC 3339, UTC) after now, usage
 * single-use or reusable; rec then filled. 0 otherwise, for any reason: the
 * caller answers all of them alike. secret NULL (no such Secret) still
 * hashes once, so that an unknown id costs what a known one does. */
int tg_auth_btoken_accepts(json_object *secret, const tg_btoken *t, time_t now, tg_auth_btoken_record *rec);

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ", or -1. */
long long tg_auth_rfc3339_utc(const char *s);

#endif
