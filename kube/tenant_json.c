/* tenant_json.c - Tenant <-> json-c tree (PROTOCOL.md 2 and 5, step 1). */
#include "tenant_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"

/* The member key of obj, or NULL when it is absent or a JSON null. */
static json_object *member(json_object *obj, const char *key)
{
    json_object *val = NULL;

    if (!json_object_object_get_ex(obj, key, &val))
        return NULL;
    return val;
}

static const char *type_name(json_object *val)
{
    return json_type_to_name(json_object_get_type(val));
}

/* A string member into *out (malloc'd). where = "spec.", "metadata." or "". */
static int decode_string(json_object *parent, const char *where, const char *key, int required,
                         char **out, tg_verdict *v)
{
    json_object *val = member(parent, key);
    const char *s;
    size_t len;

    if (val == NULL) {
        if (required)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: required field is missing",
                                   where, key);
        return 0;
    }
    if (!json_object_is_type(val, json_type_string))
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: expected a string, found %s",
                               where, key, type_name(val));
    s = json_object_get_string(val);
    len = (size_t)json_object_get_string_len(val);
    if (strlen(s) != len)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: string contains a NUL character",
                               where, key);
    if (len > TG_TENANT_MAX_STRING)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "%s%s: expected at most %u characters, found %zu", where, key,
                               TG_TENANT_MAX_STRING, len);
    if (required && len == 0)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "%s%s: expected a non-empty string, found \"\"", where, key);
    *out = strdup(s);
    if (*out == NULL)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: out of memory", where, key);
    return 0;
}

/* A base64 bytes member of spec into *out. Its content is never echoed: it
 * may be a signature. */
static int decode_bytes(json_object *spec, const char *key, int required, size_t max,
                        tg_bytes *out, tg_verdict *v)
{
    json_object *val = member(spec, key);
    const char *s;
    size_t len, max_text = (max + 2) / 3 * 4;
    char why[128];

    if (val == NULL) {
        if (required)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "spec.%s: required field is missing",
                                   key);
        return 0;
    }
    if (!json_object_is_type(val, json_type_string))
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "spec.%s: expected a base64 string, found %s", key,
                               type_name(val));
    s = json_object_get_string(val);
    len = (size_t)json_object_get_string_len(val);
    if (len > max_text)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "spec.%s: expected at most %zu bytes, found %zu base64 characters",
                               key, max, len);
    if (required && len == 0)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "spec.%s: expected non-empty base64, found an empty string", key);
    out->data = tg_base64_decode(s, len, &out->len, why, sizeof(why));
    if (out->data == NULL)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "spec.%s: expected standard padded base64, found %s", key, why);
    if (out->len > max)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                               "spec.%s: expected at most %zu bytes, found %zu", key, max,
                               out->len);
    return 0;
}

typedef struct enum_value {
    const char *name;
    int value;
} enum_value;

static const enum_value authz_policies[] = {
    { "KeysExchange", TG_POLICY_KEYS_EXCHANGE },
    { "TolerateNoHandshake", TG_POLICY_TOLERATE_NO_HANDSHAKE },
    { NULL, 0 },
};

static const enum_value tenant_conditions[] = {
    { "Active", TG_CONDITION_ACTIVE },
    { "Cordoned", TG_CONDITION_CORDONED },
    { "Drained", TG_CONDITION_DRAINED },
    { NULL, 0 },
};

/* An optional enum member of spec; *out keeps its default when absent. */
static int decode_enum(json_object *spec, const char *key, const enum_value *values,
                       const char *expected, int *out, tg_verdict *v)
{
    json_object *val = member(spec, key);
    const char *s;

    if (val == NULL)
        return 0;
    if (!json_object_is_type(val, json_type_string))
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "spec.%s: expected %s, found %s", key,
                               expected, type_name(val));
    s = json_object_get_string(val);
    for (const enum_value *e = values; e->name != NULL; e++) {
        if (strcmp(s, e->name) == 0) {
            *out = e->value;
            return 0;
        }
    }
    return tg_verdict_deny(v, TG_MALFORMED_TENANT, "spec.%s: expected %s, found \"%.64s\"", key,
                           expected, s);
}

/* An optional object member (metadata, labels); required ones say so. */
static int decode_object(json_object *parent, const char *where, const char *key, int required,
                         json_object **out, tg_verdict *v)
{
    json_object *val = member(parent, key);

    *out = NULL;
    if (val == NULL) {
        if (required)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: required field is missing",
                                   where, key);
        return 0;
    }
    if (!json_object_is_type(val, json_type_object))
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s%s: expected an object, found %s",
                               where, key, type_name(val));
    *out = val;
    return 0;
}

/* apiVersion and kind must be exactly the Tenant's. */
static int check_type_meta(json_object *obj, tg_verdict *v)
{
    static const struct {
        const char *key, *want;
    } fields[] = {
        { "apiVersion", TG_TENANT_API_VERSION },
        { "kind", TG_TENANT_KIND },
    };

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        json_object *val = member(obj, fields[i].key);

        if (val == NULL)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s: expected \"%s\", found nothing",
                                   fields[i].key, fields[i].want);
        if (!json_object_is_type(val, json_type_string))
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s: expected \"%s\", found %s",
                                   fields[i].key, fields[i].want, type_name(val));
        if (strcmp(json_object_get_string(val), fields[i].want) != 0)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT, "%s: expected \"%s\", found \"%.64s\"",
                                   fields[i].key, fields[i].want, json_object_get_string(val));
    }
    return 0;
}

