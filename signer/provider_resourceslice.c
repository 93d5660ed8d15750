/* provider_resourceslice.c - the provider's ResourceSlice controller
 * (PROTOCOL.md 6a; Liqo's remoteresourceslice): for every slice of a
 * tenant namespace, labelled or not, but this cluster's own local ones
 * (scope_rule.h; the consumer is the namespace's remote cluster id),
 * authenticate it again (approve_decide.h), get its
 * certificate through a Kubernetes CSR, cache it in Secret
 * liqo-remote-certificate-<name>, write status.authParams and the
 * Authentication and Resources conditions through /status, keep Liqo's
 * Quota for the slice's user where Liqo's Quota CRD is served (replace mode),
 * and renew at 2/3 of the lifetime. The slice's user has no RoleBinding of
 * its own (as under Liqo); an older signer's is removed.
 *
 * The slice is read live when a pass runs, unless the approver's or a
 * waiting pass's copy is at the informer's version, or it was never decided
 * (its first pass makes the CSR from the informer's copy, which keeps the
 * spec; a verdict to write reads it live first); its Tenant as a pass
 * or the approver last read it, at the informer's version; its cache
 * Secret only once the slice was decided (slice_certificate.c); the echo
 * of the pass's own status write runs none (slice_settled.h), and
 * one read of the policy ConfigMap serves the slices seen before it started
 * (slice_policy_memo.h). The
 * CSRs of the slice and its sibling slices (the maxPerTenant sum) come from
 * the informers' caches (slice_plan.h decides over them), which list before
 * any worker starts, so a restart between any two steps resumes from what the
 * API server holds: a pending CSR is waited for, not made twice. What the
 * caches cannot show yet - a CSR we just made, a verdict we just wrote - is
 * remembered in s->settled. The Secret and the Quota are owned by the
 * slice, so deleting the slice removes them.
 *
 * One concept per file: slice_certificate.c (CSR, cache Secret, renewal),
 * slice_rbac.c (the old RoleBinding), slice_liqo_quota.c (Liqo's Quota),
 * slice_status.c (conditions, the PATCH),
 * slice_policy.c (the class policy), slice_quota.c (the maxPerTenant
 * ledger); this file decides in which order and holds the descriptor. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"
#include "signer/events.h"
#include "signer/slice_certificate.h"
#include "signer/slice_liqo_quota.h"
#include "signer/slice_policy_memo.h"
#include "signer/slice_quota.h"
#include "signer/slice_rbac.h"
#include "signer/slice_settled.h"
#include "signer/slice_status.h"

/* ---------- the reconcile ---------- */

