/* btoken_record.c - see btoken_record.h. */
#include "btoken_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "kube/json.h"
#include "kube/secret_data.h"

void tg_auth_btoken_secret_name(const char *id, char *buf, size_t len)
{
    snprintf(buf, len, TG_AUTH_BTOKEN_SECRET_PREFIX "%s", id);
}

long long tg_auth_rfc3339_utc(const char *s)
{
    struct tm tm;
    char tail;

    memset(&tm, 0, sizeof(tm));
    if (!s || strlen(s) != 20 ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &tail) != 7 || tail != 'Z')
        return -1;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (long long)timegm(&tm);
}

static int meta_copy(json_object *secret, const char *key, char *buf, size_t len)
{
    const char *v = tg_json_path_string(secret, "metadata", key, NULL);

    if (!v || strlen(v) >= len)
        return -1;
    strcpy(buf, v);
    return 0;
}

/* The recorded ids into buf ("" when none); -1 when they do not fit. */
static int meta_annotation(json_object *secret, char *buf, size_t len)
{
    const char *v = tg_json_path_string(secret, "metadata", "annotations", TG_AUTH_BTOKEN_NONCE_IDS, NULL);

    if (!v)
        v = "";
    if (strlen(v) >= len)
        return -1;
    strcpy(buf, v);
    return 0;
}

int tg_auth_btoken_accepts(json_object *secret, const tg_btoken *t, time_t now, tg_auth_btoken_record *rec)
{
    /* a stand-in hash, compared when there is no record, so both paths hash */
    static const char nothing[TG_BTOKEN_HASH_HEX_LEN + 1] =
        "0000000000000000000000000000000000000000000000000000000000000000";
    char id[16] = "", hash[TG_BTOKEN_HASH_HEX_LEN + 1] = "", expiration[32] = "", usage[16] = "";
    const char *type = secret ? tg_json_string(secret, "type") : NULL;
    long long until;
    int ok;

    memset(rec, 0, sizeof(*rec));
    if (!secret) {
        (void)tg_btoken_secret_matches(nothing, t->secret);
        return 0;
    }
    ok = type && strcmp(type, TG_AUTH_BTOKEN_TYPE) == 0 && tg_secret_data_text(secret, "token-id", id, sizeof(id)) == 0 &&
         strcmp(id, t->id) == 0 && tg_secret_data_text(secret, "secret-sha256", hash, sizeof(hash)) == 0 &&
         strlen(hash) == TG_BTOKEN_HASH_HEX_LEN;
    ok = tg_btoken_secret_matches(ok ? hash : nothing, t->secret) && ok;
    sodium_memzero(hash, sizeof(hash));
    if (!ok || tg_secret_data_text(secret, "expiration", expiration, sizeof(expiration)) != 0 ||
        tg_secret_data_text(secret, "usage", usage, sizeof(usage)) != 0)
        return 0;
    until = tg_auth_rfc3339_utc(expiration);
    if (until < 0 || until <= (long long)now)
        return 0;
    if (strcmp(usage, "single-use") == 0)
        rec->single_use = 1;
    else if (strcmp(usage, "reusable") != 0)
        return 0;
    if (meta_annotation(secret, rec->nonce_ids, sizeof(rec->nonce_ids)) != 0)
        return 0;
    return meta_copy(secret, "uid", rec->uid, sizeof(rec->uid)) == 0 &&
           meta_copy(secret, "resourceVersion", rec->resource_version, sizeof(rec->resource_version)) == 0;
}

tg_auth_nonce_room tg_auth_btoken_nonce_room(const tg_auth_btoken_record *rec, const char *cluster_id, int max)
{
    const char *p = rec->nonce_ids;
    size_t want = strlen(cluster_id);
    int n = 0;

    if (rec->single_use)
        max = 1;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len == 0)
            return TG_AUTH_NONCE_EXHAUSTED;   /* not what this server writes */
        if (len == want && memcmp(p, cluster_id, len) == 0)
            return TG_AUTH_NONCE_KNOWN;
        n++;
        p += len + (end ? 1 : 0);
        if (end && !*p)
            return TG_AUTH_NONCE_EXHAUSTED;
    }
    return n < max ? TG_AUTH_NONCE_RECORD : TG_AUTH_NONCE_EXHAUSTED;
}
