/* provider_tenant.c - the provider's Tenant controller (PROTOCOL.md 6): re-checks
 * the Tenant, keeps its finalizer and bindings (tenant_rbac.h), makes the CSR for its key
 * and copies the issued certificate into status.authParams. Deletion rotates
 * the nonce (tenant_finalizer.h). What its own writes settled and kept
 * spares the GET of their watch events (api.h, "our own writes"). */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/signature.h"
#include "signer/approve_decide.h"
#include "signer/csr_cert.h"
#include "signer/events.h"
#include "signer/renewal.h"
#include "signer/tenant_csrs.h"
#include "signer/tenant_finalizer.h"
#include "signer/tenant_plan.h"
#include "signer/tenant_rbac.h"

/* ---------- the Tenant informer's view ---------- */

typedef struct tenant_look {
    char rv[64];
    char cid[128];      /* metadata.labels["liqo.io/remote-cluster-id"] */
    char uid[128];      /* metadata.uid, or "" */
    time_t created;     /* metadata.creationTimestamp, 0 if none */
    int found;
} tenant_look;

static void on_tenant_visit(json_object *t, void *data)
{
    tenant_look *l = data;
    const char *rv = tg_json_path_string(t, "metadata", "resourceVersion", NULL);
    const char *cid = tg_json_path_string(t, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    const char *uid = tg_json_path_string(t, "metadata", "uid", NULL);
    const char *ts = tg_json_path_string(t, "metadata", "creationTimestamp", NULL);

    if (!rv || strlen(rv) >= sizeof(l->rv))
        return;
    strcpy(l->rv, rv);
    l->found = 1;
    if (cid && strlen(cid) < sizeof(l->cid))
        strcpy(l->cid, cid);
    if (uid && strlen(uid) < sizeof(l->uid))
        strcpy(l->uid, uid);
    l->created = ts ? rc_parse_rfc3339(ts) : 0;
}

/* A CSR made, its certificate not issued yet: the CSR informer wakes the
 * Tenant when it is; this is the safety net. */
#define TENANT_WAIT_MS 30000
/* The CSR informer may lag our own POST: no second CSR for this long unless
 * the cache shows the first. */
#define CSR_PENDING_MS 60000

/* The settled record's key is the queue key: a wake-up from another
 * informer forgets it (events.c). */
static void settled_key(char *key, size_t len, const char *ns, const char *name)
{
    snprintf(key, len, "tenant/%s/%s", ns, name);
}

static void tenant_path(char *path, size_t len, const char *ns, const char *name)
{
    snprintf(path, len, TENANTS_API "/namespaces/%s/tenants/%s", ns, name);
}

/* Milliseconds until the Tenant needs a look, when the informers show it
 * exactly as a reconcile of ours left it; 0 when it needs the full reconcile.
 * rv (64 bytes) receives the cached resourceVersion, or "". */
static long tenant_settled_left(tg_signer *s, const char *ns, const char *name, char *rv)
{
    tenant_look tl = {.found = 0};
    char key[600];
    tg_tenant_csr_view cv;

    rv[0] = '\0';
    if (!s->tenant_cache || !tg_cache_synced(s->tenant_cache) ||
        !tg_cache_get(s->tenant_cache, ns, name, on_tenant_visit, &tl) || !tl.found)
        return 0;
    strcpy(rv, tl.rv);
    if (!s->settled || !tl.cid[0] || tg_tenant_csrs(s, ns, tl.cid, NULL, tl.uid[0] ? tl.uid : NULL, tl.created, &cv) < 0)
        return 0;
    settled_key(key, sizeof(key), ns, name);
    return tg_api_settled(s->settled, key, tl.rv, cv.fp);
}

/* The Tenant at its version in `tenant` (ours to have left so) needs nothing
 * for ms while its CSRs read dep_a or dep_b. */
static void tenant_settle(tg_signer *s, json_object *tenant, const char *ns, const char *name, const char *dep_a,
                          const char *dep_b, long ms)
{
    char key[600];

    settled_key(key, sizeof(key), ns, name);
    tg_api_settle(s->settled, key, tg_json_path_string(tenant, "metadata", "resourceVersion", NULL), dep_a, dep_b, ms);
}

/* Merge-patch Tenant status through /status. authparams may be NULL. */
/* *out (if not NULL) receives the updated Tenant on success (caller puts). */
static long patch_tenant_status(tg_api *api, tg_settled *kept, json_object *tenant, const char *ns, const char *name,
                                json_object *authparams, json_object **out, char *err, size_t err_len)
{
    json_object *patch = json_object_new_object(), *st = json_object_new_object();
    char path[1024];
    long r;

    json_object_object_add(st, "tenantNamespace", rc_jstr(ns));
    if (authparams)
        json_object_object_add(st, "authParams", authparams);
    json_object_object_add(patch, "status", st);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s/status", ns, name);
    r = tg_api_write(api, kept, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, 0, out, err, err_len);
    json_object_put(patch);
    return r;
}

static time_t tenant_created(json_object *tenant)
{
    const char *ts = tg_json_path_string(tenant, "metadata", "creationTimestamp", NULL);
    return ts ? rc_parse_rfc3339(ts) : 0;
}

/* POST a CSR for the Tenant; on 201 *created (if not NULL) is its generated
 * name (caller's buffer of created_len bytes). */
static long create_csr(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *cid,
                       const char *hash, char *created, size_t created_len, char *err, size_t err_len)
{
    json_object *labels = json_object_new_object();
    const char *uid = tg_json_path_string(tenant, "metadata", "uid", NULL);

    json_object_object_add(labels, TG_LABEL_TENANT_NS, rc_jstr(ns));
    if (uid && strlen(uid) <= 63)   /* a label value; API server uids are 36 */
        json_object_object_add(labels, TG_LABEL_CSR_TENANT_UID, rc_jstr(uid));
    return rc_create_csr(s, api, tg_json_path_string(tenant, "spec", "csr", NULL), cid, hash, labels, NULL, created,
                         created_len, err, err_len);
}

/* One Tenant check of the tenant controller: accepted (reason NULL) or refused. */
static void count_verdict(tg_signer *s, const char *reason)
{
    if (s->m_tenant_verdicts)
        tg_counter_add(tg_metric_series_get(s->m_tenant_verdicts,
                                            (const char *[]){reason ? "refused" : "accepted", reason ? reason : ""}),
                       1);
}

/* ---------- the Tenant's certificate (tenant_plan.h) ---------- */

/* The plan's view of status.authParams.signedCRT; *nb, *na its validity. */
/* The current certificate carries the per-certificate group the request
 * asks for (both none: Liqo's consumers). A request with a new group is a
 * new certificate at once, as a new key is: the consumer asked for it to
 * revoke the old one (docs/signer.md "Revocation"). */
static int same_group(json_object *tenant, const unsigned char *crt, size_t crt_len)
{
    const char *csr = tg_json_path_string(tenant, "spec", "csr", NULL);
    char want[TG_CERT_GROUP_MAX], have[TG_CERT_GROUP_MAX], cn[256], err[64];
    unsigned char *pem;
    size_t n = 0;
    int64_t na;
    int w = 0, h;

    if (csr && (pem = tg_base64_decode(csr, strlen(csr), &n, err, sizeof(err))) != NULL) {
        w = tg_csr_cert_group(pem, n, want, sizeof(want));
        free(pem);
    }
    h = tg_cert_group_of_certificate((const char *)crt, crt_len, cn, sizeof(cn), have, sizeof(have), &na);
    if (w != 1)
        return h != 1;
    return h == 1 && strcmp(want, have) == 0;
}

static void read_current(json_object *tenant, EVP_PKEY *key, tg_tenant_certs *in, time_t *nb, time_t *na)
{
    const char *b64 = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    unsigned char *pem;
    size_t len = 0;
    char err[64];

    if (!b64 || !*b64)
        return;
    in->cur_present = 1;
    pem = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err));
    in->cur_due = !pem || tg_cert_validity(pem, len, nb, na) != 0 || tg_renewal_due(*nb, *na, time(NULL));
    in->cur_for_key = pem && key && tg_cert_key_is(pem, len, key) == 1 && same_group(tenant, pem, len);
    free(pem);
}

