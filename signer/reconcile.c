/* reconcile.c - the reconcilers (SPEC.md 6 and 7). Each one reads the live
 * object, compares it with what it should be, and makes the smallest change;
 * running one twice changes nothing, so a restart resumes from the API state.
 * Every decision is logged without secret material. */
#define _GNU_SOURCE   /* strptime */
#include "signer/signer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/pem.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"
#include "signer/approve_decide.h"
#include "signer/kubeconfig_render.h"
#include "signer/renewal.h"

#define TENANTS_API "/apis/authentication.liqo.io/v1beta1"
#define CSR_API "/apis/certificates.k8s.io/v1/certificatesigningrequests"

/* ---------- small helpers ---------- */

static json_object *jstr(const char *s)
{
    return json_object_new_string(s ? s : "");
}

/* data[key] of a Secret, base64-decoded (malloc'd, NUL-terminated), or NULL. */
static unsigned char *secret_data(json_object *secret, const char *key, size_t *len)
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

static void free_secret(void *p, size_t len)
{
    if (p)
        OPENSSL_cleanse(p, len);
    free(p);
}

/* {"data":{key: base64(value)}} merge patch on a Secret. */
static long patch_secret_data(tg_api *api, const char *ns, const char *name, const char *key,
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

static int split_key(const char *key, char *kind, char *ns, char *name)
{
    const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;

    if (!a || !b || (size_t)(a - key) >= 32 || (size_t)(b - a - 1) >= 256 || strlen(b + 1) >= 256 || !b[1])
        return -1;
    memcpy(kind, key, (size_t)(a - key));
    kind[a - key] = '\0';
    memcpy(ns, a + 1, (size_t)(b - a - 1));
    ns[b - a - 1] = '\0';
    strcpy(name, b + 1);
    return 0;
}

static void rfc3339(time_t t, char *buf, size_t len)
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
static int cached_nonce_b64(tg_signer *s, const char *ns, const char *name, char **b64)
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
static char *cached_nonce(tg_signer *s, const char *ns)
{
    char *b64 = NULL, err[64];
    unsigned char *raw = NULL, *out = NULL;
    size_t n = 0;

    if (cached_nonce_b64(s, ns, TG_NONCE_SECRET, &b64) != 1 || !b64)
        return NULL;
    if ((raw = tg_base64_decode(b64, strlen(b64), &n, err, sizeof(err))) && (out = malloc(n + 1))) {
        memcpy(out, raw, n);
        out[n] = '\0';
    }
    free_secret(raw, n);
    free_secret(b64, strlen(b64));
    return (char *)out;
}

typedef struct csr_look {
    const char *ns;     /* the Tenant's namespace label to match */
    char name[256];     /* the newest one's */
    char ts[64];
    char *certificate;  /* status.certificate (base64), malloc'd, or NULL */
    int want_certificate;
    int issued;         /* the newest one has a certificate */
    int found;
    int oom;
} csr_look;

static void on_csr_visit(json_object *c, void *data)
{
    csr_look *l = data;
    const char *tns = tg_json_path_string(c, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);
    const char *ts = tg_json_path_string(c, "metadata", "creationTimestamp", NULL);
    const char *name = tg_json_path_string(c, "metadata", "name", NULL);
    const char *crt = tg_json_path_string(c, "status", "certificate", NULL);
    int cmp;

    if (!tns || strcmp(tns, l->ns) != 0 || !ts || !name || strlen(ts) >= sizeof(l->ts) || strlen(name) >= sizeof(l->name))
        return;
    /* newest stamp, then the greatest name */
    cmp = l->found ? strcmp(ts, l->ts) : 1;
    if (cmp < 0 || (cmp == 0 && strcmp(name, l->name) < 0))
        return;
    free(l->certificate);
    l->certificate = NULL;
    l->issued = crt && *crt;
    if (l->issued && l->want_certificate && !(l->certificate = strdup(crt)))
        l->oom = 1;
    strcpy(l->ts, ts);
    strcpy(l->name, name);
    l->found = 1;
}

/* "<name>:<0|1>" (newest CSR, issued or not) or "-" (none): all a Tenant
 * reconcile reads of the CSR cache, so the text its settled record keeps. */
static void csr_fingerprint(const csr_look *l, char *fp, size_t len)
{
    if (l->found)
        snprintf(fp, len, "%s:%d", l->name, l->issued);
    else
        snprintf(fp, len, "-");
}

/* The newest tenant CSR of (ns, cid) in the CSR informer's cache: 1 found
 * (*certificate: its status.certificate or NULL), 0 none cached, -1 out of
 * memory. fp (if not NULL) receives its fingerprint, name (if not NULL, 256
 * bytes) its name. */
static int cached_csr(tg_signer *s, const char *ns, const char *cid, char **certificate, char *fp, size_t fp_len,
                      char *name)
{
    csr_look l = {.ns = ns, .want_certificate = certificate != NULL};

    if (certificate)
        *certificate = NULL;
    if (!s->csr_cache || !tg_cache_synced(s->csr_cache))
        return 0;
    tg_cache_get_by_index(s->csr_cache, cid, on_csr_visit, &l);
    if (l.oom) {
        free(l.certificate);
        return -1;
    }
    if (fp)
        csr_fingerprint(&l, fp, fp_len);
    if (name)
        strcpy(name, l.found ? l.name : "");
    if (certificate)
        *certificate = l.certificate;
    return l.found;
}

typedef struct tenant_look {
    char rv[64];
    char cid[128];      /* metadata.labels["liqo.io/remote-cluster-id"] */
    int found;
} tenant_look;

static void on_tenant_visit(json_object *t, void *data)
{
    tenant_look *l = data;
    const char *rv = tg_json_path_string(t, "metadata", "resourceVersion", NULL);
    const char *cid = tg_json_path_string(t, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    if (!rv || strlen(rv) >= sizeof(l->rv))
        return;
    strcpy(l->rv, rv);
    l->found = 1;
    if (cid && strlen(cid) < sizeof(l->cid))
        strcpy(l->cid, cid);
}

/* ---------- settled Tenants (settled.h) ---------- */

static void count_skip(tg_signer *s, const char *controller)
{
    if (s->m_settled_skips)
        tg_counter_add(tg_metric_series_get(s->m_settled_skips, (const char *[]){controller}), 1);
}

/* A CSR made, its certificate not issued yet: the CSR informer wakes the
 * Tenant when it is; this is the safety net. */
#define TENANT_WAIT_MS 30000
/* The CSR informer may lag our own POST: no second CSR for this long unless
 * the cache shows the first. */
#define CSR_PENDING_MS 60000

static void settled_key(char *key, size_t len, const char *ns, const char *name)
{
    snprintf(key, len, "tenant/%s/%s", ns, name);
}

/* Milliseconds until the Tenant needs a look, when the informers show it
 * exactly as a reconcile of ours left it; 0 when it needs the full reconcile.
 * rv (64 bytes) receives the cached resourceVersion, or "". */
static long tenant_settled_left(tg_signer *s, const char *ns, const char *name, char *rv)
{
    tenant_look tl = {.found = 0};
    char key[600], fp[300];

    rv[0] = '\0';
    if (!s->tenant_cache || !tg_cache_synced(s->tenant_cache) ||
        !tg_cache_get(s->tenant_cache, ns, name, on_tenant_visit, &tl) || !tl.found)
        return 0;
    strcpy(rv, tl.rv);
    if (!s->settled || !tl.cid[0] || cached_csr(s, ns, tl.cid, NULL, fp, sizeof(fp), NULL) < 0)
        return 0;
    settled_key(key, sizeof(key), ns, name);
    return (long)tg_settled_check(s->settled, key, tl.rv, fp, tg_wq_now_ms());
}

/* Record that the Tenant, at its resourceVersion in `tenant`, needs nothing
 * until delay_ms while its CSR reads dep_a or dep_b. Best effort. */
static void tenant_settle(tg_signer *s, json_object *tenant, const char *ns, const char *name, const char *dep_a,
                          const char *dep_b, long delay_ms)
{
    const char *rv = tg_json_path_string(tenant, "metadata", "resourceVersion", NULL);
    char key[600];
    uint64_t now = tg_wq_now_ms();

    if (!s->settled || !rv || delay_ms <= 0)
        return;
    settled_key(key, sizeof(key), ns, name);
    tg_settled_put(s->settled, key, rv, dep_a, dep_b, now, now + (uint64_t)delay_ms);
}

/* ---------- provider: nonce ---------- */

/* Give a labelled nonce Secret a nonce if it has none; never overwrite. */
static long reconcile_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], nonce[TG_NONCE_TEXT_LEN + 1];
    json_object *sec = NULL;
    long st;

    {
        /* A nonce is never overwritten: one in the cache is final, no GET needed. */
        char *b64 = NULL;
        int has = cached_nonce_b64(s, ns, name, &b64) == 1 && b64;
        if (b64)
            free_secret(b64, strlen(b64));
        if (has)
            return TG_RECONCILE_OK;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    if (tg_json_path_string(sec, "data", "nonce", NULL) && *tg_json_path_string(sec, "data", "nonce", NULL)) {
        json_object_put(sec);
        return TG_RECONCILE_OK;
    }
    if (tg_nonce_generate(nonce) != 0) {
        snprintf(err, sizeof(err), "cannot generate a nonce");
        goto fail;
    }
    st = patch_secret_data(api, ns, name, "nonce", nonce, TG_NONCE_TEXT_LEN,
                           tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, sizeof(err));
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (st != 200)
        goto fail;
    tg_log(TG_LOG_INFO, "nonce created", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
    json_object_put(sec);
    return TG_RECONCILE_OK;
fail:
    tg_log(TG_LOG_WARN, "nonce reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
    json_object_put(sec);
    return TG_RECONCILE_RETRY;
}

/* The nonce text of a tenant namespace (malloc'd, secret) or NULL. */
static char *read_nonce(tg_api *api, const char *ns, json_object **secret_out)
{
    char path[1024], err[256];
    json_object *sec = NULL;
    char *n = NULL;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/" TG_NONCE_SECRET, ns);
    if (tg_api_get(api, path, &sec, err, sizeof(err)) == 200)
        n = (char *)secret_data(sec, "nonce", NULL);
    if (secret_out)
        *secret_out = sec;
    else
        json_object_put(sec);
    return n;
}

/* ---------- provider: Tenant ---------- */

static json_object *condition(const char *type, int ok, const char *reason, const char *message, int64_t gen,
                              const char *now)
{
    json_object *c = json_object_new_object();

    json_object_object_add(c, "type", jstr(type));
    json_object_object_add(c, "status", jstr(ok ? "True" : "False"));
    json_object_object_add(c, "reason", jstr(reason));
    json_object_object_add(c, "message", jstr(message));
    json_object_object_add(c, "lastTransitionTime", jstr(now));
    json_object_object_add(c, "observedGeneration", json_object_new_int64(gen));
    return c;
}

/* Keep lastTransitionTime when the status did not change (metav1.Condition). */
static void keep_transition_time(json_object *tenant, json_object *c)
{
    json_object *old = tg_json_path(tenant, "status", "conditions", NULL);
    size_t i;

    if (!old || !json_object_is_type(old, json_type_array))
        return;
    for (i = 0; i < json_object_array_length(old); i++) {
        json_object *o = json_object_array_get_idx(old, i);
        const char *t = tg_json_string(o, "type"), *st = tg_json_string(o, "status");
        const char *ltt = tg_json_string(o, "lastTransitionTime");
        if (t && st && ltt && strcmp(t, tg_json_string(c, "type")) == 0 &&
            strcmp(st, tg_json_string(c, "status")) == 0)
            json_object_object_add(c, "lastTransitionTime", jstr(ltt));
    }
}

/* Merge-patch Tenant status through /status. authparams may be NULL. */
/* *out (if not NULL) receives the updated Tenant on success (caller puts). */
static long patch_tenant_status(tg_api *api, json_object *tenant, const char *ns, const char *name,
                                json_object *authparams, json_object *conds, json_object **out, char *err,
                                size_t err_len)
{
    json_object *patch = json_object_new_object(), *st = json_object_new_object();
    char path[1024];
    long r;

    json_object_object_add(st, "tenantNamespace", jstr(ns));
    if (authparams)
        json_object_object_add(st, "authParams", authparams);
    json_object_object_add(st, "conditions", conds);
    json_object_object_add(patch, "status", st);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s/status", ns, name);
    r = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, out, err, err_len);
    json_object_put(patch);
    return r;
}

/* *out (if not NULL) receives the updated Tenant on success (caller puts). */
static long set_finalizers(tg_api *api, json_object *tenant, const char *ns, const char *name, int add,
                           json_object **out, char *err, size_t err_len)
{
    json_object *old = tg_json_path(tenant, "metadata", "finalizers", NULL);
    json_object *list = json_object_new_array(), *patch = json_object_new_object(), *meta = json_object_new_object();
    char path[1024];
    size_t i;
    long r;

    for (i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
        json_object *f = json_object_array_get_idx(old, i);
        if (json_object_is_type(f, json_type_string) && strcmp(json_object_get_string(f), TG_TENANT_FINALIZER) != 0)
            json_object_array_add(list, json_object_get(f));
    }
    if (add)
        json_object_array_add(list, jstr(TG_TENANT_FINALIZER));
    json_object_object_add(meta, "finalizers", list);
    json_object_object_add(meta, "resourceVersion", jstr(tg_json_path_string(tenant, "metadata", "resourceVersion", NULL)));
    json_object_object_add(patch, "metadata", meta);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", ns, name);
    r = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, out, err, err_len);
    json_object_put(patch);
    return r;
}

static int has_finalizer(json_object *tenant)
{
    json_object *f = tg_json_path(tenant, "metadata", "finalizers", NULL);
    size_t i;

    for (i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
        json_object *e = json_object_array_get_idx(f, i);
        if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), TG_TENANT_FINALIZER) == 0)
            return 1;
    }
    return 0;
}

