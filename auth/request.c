/* request.c - see request.h. */
#include "request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/tenant.h"

/* A PEM CSR of an Ed25519 key is ~300 bytes; RSA-4096 ~1.7 KiB. */
#define MAX_CSR_B64 (16u << 10)

static int fail(tg_auth_reason *reason, tg_auth_reason r, char *why, size_t why_len, const char *msg)
{
    *reason = r;
    snprintf(why, why_len, "%s", msg);
    return -1;
}

/* A string member within max bytes: 0 with *s and *n, -1 when missing,
 * not a string, or too long. */
static int string_member(json_object *obj, const char *key, size_t max, const char **s, size_t *n)
{
    json_object *v;

    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return -1;
    *n = (size_t)json_object_get_string_len(v);
    *s = json_object_get_string(v);
    return *n > max || memchr(*s, '\0', *n) ? -1 : 0;
}

static int parse_cluster(json_object *doc, tg_auth_request *out, tg_auth_reason *reason, char *why, size_t why_len)
{
    json_object *cluster;
    const char *s;
    size_t n;

    if (!json_object_object_get_ex(doc, "cluster", &cluster) || !json_object_is_type(cluster, json_type_object))
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected an object \"cluster\"");
    if (string_member(cluster, "clusterID", TG_AUTH_MAX_CLUSTER_ID, &s, &n) != 0 || n == 0)
        return fail(reason, TG_AUTH_INVALID_CLUSTER_ID, why, why_len,
                    "expected cluster.clusterID: a string of 1-63 characters [a-z0-9-]");
    memcpy(out->cluster_id, s, n);
    out->cluster_id[n] = '\0';
    if (!tg_cluster_id_valid(out->cluster_id))
        return fail(reason, TG_AUTH_INVALID_CLUSTER_ID, why, why_len,
                    "expected cluster.clusterID to match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
    /* clusterName is informative only; absent is fine */
    if (json_object_object_get_ex(cluster, "clusterName", NULL)) {
        if (string_member(cluster, "clusterName", TG_AUTH_MAX_CLUSTER_NAME, &s, &n) != 0)
            return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len,
                        "expected cluster.clusterName: a string of at most 253 bytes");
        memcpy(out->cluster_name, s, n);
        out->cluster_name[n] = '\0';
    }
    return 0;
}

/* A token member into a copy of its own (*out, *len): absent means empty,
 * as Go's zero value. */
static int parse_token(json_object *doc, const char *key, char **out, size_t *len, tg_auth_reason *reason, char *why,
                       size_t why_len)
{
    const char *s = "";
    size_t n = 0;

    if (json_object_object_get_ex(doc, key, NULL) && string_member(doc, key, TG_AUTH_MAX_TOKEN, &s, &n) != 0) {
        *reason = TG_AUTH_MALFORMED_REQUEST;
        snprintf(why, why_len, "expected %s: a string of at most 1024 bytes", key);
        return -1;
    }
    if (!(*out = malloc(n + 1)))
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "out of memory");
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    *len = n;
    return 0;
}

/* json-c's copy of a token goes with the tree; wipe it first. */
static void wipe_member(json_object *doc, const char *key)
{
    json_object *t;

    if (json_object_object_get_ex(doc, key, &t) && json_object_is_type(t, json_type_string))
        sodium_memzero((void *)json_object_get_string(t), (size_t)json_object_get_string_len(t));
}

static int parse_csr(json_object *doc, tg_auth_request *out, tg_auth_reason *reason, char *why, size_t why_len)
{
    const char *s;
    size_t n;
    char err[128];

    if (string_member(doc, "certificateSigningRequest", MAX_CSR_B64, &s, &n) != 0 || n == 0)
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len,
                    "expected certificateSigningRequest: the base64 of a PEM CSR, at most 16 KiB");
    if (!(out->csr_pem = tg_base64_decode(s, n, &out->csr_len, err, sizeof(err)))) {
        *reason = TG_AUTH_MALFORMED_REQUEST;
        snprintf(why, why_len, "expected certificateSigningRequest in base64: %s", err);
        return -1;
    }
    return 0;
}

int tg_auth_request_parse(const char *body, size_t len, tg_auth_request *out, tg_auth_reason *reason, char *why,
                          size_t why_len)
{
    json_object *doc;
    char err[160];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (len > TG_AUTH_MAX_BODY)
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected a body of at most 64 KiB");
    if (!(doc = tg_json_parse(body, len, err, sizeof(err)))) {
        *reason = TG_AUTH_MALFORMED_REQUEST;
        snprintf(why, why_len, "expected a JSON object: %s", err);
        return -1;
    }
    if (!json_object_is_type(doc, json_type_object))
        fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected a JSON object");
    else if (parse_cluster(doc, out, reason, why, why_len) == 0 &&
             parse_token(doc, "destinationClusterToken", &out->token, &out->token_len, reason, why, why_len) == 0 &&
             parse_token(doc, "originClusterToken", &out->origin_token, &out->origin_token_len, reason, why,
                         why_len) == 0 &&
             parse_csr(doc, out, reason, why, why_len) == 0)
        rc = 0;
    wipe_member(doc, "destinationClusterToken");
    wipe_member(doc, "originClusterToken");
    json_object_put(doc);
    return rc;
}

void tg_auth_request_clear(tg_auth_request *r)
{
    if (r->token)
        sodium_memzero(r->token, r->token_len);
    if (r->origin_token)
        sodium_memzero(r->origin_token, r->origin_token_len);
    free(r->token);
    free(r->origin_token);
    free(r->csr_pem);
    memset(r, 0, sizeof(*r));
}

int tg_auth_cluster_id_is_uuid(const char *id)
{
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

    if (strlen(id) != sizeof(shape) - 1)
        return 0;
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        char c = id[i];
        int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (shape[i] == '-' ? c != '-' : !hex)
            return 0;
    }
    return 1;
}
