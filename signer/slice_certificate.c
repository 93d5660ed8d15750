/* slice_certificate.c - the slice's certificate: its Kubernetes CSR, the
 * cache Secret liqo-remote-certificate-<name> owned by the slice, and
 * renewal at 2/3 of the lifetime (slice_certificate.h). */
#include "signer/slice_certificate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"
#include "signer/cert_facts.h"
#include "signer/csr_cert.h"
#include "signer/renewal.h"
#include "signer/slice_cert_group.h"
#include "signer/slice_plan.h"
#include "signer/slice_status.h"

/* ---------- the certificate ---------- */

/* A certificate (base64 PEM) usable now: parses, certifies the slice's CSR
 * key, not due. 1 with its renewal time in *renew_at, 0 otherwise. */
static int cert_usable(slice_ctx *c, const char *b64, time_t *renew_at)
{
    tg_cert_facts f;
    int ok;

    if (!b64 || !*b64)
        return 0;
    tg_cert_facts_get(c->s->cert_memo, b64, c->csr_b64, &f);
    ok = f.parses && f.certifies_csr_key == 1 && !tg_renewal_due(f.not_before, f.not_after, time(NULL));
    if (ok && renew_at)
        *renew_at = tg_renewal_at(f.not_before, f.not_after);
    return ok;
}

json_object *rs_slice_owner(slice_ctx *c)
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
int rs_owned_by_slice(json_object *obj, const char *uid)
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

/* The cache Secret is read only where it may hold something: a slice
 * that was never decided (no Authentication condition) has none unless a
 * pass crashed between the Secret's POST and the status write, or a former
 * slice of the same name left one - both rare, and both met by the POST's
 * 409, which notes the Secret present so that the next pass reads it (as
 * does a 201, for a pass before the status write shows the decision). A
 * pass that found none remembers that a while too (only this process
 * writes it). So the normal path POSTs it once and never reads it. */
#define SECRET_NOTE_MS 600000

static void note_key(const slice_ctx *c, const char *what, char *key, size_t len)
{
    snprintf(key, len, "slice-secret-%s/%s", what, c->uid ? c->uid : "");
}

static int secret_noted(const slice_ctx *c, const char *what)
{
    char key[300], v[4];

    note_key(c, what, key, sizeof(key));
    return c->s->settled && c->uid && tg_settled_marked(c->s->settled, key, v, sizeof(v), tg_wq_now_ms());
}

static int secret_known_absent(const slice_ctx *c)
{
    if (secret_noted(c, "absent"))
        return 1;
    return c->s->settled && c->uid && !rs_condition_of(c->slice, "Authentication") && !secret_noted(c, "present");
}