static int decode_metadata(json_object *obj, tg_tenant *out, tg_verdict *v)
{
    json_object *meta, *labels;

    if (decode_object(obj, "", "metadata", 0, &meta, v) != 0)
        return -1;
    if (meta == NULL)
        return 0;
    if (decode_string(meta, "metadata.", "name", 0, &out->name, v) != 0 ||
        decode_string(meta, "metadata.", "namespace", 0, &out->namespace_, v) != 0 ||
        decode_object(meta, "metadata.", "labels", 0, &labels, v) != 0)
        return -1;
    if (labels == NULL)
        return 0;
    return decode_string(labels, "metadata.labels.", TG_LABEL_REMOTE_CLUSTER_ID, 0,
                         &out->label_cluster_id, v);
}

static int decode_spec(json_object *obj, tg_tenant *out, tg_verdict *v)
{
    json_object *spec;
    int policy = TG_POLICY_KEYS_EXCHANGE, condition = TG_CONDITION_ACTIVE;
    int keys_required;

    if (decode_object(obj, "", "spec", 1, &spec, v) != 0 ||
        decode_string(spec, "spec.", "clusterID", 1, &out->cluster_id, v) != 0 ||
        decode_enum(spec, "authzPolicy", authz_policies, "KeysExchange or TolerateNoHandshake",
                    &policy, v) != 0 ||
        decode_enum(spec, "tenantCondition", tenant_conditions, "Active, Cordoned or Drained",
                    &condition, v) != 0)
        return -1;
    out->authz_policy = (tg_authz_policy)policy;
    out->condition = (tg_tenant_condition)condition;
    /* Without a handshake there is nothing to prove, so nothing to require;
     * fields that are present are still checked. */
    keys_required = out->authz_policy != TG_POLICY_TOLERATE_NO_HANDSHAKE;
    if (decode_bytes(spec, "publicKey", keys_required, TG_TENANT_MAX_PUBLIC_KEY,
                     &out->public_key, v) != 0 ||
        decode_bytes(spec, "csr", keys_required, TG_TENANT_MAX_CSR, &out->csr, v) != 0 ||
        decode_bytes(spec, "signature", keys_required, TG_TENANT_MAX_SIGNATURE, &out->signature,
                     v) != 0 ||
        decode_string(spec, "spec.", "proxyURL", 0, &out->proxy_url, v) != 0)
        return -1;
    return 0;
}

int tg_tenant_from_json(json_object *obj, tg_tenant *out, tg_verdict *v)
{
    memset(out, 0, sizeof(*out));
    if (obj == NULL || !json_object_is_type(obj, json_type_object))
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "expected a Tenant object, found %s",
                               obj == NULL ? "null" : type_name(obj));
    if (check_type_meta(obj, v) != 0 || decode_metadata(obj, out, v) != 0 ||
        decode_spec(obj, out, v) != 0) {
        tg_tenant_clear(out);
        return -1;
    }
    return 0;
}

/* obj[key] = string s; 0 or -1. */
static int add_string(json_object *obj, const char *key, const char *s)
{
    json_object *val = json_object_new_string(s);

    if (val == NULL || json_object_object_add(obj, key, val) != 0) {
        json_object_put(val);
        return -1;
    }
    return 0;
}

static int add_base64(json_object *obj, const char *key, const unsigned char *data, size_t len)
{
    char *b64 = tg_base64_encode(data, len, NULL);
    int rc;

    if (b64 == NULL)
        return -1;
    rc = add_string(obj, key, b64);
    free(b64);
    return rc;
}

static int add_object(json_object *obj, const char *key, json_object **out)
{
    *out = json_object_new_object();
    if (*out == NULL || json_object_object_add(obj, key, *out) != 0) {
        json_object_put(*out);
        return -1;
    }
    return 0;
}

json_object *tg_tenant_to_json(const char *cluster_id, const unsigned char *pubkey, size_t pubkey_len,
                               const char *csr_pem, const unsigned char *sig, size_t sig_len)
{
    json_object *obj = json_object_new_object();
    json_object *meta, *labels, *spec;
    char ns[sizeof(TG_TENANT_NAMESPACE_PREFIX) + TG_TENANT_MAX_STRING];

    if (obj == NULL || cluster_id == NULL || pubkey == NULL || pubkey_len == 0 || csr_pem == NULL ||
        sig == NULL || strlen(cluster_id) > TG_TENANT_MAX_STRING)
        goto fail;
    snprintf(ns, sizeof(ns), "%s%s", TG_TENANT_NAMESPACE_PREFIX, cluster_id);
    /* Field order as kubectl prints it: apiVersion, kind, metadata, spec. */
    if (add_string(obj, "apiVersion", TG_TENANT_API_VERSION) != 0 ||
        add_string(obj, "kind", TG_TENANT_KIND) != 0 || add_object(obj, "metadata", &meta) != 0 ||
        add_object(meta, "labels", &labels) != 0 ||
        add_string(labels, TG_LABEL_REMOTE_CLUSTER_ID, cluster_id) != 0 ||
        add_string(meta, "name", cluster_id) != 0 || add_string(meta, "namespace", ns) != 0 ||
        add_object(obj, "spec", &spec) != 0 || add_string(spec, "clusterID", cluster_id) != 0 ||
        add_base64(spec, "csr", (const unsigned char *)csr_pem, strlen(csr_pem)) != 0 ||
        add_base64(spec, "publicKey", pubkey, pubkey_len) != 0 ||
        add_base64(spec, "signature", sig, sig_len) != 0)
        goto fail;
    return obj;
fail:
    json_object_put(obj);
    return NULL;
}
