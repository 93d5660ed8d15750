/* rc_secret.c - Secret data (decoded, cleansed, patched) and the nonce as
 * the informer cache or the API server has it (reconcile_common.h). */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "kube/base64.h"
#include "kube/json.h"

/* data[key] of a Secret, base64-decoded (malloc'd, NUL-terminated), or NULL. */
unsigned char *rc_secret_data(json_object *secret, const char *key, size_t *len)
{
    const char *b64 = tg_json_path_string(secret, "data", key, NULL);
    unsigned char *raw, *out;
    size_t n = 0;
    char err[64];

    if (!b64 || !*b64 || !(raw = tg_base64_decode(b64, strlen(b64), &n, err, sizeof(err))))
        return NULL;
    if (!(out = realloc(raw, n + 1))) {
        OPENSSL_cleanse(raw, n);
        free(raw);
        return NULL;
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

void rc_free_secret(void *p, size_t len)
{
    if (p)
        OPENSSL_cleanse(p, len);
    free(p);
}

/* {"data":{key: base64(value)}} merge patch on a Secret. */
long rc_patch_secret_data(tg_api *api, const char *ns, const char *name, const char *key,
                          const void *value, size_t len, const char *rv, char *err, size_t err_len)
{
    char path[1024], *b64 = tg_base64_encode(value, len, NULL);
    json_object *patch, *data, *meta;
    long st;

    if (!b64) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    patch = json_object_new_object();
    data = json_object_new_object();
    json_object_object_add(data, key, json_object_new_string(b64));
    json_object_object_add(patch, "data", data);
    if (rv) {   /* optimistic concurrency: fail with 409 if it changed */
        meta = json_object_new_object();
        json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
        json_object_object_add(patch, "metadata", meta);
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    OPENSSL_cleanse(b64, strlen(b64));
    free(b64);
    json_object_put(patch);   /* the serialised copy inside json-c is not cleansed: a known limit */
    return st;
}

/* ---------- informer cache readers (copy under the read lock, cache.h) ---------- */

typedef struct nonce_look {
    char *b64;          /* data.nonce as stored (base64), malloc'd; NULL if none */
    int found;          /* the Secret is in the cache */
    int oom;
} nonce_look;

static void on_nonce_visit(json_object *sec, void *data)
{
    nonce_look *l = data;
    const char *b64 = tg_json_path_string(sec, "data", "nonce", NULL);

    l->found = 1;
    if (b64 && *b64 && !(l->b64 = strdup(b64)))
        l->oom = 1;
}

/* The cached nonce Secret ns/name: 1 found (*b64 its data.nonce or NULL),
 * 0 not cached, -1 out of memory. */
int rc_cached_nonce_b64(tg_signer *s, const char *ns, const char *name, char **b64)
{
    nonce_look l = {0};

    *b64 = NULL;
    if (!s->nonce_cache || !tg_cache_synced(s->nonce_cache) || !tg_cache_get(s->nonce_cache, ns, name, on_nonce_visit, &l))
        return 0;
    if (l.oom)
        return -1;
    *b64 = l.b64;
    return 1;
}

/* The nonce text of a tenant namespace from the cache (malloc'd, secret), or NULL. */
char *rc_cached_nonce(tg_signer *s, const char *ns)
{
    char *b64 = NULL, err[64];
    unsigned char *raw = NULL, *out = NULL;
    size_t n = 0;

    if (rc_cached_nonce_b64(s, ns, TG_NONCE_SECRET, &b64) != 1 || !b64)
        return NULL;
    if ((raw = tg_base64_decode(b64, strlen(b64), &n, err, sizeof(err))) && (out = malloc(n + 1))) {
        memcpy(out, raw, n);
        out[n] = '\0';
    }
    rc_free_secret(raw, n);
    rc_free_secret(b64, strlen(b64));
    return (char *)out;
}

/* The nonce text of a tenant namespace (malloc'd, secret) or NULL. */
char *rc_read_nonce(tg_api *api, const char *ns, json_object **secret_out)
{
    char path[1024], err[256];
    json_object *sec = NULL;
    char *n = NULL;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/" TG_NONCE_SECRET, ns);
    if (tg_api_get(api, path, &sec, err, sizeof(err)) == 200)
        n = (char *)rc_secret_data(sec, "nonce", NULL);
    if (secret_out)
        *secret_out = sec;
    else
        json_object_put(sec);
    return n;
}
