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

/* The cluster ids /v1/nonce made a tenant namespace for, comma-separated in
 * this annotation of the token's Secret: the per-token bound is counted there,
 * written with a resourceVersion precondition so racing requests cannot both
 * take the last place. */
#define TG_AUTH_BTOKEN_NONCE_IDS "tenantgate.io/nonce-cluster-ids"
/* The label of a Namespace /v1/nonce made: the token id that made it. The
 * signer's nonce controller fills such namespaces only; its bootstrapgc
 * controller removes them once the token is gone and no Tenant came. */
#define TG_AUTH_BTOKEN_ID_LABEL TG_BTOKEN_NS_LABEL
/* Ceiling of --max-nonces-per-token: the annotation stays small. */
#define TG_AUTH_BTOKEN_MAX_NONCES 64

typedef struct tg_auth_btoken_record {
    int single_use;
    char uid[64];                  /* preconditions of the consuming DELETE */
    char resource_version[64];
    /* TG_AUTH_BTOKEN_NONCE_IDS as read ("" when absent) */
    char nonce_ids[TG_AUTH_BTOKEN_MAX_NONCES * 64];
} tg_auth_btoken_record;

/* What /v1/nonce may do with a token for cluster_id. */
typedef enum tg_auth_nonce_room {
    TG_AUTH_NONCE_KNOWN = 0,       /* the id is recorded already: a retry, no new place */
    TG_AUTH_NONCE_RECORD,          /* a free place: record the id first */
    TG_AUTH_NONCE_EXHAUSTED,       /* every place taken by other ids */
} tg_auth_nonce_room;

/* "<prefix><id>" into buf. */
void tg_auth_btoken_secret_name(const char *id, char *buf, size_t len);

/* 1 when secret (the Secret as read, data base64) accepts t at now: the
 * type, token-id equal to t's id, the SHA-256 of t's secret equal to
 * secret-sha256 (constant time), expiration (RFC 3339, UTC) after now, usage
 * single-use or reusable; rec then filled. 0 otherwise, for any reason: the
 * caller answers all of them alike. secret NULL (no such Secret) still
 * hashes once, so that an unknown id costs what a known one does. */
int tg_auth_btoken_accepts(json_object *secret, const tg_btoken *t, time_t now, tg_auth_btoken_record *rec);

/* Whether rec's token may make a tenant namespace for cluster_id: a
 * single-use token has one place, a reusable one max. A recorded list that
 * does not parse counts as full (fail closed). */
tg_auth_nonce_room tg_auth_btoken_nonce_room(const tg_auth_btoken_record *rec, const char *cluster_id, int max);

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ", or -1. */
long long tg_auth_rfc3339_utc(const char *s);

#endif
