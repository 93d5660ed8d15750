/* v1_request.c - see v1_request.h. */
#include "v1_request.h"

#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "auth/issue_docs.h"
#include "kube/json.h"
#include "pki/tenant.h"

#define LABEL_REMOTE_ID "liqo.io/remote-cluster-id"

static int fail(tg_auth_reason *reason, tg_auth_reason r, char *why, size_t why_len, const char *msg)
{
    *reason = r;
    snprintf(why, why_len, "%s", msg);
    return -1;
}

/* The JSON object of a body, or NULL with the reason set. */
static json_object *parse_object(const char *body, size_t len, tg_auth_reason *reason, char *why, size_t why_len)
{
    json_object *doc = tg_json_parse(body, len, NULL, 0);

    if (!doc || !json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len,
             "expected a JSON object without duplicate keys");
        return NULL;
    }
    return doc;
}

/* A bad token's shape gets the answer a wrong token gets: no oracle
 * between a mistyped and an unknown token. */
static int parse_token(json_object *doc, tg_btoken *t, tg_auth_reason *reason, char *why, size_t why_len)
{
    json_object *v;
    char ignored[128];

    if (!json_object_object_get_ex(doc, "token", &v) || !json_object_is_type(v, json_type_string))
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected a string \"token\"");
    if (tg_btoken_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), t, ignored,
                        sizeof(ignored)) != 0)
        return fail(reason, TG_AUTH_INVALID_TOKEN, why, why_len, TG_AUTH_V1_INVALID_TOKEN_MSG);
    return 0;
}

static int copy_cluster_id(const char *s, size_t n, char out[TG_AUTH_MAX_CLUSTER_ID + 1], tg_auth_reason *reason,
                           char *why, size_t why_len, const char *field)
{
    char msg[160];

    snprintf(msg, sizeof(msg), "expected %s: 1-63 characters matching ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", field);
    if (!s || n == 0 || n > TG_AUTH_MAX_CLUSTER_ID || memchr(s, '\0', n))
        return fail(reason, TG_AUTH_INVALID_CLUSTER_ID, why, why_len, msg);
    memcpy(out, s, n);
    out[n] = '\0';
    if (!tg_cluster_id_valid(out))
        return fail(reason, TG_AUTH_INVALID_CLUSTER_ID, why, why_len, msg);
    return 0;
}

static int string_id(json_object *obj, const char *key, char out[TG_AUTH_MAX_CLUSTER_ID + 1],
                     tg_auth_reason *reason, char *why, size_t why_len, const char *field)
{
    json_object *v;

    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return copy_cluster_id(NULL, 0, out, reason, why, why_len, field);
    return copy_cluster_id(json_object_get_string(v), (size_t)json_object_get_string_len(v), out, reason, why,
                           why_len, field);
}

int tg_auth_v1_parse_nonce(const char *body, size_t len, tg_auth_v1_request *out, tg_auth_reason *reason,
                           char *why, size_t why_len)
{
    json_object *doc;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!(doc = parse_object(body, len, reason, why, why_len)))
        return -1;
    rc = string_id(doc, "clusterID", out->cluster_id, reason, why, why_len, "clusterID");
    if (rc == 0)
        rc = parse_token(doc, &out->token, reason, why, why_len);
    json_object_put(doc);
    return rc;
}

/* The Tenant to create: apiVersion, kind, metadata chosen here, spec as sent. */
static json_object *tenant_doc(const char *cluster_id, json_object *spec)
{
    json_object *t = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object();
    char ns[96];

    tg_auth_tenant_namespace(cluster_id, ns, sizeof(ns));
    json_object_object_add(t, "apiVersion", json_object_new_string(TG_AUTH_TENANT_API));
    json_object_object_add(t, "kind", json_object_new_string("Tenant"));
    json_object_object_add(meta, "name", json_object_new_string(cluster_id));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(labels, LABEL_REMOTE_ID, json_object_new_string(cluster_id));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(t, "metadata", meta);
    json_object_object_add(t, "spec", json_object_get(spec));
    return t;
}

static int check_tenant(json_object *tenant, tg_auth_v1_request *out, tg_auth_reason *reason, char *why,
                        size_t why_len, json_object **spec)
{
    const char *api = tg_json_string(tenant, "apiVersion"), *kind = tg_json_string(tenant, "kind");

    if (!api || strcmp(api, TG_AUTH_TENANT_API) != 0 || !kind || strcmp(kind, "Tenant") != 0)
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len,
                    "expected tenant.apiVersion " TG_AUTH_TENANT_API " and tenant.kind Tenant");
    if (!(*spec = tg_json_path(tenant, "spec", NULL)))
        return fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected an object tenant.spec");
    return string_id(*spec, "clusterID", out->cluster_id, reason, why, why_len, "tenant.spec.clusterID");
}

int tg_auth_v1_parse_tenant(const char *body, size_t len, tg_auth_v1_request *out, tg_auth_reason *reason,
                            char *why, size_t why_len)
{
    json_object *doc, *tenant, *spec = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!(doc = parse_object(body, len, reason, why, why_len)))
        return -1;
    if (!json_object_object_get_ex(doc, "tenant", &tenant) || !json_object_is_type(tenant, json_type_object))
        rc = fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "expected an object \"tenant\"");
    else
        rc = check_tenant(tenant, out, reason, why, why_len, &spec);
    if (rc == 0)
        rc = parse_token(doc, &out->token, reason, why, why_len);
    if (rc == 0 && !(out->tenant = tenant_doc(out->cluster_id, spec)))
        rc = fail(reason, TG_AUTH_MALFORMED_REQUEST, why, why_len, "out of memory");
    json_object_put(doc);
    return rc;
}

void tg_auth_v1_request_clear(tg_auth_v1_request *r)
{
    sodium_memzero(&r->token, sizeof(r->token));
    json_object_put(r->tenant);
    r->tenant = NULL;
}
