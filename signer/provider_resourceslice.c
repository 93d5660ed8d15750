/* provider_resourceslice.c - the provider's ResourceSlice controller
 * (PROTOCOL.md 6a; Liqo's remoteresourceslice): for a replicated slice in
 * a tenant namespace, authenticate it again (approve_decide.h), get its
 * certificate through a Kubernetes CSR, cache it in Secret
 * liqo-remote-certificate-<name>, write status.authParams and the
 * Authentication and Resources conditions through /status, bind the slice's
 * user to tenantgate-resourceslice-user, and renew at 2/3 of the lifetime.
 *
 * The slice, its Tenant, its cache Secret and the policy are read live. The
 * CSRs of the slice and its sibling slices (the maxPerTenant sum) come from
 * the informers' caches (slice_plan.h decides over them), which list before
 * any worker starts, so a restart between any two steps resumes from what the
 * API server holds: a pending CSR is waited for, not made twice. What the
 * caches cannot show yet - a CSR we just made, a verdict we just wrote - is
 * remembered in s->settled. The Secret and the RoleBinding are owned by the
 * slice, so deleting the slice removes them. */
#include "signer/reconcile_common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/slice.h"
#include "signer/approve_decide.h"
#include "signer/events.h"
#include "signer/renewal.h"
#include "signer/slice_plan.h"
#include "signer/slice_resources.h"

#define SECRET_PREFIX "liqo-remote-certificate-"
#define BINDING_PREFIX "tenantgate-rslice-"
/* Liqo's condition reasons and messages (RRS), kept word for word. */
#define AUTH_ACCEPTED "ResourceSliceAuthenticationAccepted"
#define AUTH_DENIED "ResourceSliceAuthenticationDenied"
#define RES_ACCEPTED "ResourceSliceResourcesAccepted"
#define RES_DENIED "ResourceSliceResourcesDenied"
/* Liqo's NotMatchingCSRError text. */
#define CSR_MISMATCH "the stored and the provided CSR do not match"

/* A CSR made, not decided: the CSR informer wakes the slice when it is;
 * this is the safety net. (Stale and denied CSRs: slice_plan.h.) */
#define WAIT_MS 10000
/* The CSR informer may lag our own POST: no second CSR for this long unless
 * the cache shows the first; meanwhile the slice is looked at every second. */
#define CSR_PENDING_MS 60000
#define CACHE_LAG_MS 1000
/* How long this process remembers a Resources verdict it wrote (grant_put):
 * far longer than the slice informer takes to show the write. */
#define GRANT_RECORD_MS 600000
/* Resources=Denied: looked at again this often, so a policy edit applies. */
#define RES_DENIED_RECHECK_MS 60000

/* Resources decisions of one consumer are made one at a time: the sum of
 * the other accepted slices (maxPerTenant) must include a slice accepted a
 * moment ago by another worker. One process acts (leader election). */
static pthread_mutex_t res_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct slice_ctx {
    tg_signer *s;
    tg_api *api;
    json_object *slice, *tenant;
    const char *ns, *name, *uid, *consumer, *csr_b64;
    char user[TG_SLICE_USER_MAX];
    char err[512];
} slice_ctx;

/* The certificate outcome. */
typedef struct cert_result {
    char *signed_b64;            /* the certificate to publish (base64 PEM), malloc'd, or NULL */
    int denied;                  /* Authentication=Denied with reason/message */
    char reason[48];
    char message[512];
    long requeue_ms;             /* > 0: look again then */
} cert_result;

/* ---------- the certificate ---------- */

/* The public key of the slice's CSR (PEM text), or NULL. */
static EVP_PKEY *request_key(const char *csr_b64)
{
    char err[64];
    size_t len = 0;
    unsigned char *pem = tg_base64_decode(csr_b64, strlen(csr_b64), &len, err, sizeof(err));
    EVP_PKEY *k = NULL;
    X509_REQ *req = NULL;
    BIO *b;

    if (pem && len < (1u << 20) && (b = BIO_new_mem_buf(pem, (int)len))) {
        if ((req = PEM_read_bio_X509_REQ(b, NULL, NULL, NULL)) && (k = X509_REQ_get0_pubkey(req)))
            EVP_PKEY_up_ref(k);
        X509_REQ_free(req);
        BIO_free(b);
    }
    free(pem);
    return k;
}

/* A certificate (base64 PEM) usable now: parses, certifies key, not due.
 * 1 with its renewal time in *renew_at, 0 otherwise. */
static int cert_usable(const char *b64, EVP_PKEY *key, time_t *renew_at)
{
    char err[64];
    size_t len = 0;
    unsigned char *pem;
    time_t nb, na;
    int ok;

    if (!b64 || !*b64 || !(pem = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err))))
        return 0;
    ok = tg_cert_validity(pem, len, &nb, &na) == 0 && tg_cert_key_is(pem, len, key) == 1 &&
         !tg_renewal_due(nb, na, time(NULL));
    if (ok && renew_at)
        *renew_at = tg_renewal_at(nb, na);
    free(pem);
    return ok;
}