/* The certificate an issued CSR of the current request holds: 0 with its
 * validity and whether it is due, -1 (err) when it does not parse or does not
 * certify the Tenant's key. */
static int read_issued(const char *b64, EVP_PKEY *key, time_t *nb, time_t *na, int *due, char *err, size_t err_len)
{
    unsigned char *pem;
    size_t len = 0;
    int r = -1;

    if (!(pem = tg_base64_decode(b64, strlen(b64), &len, err, err_len)) || tg_cert_validity(pem, len, nb, na) != 0)
        snprintf(err, err_len, "the CSR's certificate does not parse");
    else if (tg_cert_key_is(pem, len, key) != 1)
        snprintf(err, err_len, "the CSR's certificate is not for the Tenant's public key");
    else
        r = 0;
    if (r == 0)
        *due = tg_renewal_due(*nb, *na, time(NULL));
    free(pem);
    return r;
}

static void pending_key(char *key, size_t len, const char *ns, const char *cid)
{
    snprintf(key, len, "csr-pending/%s/%s", ns, cid);
}

/* TG_PLAN_CREATE: a CSR for the Tenant's current request, unless the one we
 * made last is not in the cache yet. */
static long tenant_new_csr(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *name,
                           const char *hash, const tg_tenant_csr_view *cv, const tg_tenant_certs *in, char *err,
                           size_t err_len)
{
    const char *cid = tg_json_path_string(tenant, "spec", "clusterID", NULL);
    char pending[600], made[256], fp_new[sizeof(made) + 8], path[1024];
    const char *why;

    if (cv->ours_unseen)
        return 1000;   /* the one we made is on its way into the cache */
    if (create_csr(s, api, tenant, ns, cid, hash, made, sizeof(made), err, err_len) != 201)
        return TG_RECONCILE_RETRY;
    why = in->csr == TG_CSR_DENIED                ? "csr created after a denial"
          : in->cur_present && !in->cur_for_key ? "csr created for a new key"
          : in->cur_present                     ? "csr created for renewal"
                                                : "csr created";
    tg_log(TG_LOG_INFO, why, TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name), TG_LOG_STR("csr", made));
    tg_api_note_made(s->settled, pending, made, CSR_PENDING_MS);
    /* the cache shows the old state until it sees ours: both are settled */
    snprintf(fp_new, sizeof(fp_new), "%s:0:0", made);
    tenant_settle(s, tenant, ns, name, cv->fp, fp_new, TENANT_WAIT_MS);
    tenant_path(path, sizeof(path), ns, name);
    tg_api_keep(s->settled, path, tenant, TENANT_WAIT_MS);   /* for the pass the certificate's issue wakes */
    return TENANT_WAIT_MS;   /* the CSR informer wakes us when the certificate is there */
}

