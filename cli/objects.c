/* objects.c - the Kubernetes objects of the online flows, and reading them
 * back. Pure: json-c trees in, json-c trees and text out. */
#include "online.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"

static json_object *jstr(const char *s)
{
    return json_object_new_string(s);
}

/* Add key: value (a new reference, NULL = allocation failure) to obj;
 * returns -1 and frees value on failure so callers can chain. */
static int put(json_object *obj, const char *key, json_object *value)
{
    if (obj == NULL || value == NULL || json_object_object_add(obj, key, value) != 0) {
        json_object_put(value);
        return -1;
    }
    return 0;
}

int cli_tenant_namespace_name(char *buf, size_t len, const char *remote_id)
{
    int n = snprintf(buf, len, "liqo-tenant-%s", remote_id);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int cli_identity_name(char *buf, size_t len, const char *provider_id)
{
    int n = snprintf(buf, len, "controlplane-%s", provider_id);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* {apiVersion, kind, metadata: {name, [namespace], labels: {}}}; the labels
 * object is returned borrowed in *labels. */
static json_object *skeleton(const char *api_version, const char *kind, const char *name,
                             const char *ns, json_object **labels)
{
    json_object *obj = json_object_new_object();
    json_object *meta = json_object_new_object();

    *labels = json_object_new_object();
    if (put(obj, "apiVersion", jstr(api_version)) || put(obj, "kind", jstr(kind)) ||
        put(meta, "name", jstr(name)) || (ns != NULL && put(meta, "namespace", jstr(ns)))) {
        json_object_put(*labels);
        json_object_put(meta);
        json_object_put(obj);
        return NULL;
    }
    if (put(meta, "labels", *labels)) {
        json_object_put(meta);
        json_object_put(obj);
        return NULL;
    }
    if (put(obj, "metadata", meta)) {
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

json_object *cli_tenant_namespace_object(const char *remote_id)
{
    char name[128];
    json_object *labels, *obj;

    if (cli_tenant_namespace_name(name, sizeof(name), remote_id) != 0)
        return NULL;
    obj = skeleton("v1", "Namespace", name, NULL, &labels);
    if (obj == NULL || put(labels, CLI_LABEL_TENANT_NS, jstr("true")) ||
        put(labels, CLI_LABEL_REMOTE_ID, jstr(remote_id))) {
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

json_object *cli_nonce_secret_object(const char *ns, const char *remote_id)
{
    json_object *labels;
    json_object *obj = skeleton("v1", "Secret", CLI_NONCE_SECRET, ns, &labels);

    if (obj == NULL || put(labels, CLI_LABEL_NONCE, jstr("true")) ||
        put(labels, CLI_LABEL_REMOTE_ID, jstr(remote_id)) || put(obj, "type", jstr("Opaque"))) {
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

json_object *cli_signed_nonce_secret_object(const char *ns, const char *remote_id, const char *nonce)
{
    json_object *labels, *data = NULL;
    json_object *obj = skeleton("v1", "Secret", CLI_SIGNED_NONCE_SECRET, ns, &labels);
    char *b64 = tg_base64_encode((const unsigned char *)nonce, strlen(nonce), NULL);

    if (obj == NULL || b64 == NULL || put(labels, CLI_LABEL_SIGNED_NONCE, jstr("true")) ||
        put(labels, CLI_LABEL_REMOTE_ID, jstr(remote_id)) || put(obj, "type", jstr("Opaque")) ||
        (data = json_object_new_object()) == NULL || put(data, "nonce", jstr(b64)) ||
        put(obj, "data", data)) {
        free(b64);
        json_object_put(obj);
        return NULL;
    }
    free(b64);
    return obj;
}

unsigned char *cli_secret_data(json_object *secret, const char *key, size_t *len)
{
    const char *text = tg_json_path_string(secret, "data", key, NULL);
    unsigned char *raw, *out;
    char err[128];
    size_t n;

    if (text == NULL || *text == '\0')
        return NULL;
    raw = tg_base64_decode(text, strlen(text), &n, err, sizeof(err));
    if (raw == NULL || n == 0) {
        free(raw);
        return NULL;
    }
    out = realloc(raw, n + 1);
    if (out == NULL) {
        free(raw);
        return NULL;
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

cli_tenant_state cli_tenant_status(json_object *tenant, long min_generation, char *why, size_t why_len)
{
    json_object *status = tg_json_path(tenant, "status", NULL);
    json_object *conds = status ? tg_json_path(status, "conditions", NULL) : NULL;
    json_object *gen_obj;
    const char *crt = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    const char *tns = tg_json_path_string(tenant, "status", "tenantNamespace", NULL);
    int authenticated = -1;    /* -1 unknown, 0 false, 1 true (for this generation) */
    long generation = 0;

    if (json_object_object_get_ex(tenant, "metadata", &gen_obj) &&
        json_object_object_get_ex(gen_obj, "generation", &gen_obj))
        generation = (long)json_object_get_int64(gen_obj);
    if (min_generation < generation)
        min_generation = generation;
    if (conds != NULL && json_object_is_type(conds, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(conds); i++) {
            json_object *c = json_object_array_get_idx(conds, i), *og;
            const char *type = tg_json_string(c, "type");
            const char *st = tg_json_string(c, "status");
            long observed = 0;

            if (type == NULL || st == NULL || strcmp(type, "Authenticated") != 0)
                continue;
            if (json_object_object_get_ex(c, "observedGeneration", &og))
                observed = (long)json_object_get_int64(og);
            /* A verdict about an older spec says nothing about this one. */
            if (observed > 0 && min_generation > 0 && observed < min_generation)
                continue;
            authenticated = strcmp(st, "True") == 0 ? 1 : strcmp(st, "False") == 0 ? 0 : -1;
            if (authenticated == 0 && why != NULL)
                snprintf(why, why_len, "%s: %s",
                         tg_json_string(c, "reason") ? tg_json_string(c, "reason") : "NotAuthenticated",
                         tg_json_string(c, "message") ? tg_json_string(c, "message") : "");
        }
    }
    if (authenticated == 0)
        return CLI_TENANT_REJECTED;
    /* Without conditions (a Liqo signer) the certificate alone says ready. */
    if (crt != NULL && *crt != '\0' && tns != NULL && *tns != '\0' &&
        (authenticated == 1 || conds == NULL))
        return CLI_TENANT_READY;
    return CLI_TENANT_PENDING;
}

json_object *cli_identity_from_tenant(json_object *tenant, const char *provider_id,
                                      const char *identity_ns, char *err, size_t err_len)
{
    static const char *const params[] = { "apiServer", "ca", "signedCRT", "proxyURL" };
    json_object *auth = tg_json_path(tenant, "status", "authParams", NULL);
    const char *tns = tg_json_path_string(tenant, "status", "tenantNamespace", NULL);
    json_object *labels, *obj, *spec = NULL, *ap = NULL;
    char name[128];

    for (size_t i = 0; i < 3; i++) {
        const char *v = auth ? tg_json_string(auth, params[i]) : NULL;

        if (v == NULL || *v == '\0') {
            snprintf(err, err_len, "the Tenant has no status.authParams.%s yet", params[i]);
            return NULL;
        }
    }
    if (tns == NULL || *tns == '\0') {
        snprintf(err, err_len, "the Tenant has no status.tenantNamespace yet");
        return NULL;
    }
    if (cli_identity_name(name, sizeof(name), provider_id) != 0) {
        snprintf(err, err_len, "provider cluster id too long");
        return NULL;
    }
    obj = skeleton("authentication.liqo.io/v1beta1", "Identity", name, identity_ns, &labels);
    if (obj == NULL || put(labels, CLI_LABEL_REMOTE_ID, jstr(provider_id)) ||
        (spec = json_object_new_object()) == NULL || (ap = json_object_new_object()) == NULL)
        goto oom;
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        const char *v = tg_json_string(auth, params[i]);

        if (v != NULL && *v != '\0' && put(ap, params[i], jstr(v)))
            goto oom;
    }
    if (put(spec, "authParams", ap)) {
        ap = NULL;
        goto oom;
    }
    ap = NULL;
    if (put(spec, "clusterID", jstr(provider_id)) || put(spec, "namespace", jstr(tns)) ||
        put(spec, "type", jstr("ControlPlane")))
        goto oom;
    if (put(obj, "spec", spec)) {
        spec = NULL;
        goto oom;
    }
    return obj;
oom:
    json_object_put(ap);
    json_object_put(spec);
    json_object_put(obj);
    snprintf(err, err_len, "out of memory");
    return NULL;
}

long cli_parse_duration(const char *text)
{
    static const struct { char unit; double ms; } units[] = {
        { 'h', 3600e3 }, { 'm', 60e3 }, { 's', 1e3 },
    };
    double total = 0;
    const char *p = text;

    if (text == NULL || *text == '\0')
        return -1;
    /* Bare number: seconds, as `kubectl wait --timeout=30` reads it. */
    if (strspn(text, "0123456789") == strlen(text) && strlen(text) <= 6)
        total = atof(text) * 1e3;
    else {
        while (*p != '\0') {
            char *end;
            double v;
            size_t u;

            if (!isdigit((unsigned char)*p))
                return -1;
            errno = 0;
            v = strtod(p, &end);
            if (errno != 0 || end == p || v > 1e7)
                return -1;
            p = end;
            if (p[0] == 'm' && p[1] == 's') {
                total += v;
                p += 2;
                continue;
            }
            for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
                if (*p == units[u].unit)
                    break;
            if (u == sizeof(units) / sizeof(units[0]))
                return -1;
            total += v * units[u].ms;
            p++;
        }
    }
    if (total < 1 || total > 24 * 3600e3)
        return -1;
    return (long)total;
}

void cli_format_duration(char *buf, size_t len, long ms)
{
    long s = ms / 1000, h = s / 3600, m = (s % 3600) / 60;

    s %= 60;
    if (h > 0)
        snprintf(buf, len, "%ldh%ldm%lds", h, m, s);
    else if (m > 0)
        snprintf(buf, len, "%ldm%lds", m, s);
    else if (ms >= 1000)
        snprintf(buf, len, "%lds", s);
    else
        snprintf(buf, len, "%ldms", ms);
}

void cli_progress_format(char *buf, size_t len, const char *scope, const char *msg)
{
    if (scope != NULL)
        snprintf(buf, len, " INFO   (%s) %s\n", scope, msg);
    else
        snprintf(buf, len, " INFO  %s\n", msg);
}