static json_object *slice_owner(slice_ctx *c)
{
    json_object *owner = json_object_new_object(), *owners = json_object_new_array();

    /* controller, without blockOwnerDeletion: that would need update on
     * resourceslices/finalizers, which the signer does not hold */
    json_object_object_add(owner, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(owner, "kind", rc_jstr("ResourceSlice"));
    json_object_object_add(owner, "name", rc_jstr(c->name));
    json_object_object_add(owner, "uid", rc_jstr(c->uid));
    json_object_object_add(owner, "controller", json_object_new_boolean(1));
    json_object_array_add(owners, owner);
    return owners;
}

/* 1 when obj's controller owner is this slice, 0 another owner, -1 no owner. */
static int owned_by_slice(json_object *obj, const char *uid)
{
    json_object *o = tg_json_path(obj, "metadata", "ownerReferences", NULL);
    size_t i;
    int any = 0;

    for (i = 0; o && json_object_is_type(o, json_type_array) && i < json_object_array_length(o); i++) {
        const char *u = tg_json_string(json_object_array_get_idx(o, i), "uid");
        any = 1;
        if (u && strcmp(u, uid) == 0)
            return 1;
    }
    return any ? 0 : -1;
}

/* The cache Secret (data csr, certificate; label remote-cluster-id), owned
 * by the slice: created, or its data replaced. */
static long write_cache(slice_ctx *c, const char *secret_name, const char *cert_b64, int exists)
{
    json_object *sec = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object(), *data = json_object_new_object();
    char path[1024];
    long r;

    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(c->consumer));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(meta, "ownerReferences", slice_owner(c));
    json_object_object_add(data, "csr", rc_jstr(c->csr_b64));        /* spec.csr is base64 already */
    json_object_object_add(data, "certificate", rc_jstr(cert_b64));
    json_object_object_add(sec, "data", data);
    if (!exists) {
        json_object_object_add(meta, "name", rc_jstr(secret_name));
        json_object_object_add(meta, "namespace", rc_jstr(c->ns));
        json_object_object_add(sec, "apiVersion", rc_jstr("v1"));
        json_object_object_add(sec, "kind", rc_jstr("Secret"));
    }
    json_object_object_add(sec, "metadata", meta);
    if (exists) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", c->ns, secret_name);
        r = tg_api_call(c->api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, sec, NULL, c->err, sizeof(c->err));
    } else {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", c->ns);
        r = tg_api_call(c->api, "POST", path, TG_KUBE_CT_JSON, sec, NULL, c->err, sizeof(c->err));
    }
    json_object_put(sec);
    return r == 200 || r == 201 ? 0 : -1;
}

/* The newest CSR made for a slice's current request, as the CSR informer's
 * cache shows it (copied out: a visitor keeps no pointer into the cache). */
typedef struct slice_csr_look {
    const char *ref;       /* "<ns>/<name>", the CSRs' TG_ANNOTATION_CSR_SLICE */
    const char *hash;      /* the request's TG_LABEL_CSR_REQUEST */
    const char *self_user; /* only CSRs made by it count (tg_csr_made_by) */
    const char *ours;      /* the name of the CSR we made last, or NULL */
    long long ours_from;   /* or, when its POST failed unanswered, the ms it was sent at */
    int decided, saw_ours, oom;
    rc_csr_pick best;      /* the newest so far */
    char *certificate;     /* status.certificate (base64 PEM), malloc'd, or NULL */
    char reason[64], message[256];   /* its last condition's */
} slice_csr_look;