/* RoleBindings known to exist: "ns/name" -> when this process last saw the
 * POST succeed or answer 409. Known for RB_RECHECK_S only, so one deleted
 * behind our back is recreated by a later reconcile. */
#define RB_RECHECK_S 600

static int rolebinding_known(tg_signer *s, const char *key, time_t now)
{
    json_object *at = NULL;
    int known;

    pthread_mutex_lock(&s->rb_mu);
    known = s->rb_known && json_object_object_get_ex(s->rb_known, key, &at) &&
            now - (time_t)json_object_get_int64(at) < RB_RECHECK_S;
    pthread_mutex_unlock(&s->rb_mu);
    return known;
}

static void rolebinding_set_known(tg_signer *s, const char *key, int known, time_t now)
{
    pthread_mutex_lock(&s->rb_mu);
    if (s->rb_known && known)
        json_object_object_add(s->rb_known, key, json_object_new_int64((int64_t)now));
    else if (s->rb_known)
        json_object_object_del(s->rb_known, key);
    pthread_mutex_unlock(&s->rb_mu);
}

/* present: POST the binding unless recently known to exist; else DELETE it. */
static long ensure_rolebinding(tg_signer *s, tg_api *api, const char *ns, const char *cid, int present, char *err,
                               size_t err_len)
{
    char path[1024], name[320], key[640];
    time_t now = time(NULL);
    json_object *rb, *meta, *subj, *subjs, *ref, *labels;
    long r;

    snprintf(name, sizeof(name), "liqo-tenant-%s", cid);
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (!present) {
        rolebinding_set_known(s, key, 0, now);
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/%s", ns, name);
        r = tg_api_call(api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, err, err_len);
        return r == 404 ? 200 : r;
    }
    if (rolebinding_known(s, key, now))
        return 200;
    rb = json_object_new_object();
    json_object_object_add(rb, "apiVersion", jstr("rbac.authorization.k8s.io/v1"));
    json_object_object_add(rb, "kind", jstr("RoleBinding"));
    meta = json_object_new_object();
    json_object_object_add(meta, "name", jstr(name));
    json_object_object_add(meta, "namespace", jstr(ns));
    labels = json_object_new_object();
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, jstr(cid));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(rb, "metadata", meta);
    subj = json_object_new_object();
    json_object_object_add(subj, "kind", jstr("User"));
    json_object_object_add(subj, "apiGroup", jstr("rbac.authorization.k8s.io"));
    json_object_object_add(subj, "name", jstr(cid));
    subjs = json_object_new_array();
    json_object_array_add(subjs, subj);
    json_object_object_add(rb, "subjects", subjs);
    ref = json_object_new_object();
    json_object_object_add(ref, "apiGroup", jstr("rbac.authorization.k8s.io"));
    json_object_object_add(ref, "kind", jstr("ClusterRole"));
    json_object_object_add(ref, "name", jstr(TG_CONSUMER_CLUSTERROLE));
    json_object_object_add(rb, "roleRef", ref);
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ns);
    r = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, rb, NULL, err, err_len);
    json_object_put(rb);
    if (r == 409)
        r = 200;   /* already there */
    if (r == 200 || r == 201)
        rolebinding_set_known(s, key, 1, now);
    return r;
}