/* TG_PLAN_PUBLISH: the issued certificate (valid nb..na) into status. */
static long tenant_publish(tg_signer *s, tg_api *api, json_object *tenant, const tg_tenant *t, const char *ns,
                           const char *name, const tg_tenant_csr_view *cv, time_t nb, time_t na, char *err, size_t err_len)
{
    const char *cid = tg_json_path_string(tenant, "spec", "clusterID", NULL);
    const char *cur_b64 = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    json_object *ap = rc_auth_params(s, cv->certificate, t->proxy_url), *updated = NULL;
    long ret;

    if (patch_tenant_status(api, s->settled, tenant, ns, name, ap, &updated, err, err_len) != 200)
        return TG_RECONCILE_RETRY;
    count_verdict(s, NULL);
    if (s->m_cert_expiry)
        tg_gauge_set(tg_metric_series_get(s->m_cert_expiry, (const char *[]){cid}), (double)na);
    if (s->m_issue_seconds && !cur_b64) {
        /* first issue: seconds from the Tenant's creation to its certificate in status */
        time_t created = rc_parse_rfc3339(tg_json_path_string(tenant, "metadata", "creationTimestamp", NULL));
        if (created)
            tg_histogram_observe(tg_metric_series_get(s->m_issue_seconds, NULL), difftime(time(NULL), created));
    }
    tg_log(TG_LOG_INFO, "tenant identity issued", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
           TG_LOG_INT("not_after", (int64_t)na));
    tg_api_event(api, tenant, "Normal", "IdentityIssued", "client certificate issued and stored in status");
    ret = (long)(tg_renewal_at(nb, na) - time(NULL) + 1) * 1000;
    if (ret <= 0)
        ret = 1000;
    tenant_settle(s, updated, ns, name, cv->fp, NULL, ret);   /* the status write's own event finds this */
    json_object_put(updated);
    return ret;
}