/* The newest as the Tenant controller orders them (rc_csr_pick_newer). */
static void on_slice_csr_visit(json_object *o, void *data)
{
    slice_csr_look *l = data;
    const char *a = tg_json_path_string(o, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
    const char *h = tg_json_path_string(o, "metadata", "labels", TG_LABEL_CSR_REQUEST, NULL);
    const char *ts = tg_json_path_string(o, "metadata", "creationTimestamp", NULL);
    const char *nm = tg_json_path_string(o, "metadata", "name", NULL);
    const char *ms_text = tg_json_path_string(o, "metadata", "labels", TG_LABEL_CSR_CREATED_MS, NULL);
    const char *crt = tg_json_path_string(o, "status", "certificate", NULL);
    json_object *conds = tg_json_path(o, "status", "conditions", NULL), *last = NULL;
    long long ms = ms_text ? strtoll(ms_text, NULL, 10) : 0;
    int decided;

    if (!a || strcmp(a, l->ref) != 0 || !h || strcmp(h, l->hash) != 0 || !ts || !nm ||
        strlen(ts) >= sizeof(l->best.ts) || strlen(nm) >= sizeof(l->best.name) || !tg_csr_made_by(o, l->self_user))
        return;
    if ((l->ours && strcmp(nm, l->ours) == 0) || (l->ours_from && ms >= l->ours_from))
        l->saw_ours = 1;
    decided = rc_csr_decided(o);
    if (!rc_csr_pick_newer(&l->best, nm, ts, ms, crt && *crt, decided < 0))
        return;
    l->decided = decided;
    free(l->certificate);
    l->certificate = NULL;
    if (crt && *crt && !(l->certificate = strdup(crt)))
        l->oom = 1;
    if (conds && json_object_is_type(conds, json_type_array) && json_object_array_length(conds))
        last = json_object_array_get_idx(conds, json_object_array_length(conds) - 1);
    snprintf(l->reason, sizeof(l->reason), "%s", last && tg_json_string(last, "reason") ? tg_json_string(last, "reason") : "");
    snprintf(l->message, sizeof(l->message), "%s",
             last && tg_json_string(last, "message") ? tg_json_string(last, "message") : "");
}

static void cert_deny(cert_result *cr, const char *reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cert_deny(cert_result *cr, const char *reason, const char *fmt, ...)
{
    va_list ap;

    cr->denied = 1;
    snprintf(cr->reason, sizeof(cr->reason), "%s", reason);
    va_start(ap, fmt);
    vsnprintf(cr->message, sizeof(cr->message), fmt, ap);
    va_end(ap);
}

static void pending_key(const slice_ctx *c, const char *hash, char *key, size_t len)
{
    snprintf(key, len, "slice-csr/%s/%s/%s", c->ns, c->name, hash);
}

/* POST a CSR for the slice's request and mark it pending (key pending)
 * until the cache shows it. again: one was made before. 0, or -1 with c->err. */
static int new_csr(slice_ctx *c, const char *ref, const char *hash, const char *pending, int again)
{
    json_object *annotations = json_object_new_object();
    struct timespec sent;
    char made[256], from[32];
    uint64_t now_ms = tg_wq_now_ms();
    long r;

    clock_gettime(CLOCK_REALTIME, &sent);
    snprintf(from, sizeof(from), "@%lld", (long long)sent.tv_sec * 1000 + sent.tv_nsec / 1000000);
    json_object_object_add(annotations, TG_ANNOTATION_CSR_SLICE, rc_jstr(ref));
    r = rc_create_csr(c->s, c->api, c->csr_b64, c->consumer, hash, NULL, annotations, made, sizeof(made), c->err,
                      sizeof(c->err));
    if (r == 201)
        tg_log(TG_LOG_INFO, again ? "resourceslice csr created again" : "resourceslice csr created",
               TG_LOG_STR("namespace", c->ns), TG_LOG_STR("resourceslice", c->name), TG_LOG_STR("csr", made));
    /* Made (known by name), or no answer or the server's error: it may exist
     * all the same, and its created-ms label is not below the time it was sent. */
    if (c->s->settled && (r == 201 || r < 0 || r >= 500))
        tg_settled_mark(c->s->settled, pending, r == 201 && made[0] ? made : from, now_ms, now_ms + CSR_PENDING_MS);
    return r == 201 ? 0 : -1;
}

/* The CSR route (slice_plan.h): use an issued certificate, wait for a
 * pending CSR, show a recent denial, or make a CSR. The CSRs come from the
 * CSR informer's cache (indexed by consumer), not a LIST: it listed before
 * the workers started, so after a restart it shows every CSR made before;
 * one this process made and the cache does not show yet is marked pending
 * in s->settled, so no second one is made meanwhile. */
static int cert_from_csrs(slice_ctx *c, EVP_PKEY *key, const char *secret_name, int secret_exists,
                          cert_result *cr)
{
    char hash[TG_REQUEST_HASH_LEN + 1], ref[600], pending[900], ours[256];
    slice_csr_look l;
    tg_slice_csr_view v = {.found = 0};
    time_t renew_at = 0;
    uint64_t now_ms = tg_wq_now_ms();
    int rc = -1, marked;

    if (!c->s->csr_cache || !tg_cache_synced(c->s->csr_cache)) {
        snprintf(c->err, sizeof(c->err), "the CSR informer has not synced");
        return -1;
    }
    rc_request_hash(c->csr_b64, hash);
    snprintf(ref, sizeof(ref), "%s/%s", c->ns, c->name);
    pending_key(c, hash, pending, sizeof(pending));
    marked = c->s->settled && tg_settled_marked(c->s->settled, pending, ours, sizeof(ours), now_ms);
    memset(&l, 0, sizeof(l));
    l.ref = ref;
    l.hash = hash;
    l.self_user = c->s->self_user;
    if (marked && ours[0] == '@')
        l.ours_from = strtoll(ours + 1, NULL, 10);
    else
        l.ours = marked ? ours : NULL;
    tg_cache_get_by_index(c->s->csr_cache, c->consumer, on_slice_csr_visit, &l);
    if (l.oom) {
        snprintf(c->err, sizeof(c->err), "out of memory");
        goto out;
    }
    if (marked && l.saw_ours)
        tg_settled_forget(c->s->settled, pending);   /* the cache has caught up with our CSR */
    v.found = l.best.found;
    v.issued = l.certificate != NULL;
    v.usable = v.issued && cert_usable(l.certificate, key, &renew_at);
    v.decided = l.decided;
    v.age_s = l.best.found ? (int64_t)(time(NULL) - rc_parse_rfc3339(l.best.ts)) : 0;
    v.ours_unseen = marked && !l.saw_ours;
    switch (tg_slice_csr_plan(&v)) {
    case TG_SLICE_CSR_USE:
        if (write_cache(c, secret_name, l.certificate, secret_exists) != 0)
            goto out;
        cr->signed_b64 = l.certificate;
        l.certificate = NULL;
        cr->requeue_ms = (long)(renew_at - time(NULL) + 1) * 1000;
        tg_log(TG_LOG_INFO, "resourceslice certificate cached", TG_LOG_STR("namespace", c->ns),
               TG_LOG_STR("resourceslice", c->name), TG_LOG_STR("csr", l.best.name));
        break;
    case TG_SLICE_CSR_WAIT:
        cr->requeue_ms = WAIT_MS;   /* the CSR informer wakes us once it is issued */
        break;
    case TG_SLICE_CSR_WAIT_CACHE:
        cr->requeue_ms = CACHE_LAG_MS;
        break;
    case TG_SLICE_CSR_DENIED:
        cert_deny(cr, l.reason[0] ? l.reason : "CSRDenied", "the certificate request was denied: %.200s: %.250s",
                  l.reason[0] ? l.reason : "Denied", l.message);
        cr->requeue_ms = (long)(TG_SLICE_DENIED_RETRY_S - v.age_s + 1) * 1000;
        break;
    case TG_SLICE_CSR_CREATE:
        if (new_csr(c, ref, hash, pending, l.best.found) != 0)
            goto out;
        cr->requeue_ms = WAIT_MS;
        break;
    }
    rc = 0;
out:
    free(l.certificate);
    return rc;
}

/* The slice's certificate: the cached one while usable, else through a CSR.
 * 0 (cr filled), -1 with c->err (retry). */
static int slice_certificate(slice_ctx *c, cert_result *cr)
{
    char secret_name[300], path[1024];
    json_object *sec = NULL;
    unsigned char *stored = NULL;
    size_t stored_len = 0;
    EVP_PKEY *key = NULL;
    time_t renew_at = 0;
    int exists = 0, rc = -1;
    long r;

    memset(cr, 0, sizeof(*cr));
    if (strlen(c->name) > 253 - strlen(SECRET_PREFIX)) {
        cert_deny(cr, "NameTooLong", "the name %.64s... is too long for Secret " SECRET_PREFIX "<name>", c->name);
        return 0;
    }
    snprintf(secret_name, sizeof(secret_name), SECRET_PREFIX "%s", c->name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", c->ns, secret_name);
    if ((r = tg_api_get(c->api, path, &sec, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    exists = sec != NULL;
    if (sec && owned_by_slice(sec, c->uid) == 0) {
        /* left by a deleted slice of the same name, not yet collected: our
         * write replaces its data and owner */
        json_object_put(sec);
        sec = NULL;
    }
    if (!(key = request_key(c->csr_b64))) {
        cert_deny(cr, "InvalidCSR", "spec.csr does not parse");
        rc = 0;
        goto out;
    }
    if (sec) {
        const char *want = c->csr_b64, *got = tg_json_path_string(sec, "data", "csr", NULL);
        if (!got || strcmp(got, want) != 0) {
            cert_deny(cr, "CSRMismatch", CSR_MISMATCH " (Secret %s in %s)", secret_name, c->ns);
            rc = 0;
            goto out;
        }
        stored = rc_secret_data(sec, "certificate", &stored_len);
        if (stored && cert_usable(tg_json_path_string(sec, "data", "certificate", NULL), key, &renew_at)) {
            cr->signed_b64 = strdup(tg_json_path_string(sec, "data", "certificate", NULL));
            cr->requeue_ms = (long)(renew_at - time(NULL) + 1) * 1000;
            rc = 0;
            goto out;
        }
    }
    rc = cert_from_csrs(c, key, secret_name, exists, cr);
    if (rc == 0 && !cr->signed_b64 && !cr->denied && stored) {
        /* renewing: the current certificate stays published until expiry */
        const char *cur = tg_json_path_string(sec, "data", "certificate", NULL);
        time_t nb, na;
        if (tg_cert_validity(stored, stored_len, &nb, &na) == 0 && na > time(NULL))
            cr->signed_b64 = strdup(cur);
    }
out:
    free(stored);
    EVP_PKEY_free(key);
    json_object_put(sec);
    return rc;
}

/* ---------- RBAC: the per-slice RoleBinding ---------- */

static void binding_name(const slice_ctx *c, char *out, size_t len)
{
    char h[TG_REQUEST_HASH_LEN + 1];

    if (strlen(BINDING_PREFIX) + strlen(c->name) <= 253) {
        snprintf(out, len, BINDING_PREFIX "%s", c->name);
        return;
    }
    rc_request_hash(c->name, h);   /* a long name: its hash keeps the name valid */
    snprintf(out, len, BINDING_PREFIX "%s", h);
}

/* present: the RoleBinding of User <name>-<h> to tenantgate-resourceslice-user,
 * owned by the slice; else none. */
static int ensure_binding(slice_ctx *c, int present)
{
    char name[300], path[1024];
    json_object *rb = NULL;
    long r;
    int own;

    binding_name(c, name, sizeof(name));
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/%s", c->ns, name);
    if ((r = tg_api_get(c->api, path, &rb, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    own = rb ? owned_by_slice(rb, c->uid) : -1;
    json_object_put(rb);
    if (r == 200 && (!present || own != 1)) {
        r = tg_api_call(c->api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, c->err, sizeof(c->err));
        if (r != 200 && r != 404)
            return -1;
        r = 404;
    }
    if (!present || r == 200)
        return 0;
    r = rc_post_binding(c->api, c->ns, name, c->consumer, "User", c->user, TG_SLICE_USER_CLUSTERROLE, slice_owner(c),
                        c->err, sizeof(c->err));
    return r == 201 || r == 409 ? 0 : -1;
}

/* ---------- status ---------- */

/* A condition turned Denied (or its message changed). */
static void count_verdict(tg_signer *s, const char *condition, const char *status, const char *reason)
{
    if (s->m_slice_verdicts)
        tg_counter_add(tg_metric_series_get(s->m_slice_verdicts, (const char *[]){condition, status, reason}), 1);
}

/* The condition of type in the slice's status, or NULL. */
static json_object *condition_of(json_object *slice, const char *type)
{
    json_object *conds = tg_json_path(slice, "status", "conditions", NULL);
    size_t i;

    for (i = 0; conds && json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        json_object *e = json_object_array_get_idx(conds, i);
        const char *t = tg_json_string(e, "type");
        if (t && strcmp(t, type) == 0)
            return e;
    }
    return NULL;
}

static int same_text(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Liqo's condition shape; lastTransitionTime kept while nothing changes. */
static json_object *make_condition(json_object *old, const char *type, const char *status, const char *reason,
                                   const char *message)
{
    json_object *c = json_object_new_object();
    const char *old_ts = old ? tg_json_string(old, "lastTransitionTime") : NULL;
    char now[32];

    rc_rfc3339(time(NULL), now, sizeof(now));
    if (!old || !old_ts || !same_text(tg_json_string(old, "status"), status) ||
        !same_text(tg_json_string(old, "reason"), reason) || !same_text(tg_json_string(old, "message"), message))
        old_ts = now;
    json_object_object_add(c, "type", rc_jstr(type));
    json_object_object_add(c, "status", rc_jstr(status));
    json_object_object_add(c, "lastTransitionTime", rc_jstr(old_ts));
    json_object_object_add(c, "reason", rc_jstr(reason));
    json_object_object_add(c, "message", rc_jstr(message));
    return c;
}

/* status.conditions with auth and res (either NULL: kept as it is). */
static json_object *conditions_with(json_object *slice, json_object *auth, json_object *res)
{
    json_object *out = json_object_new_array(), *conds = tg_json_path(slice, "status", "conditions", NULL);
    size_t i;

    if (auth)
        json_object_array_add(out, auth);
    if (res)
        json_object_array_add(out, res);
    for (i = 0; conds && json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        json_object *e = json_object_array_get_idx(conds, i);
        const char *t = tg_json_string(e, "type");
        if ((auth && t && strcmp(t, "Authentication") == 0) || (res && t && strcmp(t, "Resources") == 0))
            continue;
        json_object_array_add(out, json_object_get(e));
    }
    return out;
}

/* The policy of the slice's class from the policy ConfigMap (data[<class>],
 * JSON); NULL when there is none. -1 with c->err on a failed read;
 * *bad set (and why) when the ConfigMap's entry is not JSON. */
static int class_policy(slice_ctx *c, const char *class_, json_object **policy, char *why, size_t why_len, int *bad)
{
    char path[1024];
    json_object *cm = NULL;
    const char *text;
    long r;

    *policy = NULL;
    *bad = 0;
    if (!c->s->slice_policy_ns || !c->s->slice_policy_name)
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", c->s->slice_policy_ns, c->s->slice_policy_name);
    if ((r = tg_api_get(c->api, path, &cm, c->err, sizeof(c->err))) == 404)
        return 0;
    if (r != 200)
        return -1;
    text = tg_json_path_string(cm, "data", class_ && *class_ ? class_ : "default", NULL);
    if (text && !(*policy = tg_json_parse(text, strlen(text), NULL, 0))) {
        *bad = 1;
        snprintf(why, why_len, "the policy ConfigMap %s/%s: data.%.64s is not JSON", c->s->slice_policy_ns,
                 c->s->slice_policy_name, class_ && *class_ ? class_ : "default");
    }
    json_object_put(cm);
    return 0;
}

static int is_default_class(const char *class_)
{
    return !class_ || !*class_ || strcmp(class_, "default") == 0;
}

/* ---------- the consumer's other slices (maxPerTenant) ----------
 *
 * The sum of the other accepted slices' grants comes from the slice
 * informer's cache (indexed by liqo.io/originID), not a LIST per reconcile.
 * The catch is our own last write: the Resources decisions of one consumer
 * are made one at a time (res_mu), and when two slices are accepted back to
 * back the second must count the first, whose status event may not have
 * reached the cache yet (it lags by an event or so). So each Resources
 * verdict this process writes is recorded in s->settled,
 * "slice-grant/<uid>" -> "<resourceVersion>\t<A|D|?><status.resources>", the
 * record taken from the PATCH's answer, and a sibling with a record counts
 * as recorded until the cache shows that very resourceVersion (then the
 * record goes). No live read is needed for that: this process is the only
 * writer of a replicated slice's Resources status (one leader acts), so its
 * last write is the truth while the cache shows an older version. A live
 * LIST is kept only where the outcome of our own write is not known: a
 * failed PATCH (it may have been applied) records '?', until that slice is
 * written again; a record that could not be stored (out of memory) makes
 * every sum live for a while. A slice is decided only once the cache holds
 * it (tg_reconcile_remote_slice), so the walk over the cache meets every
 * slice that has a record. Deleted slices leave the cache, and their
 * records, keyed by uid, are never looked at again (they expire). */
#define GRANT_TEXT_MAX 2048

/* Until then (tg_wq_now_ms), every sum is read live: a record was lost. Under res_mu. */
static uint64_t grants_lost_until;

static void grant_key(const char *uid, char *key, size_t len)
{
    snprintf(key, len, "slice-grant/%s", uid);
}

/* What a slice holds in the sum, read from an object (cached, listed or
 * returned by our PATCH): its status.resources when Resources=Accepted. */
static json_object *accepted_grant(json_object *o)
{
    json_object *rc = condition_of(o, "Resources");
    const char *st = rc ? tg_json_string(rc, "status") : NULL;

    return st && strcmp(st, "Accepted") == 0 ? tg_json_path(o, "status", "resources", NULL) : NULL;
}

/* Record the outcome of a status write that carried a Resources verdict:
 * wrote 1 with after (the PATCH's answer), or -1 (failed: unknown). */
static void grant_note(slice_ctx *c, int wrote, json_object *after)
{
    json_object *granted = after ? accepted_grant(after) : NULL;
    tg_slice_grant_record rec = wrote < 0 || !after ? TG_GRANT_UNKNOWN : granted ? TG_GRANT_ACCEPTED : TG_GRANT_DENIED;
    char key[300], value[GRANT_TEXT_MAX];
    uint64_t now = tg_wq_now_ms();

    if (!c->s->settled || wrote == 0)
        return;
    tg_slice_grant_encode(value, sizeof(value), after ? tg_json_path_string(after, "metadata", "resourceVersion", NULL)
                                                      : NULL,
                          rec, granted ? json_object_to_json_string_ext(granted, JSON_C_TO_STRING_PLAIN) : NULL);
    grant_key(c->uid, key, sizeof(key));
    if (tg_settled_mark(c->s->settled, key, value, now, now + GRANT_RECORD_MS) != 0)
        grants_lost_until = now + GRANT_RECORD_MS;
}

/* Our record of a sibling (uid) the cache shows at cached_rv; *granted
 * (TG_GRANT_ACCEPTED) is a new object. A record the cache has caught up
 * with is dropped. */
static tg_slice_grant_record grant_get(tg_signer *s, const char *uid, const char *cached_rv, json_object **granted)
{
    char key[300], value[GRANT_TEXT_MAX];
    const char *text;
    tg_slice_grant_record rec;
    int spent;

    *granted = NULL;
    if (!s->settled || !uid)
        return TG_GRANT_NONE;
    grant_key(uid, key, sizeof(key));
    if (!tg_settled_marked(s->settled, key, value, sizeof(value), tg_wq_now_ms()))
        return TG_GRANT_NONE;
    rec = tg_slice_grant_decode(value, sizeof(value), cached_rv, &text, &spent);
    if (spent)
        tg_settled_forget(s->settled, key);
    if (rec == TG_GRANT_ACCEPTED && !(*granted = tg_json_parse(text, strlen(text), NULL, 0)))
        return TG_GRANT_UNKNOWN;
    return rec;
}

typedef struct sibling_look {
    tg_signer *s;
    const char *ns, *self;
    json_object *sum;      /* ours */
    int live;              /* a sibling the cache cannot tell: sum live */
} sibling_look;

/* One slice of the consumer (the cache's, or a live LIST's: records NULL). */
static void add_sibling(sibling_look *l, json_object *o, int records)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    json_object *recorded = NULL;
    tg_slice_grant_record rec = TG_GRANT_NONE;

    /* every slice of the tenant namespace counts, labelled or not, but this
     * cluster's own local ones (scope_rule.h) */
    if (!ns || strcmp(ns, l->ns) != 0 || !name || strcmp(name, l->self) == 0 ||
        tg_slice_is_own_local(o, l->s->cluster_id))
        return;
    if (records)
        rec = grant_get(l->s, tg_json_path_string(o, "metadata", "uid", NULL),
                        tg_json_path_string(o, "metadata", "resourceVersion", NULL), &recorded);
    switch (tg_slice_sibling_source_of(tg_json_path(o, "metadata", "deletionTimestamp", NULL) != NULL,
                                       is_default_class(tg_json_path_string(o, "spec", "class", NULL)), rec)) {
    case TG_SIBLING_CACHE:
        tg_slice_resources_add(l->sum, accepted_grant(o));
        break;
    case TG_SIBLING_RECORD:
        tg_slice_resources_add(l->sum, recorded);
        break;
    case TG_SIBLING_LIVE:
        l->live = 1;
        break;
    case TG_SIBLING_SKIP:
        break;
    }
    json_object_put(recorded);
}

static void on_sibling_visit(json_object *o, void *data)
{
    add_sibling(data, o, 1);
}

/* The sum from a live LIST. NULL with c->err on a failed call. */
static json_object *others_granted_live(slice_ctx *c)
{
    char path[1024];
    json_object *list = NULL, *items;
    sibling_look l = {.s = c->s, .ns = c->ns, .self = c->name};
    size_t i;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices", c->ns);
    if (tg_api_get(c->api, path, &list, c->err, sizeof(c->err)) != 200) {
        json_object_put(list);
        return NULL;
    }
    l.sum = json_object_new_object();
    items = tg_json_path(list, "items", NULL);
    for (i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items); i++)
        add_sibling(&l, json_object_array_get_idx(items, i), 0);
    json_object_put(list);
    return l.sum;
}

/* The summed status.resources of the consumer's other accepted slices of
 * the default class. NULL with c->err on a failed call. Under res_mu. */
static json_object *others_granted(slice_ctx *c)
{
    sibling_look l = {.s = c->s, .ns = c->ns, .self = c->name};

    if (!c->s->slice_cache || !tg_cache_synced(c->s->slice_cache) || tg_wq_now_ms() < grants_lost_until)
        return others_granted_live(c);
    l.sum = json_object_new_object();
    tg_cache_get_by_namespace(c->s->slice_cache, c->ns, on_sibling_visit, &l);
    if (!l.live)
        return l.sum;
    json_object_put(l.sum);
    tg_log(TG_LOG_DEBUG, "resourceslice siblings read live", TG_LOG_STR("namespace", c->ns),
           TG_LOG_STR("resourceslice", c->name));
    return others_granted_live(c);
}

static tg_slice_tenant_state tenant_state(json_object *tenant)
{
    const char *cond = tenant ? tg_json_path_string(tenant, "spec", "tenantCondition", NULL) : NULL;

    return cond && strcmp(cond, "Drained") == 0    ? TG_SLICE_T_DRAINED
           : cond && strcmp(cond, "Cordoned") == 0 ? TG_SLICE_T_CORDONED
                                                   : TG_SLICE_T_ACTIVE;
}

/* A merge patch keeps the keys it does not name: a resource dropped from the
 * request is named with null in granted, so it leaves status.resources too. */
static void null_dropped(json_object *granted, json_object *was)
{
    if (!granted || !was || !json_object_is_type(was, json_type_object))
        return;
    json_object_object_foreach(was, k, v) {
        (void)v;
        if (!json_object_object_get_ex(granted, k, NULL))
            json_object_object_add(granted, k, NULL);
    }
}

/* Fill patch (the status object) with the Resources condition and fields.
 * 0, or -1 with c->err. *res_denied set when Denied. Called under res_mu. */
static int resources_status(slice_ctx *c, json_object *st, json_object **res_cond, int *res_denied)
{
    const char *class_ = tg_json_path_string(c->slice, "spec", "class", NULL);
    json_object *old = condition_of(c->slice, "Resources"), *policy = NULL, *others = NULL, *granted = NULL;
    char reason[48] = "", why[400] = "", msg[512];
    int v, bad = 0;

    *res_cond = NULL;
    *res_denied = 0;
    if (!c->tenant || !is_default_class(class_))
        return 0;   /* no Tenant: Liqo writes nothing; another class: its controller's */
    if (tenant_state(c->tenant) == TG_SLICE_T_ACTIVE) {
        if (class_policy(c, class_, &policy, why, sizeof(why), &bad) != 0 || !(others = others_granted(c))) {
            json_object_put(policy);
            return -1;
        }
    }
    if (bad) {
        snprintf(reason, sizeof(reason), "%s", TG_RES_DENY_POLICY);
        v = -1;
    } else {
        v = tg_slice_resources_verdict(class_, tenant_state(c->tenant), old ? tg_json_string(old, "status") : NULL,
                                       tg_json_path(c->slice, "spec", "resources", NULL), policy, others, &granted,
                                       reason, sizeof(reason), why, sizeof(why));
    }
    if (v > 0) {
        null_dropped(granted, tg_json_path(c->slice, "status", "resources", NULL));
        json_object_object_add(st, "resources", granted);
        *res_cond = make_condition(old, "Resources", "Accepted", RES_ACCEPTED, "ResourceSlice resources accepted");
    } else if (v < 0) {
        snprintf(msg, sizeof(msg), "ResourceSlice resources denied (%s): %s", reason, why);
        *res_cond = make_condition(old, "Resources", "Denied", RES_DENIED, msg);
        *res_denied = 1;
        if (!old || !same_text(tg_json_string(old, "message"), msg))
            count_verdict(c->s, "Resources", "Denied", reason);
    }
    if (v != 0) {
        /* Liqo offers no storage, ingress or load-balancer classes unless configured: empty lists */
        json_object_object_add(st, "storageClasses", json_object_new_array());
        json_object_object_add(st, "ingressClasses", json_object_new_array());
        json_object_object_add(st, "loadBalancerClasses", json_object_new_array());
        /* the provider's cluster labels for the consumer's virtual node, as Liqo's
         * --cluster-labels; a label taken off the flag leaves the status too */
        json_object *was_labels = tg_json_path(c->slice, "status", "nodeLabels", NULL), *labels = NULL;
        if (c->s->node_labels && json_object_deep_copy(c->s->node_labels, &labels, NULL) == 0) {
            null_dropped(labels, was_labels);
            json_object_object_add(st, "nodeLabels", labels);
        } else if (!c->s->node_labels && was_labels) {
            json_object_object_add(st, "nodeLabels", NULL);
        }
    }
    json_object_put(policy);
    json_object_put(others);
    return 0;
}

/* PATCH /status unless it would change nothing: 1 written (*after, if not
 * NULL, the slice as the answer shows it, or NULL), 0 nothing to write, -1
 * with c->err. */
static int patch_status(slice_ctx *c, json_object *st, json_object **after)
{
    json_object *patch, *cur = tg_json_path(c->slice, "status", NULL);
    char path[1024];
    int changed = 0;
    long r;

    json_object_object_foreach(st, k, v) {
        json_object *was = cur ? json_object_object_get(cur, k) : NULL;
        if (v ? !was || !json_object_equal(was, v) : was != NULL)
            changed = 1;
    }
    if (!changed)
        return 0;
    patch = json_object_new_object();
    json_object_object_add(patch, "status", json_object_get(st));
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices/%s/status", c->ns, c->name);
    r = tg_api_call(c->api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, after, c->err, sizeof(c->err));
    json_object_put(patch);
    return r == 200 ? 1 : -1;
}

/* ---------- the reconcile ---------- */

static long requeue_min(long a, long b)
{
    return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

/* Authentication, certificate, Resources, status and binding of a live slice. */
static long reconcile_slice(slice_ctx *c)
{
    tg_approve_policy pol = {.signer_name = c->s->signer_name, .allow_no_handshake = c->s->allow_no_handshake};
    tg_approve_decision d;
    cert_result cr;
    json_object *st = json_object_new_object(), *auth_cond = NULL, *res_cond = NULL, *old_auth;
    char msg[700];
    int res_denied = 0, accepted = 0;
    long ret = TG_RECONCILE_RETRY;

    memset(&cr, 0, sizeof(cr));
    old_auth = condition_of(c->slice, "Authentication");
    tg_slice_auth_decide(c->slice, c->tenant, &pol, &d);
    if (!d.approve) {
        snprintf(msg, sizeof(msg), "ResourceSlice authentication denied (%s): %s", d.reason, d.message);
        auth_cond = make_condition(old_auth, "Authentication", "Denied", AUTH_DENIED, msg);
    } else {
        if (slice_certificate(c, &cr) != 0)
            goto out;
        if (cr.denied) {
            snprintf(msg, sizeof(msg), "ResourceSlice authentication denied (%s): %s", cr.reason, cr.message);
            auth_cond = make_condition(old_auth, "Authentication", "Denied", AUTH_DENIED, msg);
        } else if (cr.signed_b64) {
            const char *proxy = tg_json_path_string(c->tenant, "spec", "proxyURL", NULL);
            json_object_object_add(st, "authParams", rc_auth_params(c->s, cr.signed_b64, proxy));
            auth_cond = make_condition(old_auth, "Authentication", "Accepted", AUTH_ACCEPTED,
                                       "ResourceSlice authentication accepted");
            accepted = 1;
        }
    }
    if (auth_cond && !accepted) {
        json_object_object_add(st, "authParams", NULL);   /* merge patch: remove */
        if (!old_auth || !same_text(tg_json_string(old_auth, "message"), msg)) {
            tg_log(TG_LOG_WARN, "resourceslice authentication denied", TG_LOG_STR("namespace", c->ns),
                   TG_LOG_STR("resourceslice", c->name), TG_LOG_STR("message", msg));
            tg_api_event(c->api, c->slice, "Warning", d.approve ? cr.reason : d.reason, msg);
            count_verdict(c->s, "Authentication", "Denied", d.approve ? cr.reason : d.reason);
        }
    }
    pthread_mutex_lock(&res_mu);
    if (resources_status(c, st, &res_cond, &res_denied) == 0) {
        int res_decided = res_cond != NULL, wrote;
        json_object *after = NULL;
        json_object_object_add(st, "conditions", conditions_with(c->slice, auth_cond, res_cond));
        auth_cond = res_cond = NULL;
        wrote = patch_status(c, st, &after);
        if (res_decided)   /* before the next decision of this consumer (res_mu): see grant_note */
            grant_note(c, wrote, after);
        json_object_put(after);
        ret = wrote >= 0 ? TG_RECONCILE_OK : TG_RECONCILE_RETRY;
    }
    pthread_mutex_unlock(&res_mu);
    if (ret == TG_RECONCILE_RETRY)
        goto out;
    /* The slice user's own right on the provider lives as long as the slice is
     * authenticated; a slice still waiting for its first certificate has none yet. */
    if ((accepted || !d.approve || cr.denied) && ensure_binding(c, accepted) != 0) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    ret = requeue_min(cr.requeue_ms, res_denied ? RES_DENIED_RECHECK_MS : 0);
out:
    json_object_put(auth_cond);
    json_object_put(res_cond);
    json_object_put(st);
    free(cr.signed_b64);
    return ret;
}

typedef struct uid_look {
    const char *uid;
    int same;
    char rv[64];
} uid_look;

static void on_uid_visit(json_object *o, void *data)
{
    uid_look *l = data;
    const char *uid = tg_json_path_string(o, "metadata", "uid", NULL);
    const char *rv = tg_json_path_string(o, "metadata", "resourceVersion", NULL);

    l->same = uid && strcmp(uid, l->uid) == 0;
    snprintf(l->rv, sizeof(l->rv), "%s", rv ? rv : "");
}

/* 1 when the slice informer holds this very slice (or no such informer is
 * synced: the sums are read live then). Our record of its Resources verdict
 * goes once the cache shows that write: the event of our own status write
 * brings the slice here, so records live about as long as the cache lags. */
static int cache_holds(tg_signer *s, const char *ns, const char *name, const char *uid)
{
    uid_look l = {.uid = uid};
    json_object *granted = NULL;

    if (!s->slice_cache || !tg_cache_synced(s->slice_cache))
        return 1;
    if (!tg_cache_get(s->slice_cache, ns, name, on_uid_visit, &l) || !l.same)
        return 0;
    grant_get(s, uid, l.rv, &granted);   /* drops a spent record */
    json_object_put(granted);
    return 1;
}

long tg_reconcile_remote_slice(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    slice_ctx c = {.s = s, .api = api, .ns = ns, .name = name};
    char path[1024], want_ns[128], ns_cid[256];
    tg_ns_facts nsf;
    long st, ret = TG_RECONCILE_OK;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices/%s", ns, name);
    if ((st = tg_api_get(api, path, &c.slice, c.err, sizeof(c.err))) == 404)
        return TG_RECONCILE_OK;   /* gone: the Secret and RoleBinding it owned follow it */
    if (st != 200)
        goto fail;
    c.csr_b64 = tg_json_path_string(c.slice, "spec", "csr", NULL);
    c.uid = tg_json_path_string(c.slice, "metadata", "uid", NULL);
    c.consumer = tg_json_path_string(c.slice, "spec", "consumerClusterID", NULL);
    /* Every slice of a tenant namespace is the consumer's, whatever its
     * labels (which the consumer writes): only the namespace's label names
     * the consumer, and only this cluster's own local slices are not ours. */
    nsf = tg_ns_facts_lookup(s, ns, ns_cid, sizeof(ns_cid));
    if (nsf.known && nsf.tenant && nsf.cluster_id)
        c.consumer = nsf.cluster_id;
    else if (s->ns_cache)
        goto out;   /* no longer a tenant namespace */
    if (tg_slice_is_own_local(c.slice, s->cluster_id) || !c.csr_b64 || !*c.csr_b64 || !c.uid ||
        tg_json_path(c.slice, "metadata", "deletionTimestamp", NULL))
        goto out;
    if (!c.consumer || !tg_cluster_id_valid(c.consumer)) {
        /* Liqo: an event, no status. Admission refuses such a slice. */
        tg_api_event(api, c.slice, "Warning", "RemoteCertificateFailed", "spec.consumerClusterID not set or invalid");
        goto out;
    }
    if (tg_slice_user_name(name, c.consumer, c.user, sizeof(c.user)) != 0)
        goto out;
    snprintf(want_ns, sizeof(want_ns), TG_TENANT_NAMESPACE_PREFIX "%s", c.consumer);
    if (strcmp(ns, want_ns) == 0) {
        snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", ns, c.consumer);
        if ((st = tg_api_get(api, path, &c.tenant, c.err, sizeof(c.err))) != 200 && st != 404)
            goto fail;
    }
    if (!cache_holds(s, ns, name, c.uid)) {
        /* woken before the slice informer saw this slice (recreated under
         * the same name): decide once it does, so the maxPerTenant sums of
         * its siblings, read from that cache, meet it (others_granted) */
        ret = CACHE_LAG_MS;
        goto out;
    }
    if ((ret = reconcile_slice(&c)) != TG_RECONCILE_RETRY)
        goto out;
fail:
    tg_log(TG_LOG_WARN, "resourceslice reconcile failed", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("resourceslice", name), TG_LOG_STR("error", c.err));
    ret = TG_RECONCILE_RETRY;
out:
    json_object_put(c.tenant);
    json_object_put(c.slice);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_slice(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "remoteslice", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

typedef struct wake_ctx {
    tg_key_sink *sink;
    const char *self_id;
} wake_ctx;

static void on_slice_of_tenant(json_object *o, void *data)
{
    wake_ctx *w = data;

    if (!tg_slice_is_own_local(o, w->self_id))
        map_slice(&(tg_event){.obj = o}, w->sink);
}

/* Any Tenant event wakes every slice of its namespace (Liqo's RRS): a drain
 * or a delete revokes them all, labelled or not. */
static void map_tenant_to_slices(const tg_event *ev, tg_key_sink *sink)
{
    const char *ns = tg_json_path_string(ev->obj, "metadata", "namespace", NULL);
    wake_ctx w = {.sink = sink, .self_id = ev->s->cluster_id};

    if (ns && ev->s->slice_cache)
        tg_cache_get_by_namespace(ev->s->slice_cache, ns, on_slice_of_tenant, &w);
}

/* A slice's CSR issued or denied wakes that slice (named "ns/name" in its annotation). */
static void map_csr_to_slice(const tg_event *ev, tg_key_sink *sink)
{
    json_object *o = ev->obj;
    int issued = tg_json_path_string(o, "status", "certificate", NULL) != NULL;
    int denied = !issued && rc_csr_decided(o) < 0;
    const char *ref = tg_json_path_string(o, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
    const char *slash = ref ? strchr(ref, '/') : NULL;
    char ns[256];

    if (!slash || (size_t)(slash - ref) >= sizeof(ns) || !(issued || denied) || !tg_csr_made_by(o, ev->s->self_user))
        return;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ref), ref);
    tg_key_emit(sink, "remoteslice", ns, slash + 1);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_remote_slice(s, api, ns, name);
}

const tg_controller_desc tg_ctl_remote_slice = {
    .name = "remoteresourceslice", .key_prefix = "remoteslice", .bit = TG_CTL_REMOTE_SLICE, .side = "provider",
    .scope = {.where = TG_WHERE_TENANT_NS, .peer = TG_PEER_NOT_LOCAL_SLICE,
              .acts_on = "every ResourceSlice in a tenant namespace, labelled or not, but this cluster's own "
                         "local ones; the consumer is the namespace's remote cluster id",
              .writes = "the slice's status, CSRs for it, Secret liqo-remote-certificate-<slice> and RoleBinding "
                        "tenantgate-rslice-<slice> in its namespace"},
    .subs = {{TG_INF_TENANT_SLICES, 1, map_slice}, {TG_INF_TENANTS, 0, map_tenant_to_slices},
             {TG_INF_CSRS, 0, map_csr_to_slice}}, .nsubs = 3,
    .reconcile = reconcile_key,
};