/* POST a CSR for the Tenant; on 201 *created (if not NULL) is its generated
 * name (caller's buffer of created_len bytes). */
static long create_csr(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *cid,
                       char *created, size_t created_len, char *err, size_t err_len)
{
    json_object *resp = NULL;
    json_object *csr = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
    json_object *spec = json_object_new_object(), *usages = json_object_new_array();
    long r;

    json_object_object_add(csr, "apiVersion", jstr("certificates.k8s.io/v1"));
    json_object_object_add(csr, "kind", jstr("CertificateSigningRequest"));
    json_object_object_add(meta, "generateName", jstr("liqo-identity-"));
    json_object_object_add(labels, TG_LABEL_TENANT_CSR, jstr("true"));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, jstr(cid));
    json_object_object_add(labels, TG_LABEL_TENANT_NS, jstr(ns));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(csr, "metadata", meta);
    /* spec.csr is already base64 of the PEM: the same bytes the webhook admitted */
    json_object_object_add(spec, "request", jstr(tg_json_path_string(tenant, "spec", "csr", NULL)));
    json_object_object_add(spec, "signerName", jstr(s->signer_name));
    json_object_array_add(usages, jstr("digital signature"));
    json_object_array_add(usages, jstr("key encipherment"));
    json_object_array_add(usages, jstr("client auth"));
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