/* After the checks, finalizer and binding: make status hold a current
 * certificate for the Tenant's current key. The CSR informer (run with the
 * tenant controller, synced before any worker starts) replaces a LIST per
 * reconcile; our own CSR may not be in it yet, hence the pending mark. */
static long tenant_certificate(tg_signer *s, tg_api *api, json_object *tenant, const tg_tenant *t, const char *ns,
                               const char *name, char *err, size_t err_len)
{
    const char *cid = tg_json_path_string(tenant, "spec", "clusterID", NULL);
    const char *cur_b64 = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    char hash[TG_REQUEST_HASH_LEN + 1], path[1024], pending[600];
    tg_tenant_certs in = {.csr = TG_CSR_NONE};
    tg_tenant_csr_view cv;
    EVP_PKEY *key;
    tg_verdict v;
    int was_raw = 0;
    time_t cnb = 0, cna = 0, nb = 0, na = 0;
    int64_t delay = 0;
    long ret = TG_RECONCILE_RETRY;

    if (!s->csr_cache || !tg_cache_synced(s->csr_cache)) {
        snprintf(err, err_len, "the CSR informer has not synced");
        return TG_RECONCILE_RETRY;
    }
    rc_request_hash(tg_json_path_string(tenant, "spec", "csr", NULL), hash);
    if (tg_tenant_csrs(s, ns, cid, hash, tg_json_path_string(tenant, "metadata", "uid", NULL), tenant_created(tenant),
                    &cv) < 0) {
        snprintf(err, err_len, "out of memory");
        return TG_RECONCILE_RETRY;
    }
    pending_key(pending, sizeof(pending), ns, cid);
    cv.ours_unseen = tg_api_made_unseen(s->settled, pending, cv.newest);
    tg_verdict_init(&v);
    /* parses: tg_tenant_check passed */
    key = tg_public_key_parse(t->public_key.data, t->public_key.len, &was_raw, &v);
    read_current(tenant, key, &in, &cnb, &cna);
    in.csr = cv.state;
    in.denied = cv.denied;
    in.denied_age_s = cv.created ? (int64_t)(time(NULL) - cv.created) : 0;
    if (cv.state == TG_CSR_ISSUED) {
        /* the digest the cache keeps becomes the certificate: the Tenant's own
         * when it already publishes it (every pass after the first) */
        if (tg_csr_certificate_fill(api, cv.cur_name, &cv.certificate, cur_b64, err, err_len) != 0 ||
            read_issued(cv.certificate, key, &nb, &na, &in.csr_cert_due, err, err_len) != 0)
            goto out;
        in.csr_cert_is_cur = cur_b64 && strcmp(cv.certificate, cur_b64) == 0;
    }
    switch (tg_tenant_plan(&in, &delay)) {
    case TG_PLAN_KEEP:
        ret = (long)(tg_renewal_at(cnb, cna) - time(NULL) + 1) * 1000;
        break;
    case TG_PLAN_WAIT:
        ret = TENANT_WAIT_MS;   /* not issued yet: woken by the CSR informer; this is a safety net */
        tenant_path(path, sizeof(path), ns, name);
        tg_api_keep(s->settled, path, tenant, TENANT_WAIT_MS);
        break;
    case TG_PLAN_BACKOFF:
        ret = (long)delay * 1000;
        tg_log(TG_LOG_WARN, "csr denied again, next one later", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("tenant", name), TG_LOG_INT("denied", cv.denied), TG_LOG_INT("delay_s", delay));
        break;
    case TG_PLAN_CREATE:
        ret = tenant_new_csr(s, api, tenant, ns, name, hash, &cv, &in, err, err_len);
        goto out;
    case TG_PLAN_PUBLISH:
        ret = tenant_publish(s, api, tenant, t, ns, name, &cv, nb, na, err, err_len);
        goto out;
    }
    tenant_settle(s, tenant, ns, name, cv.fp, NULL, ret);   /* nothing written: its next event is no news */
out:
    EVP_PKEY_free(key);
    free(cv.certificate);
    return ret;
}

