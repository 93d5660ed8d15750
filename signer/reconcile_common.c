/* reconcile_common.c - what several controllers share: JSON and Secret
 * helpers, the nonce as the informer cache or the API server has it, and the
 * settled-skip counter. Nothing here decides anything. */
#define _GNU_SOURCE   /* strptime */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"

json_object *rc_jstr(const char *s)
{
    return json_object_new_string(s ? s : "");
}

json_object *rc_controller_owner(const char *kind, const char *name, const char *uid)
{
    json_object *owner = json_object_new_object(), *owners = json_object_new_array();

    json_object_object_add(owner, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(owner, "kind", rc_jstr(kind));
    json_object_object_add(owner, "name", rc_jstr(name));
    json_object_object_add(owner, "uid", rc_jstr(uid));
    json_object_object_add(owner, "controller", json_object_new_boolean(1));
    json_object_object_add(owner, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, owner);
    return owners;
}

json_object *rc_auth_object(const char *kind, const char *ns, const char *name, json_object *labels,
                            json_object *owners)
{
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();

    json_object_object_add(obj, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(obj, "kind", rc_jstr(kind));
    json_object_object_add(meta, "name", rc_jstr(name));
    json_object_object_add(meta, "namespace", rc_jstr(ns));
    json_object_object_add(meta, "labels", labels);
    if (owners)
        json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(obj, "metadata", meta);
    return obj;
}

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

void rc_rfc3339(time_t t, char *buf, size_t len)
{
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

void rc_count_skip(tg_signer *s, const char *controller)
{
    if (s->m_settled_skips)
        tg_counter_add(tg_metric_series_get(s->m_settled_skips, (const char *[]){controller}), 1);
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

/* The Approved/Denied condition already there: 1 approved, -1 denied, 0 none. */
int rc_csr_decided(json_object *csr)
{
    json_object *c = tg_json_path(csr, "status", "conditions", NULL);
    size_t i;

    for (i = 0; c && json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++) {
        const char *t = tg_json_string(json_object_array_get_idx(c, i), "type");
        if (t && strcmp(t, "Approved") == 0)
            return 1;
        if (t && (strcmp(t, "Denied") == 0 || strcmp(t, "Failed") == 0))
            return -1;
    }
    return 0;
}

void rc_request_hash(const char *csr_b64, char out[TG_REQUEST_HASH_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;

    out[0] = '\0';
    if (!csr_b64 || EVP_Digest(csr_b64, strlen(csr_b64), md, &n, EVP_sha256(), NULL) != 1)
        return;
    for (i = 0; i < TG_REQUEST_HASH_LEN / 2 && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

long rc_create_csr(tg_signer *s, tg_api *api, const char *request_b64, const char *cid, const char *hash,
                   json_object *labels, json_object *annotations, char *created, size_t created_len, char *err,
                   size_t err_len)
{
    json_object *resp = NULL;
    json_object *csr = json_object_new_object(), *meta = json_object_new_object();
    json_object *spec = json_object_new_object(), *usages = json_object_new_array();
    char created_ms[32];
    struct timespec now;
    long r;

    if (!labels)
        labels = json_object_new_object();
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(created_ms, sizeof(created_ms), "%lld", (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    json_object_object_add(csr, "apiVersion", rc_jstr("certificates.k8s.io/v1"));
    json_object_object_add(csr, "kind", rc_jstr("CertificateSigningRequest"));
    json_object_object_add(meta, "generateName", rc_jstr("liqo-identity-"));
    json_object_object_add(labels, TG_LABEL_TENANT_CSR, rc_jstr("true"));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(cid));
    if (hash && *hash)
        json_object_object_add(labels, TG_LABEL_CSR_REQUEST, rc_jstr(hash));
    json_object_object_add(labels, TG_LABEL_CSR_CREATED_MS, json_object_new_string(created_ms));
    json_object_object_add(meta, "labels", labels);
    if (annotations)
        json_object_object_add(meta, "annotations", annotations);
    json_object_object_add(csr, "metadata", meta);
    /* the object's spec.csr is already base64 of the PEM: the same bytes the webhook admitted */
    json_object_object_add(spec, "request", rc_jstr(request_b64));
    json_object_object_add(spec, "signerName", rc_jstr(s->signer_name));
    json_object_array_add(usages, rc_jstr("digital signature"));
    json_object_array_add(usages, rc_jstr("key encipherment"));
    json_object_array_add(usages, rc_jstr("client auth"));
    json_object_object_add(spec, "usages", usages);
    if (s->csr_expiration_s > 0)
        json_object_object_add(spec, "expirationSeconds", json_object_new_int64(s->csr_expiration_s));
    json_object_object_add(csr, "spec", spec);
    r = tg_api_call(api, "POST", CSR_API, TG_KUBE_CT_JSON, csr, &resp, err, err_len);
    if (created && created_len) {
        const char *n = tg_json_path_string(resp, "metadata", "name", NULL);
        snprintf(created, created_len, "%s", r == 201 && n ? n : "");
    }
    json_object_put(resp);
    json_object_put(csr);
    return r;
}

json_object *rc_auth_params(tg_signer *s, const char *signed_b64, const char *proxy_url)
{
    json_object *ap = json_object_new_object();

    json_object_object_add(ap, "signedCRT", rc_jstr(signed_b64));
    if (s->ca_pem) {
        char *ca = tg_base64_encode((unsigned char *)s->ca_pem, s->ca_len, NULL);
        json_object_object_add(ap, "ca", rc_jstr(ca));
        free(ca);
    }
    json_object_object_add(ap, "apiServer", rc_jstr(s->api_server));
    if (proxy_url)
        json_object_object_add(ap, "proxyURL", rc_jstr(proxy_url));
    return ap;
}

long rc_post_binding(tg_api *api, const char *ns, const char *name, const char *cid, const char *subject_kind,
                     const char *subject, const char *role, json_object *owners, char *err, size_t err_len)
{
    json_object *rb = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
    json_object *subj = json_object_new_object(), *subjs = json_object_new_array(), *ref = json_object_new_object();
    char path[1024];
    long r;

    json_object_object_add(rb, "apiVersion", rc_jstr("rbac.authorization.k8s.io/v1"));
    json_object_object_add(rb, "kind", rc_jstr(ns ? "RoleBinding" : "ClusterRoleBinding"));
    json_object_object_add(meta, "name", rc_jstr(name));
    if (ns)
        json_object_object_add(meta, "namespace", rc_jstr(ns));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(cid));
    json_object_object_add(meta, "labels", labels);
    if (owners)
        json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(rb, "metadata", meta);
    json_object_object_add(subj, "kind", rc_jstr(subject_kind));
    json_object_object_add(subj, "apiGroup", rc_jstr("rbac.authorization.k8s.io"));
    json_object_object_add(subj, "name", rc_jstr(subject));
    json_object_array_add(subjs, subj);
    json_object_object_add(rb, "subjects", subjs);
    json_object_object_add(ref, "apiGroup", rc_jstr("rbac.authorization.k8s.io"));
    json_object_object_add(ref, "kind", rc_jstr("ClusterRole"));
    json_object_object_add(ref, "name", rc_jstr(role));
    json_object_object_add(rb, "roleRef", ref);
    if (ns)
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ns);
    else
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    r = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, rb, NULL, err, err_len);
    json_object_put(rb);
    return r;
}

int rc_csr_pick_newer(rc_csr_pick *p, const char *name, const char *ts, long long ms, int issued, int denied)
{
    int cmp = p->found ? strcmp(ts, p->ts) : 1;

    if (cmp == 0)
        cmp = ms > p->ms ? 1 : ms < p->ms ? -1 : 0;
    if (cmp < 0 || (cmp == 0 && strcmp(name, p->name) < 0))
        return 0;
    strcpy(p->ts, ts);
    strcpy(p->name, name);
    p->ms = ms;
    p->issued = issued;
    p->denied = denied;
    p->found = 1;
    return 1;
}

time_t rc_parse_rfc3339(const char *ts)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    return ts && strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm) ? timegm(&tm) : 0;
}

long rc_get_namespace(tg_api *api, const char *ns, json_object **out, char *err, size_t err_len)
{
    char path[320];
    long st;

    *out = NULL;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    if ((st = tg_api_get(api, path, out, err, err_len)) != 200 && *out != NULL) {
        json_object_put(*out);
        *out = NULL;
    }
    return st;
}