/* Deletion: bindings away, nonce rotated (an old Tenant no longer verifies), finalizer off. */
static long finalize_tenant(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *name,
                            const char *cid, char *err, size_t err_len)
{
    json_object *sec = NULL;
    char *old = NULL, nonce[TG_NONCE_TEXT_LEN + 1];
    long r;

    if (!has_finalizer(tenant))
        return 200;
    if ((r = ensure_rolebinding(s, api, ns, cid, 0, err, err_len)) >= 300 || r < 0)
        return r;
    old = read_nonce(api, ns, &sec);
    if (sec) {
        if (tg_nonce_generate(nonce) != 0) {
            free_secret(old, old ? strlen(old) : 0);
            json_object_put(sec);
            return -1;
        }
        r = patch_secret_data(api, ns, TG_NONCE_SECRET, "nonce", nonce, TG_NONCE_TEXT_LEN,
                              tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, err_len);
        OPENSSL_cleanse(nonce, sizeof(nonce));
        free_secret(old, old ? strlen(old) : 0);
        json_object_put(sec);
        if (r != 200)
            return r;
        tg_log(TG_LOG_INFO, "nonce rotated", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name));
    }
    r = set_finalizers(api, tenant, ns, name, 0, NULL, err, err_len);
    if (r == 200)
        tg_log(TG_LOG_INFO, "tenant finalized", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name));
    return r == 404 ? 200 : r;
}