long tg_reconcile_tenant(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], cached_rv[64];
    json_object *tenant = NULL, *updated = NULL;
    const char *cid;
    char *nonce = NULL;
    tg_tenant t;
    tg_verdict v, v_parsed;
    tg_check_opts copts = {.allow_no_handshake = s->allow_no_handshake};
    int parsed, refused, from_cache = 0;
    long st, ret = TG_RECONCILE_RETRY;

    /* The event of our own last write, or a relist: nothing changed since. */
    if ((ret = tenant_settled_left(s, ns, name, cached_rv)) > 0) {
        rc_count_skip(s, "tenant");
        return ret;
    }
    ret = TG_RECONCILE_RETRY;
    memset(&t, 0, sizeof(t));
    /* The version the informer shows, as our last pass left it or from the
     * API server's watch cache. Every write below carries the
     * resourceVersion or is recomputed on the next event, as with any
     * informer-fed controller. The approver, the gate, still reads live. */
    tenant_path(path, sizeof(path), ns, name);
    if ((st = tg_api_get_at(api, s->settled, path, cached_rv, 0, &tenant, err, sizeof(err))) == 404)
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
        int64_t wait_ms = 0;
        st = tg_tenant_finalize(s, api, tenant, ns, name, cid, &wait_ms, err, sizeof(err));
        if (st != 200 && st != 202)
            goto fail;
        ret = st == 202 ? (long)wait_ms : TG_RECONCILE_OK;
        goto out;
    }
    /* Re-run the admission decision: the webhook may have been bypassed. */
    tg_verdict_init(&v);
    /* The cached nonce decides only what to do next (the approver re-checks
     * against live reads before any approval). It may lag a rotation, so a
     * refusal is decided on the live nonce only. */
    parsed = tg_tenant_from_json(tenant, &t, &v) == 0;
    v_parsed = v;
    if (parsed) {
        from_cache = (nonce = rc_cached_nonce(s, ns)) != NULL;
        if (!from_cache)
            nonce = rc_read_nonce(api, ns, NULL);
    }
    refused = !parsed || tg_tenant_check(&t, nonce, nonce ? strlen(nonce) : 0, &copts, &v) != 0;
    if (refused && from_cache) {
        rc_free_secret(nonce, strlen(nonce));
        nonce = rc_read_nonce(api, ns, NULL);
        v = v_parsed;
        refused = tg_tenant_check(&t, nonce, nonce ? strlen(nonce) : 0, &copts, &v) != 0;
    }
    /* The verdict goes to an Event and a metric, not to status: Liqo's tenant
     * controller rewrites the whole status from its Go type, which has no
     * conditions, and Liqo's CRD prunes them (README, "Tenant status"). */
    if (refused) {
        const char *reason = tg_reason_name(v.reason);
        tg_log(TG_LOG_WARN, "tenant refused", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
               TG_LOG_STR("reason", reason), TG_LOG_STR("message", v.message));
        tg_api_event(api, tenant, "Warning", reason, v.message);
        count_verdict(s, reason);
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (tg_tenant_needs_finalizer(tenant)) {
        if ((st = tg_tenant_set_finalizer(api, tenant, ns, name, 1, &updated, err, sizeof(err))) != 200)
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
    st = tg_tenant_bind(s, api, ns, cid, tenant, t.condition != TG_CONDITION_DRAINED, err, sizeof(err));
    if (st < 0 || st >= 300)
        goto fail;

    ret = tenant_certificate(s, api, tenant, &t, ns, name, err, sizeof(err));
    if (ret == TG_RECONCILE_RETRY)
        goto fail;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "tenant reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name),
           TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    rc_free_secret(nonce, nonce ? strlen(nonce) : 0);
    tg_tenant_clear(&t);
    json_object_put(updated);
    json_object_put(tenant);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_tenant(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "tenant", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

/* A CSR matters to its Tenant once it carries the certificate, is denied
 * (the Tenant needs a fresh one) or is gone: wake the Tenant then, not on
 * every approval step. CSRs someone else made wake nothing. */
static void map_csr_to_tenant(const tg_event *ev, tg_key_sink *sink)
{
    json_object *o = ev->obj;
    int issued = tg_json_path_string(o, "status", "certificate", NULL) != NULL;
    int denied = !issued && rc_csr_decided(o) < 0;
    const char *cid = tg_json_path_string(o, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    const char *tns = tg_json_path_string(o, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);

    if (!tg_csr_made_by(o, ev->s->self_user) || !(issued || denied || ev->deleted) || !cid || !tns)
        return;
    tg_key_emit(sink, "tenant", tns, cid);   /* a wake-up: the Tenant's settled record goes */
}

static void on_tenant_of_ns(json_object *o, void *data)
{
    map_tenant(&(const tg_event){.obj = o}, data);
}

/* A Tenant refused on its namespace's nonce (none yet, not filled, or
 * another one) is decided again when the nonce Secret is made, filled or
 * rotated: every Tenant of that namespace wakes. */
static void map_nonce_to_tenants(const tg_event *ev, tg_key_sink *sink)
{
    const char *ns = tg_json_path_string(ev->obj, "metadata", "namespace", NULL);

    if (ns && ev->s->tenant_cache)
        tg_cache_get_by_namespace(ev->s->tenant_cache, ns, on_tenant_of_ns, sink);
}

/* A deleted Tenant keeps its bindings while its consumer's replicated Renews
 * are left (finalize_tenant): one going (or coming) wakes the Tenant named
 * by its origin, so the deletion ends at once, not at the next look. The
 * consumer writes its Renews' labels, so only the origin the namespace's name
 * fixes (liqo-tenant-<id>) wakes anything: any other would queue a key of the
 * consumer's choosing ahead of new work (signer/workqueue.c, the first line). */
static void map_renew_to_tenant(const tg_event *ev, tg_key_sink *sink)
{
    const char *ns = tg_json_path_string(ev->obj, "metadata", "namespace", NULL);
    const char *origin = tg_json_path_string(ev->obj, "metadata", "labels", "liqo.io/originID", NULL);
    char cid[256];
    tg_ns_facts f = tg_ns_facts_lookup(ev->s, ns, cid, sizeof(cid));

    if (origin && f.tenant && f.cluster_id && strcmp(origin, f.cluster_id) == 0)
        tg_key_emit(sink, "tenant", ns, origin);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_tenant(s, api, ns, name);
}

const tg_controller_desc tg_ctl_tenant = {
    .name = "tenant", .key_prefix = "tenant", .bit = TG_CTL_TENANT, .side = "provider",
    .scope = {.where = TG_WHERE_TENANT_NS, .peer = TG_PEER_SPEC_CLUSTER_ID,
              .acts_on = "Tenant whose spec.clusterID is the remote cluster id of its tenant namespace",
              .writes = "the Tenant (status, finalizer), CSRs labelled for it, RoleBindings liqo-binding-* in its namespace, "
                        "the consumer's ClusterRoleBinding"},
    .subs = {{TG_INF_TENANTS, 1, map_tenant}, {TG_INF_CSRS, 0, map_csr_to_tenant},
             {TG_INF_NONCES, 0, map_nonce_to_tenants}, {TG_INF_REMOTE_RENEWS, 0, map_renew_to_tenant}},
    .nsubs = 4,
    .reconcile = reconcile_key,
};