static long requeue_min(long a, long b)
{
    return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

/* Nothing to do until delay_ms as the pass left the slice (at the version
 * of `now`): the echo of its own status write then costs no GET. A CSR the
 * pass made counts as seen whether or not the cache shows it yet. */
static void settle_pass(slice_ctx *c, json_object *now, const char *made, long delay_ms)
{
    char with_ours[RS_DEPS_MAX];
    int have_ours = made && *made &&
                    rs_settled_deps(c->s, c->ns, c->name, c->consumer, made, with_ours, sizeof(with_ours)) == 0;

    /* Waiting for the CSR's decision: the informer wakes the slice when it
     * comes, so the record holds longer than the safety net's WAIT_MS (a
     * burst queues the slice's keys for longer than that; each look meanwhile
     * is a skip, not five GETs). */
    if (delay_ms == WAIT_MS)
        delay_ms = WAIT_HOLD_MS;
    if (c->deps)
        rs_settle(c->s, c->ns, c->name, tg_json_path_string(now, "metadata", "resourceVersion", NULL), c->deps,
                  have_ours ? with_ours : NULL, delay_ms);
}

/* A slice never decided, waiting for its CSR, whose Resources would be
 * granted: nothing is written yet. The grant is decided again and written
 * with the certificate, in the one status write of the slice's decision
 * (Liqo writes one too), so the maxPerTenant ledger only ever holds grants
 * as written - decided and written in one step under rs_res_mu - and a
 * restart finds every grant in the slices' status (docs/signer.md). A
 * denial is written at once, as before. */
static int waits_undecided(slice_ctx *c, json_object *auth_cond, int accepted, int res_denied)
{
    return !auth_cond && !accepted && !res_denied && !rs_condition_of(c->slice, "Resources");
}

/* The cached copy a verdict is about to be written from gives way to the
 * live slice: 1 at the same version (what the pass decided from the copy
 * holds), RS_NEED_LIVE moved since (the pass runs again on the live one),
 * or the pass's return (gone, a failed read). */
static long go_live(slice_ctx *c)
{
    char path[1024];
    json_object *live = NULL;
    const char *was, *now;
    long st;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices/%s", c->ns, c->name);
    if ((st = tg_api_get(c->api, path, &live, c->err, sizeof(c->err))) != 200) {
        json_object_put(live);
        return st == 404 ? TG_RECONCILE_OK : TG_RECONCILE_RETRY;
    }
    was = tg_json_path_string(c->slice, "metadata", "resourceVersion", NULL);
    now = tg_json_path_string(live, "metadata", "resourceVersion", NULL);
    c->copy = c->slice;
    c->slice = live;
    c->cached = 0;
    return was && now && strcmp(was, now) == 0 ? 1 : RS_NEED_LIVE;
}

/* Authentication, certificate, Resources, status and binding of a live slice. */
static long reconcile_slice(slice_ctx *c)
{
    tg_approve_policy pol = {.signer_name = c->s->signer_name, .allow_no_handshake = c->s->allow_no_handshake};
    tg_approve_decision d;
    cert_result cr;
    json_object *st = json_object_new_object(), *auth_cond = NULL, *res_cond = NULL, *old_auth, *after = NULL;
    char msg[700], stash[600];
    int res_denied = 0, accepted = 0, decided;
    long ret = TG_RECONCILE_RETRY;

    memset(&cr, 0, sizeof(cr));
    old_auth = rs_condition_of(c->slice, "Authentication");
    tg_slice_auth_decide(c->slice, c->tenant, &pol, &d);
    if (!d.approve) {
        snprintf(msg, sizeof(msg), "ResourceSlice authentication denied (%s): %s", d.reason, d.message);
        auth_cond = rs_make_condition(old_auth, "Authentication", "Denied", AUTH_DENIED, msg);
    } else {
        if (rs_slice_certificate(c, &cr) != 0)
            goto out;
        if (cr.denied) {
            snprintf(msg, sizeof(msg), "ResourceSlice authentication denied (%s): %s", cr.reason, cr.message);
            auth_cond = rs_make_condition(old_auth, "Authentication", "Denied", AUTH_DENIED, msg);
        } else if (cr.signed_b64) {
            const char *proxy = tg_json_path_string(c->tenant, "spec", "proxyURL", NULL);
            json_object_object_add(st, "authParams", rc_auth_params(c->s, cr.signed_b64, proxy));
            auth_cond = rs_make_condition(old_auth, "Authentication", "Accepted", AUTH_ACCEPTED,
                                       "ResourceSlice authentication accepted");
            accepted = 1;
        }
    }
    if (c->cached && auth_cond && (ret = go_live(c)) != 1)
        goto out;   /* a verdict to write: from the live slice */
    ret = TG_RECONCILE_RETRY;
    if (auth_cond && !accepted) {
        json_object_object_add(st, "authParams", NULL);   /* merge patch: remove */
        if (!old_auth || !rs_same_text(tg_json_string(old_auth, "message"), msg)) {
            tg_log(TG_LOG_WARN, "resourceslice authentication denied", TG_LOG_STR("namespace", c->ns),
                   TG_LOG_STR("resourceslice", c->name), TG_LOG_STR("message", msg));
            tg_api_event(c->api, c->slice, "Warning", d.approve ? cr.reason : d.reason, msg);
            rs_count_verdict(c->s, "Authentication", "Denied", d.approve ? cr.reason : d.reason);
        }
    }
    pthread_mutex_lock(&rs_res_mu);
    decided = rs_resources_status(c, st, &res_cond, &res_denied) == 0;
    if (decided && waits_undecided(c, auth_cond, accepted, res_denied)) {
        pthread_mutex_unlock(&rs_res_mu);
        ret = cr.requeue_ms;
        settle_pass(c, c->slice, cr.made, ret);
        goto out;
    }
    if (decided && c->cached) {
        pthread_mutex_unlock(&rs_res_mu);
        ret = RS_NEED_LIVE;
        goto out;
    }
    if (decided) {
        int res_decided = res_cond != NULL, wrote;
        json_object_object_add(st, "conditions", rs_conditions_with(c->slice, auth_cond, res_cond));
        auth_cond = res_cond = NULL;
        wrote = rs_patch_status(c, st, &after);
        if (res_decided)   /* before the next decision of this consumer (rs_res_mu): see grant_note */
            rs_grant_note(c, wrote, after);
        ret = wrote >= 0 ? TG_RECONCILE_OK : TG_RECONCILE_RETRY;
    }
    pthread_mutex_unlock(&rs_res_mu);
    if (ret == TG_RECONCILE_RETRY)
        goto out;
    /* Liqo's Quota of the slice user follows the grant as now written (the
     * PATCH's answer; unchanged status: the slice as read) */
    if (rs_ensure_liqo_quota(c, after ? after : c->slice, d.approve && !cr.denied) != 0) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    /* The slice user has no rights of its own (Liqo parity): an older signer's
     * binding goes once the slice is decided. */
    if ((accepted || !d.approve || cr.denied) && rs_drop_old_binding(c) != 0) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    ret = requeue_min(cr.requeue_ms, res_denied ? RES_DENIED_RECHECK_MS : 0);
    if (!res_denied)   /* a denial waits on the policy and the siblings, which no record follows */
        settle_pass(c, after ? after : c->slice, cr.made, ret);
    if (after && !accepted && !cr.denied && d.approve)   /* waiting for the CSR: its issue's pass reads this */
        tg_api_keep(c->s->settled, rs_slice_stash_key(c->ns, c->name, stash, sizeof(stash)), after, SLICE_STASH_MS);
out:
    json_object_put(auth_cond);
    json_object_put(res_cond);
    json_object_put(after);
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

/* The slice's Tenant: as a pass of this consumer's slices or the approver
 * last read it live, while the Tenant informer shows that very version
 * (api.h, "our own writes"; a burst of a consumer's slices reads it once),
 * else live. The HTTP status. */
static long read_tenant(slice_ctx *c)
{
    char path[1024], key[600], rv[RC_RV_LEN];
    long st;

    rs_slice_tenant_key(c->ns, c->consumer, key, sizeof(key));
    if ((c->tenant = tg_api_kept(c->s->settled, key, rc_cached_rv(c->s->tenant_cache, c->ns, c->consumer, rv))))
        return 200;
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", c->ns, c->consumer);
    if ((st = tg_api_get(c->api, path, &c->tenant, c->err, sizeof(c->err))) == 200)
        tg_api_keep(c->s->settled, key, c->tenant, TENANT_READ_MS);
    return st;
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
    rs_grant_get(s, uid, l.rv, &granted);   /* drops a spent record */
    json_object_put(granted);
    return 1;
}

/* A never-decided slice's first pass needs only what the slice cache keeps
 * (spec, metadata but annotations): a copy of it, so the pass that makes the
 * CSR reads nothing live. NULL when the cache lacks the slice or holds a
 * decided or going one (a pass that writes reads the slice live). */
static void on_first_pass_visit(json_object *o, void *data)
{
    json_object **copy = data;
    const char *csr = tg_json_path_string(o, "spec", "csr", NULL);

    if (!csr || !*csr || tg_json_path(o, "status", "conditions", NULL) ||
        tg_json_path(o, "metadata", "deletionTimestamp", NULL))
        return;
    if (json_object_deep_copy(o, copy, NULL) != 0) {
        *copy = NULL;
        return;
    }
    /* the projection drops them; an event's involvedObject names them */
    json_object_object_add(*copy, "apiVersion", json_object_new_string("authentication.liqo.io/v1beta1"));
    json_object_object_add(*copy, "kind", json_object_new_string("ResourceSlice"));
}

static json_object *cached_first_pass(tg_signer *s, const char *ns, const char *name)
{
    json_object *copy = NULL;

    if (s->slice_cache && tg_cache_synced(s->slice_cache))
        tg_cache_get(s->slice_cache, ns, name, on_first_pass_visit, &copy);
    return copy;
}

static void slice_fields(slice_ctx *c)
{
    c->csr_b64 = tg_json_path_string(c->slice, "spec", "csr", NULL);
    c->uid = tg_json_path_string(c->slice, "metadata", "uid", NULL);
    c->consumer = tg_json_path_string(c->slice, "spec", "consumerClusterID", NULL);
}

/* RS_NEED_LIVE: the pass runs again on the live slice (read here unless
 * go_live did); the same slice only: a recreated one waits for the cache
 * (CACHE_LAG_MS). */
static long rerun_live(slice_ctx *c)
{
    const char *uid = c->uid;   /* into the cached copy, kept in c->copy */
    long st;

    if (c->cached && (st = go_live(c)) != 1 && st != RS_NEED_LIVE)
        return st;
    c->csr_b64 = tg_json_path_string(c->slice, "spec", "csr", NULL);
    c->uid = tg_json_path_string(c->slice, "metadata", "uid", NULL);
    if (!c->uid || strcmp(c->uid, uid) != 0 || !c->csr_b64 || !*c->csr_b64 ||
        tg_json_path(c->slice, "metadata", "deletionTimestamp", NULL))
        return CACHE_LAG_MS;
    return reconcile_slice(c);
}

long tg_reconcile_remote_slice(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    slice_ctx c = {.s = s, .api = api, .ns = ns, .name = name};
    char path[1024], want_ns[128], ns_cid[256], deps[RS_DEPS_MAX], stash[600], cached_rv[RC_RV_LEN];
    tg_ns_facts nsf;
    long st, ret = TG_RECONCILE_OK;

    /* The event of our own last status write: nothing changed since. The
     * dependencies are read before the pass, so it sees at least them. */
    nsf = tg_ns_facts_lookup(s, ns, ns_cid, sizeof(ns_cid));
    if (nsf.known && nsf.tenant && nsf.cluster_id) {
        if ((ret = rs_settled_left(s, ns, name, nsf.cluster_id, deps, sizeof(deps))) > 0) {
            rc_count_skip(s, "remoteresourceslice");
            return ret;
        }
        ret = TG_RECONCILE_OK;
        if (deps[0])
            c.deps = deps;
    }
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices/%s", ns, name);
    rs_slice_stash_key(ns, name, stash, sizeof(stash));
    c.slice = tg_api_kept(s->settled, stash, rc_cached_rv(s->slice_cache, ns, name, cached_rv));
    tg_api_forget(s->settled, stash);   /* read once: the pass writes the next version */
    if (!c.slice && (c.slice = cached_first_pass(s, ns, name)))
        c.cached = 1;
    if (!c.slice) {
        if ((st = tg_api_get(api, path, &c.slice, c.err, sizeof(c.err))) == 404)
            return TG_RECONCILE_OK;   /* gone: the Secret and RoleBinding it owned follow it */
        if (st != 200)
            goto fail;
    }
    slice_fields(&c);
    /* Every slice of a tenant namespace is the consumer's, whatever its
     * labels (which the consumer writes): only the namespace's label names
     * the consumer, and only this cluster's own local slices are not ours. */
    if (nsf.known && nsf.tenant && nsf.cluster_id)
        c.consumer = nsf.cluster_id;
    else if (s->ns_cache)
        goto out;   /* no longer a tenant namespace */
    if (tg_slice_is_own_local(c.slice, s->cluster_id) || !c.csr_b64 || !*c.csr_b64 || !c.uid)
        goto out;
    if (tg_json_path(c.slice, "metadata", "deletionTimestamp", NULL)) {
        /* going: its Quota goes now (garbage collection follows the slice's
         * ownership, but only once the slice itself is gone) */
        if (c.consumer && tg_slice_user_name(name, c.consumer, c.user, sizeof(c.user)) == 0 &&
            rs_ensure_liqo_quota(&c, c.slice, 0) != 0)
            goto fail;
        goto out;
    }
    if (!c.consumer || !tg_cluster_id_valid(c.consumer)) {
        /* Liqo: an event, no status. Admission refuses such a slice. */
        tg_api_event(api, c.slice, "Warning", "RemoteCertificateFailed", "spec.consumerClusterID not set or invalid");
        goto out;
    }
    if (tg_slice_user_name(name, c.consumer, c.user, sizeof(c.user)) != 0)
        goto out;
    snprintf(want_ns, sizeof(want_ns), TG_TENANT_NAMESPACE_PREFIX "%s", c.consumer);
    if (strcmp(ns, want_ns) == 0 && (st = read_tenant(&c)) != 200 && st != 404)
        goto fail;
    if (!cache_holds(s, ns, name, c.uid)) {
        /* woken before the slice informer saw this slice (recreated under
         * the same name): decide once it does, so the maxPerTenant sums of
         * its siblings, read from that cache, meet it (others_granted) */
        ret = CACHE_LAG_MS;
        goto out;
    }
    if ((ret = reconcile_slice(&c)) == RS_NEED_LIVE)
        ret = rerun_live(&c);
    if (ret != TG_RECONCILE_RETRY)
        goto out;
fail:
    tg_log(TG_LOG_WARN, "resourceslice reconcile failed", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("resourceslice", name), TG_LOG_STR("error", c.err));
    ret = TG_RECONCILE_RETRY;
out:
    json_object_put(c.tenant);
    json_object_put(c.slice);
    json_object_put(c.copy);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_slice(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "remoteslice", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

/* A slice's own event: its first one is when this process first saw it,
 * which a kept policy read is judged against (slice_policy_memo.h). */
static void map_slice_event(const tg_event *ev, tg_key_sink *sink)
{
    if (!ev->deleted)
        rs_memo_note_seen(ev->s, ev->obj);
    map_slice(ev, sink);
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
 * or a delete revokes them all, labelled or not. And the approver decides
 * the next slice CSR from a read after it. */
static void map_tenant_to_slices(const tg_event *ev, tg_key_sink *sink)
{
    const char *ns = tg_json_path_string(ev->obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(ev->obj, "metadata", "name", NULL);
    wake_ctx w = {.sink = sink, .self_id = ev->s->cluster_id};
    char what[600];

    /* the approver's kept read of it no longer serves (provider_approver.c) */
    snprintf(what, sizeof(what), "tenant/namespaces/%s/tenants/%s", ns ? ns : "", name ? name : "");
    rs_memo_changed(ev->s, what);
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

static void on_denied_slice(json_object *o, void *data)
{
    wake_ctx *w = data;
    json_object *res = rs_condition_of(o, "Resources");

    if (res && rs_same_text(tg_json_string(res, "status"), "Denied") && !tg_slice_is_own_local(o, w->self_id))
        map_slice(&(tg_event){.obj = o}, w->sink);
}

/* The policy ConfigMap changed: a read from before no longer serves
 * (slice_policy_memo.h), and every slice it may have denied is decided
 * again now rather than at its slow recheck (RES_DENIED_RECHECK_MS). */
static void map_policy_to_denied(const tg_event *ev, tg_key_sink *sink)
{
    wake_ctx w = {.sink = sink, .self_id = ev->s->cluster_id};

    rs_policy_changed(ev->s);
    if (ev->s->slice_cache)
        tg_cache_foreach(ev->s->slice_cache, on_denied_slice, &w);
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
              .writes = "the slice's status, CSRs for it, Secret liqo-remote-certificate-<slice>, Liqo's Quota "
                        "<slice user> in its namespace (where served), and deletes an old RoleBinding "
                        "tenantgate-rslice-<slice>"},
    .subs = {{TG_INF_TENANT_SLICES, 1, map_slice_event}, {TG_INF_TENANTS, 0, map_tenant_to_slices},
             {TG_INF_CSRS, 0, map_csr_to_slice}, {TG_INF_SLICE_POLICY, 0, map_policy_to_denied}}, .nsubs = 4,
    .reconcile = reconcile_key,
};