static long reconcile_tenant(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], now[32], fp[300], csr_made[256], newest[256], pending[600], ours[256];
    char cached_rv[64];
    json_object *tenant = NULL, *conds, *ap, *updated = NULL;
    const char *cid, *cur_b64;
    char *crt_b64 = NULL;   /* the newest CSR's status.certificate (copy) */
    int have_csr;
    unsigned char *crt = NULL;
    size_t crt_len = 0;
    char *nonce = NULL;
    tg_tenant t;
    tg_verdict v, v_parsed;
    tg_check_opts copts = {.allow_no_handshake = s->allow_no_handshake};
    int parsed, refused, from_cache = 0;
    int64_t gen;
    time_t nb, na;
    long st, ret = TG_RECONCILE_RETRY;

    /* The event of our own last write, or a relist: nothing changed since. */
    if ((ret = tenant_settled_left(s, ns, name, cached_rv)) > 0) {
        count_skip(s, "tenant");
        return ret;
    }
    ret = TG_RECONCILE_RETRY;
    memset(&t, 0, sizeof(t));
    rfc3339(time(NULL), now, sizeof(now));
    /* "Not older than what our informer saw": the API server answers from its
     * watch cache instead of a quorum read of etcd. Every write below carries
     * the resourceVersion or is recomputed on the next event, as with any
     * informer-fed controller. The approver, the gate, still reads live. */
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s%s%s", ns, name,
             cached_rv[0] ? "?resourceVersion=" : "", cached_rv);
    if ((st = tg_api_get(api, path, &tenant, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    cid = tg_json_path_string(tenant, "spec", "clusterID", NULL);
    if (!cid || !tg_cluster_id_valid(cid)) {
        tg_log(TG_LOG_WARN, "tenant without a valid clusterID", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name));
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (tg_json_path(tenant, "metadata", "deletionTimestamp", NULL)) {
        st = finalize_tenant(s, api, tenant, ns, name, cid, err, sizeof(err));
        if (st != 200)
            goto fail;
        ret = TG_RECONCILE_OK;
        goto out;
    }
    gen = json_object_get_int64(tg_json_path(tenant, "metadata", "generation", NULL));
    /* Re-run the admission decision: the webhook may have been bypassed. */
    tg_verdict_init(&v);
    /* The cached nonce decides only what to do next (the approver re-checks
     * against live reads before any approval). It may lag a rotation, so a
     * refusal is decided on the live nonce only. */
    parsed = tg_tenant_from_json(tenant, &t, &v) == 0;
    v_parsed = v;
    if (parsed) {
        from_cache = (nonce = cached_nonce(s, ns)) != NULL;
        if (!from_cache)
            nonce = read_nonce(api, ns, NULL);
    }
    refused = !parsed || tg_tenant_check(&t, nonce, nonce ? strlen(nonce) : 0, &copts, &v) != 0;
    if (refused && from_cache) {
        free_secret(nonce, strlen(nonce));
        nonce = read_nonce(api, ns, NULL);
        v = v_parsed;
        refused = tg_tenant_check(&t, nonce, nonce ? strlen(nonce) : 0, &copts, &v) != 0;
    }
    if (refused) {
        const char *reason = tg_reason_name(v.reason);
        json_object *c = condition("Authenticated", 0, reason, v.message, gen, now);
        keep_transition_time(tenant, c);
        conds = json_object_new_array();
        json_object_array_add(conds, c);
        tg_log(TG_LOG_WARN, "tenant refused", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
               TG_LOG_STR("reason", reason), TG_LOG_STR("message", v.message));
        tg_api_event(api, tenant, "Warning", reason, v.message);
        if (patch_tenant_status(api, tenant, ns, name, NULL, conds, NULL, err, sizeof(err)) != 200)
            goto fail;
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!has_finalizer(tenant)) {
        if ((st = set_finalizers(api, tenant, ns, name, 1, &updated, err, sizeof(err))) != 200)
            goto fail;
        if (!updated || !tg_json_path_string(updated, "spec", "clusterID", NULL) ||
            strcmp(tg_json_path_string(updated, "spec", "clusterID", NULL), cid) != 0) {
            ret = 1;   /* no usable answer: look again at the live object */
            goto out;
        }
        /* Go on with the object the PATCH returned (only metadata changed):
         * one reconcile and one GET fewer per Tenant. */
        json_object_put(tenant);
        tenant = updated;
        updated = NULL;
        cid = tg_json_path_string(tenant, "spec", "clusterID", NULL);
    }
    st = ensure_rolebinding(s, api, ns, cid, t.condition != TG_CONDITION_DRAINED, err, sizeof(err));
    if (st < 0 || st >= 300)
        goto fail;

    /* The CSR informer (run with the tenant controller, synced before any
     * worker starts) replaces a LIST per reconcile; our own CSR may not be
     * in it yet, hence the pending mark below. */
    if (!s->csr_cache || !tg_cache_synced(s->csr_cache)) {
        snprintf(err, sizeof(err), "the CSR informer has not synced");
        goto fail;
    }
    strcpy(fp, "-");
    if ((have_csr = cached_csr(s, ns, cid, &crt_b64, fp, sizeof(fp), newest)) < 0) {
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    snprintf(pending, sizeof(pending), "csr-pending/%s/%s", ns, cid);
    if (have_csr && s->settled && tg_settled_marked(s->settled, pending, ours, sizeof(ours), tg_wq_now_ms()) &&
        strcmp(ours, newest) == 0)
        tg_settled_forget(s->settled, pending);   /* the cache has caught up with our CSR */
    cur_b64 = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    if (cur_b64 && *cur_b64) {
        size_t cl = 0;
        unsigned char *cur = tg_base64_decode(cur_b64, strlen(cur_b64), &cl, err, sizeof(err));
        int due = !cur || tg_cert_validity(cur, cl, &nb, &na) != 0 || tg_renewal_due(nb, na, time(NULL));
        free(cur);
        if (!due) {
            ret = (long)(tg_renewal_at(nb, na) - time(NULL) + 1) * 1000;
            tenant_settle(s, tenant, ns, name, fp, NULL, ret);
            goto out;
        }
    }
    if (!have_csr || (crt_b64 && cur_b64 && strcmp(crt_b64, cur_b64) == 0)) {
        /* none yet, or the newest one is the certificate being renewed */
        if (s->settled &&
            tg_settled_marked(s->settled, pending, ours, sizeof(ours), tg_wq_now_ms()) &&
            !(have_csr && strcmp(ours, newest) == 0)) {
            ret = 1000;   /* the one we made is on its way into the cache */
            goto out;
        }
        if ((st = create_csr(s, api, tenant, ns, cid, csr_made, sizeof(csr_made), err, sizeof(err))) != 201)
            goto fail;
        tg_log(TG_LOG_INFO, cur_b64 ? "csr created for renewal" : "csr created", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("tenant", name), TG_LOG_STR("csr", csr_made));
        ret = TENANT_WAIT_MS;   /* the CSR informer wakes us when the certificate is there */
        if (s->settled) {
            char fp_new[sizeof(csr_made) + 4];
            uint64_t t_now = tg_wq_now_ms();
            tg_settled_mark(s->settled, pending, csr_made, t_now, t_now + CSR_PENDING_MS);
            /* the cache shows the old state until it sees ours: both are settled */
            snprintf(fp_new, sizeof(fp_new), "%s:0", csr_made);
            tenant_settle(s, tenant, ns, name, fp, fp_new, ret);
        }
        goto out;
    }
    if (!crt_b64 || !*crt_b64) {
        ret = TENANT_WAIT_MS;   /* not issued yet: woken as above; this is only a safety net */
        tenant_settle(s, tenant, ns, name, fp, NULL, ret);
        goto out;
    }
    if (!(crt = tg_base64_decode(crt_b64, strlen(crt_b64), &crt_len, err, sizeof(err))) ||
        tg_cert_validity(crt, crt_len, &nb, &na) != 0) {
        snprintf(err, sizeof(err), "the CSR's certificate does not parse");
        goto fail;
    }
    ap = json_object_new_object();
    json_object_object_add(ap, "signedCRT", jstr(crt_b64));
    if (s->ca_pem) {
        char *ca = tg_base64_encode((unsigned char *)s->ca_pem, s->ca_len, NULL);
        json_object_object_add(ap, "ca", jstr(ca));
        free(ca);
    }
    json_object_object_add(ap, "apiServer", jstr(s->api_server));
    if (t.proxy_url)
        json_object_object_add(ap, "proxyURL", jstr(t.proxy_url));
    conds = json_object_new_array();
    {
        json_object *c1 = condition("Authenticated", 1, "TenantValidated", "the Tenant passed the checks", gen, now);
        json_object *c2 = condition("IdentityIssued", 1, "CertificateIssued", "signedCRT is in status.authParams", gen,
                                    now);
        keep_transition_time(tenant, c1);
        keep_transition_time(tenant, c2);
        json_object_array_add(conds, c1);
        json_object_array_add(conds, c2);
    }
    if ((st = patch_tenant_status(api, tenant, ns, name, ap, conds, &updated, err, sizeof(err))) != 200)
        goto fail;
 
    if (s->m_cert_expiry)
        tg_gauge_set(tg_metric_series_get(s->m_cert_expiry, (const char *[]){cid}), (double)na);
    if (s->m_issue_seconds && !cur_b64) {
        /* first issue: seconds from the Tenant's creation to its certificate in status */
        const char *created = tg_json_path_string(tenant, "metadata", "creationTimestamp", NULL);
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        if (created && strptime(created, "%Y-%m-%dT%H:%M:%SZ", &tm))
            tg_histogram_observe(tg_metric_series_get(s->m_issue_seconds, NULL),
                                 difftime(time(NULL), timegm(&tm)));
    }
    tg_log(TG_LOG_INFO, "tenant identity issued", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
           TG_LOG_INT("not_after", (int64_t)na));
    tg_api_event(api, tenant, "Normal", "IdentityIssued", "client certificate issued and stored in status");
    ret = (long)(tg_renewal_at(nb, na) - time(NULL) + 1) * 1000;
    if (ret <= 0)
        ret = 1000;
    if (updated)   /* the status write's own event will find this */
        tenant_settle(s, updated, ns, name, fp, NULL, ret);
    goto out;
fail:
    tg_log(TG_LOG_WARN, "tenant reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
           TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    free(crt);
    free(crt_b64);
    free_secret(nonce, nonce ? strlen(nonce) : 0);
    tg_tenant_clear(&t);
    json_object_put(updated);
    json_object_put(tenant);
    return ret;
}

/* ---------- provider: CSR approver and own signer ---------- */

/* The Approved/Denied condition already there: 1 approved, -1 denied, 0 none. */
static int csr_decided(json_object *csr)
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

static long sign_csr(tg_signer *s, tg_api *api, json_object *csr, const char *name)
{
    const char *b64 = tg_json_path_string(csr, "spec", "request", NULL);
    unsigned char *pem = NULL;
    size_t pem_len = 0, crt_len = 0;
    char err[512], path[512], *crt = NULL, *crt_b64 = NULL;
    json_object *st, *exp;
    X509_REQ *req = NULL;
    BIO *b;
    long r = TG_RECONCILE_RETRY;

    if (!b64 || !(pem = tg_base64_decode(b64, strlen(b64), &pem_len, err, sizeof(err))))
        return TG_RECONCILE_OK;   /* the approver denies those */
    if ((b = BIO_new_mem_buf(pem, (int)pem_len))) {
        req = PEM_read_bio_X509_REQ(b, NULL, NULL, NULL);
        BIO_free(b);
    }
    exp = tg_json_path(csr, "spec", "expirationSeconds", NULL);
    if (!req || !(crt = tg_issue_client_cert(&s->own_ca, req, exp ? (long)json_object_get_int64(exp) : 0, time(NULL),
                                              &crt_len, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot sign", TG_LOG_STR("csr", name), TG_LOG_STR("error", req ? err : "bad request"));
        goto out;
    }
    crt_b64 = tg_base64_encode((unsigned char *)crt, crt_len, NULL);
    if (!(st = tg_json_path(csr, "status", NULL))) {
        st = json_object_new_object();
        json_object_object_add(csr, "status", st);
    }
    json_object_object_add(st, "certificate", jstr(crt_b64));
    snprintf(path, sizeof(path), CSR_API "/%s/status", name);
    if (tg_api_call(api, "PUT", path, TG_KUBE_CT_JSON, csr, NULL, err, sizeof(err)) != 200) {
        tg_log(TG_LOG_WARN, "cannot write the certificate", TG_LOG_STR("csr", name), TG_LOG_STR("error", err));
        goto out;
    }
    tg_log(TG_LOG_INFO, "csr signed", TG_LOG_STR("csr", name));
    r = TG_RECONCILE_OK;
out:
    free(crt_b64);
    free(crt);
    free(pem);
    X509_REQ_free(req);
    return r;
}

typedef struct rv_look {
    char rv[64];
    int issued;
} rv_look;

static void on_rv_visit(json_object *o, void *data)
{
    rv_look *l = data;
    const char *rv = tg_json_path_string(o, "metadata", "resourceVersion", NULL);
    const char *crt = tg_json_path_string(o, "status", "certificate", NULL);

    if (rv && strlen(rv) < sizeof(l->rv))
        strcpy(l->rv, rv);
    l->issued = crt && *crt;
}

/* Nothing for the approver (or our own signer) to do, as the CSR informer
 * shows it: issued already (a certificate is only ever issued after an
 * approval), or our own decision coming back as its watch event. */
static int csr_decision_settled(tg_signer *s, const char *name)
{
    rv_look l = {.rv = "", .issued = 0};
    char key[300];

    if (!s->settled || !s->csr_cache || !tg_cache_synced(s->csr_cache) ||
        !tg_cache_get(s->csr_cache, NULL, name, on_rv_visit, &l) || !l.rv[0])
        return 0;
    if (l.issued)
        return 1;
    snprintf(key, sizeof(key), "csr/%s", name);
    if (tg_settled_check(s->settled, key, l.rv, "decided", tg_wq_now_ms()) == 0)
        return 0;
    tg_settled_forget(s->settled, key);   /* its one event is here: no need to keep it */
    return 1;
}

/* Approved or denied by us: the CSR's next event (at the version our PUT
 * returned) needs no GET, unless this process must still sign it. */
static void csr_decision_settle(tg_signer *s, json_object *after, const char *name, int approved)
{
    const char *rv = tg_json_path_string(after, "metadata", "resourceVersion", NULL);
    const char *sn = tg_json_path_string(after, "spec", "signerName", NULL);
    char key[300];
    uint64_t now = tg_wq_now_ms();

    if (!s->settled || !rv)
        return;
    if (approved && (s->controllers & TG_CTL_SIGNER) && s->own_ca.cert && sn && strcmp(sn, TG_SIGNER_NAME_OWN) == 0)
        return;
    snprintf(key, sizeof(key), "csr/%s", name);
    tg_settled_put(s->settled, key, rv, "decided", NULL, now, now + 10 * 60 * 1000);
}

static long reconcile_approve(tg_signer *s, tg_api *api, const char *name)
{
    char path[1024], err[512], now[32];
    json_object *csr = NULL, *tenant = NULL, *st, *conds, *c, *after = NULL;
    const char *cid, *tns;
    char *nonce = NULL;
    tg_approve_policy pol = {.signer_name = s->signer_name, .allow_no_handshake = s->allow_no_handshake};
    tg_approve_decision d;
    long r, ret = TG_RECONCILE_RETRY;
    int decided;

    if (csr_decision_settled(s, name)) {
        count_skip(s, "csr");
        return TG_RECONCILE_OK;
    }
    snprintf(path, sizeof(path), CSR_API "/%s", name);
    if ((r = tg_api_get(api, path, &csr, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (r != 200)
        goto fail;
    decided = csr_decided(csr);
    if (decided > 0) {
        const char *sn = tg_json_path_string(csr, "spec", "signerName", NULL);
        if ((s->controllers & TG_CTL_SIGNER) && s->own_ca.cert && sn && strcmp(sn, TG_SIGNER_NAME_OWN) == 0 &&
            !tg_json_path_string(csr, "status", "certificate", NULL))
            ret = sign_csr(s, api, csr, name);
        else
            ret = TG_RECONCILE_OK;
        goto out;
    }
    if (decided < 0 || !(s->controllers & TG_CTL_APPROVER)) {
        ret = TG_RECONCILE_OK;
        goto out;
    }
    char default_ns[320];

    cid = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    tns = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);
    if (cid && !tns) {   /* a CSR made by another tool: the conventional tenant namespace */
        snprintf(default_ns, sizeof(default_ns), TG_TENANT_NAMESPACE_PREFIX "%s", cid);
        tns = default_ns;
    }
    if (cid && tns && tg_cluster_id_valid(cid) && strlen(tns) < 64 && !strchr(tns, '/')) {
        snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", tns, cid);
        r = tg_api_get(api, path, &tenant, err, sizeof(err));
        if (r != 200 && r != 404)
            goto fail;
        nonce = read_nonce(api, tns, NULL);
    }
    tg_approve_decide(csr, tenant, nonce, &pol, &d);
    rfc3339(time(NULL), now, sizeof(now));
    if (!(st = tg_json_path(csr, "status", NULL))) {
        st = json_object_new_object();
        json_object_object_add(csr, "status", st);
    }
    if (!(conds = tg_json_path(st, "conditions", NULL))) {
        conds = json_object_new_array();
        json_object_object_add(st, "conditions", conds);
    }
    c = json_object_new_object();
    json_object_object_add(c, "type", jstr(d.approve ? "Approved" : "Denied"));
    json_object_object_add(c, "status", jstr("True"));
    json_object_object_add(c, "reason", jstr(d.reason));
    json_object_object_add(c, "message", jstr(d.message));
    json_object_object_add(c, "lastUpdateTime", jstr(now));
    json_object_array_add(conds, c);
    snprintf(path, sizeof(path), CSR_API "/%s/approval", name);
    r = tg_api_call(api, "PUT", path, TG_KUBE_CT_JSON, csr, &after, err, sizeof(err));
    if (r != 200)
        goto fail;
    if (after)
        csr_decision_settle(s, after, name, d.approve);
    if (s->m_decisions)
        tg_counter_add(tg_metric_series_get(s->m_decisions, (const char *[]){d.approve ? "approved" : "denied", d.reason}), 1);
    tg_log(d.approve ? TG_LOG_INFO : TG_LOG_WARN, d.approve ? "csr approved" : "csr denied", TG_LOG_STR("csr", name),
           TG_LOG_STR("cluster_id", cid), TG_LOG_STR("reason", d.reason), TG_LOG_STR("message", d.message));
    tg_api_event(api, csr, d.approve ? "Normal" : "Warning", d.reason, d.message);
    /* A denial is news on the Tenant; an approval reaches it as IdentityIssued. */
    if (tenant && !d.approve)
        tg_api_event(api, tenant, "Warning", "CSRDenied", d.message);
    /* approved for our own signer: look again to sign it; otherwise the
     * controller-manager signs and our PUT's event is settled above */
    ret = d.approve && s->own_ca.cert && (s->controllers & TG_CTL_SIGNER) ? 1 : TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "csr reconcile failed", TG_LOG_STR("csr", name), TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    free_secret(nonce, nonce ? strlen(nonce) : 0);
    json_object_put(after);
    json_object_put(tenant);
    json_object_put(csr);
    return ret;
}

/* ---------- consumer: keys, nonce signer, identity ---------- */

/* The cluster key, from authentication-keys (created when missing). */
static EVP_PKEY *cluster_key(tg_signer *s, tg_api *api, int create, char *err, size_t err_len)
{
    char path[1024];
    json_object *sec = NULL;
    EVP_PKEY *k = NULL;
    long st;

    pthread_mutex_lock(&s->key_mu);
    if (s->cluster_key) {
        k = s->cluster_key;
        goto out;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/" TG_KEYS_SECRET, s->namespace_);
    st = tg_api_get(api, path, &sec, err, err_len);
    if (st == 200) {
        size_t len = 0;
        unsigned char *pem = secret_data(sec, "privateKey", &len);
        if (pem)
            k = tg_key_private_from_pem((char *)pem, len);
        free_secret(pem, len);
        if (!k)
            snprintf(err, err_len, "secret %s/%s holds no usable privateKey", s->namespace_, TG_KEYS_SECRET);
    } else if (st == 404 && create) {
        json_object *o = json_object_new_object(), *meta = json_object_new_object(), *data = json_object_new_object();
        size_t pl = 0, ul = 0;
        char *priv, *pub, *b1, *b2;
        k = tg_key_generate(TG_KEY_ED25519);
        priv = k ? tg_key_private_pem(k, &pl) : NULL;
        pub = k ? tg_key_public_pem(k, &ul) : NULL;
        b1 = priv ? tg_base64_encode((unsigned char *)priv, pl, NULL) : NULL;
        b2 = pub ? tg_base64_encode((unsigned char *)pub, ul, NULL) : NULL;
        json_object_object_add(o, "apiVersion", jstr("v1"));
        json_object_object_add(o, "kind", jstr("Secret"));
        json_object_object_add(meta, "name", jstr(TG_KEYS_SECRET));
        json_object_object_add(meta, "namespace", jstr(s->namespace_));
        json_object_object_add(o, "metadata", meta);
        json_object_object_add(data, "privateKey", jstr(b1));
        json_object_object_add(data, "publicKey", jstr(b2));
        json_object_object_add(o, "data", data);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", s->namespace_);
        st = b1 && b2 ? tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, o, NULL, err, err_len) : -1;
        free_secret(priv, pl);
        free(pub);
        free_secret(b1, b1 ? strlen(b1) : 0);
        free(b2);
        json_object_put(o);
        if (st != 201) {
            /* 409: another replica won the race; read theirs next time */
            EVP_PKEY_free(k);
            k = NULL;
        } else {
            tg_log(TG_LOG_INFO, "cluster keys created", TG_LOG_STR("namespace", s->namespace_),
                   TG_LOG_STR("secret", TG_KEYS_SECRET));
        }
    }
    s->cluster_key = k;
out:
    pthread_mutex_unlock(&s->key_mu);
    json_object_put(sec);
    return k;
}

static long reconcile_keys(tg_signer *s, tg_api *api)
{
    char err[512];

    if (!cluster_key(s, api, 1, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cluster keys not available", TG_LOG_STR("error", err));
        return TG_RECONCILE_RETRY;
    }
    return TG_RECONCILE_OK;
}

static long reconcile_signed_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512];
    json_object *sec = NULL;
    unsigned char *nonce = NULL, *sig = NULL;
    size_t nlen = 0, slen = 0;
    EVP_PKEY *k;
    long st, ret = TG_RECONCILE_RETRY;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    if (tg_json_path_string(sec, "data", "signedNonce", NULL) || !(nonce = secret_data(sec, "nonce", &nlen))) {
        ret = TG_RECONCILE_OK;   /* already signed, or nothing to sign yet */
        goto out;
    }
    if (!tg_nonce_text_valid((char *)nonce, nlen)) {
        tg_log(TG_LOG_WARN, "nonce to sign is not a nonce", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!(k = cluster_key(s, api, 1, err, sizeof(err))))
        goto fail;
    if (tg_nonce_sign(k, (char *)nonce, nlen, &sig, &slen) != 0) {
        snprintf(err, sizeof(err), "signing failed");
        goto fail;
    }
    st = patch_secret_data(api, ns, name, "signedNonce", sig, slen,
                           tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, sizeof(err));
    if (st != 200)
        goto fail;
    tg_log(TG_LOG_INFO, "nonce signed", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
    ret = TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "nonce signer failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
out:
    free_secret(nonce, nlen);
    free(sig);
    json_object_put(sec);
    return ret;
}

static long reconcile_identity(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], sname[320];
    json_object *id = NULL, *sec = NULL, *meta, *labels, *owners, *owner, *data, *patch, *stj, *ref;
    const char *pid, *type, *server, *ca_b64, *crt_b64, *proxy, *idns, *uid;
    unsigned char *ca = NULL, *crt = NULL;
    size_t ca_len = 0, crt_len = 0, kc_len = 0, key_len = 0;
    char *key_pem = NULL, *kc = NULL, *kc_b64 = NULL;
    EVP_PKEY *k;
    tg_kubeconfig_in in;
    long st, ret = TG_RECONCILE_RETRY;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s", ns, name);
    if ((st = tg_api_get(api, path, &id, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    pid = tg_json_path_string(id, "spec", "clusterID", NULL);
    type = tg_json_path_string(id, "spec", "type", NULL);
    server = tg_json_path_string(id, "spec", "authParams", "apiServer", NULL);
    ca_b64 = tg_json_path_string(id, "spec", "authParams", "ca", NULL);
    crt_b64 = tg_json_path_string(id, "spec", "authParams", "signedCRT", NULL);
    proxy = tg_json_path_string(id, "spec", "authParams", "proxyURL", NULL);
    idns = tg_json_path_string(id, "spec", "namespace", NULL);
    uid = tg_json_path_string(id, "metadata", "uid", NULL);
    if (!pid || !crt_b64 || !uid || !(crt = tg_base64_decode(crt_b64, strlen(crt_b64), &crt_len, err, sizeof(err))) ||
        (ca_b64 && !(ca = tg_base64_decode(ca_b64, strlen(ca_b64), &ca_len, err, sizeof(err))))) {
        tg_log(TG_LOG_WARN, "identity incomplete", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name));
        tg_api_event(api, id, "Warning", "InvalidIdentity", "spec.clusterID and spec.authParams (signedCRT, ca) must be set and base64");
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!(k = cluster_key(s, api, 0, err, sizeof(err))) || !(key_pem = tg_key_private_pem(k, &key_len)))
        goto fail;
    in = (tg_kubeconfig_in){.provider_id = pid, .server = server, .ca = ca, .ca_len = ca_len, .proxy_url = proxy,
                            .cert = crt, .cert_len = crt_len, .key_pem = key_pem, .key_len = key_len,
                            .user = s->cluster_id,
                            .namespace_ = type && strcmp(type, "ControlPlane") == 0 ? idns : NULL};
    if (!(kc = tg_kubeconfig_render(&in, &kc_len, err, sizeof(err))) ||
        !(kc_b64 = tg_base64_encode((unsigned char *)kc, kc_len, NULL)))
        goto fail;
    snprintf(sname, sizeof(sname), "kubeconfig-%s", name);
    sec = json_object_new_object();
    json_object_object_add(sec, "apiVersion", jstr("v1"));
    json_object_object_add(sec, "kind", jstr("Secret"));
    meta = json_object_new_object();
    json_object_object_add(meta, "name", jstr(sname));
    json_object_object_add(meta, "namespace", jstr(ns));
    labels = json_object_new_object();
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, jstr(pid));
    json_object_object_add(labels, "liqo.io/identity-type", jstr(type ? type : ""));
    json_object_object_add(meta, "labels", labels);
    owner = json_object_new_object();
    json_object_object_add(owner, "apiVersion", jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(owner, "kind", jstr("Identity"));
    json_object_object_add(owner, "name", jstr(name));
    json_object_object_add(owner, "uid", jstr(uid));
    json_object_object_add(owner, "controller", json_object_new_boolean(1));
    json_object_object_add(owner, "blockOwnerDeletion", json_object_new_boolean(1));
    owners = json_object_new_array();
    json_object_array_add(owners, owner);
    json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(sec, "metadata", meta);
    data = json_object_new_object();
    json_object_object_add(data, "kubeconfig", jstr(kc_b64));
    json_object_object_add(sec, "data", data);
    /* Server-side apply: create or update in one idempotent call. */
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s?fieldManager=tenantgate-signer&force=true", ns,
             sname);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_APPLY, sec, NULL, err, sizeof(err));
    if (st != 200 && st != 201)
        goto fail;
    if (!tg_json_path_string(id, "status", "kubeconfigSecretRef", "name", NULL) ||
        strcmp(tg_json_path_string(id, "status", "kubeconfigSecretRef", "name", NULL), sname) != 0) {
        patch = json_object_new_object();
        stj = json_object_new_object();
        ref = json_object_new_object();
        json_object_object_add(ref, "name", jstr(sname));
        json_object_object_add(stj, "kubeconfigSecretRef", ref);
        json_object_object_add(patch, "status", stj);
        snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s/status", ns, name);
        st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, sizeof(err));
        json_object_put(patch);
        if (st != 200)
            goto fail;
    }
    tg_log(TG_LOG_INFO, "identity kubeconfig written", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name),
           TG_LOG_STR("secret", sname));
    ret = TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "identity reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name),
           TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    free_secret(kc_b64, kc_b64 ? strlen(kc_b64) : 0);
    free_secret(kc, kc_len);
    free_secret(key_pem, key_len);
    free(ca);
    free(crt);
    json_object_put(sec);
    json_object_put(id);
    return ret;
}

long tg_signer_reconcile(tg_signer *s, tg_api *api, const char *key)
{
    char kind[32], ns[256], name[256];

    if (split_key(key, kind, ns, name) != 0)
        return TG_RECONCILE_OK;
    if (strcmp(kind, "nonce") == 0)
        return reconcile_nonce(s, api, ns, name);
    if (strcmp(kind, "tenant") == 0)
        return reconcile_tenant(s, api, ns, name);
    if (strcmp(kind, "csr") == 0)
        return reconcile_approve(s, api, name);
    if (strcmp(kind, "keys") == 0)
        return reconcile_keys(s, api);
    if (strcmp(kind, "signednonce") == 0)
        return reconcile_signed_nonce(s, api, ns, name);
    if (strcmp(kind, "identity") == 0)
        return reconcile_identity(s, api, ns, name);
    return TG_RECONCILE_OK;
}