/* what: "absent" or "present"; the other note goes. */
static void note_secret(slice_ctx *c, const char *what)
{
    char key[300];
    uint64_t now = tg_wq_now_ms();

    if (!c->s->settled || !c->uid)
        return;
    note_key(c, strcmp(what, "absent") == 0 ? "present" : "absent", key, sizeof(key));
    tg_settled_forget(c->s->settled, key);
    note_key(c, what, key, sizeof(key));
    tg_settled_mark(c->s->settled, key, "1", now, now + SECRET_NOTE_MS);
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
    json_object_object_add(meta, "ownerReferences", rs_slice_owner(c));
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
        if (r == 201 || r == 409)
            note_secret(c, "present");   /* made, or there after all: the next pass reads it */
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
static int new_csr(slice_ctx *c, const char *ref, const char *hash, const char *pending, int again, char *made,
                   size_t made_len)
{
    json_object *annotations = json_object_new_object();
    struct timespec sent;
    char from[32];
    uint64_t now_ms = tg_wq_now_ms();
    long r;

    clock_gettime(CLOCK_REALTIME, &sent);
    snprintf(from, sizeof(from), "@%lld", (long long)sent.tv_sec * 1000 + sent.tv_nsec / 1000000);
    json_object_object_add(annotations, TG_ANNOTATION_CSR_SLICE, rc_jstr(ref));
    made[0] = '\0';
    r = rc_create_csr(c->s, c->api, c->csr_b64, c->consumer, hash, NULL, annotations, made, made_len, c->err,
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
static int cert_from_csrs(slice_ctx *c, const char *secret_name, int secret_exists, cert_result *cr)
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
    tg_cache_get_by_index_holding(c->s->csr_cache, c->consumer, ref, on_slice_csr_visit, &l);   /* the slice's own */
    if (l.oom) {
        snprintf(c->err, sizeof(c->err), "out of memory");
        goto out;
    }
    /* the digest the CSR cache keeps becomes the certificate (csr_cert.h),
     * once a slice: the cache Secret keeps it after */
    if (l.certificate &&
        tg_csr_certificate_fill(c->api, l.best.name, &l.certificate, NULL, c->err, sizeof(c->err)) != 0)
        goto out;
    if (marked && l.saw_ours)
        tg_settled_forget(c->s->settled, pending);   /* the cache has caught up with our CSR */
    v.found = l.best.found;
    v.issued = l.certificate != NULL;
    v.usable = v.issued && cert_usable(c, l.certificate, &renew_at);
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
        cert_deny(cr, l.reason[0] ? l.reason : tg_reason_name(TG_SLICE_REQUEST_DENIED), "the certificate request was denied: %.200s: %.250s",
                  l.reason[0] ? l.reason : "Denied", l.message);
        cr->requeue_ms = (long)(TG_SLICE_DENIED_RETRY_S - v.age_s + 1) * 1000;
        break;
    case TG_SLICE_CSR_CREATE:
        if (new_csr(c, ref, hash, pending, l.best.found, cr->made, sizeof(cr->made)) != 0)
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
int rs_slice_certificate(slice_ctx *c, cert_result *cr)
{
    char secret_name[300], path[1024];
    json_object *sec = NULL;
    const char *stored = NULL;   /* the cache Secret's certificate (base64 PEM) */
    time_t renew_at = 0;
    int exists = 0, rc = -1;
    long r;

    memset(cr, 0, sizeof(*cr));
    if (strlen(c->name) > 253 - strlen(SECRET_PREFIX)) {
        cert_deny(cr, tg_reason_name(TG_NAME_TOO_LONG), "the name %.64s... is too long for Secret " SECRET_PREFIX "<name>", c->name);
        return 0;
    }
    snprintf(secret_name, sizeof(secret_name), SECRET_PREFIX "%s", c->name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", c->ns, secret_name);
    if (!secret_known_absent(c)) {
        if ((r = tg_api_get(c->api, path, &sec, c->err, sizeof(c->err))) != 200 && r != 404)
            return -1;
        if (r == 404)
            note_secret(c, "absent");
    }
    exists = sec != NULL;
    if (sec && rs_owned_by_slice(sec, c->uid) == 0) {
        /* left by a deleted slice of the same name, not yet collected: our
         * write replaces its data and owner */
        json_object_put(sec);
        sec = NULL;
    }
    if (!tg_cert_memo_csr_parses(c->s->cert_memo, c->csr_b64)) {
        cert_deny(cr, tg_reason_name(TG_INVALID_CSR), "spec.csr does not parse");
        rc = 0;
        goto out;
    }
    if (sec) {
        const char *want = c->csr_b64, *got = tg_json_path_string(sec, "data", "csr", NULL);
        if (!got || strcmp(got, want) != 0) {
            cert_deny(cr, tg_reason_name(TG_CSR_MISMATCH), CSR_MISMATCH " (Secret %s in %s)", secret_name, c->ns);
            rc = 0;
            goto out;
        }
        stored = tg_json_path_string(sec, "data", "certificate", NULL);
        if (cert_usable(c, stored, &renew_at)) {
            cr->signed_b64 = strdup(stored);
            cr->requeue_ms = (long)(renew_at - time(NULL) + 1) * 1000;
            rc = 0;
            goto out;
        }
    }
    rc = cert_from_csrs(c, secret_name, exists, cr);
    if (rc == 0 && !cr->signed_b64 && !cr->denied && stored) {
        /* renewing: the current certificate stays published until expiry */
        tg_cert_facts f;
        tg_cert_facts_get(c->s->cert_memo, stored, c->csr_b64, &f);
        if (f.parses && f.not_after > time(NULL))
            cr->signed_b64 = strdup(stored);
    }
out:
    /* every pass, cached or new: a revocable certificate's rights (slice_cert_group.h) */
    if (rc == 0 && cr->signed_b64 && rs_bind_cert_group(c, cr->signed_b64) != 0) {
        /* published all the same: without the binding it has no rights; soon again */
        tg_log(TG_LOG_WARN, "resourceslice certificate group not bound", TG_LOG_STR("namespace", c->ns),
               TG_LOG_STR("resourceslice", c->name), TG_LOG_STR("error", c->err));
        if (cr->requeue_ms <= 0 || cr->requeue_ms > CACHE_LAG_MS * 5)
            cr->requeue_ms = CACHE_LAG_MS * 5;
    }

    json_object_put(sec);
    return rc;
}
