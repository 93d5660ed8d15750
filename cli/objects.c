/* objects.c - the Kubernetes objects of the online flows, and reading them
 * back. Pure: json-c trees in, json-c trees and text out. */
#include "online.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/keys.h"

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

/* 1 when status.authParams.signedCRT certifies spec.publicKey: the status
 * answers this spec, not one the consumer has since replaced. */
static int certificate_matches_key(json_object *tenant, const char *crt_b64)
{
    const char *pk_b64 = tg_json_path_string(tenant, "spec", "publicKey", NULL);
    unsigned char *pk = NULL, *crt = NULL;
    size_t pk_len = 0, crt_len = 0;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    BIO *bio = NULL;
    char err[128];
    int raw = 0, same = 0;
    tg_verdict v;

    if (pk_b64 == NULL || (pk = tg_base64_decode(pk_b64, strlen(pk_b64), &pk_len, err, sizeof(err))) == NULL ||
        (crt = tg_base64_decode(crt_b64, strlen(crt_b64), &crt_len, err, sizeof(err))) == NULL)
        goto out;
    tg_verdict_init(&v);
    if ((key = tg_public_key_parse(pk, pk_len, &raw, &v)) == NULL ||
        (bio = BIO_new_mem_buf(crt, (int)crt_len)) == NULL ||
        (cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) == NULL)
        goto out;
    same = EVP_PKEY_eq(X509_get0_pubkey(cert), key) == 1;
out:
    X509_free(cert);
    BIO_free(bio);
    EVP_PKEY_free(key);
    free(pk);
    free(crt);
    return same;
}

cli_tenant_state cli_tenant_status(json_object *tenant)
{
    const char *crt = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    const char *tns = tg_json_path_string(tenant, "status", "tenantNamespace", NULL);

    /* A Tenant being deleted still shows the last peering's certificate,
     * whose bindings its finalizer is about to take away. */
    if (tg_json_path(tenant, "metadata", "deletionTimestamp", NULL) != NULL)
        return CLI_TENANT_PENDING;
    if (crt != NULL && *crt != '\0' && tns != NULL && *tns != '\0' && certificate_matches_key(tenant, crt))
        return CLI_TENANT_READY;
    return CLI_TENANT_PENDING;
}

int cli_tenant_refusal(json_object *tenant, json_object *events, char *why, size_t why_len)
{
    const char *uid = tg_json_path_string(tenant, "metadata", "uid", NULL);
    const char *rv = tg_json_path_string(tenant, "metadata", "resourceVersion", NULL);
    json_object *items = events ? tg_json_path(events, "items", NULL) : NULL;
    int found = 0;

    if (uid == NULL || rv == NULL || items == NULL || !json_object_is_type(items, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *e = json_object_array_get_idx(items, i);
        const char *type = tg_json_string(e, "type");
        const char *reason = tg_json_string(e, "reason");
        const char *from = tg_json_path_string(e, "source", "component", NULL);
        const char *e_uid = tg_json_path_string(e, "involvedObject", "uid", NULL);
        const char *e_rv = tg_json_path_string(e, "involvedObject", "resourceVersion", NULL);

        /* Only the signer's verdict on exactly this version of the Tenant. */
        if (type == NULL || strcmp(type, "Warning") != 0 || reason == NULL || from == NULL ||
            strcmp(from, "tenantgate-signer") != 0 || e_uid == NULL || strcmp(e_uid, uid) != 0 ||
            e_rv == NULL || strcmp(e_rv, rv) != 0)
            continue;
        found = 1;
        if (why != NULL)
            snprintf(why, why_len, "%s: %s", reason, tg_json_string(e, "message") ? tg_json_string(e, "message") : "");
    }
    return found;
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
