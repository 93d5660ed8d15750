/* provider_approver.c - the provider's CSR approver (PROTOCOL.md 7): approves a
 * tenant CSR only when it matches an authenticated Tenant, read live, and a
 * slice CSR (annotated tenantgate.io/resourceslice) only when it matches an
 * admitted replicated ResourceSlice; denies others with a reason. An approved CSR for our own signer is
 * handed to provider_signer.c. */
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
#include "pki/slice.h"
#include "signer/approve_decide.h"
#include "signer/binding_index.h"
#include "signer/cert_group_plan.h"
#include "signer/name_claim.h"
#include "signer/slice_ctx.h"
#include "signer/slice_policy_memo.h"
#include "signer/tenant_rbac.h"
#include "signer/tenant_scope.h"

typedef struct csr_look {
    char rv[RC_RV_LEN];
    int issued;
} csr_look;

static void on_csr_visit(json_object *o, void *data)
{
    csr_look *l = data;
    const char *rv = tg_json_path_string(o, "metadata", "resourceVersion", NULL);
    const char *crt = tg_json_path_string(o, "status", "certificate", NULL);

    if (rv && strlen(rv) < sizeof(l->rv))
        strcpy(l->rv, rv);
    l->issued = crt && *crt;
}

/* The CSR as the informer shows it: its version (into l->rv, "" when not
 * cached) and whether it is issued. */
static void informer_csr(tg_signer *s, const char *name, csr_look *l)
{
    memset(l, 0, sizeof(*l));
    if (s->csr_cache && tg_cache_synced(s->csr_cache))
        tg_cache_get(s->csr_cache, NULL, name, on_csr_visit, l);
}

/* Nothing for the approver (or our own signer) to do, as the CSR informer
 * shows it: issued already (a certificate is only ever issued after an
 * approval), or our own decision coming back as its watch event. */
static int csr_decision_settled(tg_signer *s, const char *name, const csr_look *l)
{
    char key[300];

    if (!s->settled || !l->rv[0])
        return 0;
    if (l->issued)
        return 1;
    snprintf(key, sizeof(key), "csr/%s", name);
    if (tg_api_settled(s->settled, key, l->rv, "decided") == 0)
        return 0;
    tg_api_forget(s->settled, key);   /* its one event is here: no need to keep it */
    return 1;
}

/* Approved for our own signer, which runs here: this process signs it next. */
static int signs_here(tg_signer *s, json_object *csr)
{
    const char *sn = tg_json_path_string(csr, "spec", "signerName", NULL);

    return (s->controllers & TG_CTL_SIGNER) && s->own_ca.cert && sn && strcmp(sn, TG_SIGNER_NAME_OWN) == 0;
}

/* The Tenant a tenant CSR names by its labels (read live, *tenant NULL when
 * none) and its namespace's nonce. 0, or -1 with err. */
static int tenant_inputs(tg_api *api, json_object *csr, json_object **tenant, char **nonce, char *err, size_t err_len)
{
    const char *cid = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    const char *tns = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);
    char default_ns[320], path[1024];
    long r;

    if (cid && !tns) {   /* a CSR made by another tool: the conventional tenant namespace */
        snprintf(default_ns, sizeof(default_ns), TG_TENANT_NAMESPACE_PREFIX "%s", cid);
        tns = default_ns;
    }
    if (!cid || !tns || !tg_cluster_id_valid(cid) || strlen(tns) >= 64 || strchr(tns, '/'))
        return 0;
    /* only cid's own tenant namespace vouches for cid (docs/signer.md "Security") */
    if (tg_tenant_scope_of(tns, cid) != TG_SCOPE_OK)
        return 0;
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", tns, cid);
    r = tg_api_get(api, path, tenant, err, err_len);
    if (r != 200 && r != 404)
        return -1;
    *nonce = rc_read_nonce(api, tns, NULL);
    return 0;
}

/* The consumer's Tenant for a slice CSR: as a read that started after the
 * slice was first seen left it, or live (slice_policy_memo.h: a Tenant
 * change made before the slice was created is in any such read, and a
 * Tenant event retires the reads from before it). The slice, not the CSR,
 * is the consumer's request: the CSR is ours, made for it, so a burst of a
 * consumer's slices reads its Tenant once per batch, whenever their CSRs
 * come. A live read is also kept for the slice passes (read_tenant). The
 * HTTP status. */
static long slice_tenant(tg_signer *s, tg_api *api, json_object *slice, const char *ns, const char *consumer,
                         json_object **tenant, char *err, size_t err_len)
{
    char what[1100], path[1024];
    uint64_t seen = rs_memo_seen_us(s, slice), start;
    long r;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", ns, consumer);
    snprintf(what, sizeof(what), "tenant%s", path + strlen(TENANTS_API));
    if (rs_memo_get(s, what, seen, tenant))
        return *tenant ? 200 : 404;
    start = rs_memo_now_us();
    if ((r = tg_api_get(api, path, tenant, err, err_len)) == 200 || r == 404)
        rs_memo_put(s, what, start, r == 200 ? *tenant : NULL);
    if (r == 200 && s->settled)
        tg_api_keep(s->settled, rs_slice_tenant_key(ns, consumer, what, sizeof(what)), *tenant, TENANT_READ_MS);
    return r;
}

/* A CSR made for a replicated slice (annotation "<ns>/<name>"): the slice,
 * read live, its consumer's Tenant (slice_tenant), and the decision. 0, or
 * -1 with err. */
static int slice_decide(tg_signer *s, tg_api *api, json_object *csr, const tg_approve_policy *pol,
                        json_object **slice, json_object **tenant, tg_approve_decision *d, char *err, size_t err_len)
{
    const char *ref = tg_json_path_string(csr, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
    const char *slash = strchr(ref, '/'), *consumer;
    char path[1024], ns[64] = "";
    long r;

    if (slash && slash > ref && slash - ref < 64 && strlen(slash + 1) > 0 && strlen(slash + 1) <= 253 &&
        !strchr(slash + 1, '/')) {
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ref), ref);
        snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/resourceslices/%s", ns, slash + 1);
        if ((r = tg_api_get(api, path, slice, err, err_len)) != 200 && r != 404)
            return -1;
        if (r == 200 && s->settled)   /* the pass the CSR's issue wakes reads this (slice_ctx.h) */
            tg_api_keep(s->settled, rs_slice_stash_key(ns, slash + 1, path, sizeof(path)), *slice, SLICE_STASH_MS);
    }
    /* a slice was read only with ns set */
    consumer = *slice ? tg_json_path_string(*slice, "spec", "consumerClusterID", NULL) : NULL;
    if (consumer && tg_cluster_id_valid(consumer)) {
        if ((r = slice_tenant(s, api, *slice, ns, consumer, tenant, err, err_len)) != 200 && r != 404)
            return -1;
    }
    tg_approve_decide_slice(csr, *slice, *tenant, pol, d);
    return 0;
}

/* A LIST across namespaces of one name (a field selector: at most a few
 * objects). 0 with *list, or -1 with err. */
static int list_named(tg_api *api, const char *plural, const char *name, json_object **list, char *err,
                      size_t err_len)
{
    char path[1024];

    snprintf(path, sizeof(path), TENANTS_API "/%s?fieldSelector=metadata.name%%3D%s", plural, name);
    return tg_api_get(api, path, list, err, err_len) == 200 ? 0 : -1;
}

static void on_named_tenant(json_object *o, void *data)
{
    json_object *copy = NULL;

    if (json_object_deep_copy(o, &copy, NULL) == 0)
        json_object_array_add(data, copy);
}

/* The Tenants named name in any namespace, as the Tenant informer shows
 * them (its by-name index), into a new {"items": [...]}, or NULL: no
 * synced informer, LIST them. */
static json_object *cached_tenants_named(tg_signer *s, const char *name)
{
    json_object *list, *items;

    if (!s->tenant_cache || !tg_cache_synced(s->tenant_cache))
        return NULL;
    list = json_object_new_object();
    items = json_object_new_array();
    json_object_object_add(list, "items", items);
    tg_cache_get_by_name(s->tenant_cache, name, on_named_tenant, items);
    return list;
}

/* An approved decision stays one only when its user name is nobody else's
 * (approve_decide.h, issue 36 #7): a slice's user no Tenant's cluster id, a
 * Tenant's cluster id no slice's user. A slice's user is looked up among
 * the Tenant informer's (by name: the webhook admits a Tenant only under
 * its cluster id), else LISTed; a Tenant's cluster id among the slices,
 * LISTed live. What a cache does not show yet (a Tenant made a moment ago,
 * or one of another name) the NameClaims settle: the Tenant path claims
 * its cluster id, the slice path its user, and of two claims of one name
 * the second is refused (NameOwned). 0, or -1 with err. */
static int check_user_free(tg_signer *s, tg_api *api, json_object *csr, json_object *slice, tg_approve_decision *d,
                           char *err, size_t err_len)
{
    const char *cid = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    char user[TG_SLICE_USER_MAX], sname[TG_SLICE_USER_MAX];
    json_object *list = NULL;
    int rc = 0;

    if (!d->approve)
        return 0;
    if (slice) {
        if (tg_slice_user_name(tg_json_path_string(slice, "metadata", "name", NULL),
                               tg_json_path_string(slice, "spec", "consumerClusterID", NULL), user, sizeof(user)) != 0)
            return 0;   /* the decision checked both; nothing to look for */
        if ((list = cached_tenants_named(s, user)) || (rc = list_named(api, "tenants", user, &list, err, err_len)) == 0)
            tg_approve_slice_user_free(slice, tg_json_path(list, "items", NULL), d);
    } else if (cid && tg_slice_user_slice_name(cid, sname, sizeof(sname)) == 0) {
        if ((rc = list_named(api, "resourceslices", sname, &list, err, err_len)) == 0)
            tg_approve_cluster_id_free(cid, tg_json_path(list, "items", NULL), d);
    }
    json_object_put(list);
    return rc;
}

/* No binding tenantgate did not make for name names it (binding_index.h),
 * read from the binding informers' caches: nothing is LISTed per approval.
 * Before both have synced nothing is decided. 0, or -1 with err. */
static int check_name_bound(tg_signer *s, const char *name, tg_approve_decision *d, char *err, size_t err_len)
{
    char where[200];

    if (!d->approve)
        return 0;
    if (!s->binding_index || !s->rb_cache || !s->crb_cache || !tg_cache_synced(s->rb_cache) ||
        !tg_cache_synced(s->crb_cache)) {
        snprintf(err, err_len, "the RoleBinding and ClusterRoleBinding informers have not synced");
        return -1;
    }
    if (!tg_binding_index_foreign(s->binding_index, s->rb_cache, s->crb_cache, name, where, sizeof(where)))
        return 0;
    d->approve = 0;
    snprintf(d->reason, sizeof(d->reason), "%s", tg_reason_name(TG_NAME_BOUND));
    snprintf(d->message, sizeof(d->message), "expected no binding tenantgate did not make for %.100s to name it as "
             "User or Group, found %.180s", name, where);
    return 0;
}

typedef struct uid_look {
    char uid[64];
} uid_look;

static void on_ns_uid(json_object *o, void *data)
{
    uid_look *l = data;
    const char *u = tg_json_path_string(o, "metadata", "uid", NULL);

    if (u && strlen(u) < sizeof(l->uid))
        strcpy(l->uid, u);
}

/* Namespace ns's uid as the namespace informer shows it (the owner of the
 * NameClaims made in its name), or NULL: tg_name_claim_for reads it. A
 * namespace deleted and made again under its name within the informer's
 * lag gives a claim a gone owner: the garbage collector then removes the
 * claim, as it would have with the namespace, and the next approval makes
 * it again (NameClaims are checked by a create, never trusted from a cache). */
static const char *ns_uid_of(tg_signer *s, const char *ns, uid_look *l)
{
    memset(l, 0, sizeof(*l));
    if (s->ns_cache && tg_cache_synced(s->ns_cache))
        tg_cache_get(s->ns_cache, NULL, ns, on_ns_uid, l);
    return l->uid[0] ? l->uid : NULL;
}

/* The consumer's own claim, which a slice's group must be the Tenant
 * flow's: as a read that started after the slice was first seen left it,
 * or live (slice_policy_memo.h, as slice_tenant; a claim committed before
 * the slice was created is in any such read, and a later one races a live
 * read as much). A burst of a consumer's slices reads it once per batch.
 * 0, or -1 with err. */
static int check_group_claim(tg_signer *s, tg_api *api, json_object *slice, const char *consumer,
                             tg_approve_decision *d, char *err, size_t err_len)
{
    char what[300];
    uint64_t seen = rs_memo_seen_us(s, slice), start;
    json_object *claim = NULL;
    long r;

    snprintf(what, sizeof(what), "nameclaim/%s", consumer);
    if (!rs_memo_get(s, what, seen, &claim)) {
        start = rs_memo_now_us();
        if ((r = tg_name_claim_read(api, consumer, &claim, err, err_len)) != 200 && r != 404)
            return -1;
        rs_memo_put(s, what, start, claim);
    }
    tg_name_claim_judge(claim, consumer, TG_NAME_PATH_TENANT, consumer, d);
    json_object_put(claim);
    return 0;
}

/* One owner per name (name_claim.h), last before an approval: the user the
 * CSR carries is claimed for its path (a Tenant's cluster id; a slice's
 * user, whose group, its consumer's id, must be the Tenant flow's). A
 * name a foreign binding names is refused first (NameBound), for a slice
 * both its user and its group (the certificate gets what either is bound
 * to), then a claim refusal denies the CSR (NameReserved, NameOwned).
 * 0, or -1 with err. */
static int check_name_owner(tg_signer *s, tg_api *api, json_object *tenant, json_object *slice,
                            tg_approve_decision *d, char *err, size_t err_len)
{
    json_object *owner = slice ? slice : tenant;
    const char *ns = tg_json_path_string(owner, "metadata", "namespace", NULL);
    const char *consumer = tg_json_path_string(owner, "spec", slice ? "consumerClusterID" : "clusterID", NULL);
    const char *sname = tg_json_path_string(owner, "metadata", "name", NULL);
    char user[TG_SLICE_USER_MAX], holder[TG_SLICE_USER_MAX + 64];
    uid_look l;
    int rc;

    if (!d->approve || !ns || !consumer || !sname)
        return 0;   /* an approval always has its Tenant or slice; nothing to claim otherwise */
    if (!slice) {
        if (check_name_bound(s, consumer, d, err, err_len) != 0 || !d->approve)
            return d->approve ? -1 : 0;
        rc = tg_name_claim_for(api, consumer, TG_NAME_PATH_TENANT, consumer, ns, ns_uid_of(s, ns, &l), s->cluster_id,
                               d, err, err_len);
        snprintf(holder, sizeof(holder), "nameclaim/%s", consumer);
        rs_memo_changed(s, holder);   /* claimed: no read from before serves check_group_claim */
        return rc;
    }
    if (tg_slice_user_name(sname, consumer, user, sizeof(user)) != 0)
        return 0;
    if (check_name_bound(s, user, d, err, err_len) != 0 || !d->approve ||
        check_name_bound(s, consumer, d, err, err_len) != 0 || !d->approve)
        return d->approve ? -1 : 0;
    if (check_group_claim(s, api, slice, consumer, d, err, err_len) != 0 || !d->approve)
        return d->approve ? -1 : 0;
    snprintf(holder, sizeof(holder), "%.63s/%.253s", consumer, sname);
    return tg_name_claim_for(api, user, TG_NAME_PATH_SLICE, holder, ns, ns_uid_of(s, ns, &l), s->cluster_id, d, err,
                             err_len);
}

/* A per-certificate group that was revoked is never signed again: the
 * revoked certificate still carries it (pki/cert_group.h). The records are
 * read live: a revocation counts from the moment it is written. Its form and
 * identity were checked with the request (tg_csr_check). 0, or -1 with err. */
static int check_group_revoked(tg_signer *s, tg_api *api, json_object *csr, tg_approve_decision *d, char *err,
                               size_t err_len)
{
    const char *req = tg_json_path_string(csr, "spec", "request", NULL);
    char group[TG_CERT_GROUP_MAX];
    json_object *cm = NULL, *records;
    unsigned char *pem;
    size_t n = 0;
    int has;

    if (!d->approve || !req || !(pem = tg_base64_decode(req, strlen(req), &n, err, err_len)))
        return 0;
    has = tg_csr_cert_group(pem, n, group, sizeof(group));
    free(pem);
    if (has != 1)
        return 0;
    if (tg_revocation_records_read(s, api, &cm, &records, err, err_len) != 200) {
        json_object_put(cm);
        return -1;
    }
    if (tg_cert_group_revoked(records, group)) {
        d->approve = 0;
        snprintf(d->reason, sizeof(d->reason), "%s", tg_reason_name(TG_NAME_REVOKED));
        snprintf(d->message, sizeof(d->message), "expected a fresh certificate group, found %.200s revoked (the "
                 "revoked certificate still carries it)", group);
    }
    json_object_put(cm);
    return 0;
}

/* The decision on an undecided CSR, from what it names, read live: *tenant,
 * *slice and *nonce receive what was read (caller frees). 0, or -1 with err. */
static int decide(tg_signer *s, tg_api *api, json_object *csr, json_object **tenant, json_object **slice,
                  char **nonce, tg_approve_decision *d, char *err, size_t err_len)
{
    tg_approve_policy pol = {.signer_name = s->signer_name, .allow_no_handshake = s->allow_no_handshake};

    if (tg_json_path_string(csr, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL)) {
        if (slice_decide(s, api, csr, &pol, slice, tenant, d, err, err_len) != 0)
            return -1;
    } else {
        if (tenant_inputs(api, csr, tenant, nonce, err, err_len) != 0)
            return -1;
        tg_approve_decide(csr, *tenant, *nonce, &pol, d);
    }
    if (check_user_free(s, api, csr, *slice, d, err, err_len) != 0 || check_group_revoked(s, api, csr, d, err, err_len) != 0)
        return -1;
    return check_name_owner(s, api, *tenant, *slice, d, err, err_len);
}

/* Append the decision as an Approved or Denied condition to csr's status. */
static void add_condition(json_object *csr, const tg_approve_decision *d)
{
    json_object *st, *conds, *c = json_object_new_object();
    char now[32];

    if (!(st = tg_json_path(csr, "status", NULL))) {
        st = json_object_new_object();
        json_object_object_add(csr, "status", st);
    }
    if (!(conds = tg_json_path(st, "conditions", NULL))) {
        conds = json_object_new_array();
        json_object_object_add(st, "conditions", conds);
    }
    rc_rfc3339(time(NULL), now, sizeof(now));
    json_object_object_add(c, "type", rc_jstr(d->approve ? "Approved" : "Denied"));
    json_object_object_add(c, "status", rc_jstr("True"));
    json_object_object_add(c, "reason", rc_jstr(d->reason));
    json_object_object_add(c, "message", rc_jstr(d->message));
    json_object_object_add(c, "lastUpdateTime", rc_jstr(now));
    json_object_array_add(conds, c);
}

/* The decision written: its metric, log line and, for a denial, Events on
 * the CSR and on the Tenant or slice. An approval's reason and message are
 * in the CSR's Approved condition, as Kubernetes' own approver leaves them
 * (no Event), and reach the Tenant as IdentityIssued: an Event a CSR would
 * be one POST more a Tenant and a slice, in bursts of thousands. */
static void report_decision(tg_signer *s, tg_api *api, json_object *csr, json_object *owner, const char *name,
                            const tg_approve_decision *d)
{
    const char *cid = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    if (s->m_decisions)
        tg_counter_add(tg_metric_series_get(s->m_decisions, (const char *[]){d->approve ? "approved" : "denied", d->reason}), 1);
    tg_log(d->approve ? TG_LOG_INFO : TG_LOG_WARN, d->approve ? "csr approved" : "csr denied", TG_LOG_STR("csr", name),
           TG_LOG_STR("cluster_id", cid), TG_LOG_STR("reason", d->reason), TG_LOG_STR("message", d->message));
    if (d->approve)
        return;
    tg_api_event(api, csr, "Warning", d->reason, d->message);
    if (owner)
        tg_api_event(api, owner, "Warning", "CSRDenied", d->message);
}

/* How long our decision's watch event is recognised as settled. */
#define CSR_DECIDED_MS (10 * 60 * 1000)

long tg_reconcile_csr(tg_signer *s, tg_api *api, const char *name)
{
    char path[1024], err[512], key[300];
    json_object *csr = NULL, *tenant = NULL, *slice = NULL, *after = NULL;
    char *nonce = NULL;
    tg_approve_decision d;
    csr_look seen;
    long r, ret = TG_RECONCILE_RETRY;
    int decided;

    informer_csr(s, name, &seen);
    if (csr_decision_settled(s, name, &seen)) {
        rc_count_skip(s, "csr");
        return TG_RECONCILE_OK;
    }
    /* the CSR as our POST returned it, at the informer's version; else live */
    snprintf(path, sizeof(path), CSR_API "/%s", name);
    if ((r = tg_api_get_at(api, s->settled, path, seen.rv, TG_API_LIVE, &csr, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (r != 200)
        goto fail;
    if ((decided = rc_csr_decided(csr)) != 0 || !(s->controllers & TG_CTL_APPROVER)) {
        ret = decided > 0 && signs_here(s, csr) && !tg_json_path_string(csr, "status", "certificate", NULL)
                  ? tg_sign_csr(s, api, csr, name)
                  : TG_RECONCILE_OK;
        goto out;
    }
    if (decide(s, api, csr, &tenant, &slice, &nonce, &d, err, sizeof(err)) != 0)
        goto fail;
    add_condition(csr, &d);
    snprintf(path, sizeof(path), CSR_API "/%s/approval", name);
    r = tg_api_write(api, s->settled, "PUT", path, TG_KUBE_CT_JSON, csr, 0, &after, err, sizeof(err));
    if (r == TG_API_STALE) {
        ret = 1;   /* changed since our POST: decide again on the live object */
        goto out;
    }
    if (r != 200)
        goto fail;
    snprintf(key, sizeof(key), "csr/%s", name);
    if (after && !(d.approve && signs_here(s, after)))   /* the PUT's own event needs no GET */
        tg_api_settle(s->settled, key, tg_json_path_string(after, "metadata", "resourceVersion", NULL), "decided",
                      NULL, CSR_DECIDED_MS);
    report_decision(s, api, csr, slice ? slice : tenant, name, &d);
    /* approved for our own signer: look again to sign it */
    ret = d.approve && s->own_ca.cert && (s->controllers & TG_CTL_SIGNER) ? 1 : TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "csr reconcile failed", TG_LOG_STR("csr", name), TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    rc_free_secret(nonce, nonce ? strlen(nonce) : 0);
    json_object_put(after);
    json_object_put(tenant);
    json_object_put(slice);
    json_object_put(csr);
    return ret;
}

/* ---------- descriptors: the approver, and the own signer (provider_signer.c) ---------- */

/* Said once, when the informer first meets it: the approver still decides
 * such a CSR, but no Tenant or slice counts it. */
void tg_note_foreign_csr(tg_signer *s, json_object *o)
{
    const char *by = tg_json_path_string(o, "spec", "username", NULL);

    if (!(s->controllers & (TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) || tg_csr_made_by(o, s->self_user))
        return;
    tg_log(TG_LOG_WARN, "csr with the signer's labels made by another user: ignored by the Tenant and "
                        "ResourceSlice controllers",
           TG_LOG_STR("csr", tg_json_path_string(o, "metadata", "name", NULL)), TG_LOG_STR("username", by ? by : ""),
           TG_LOG_STR("expected", s->self_user));
    if (s->m_foreign_csrs)
        tg_counter_add(tg_metric_series_get(s->m_foreign_csrs, NULL), 1);
}

/* An issued CSR leaves the approver nothing to do. A decided one still
 * comes here: our own decision's event is recognised as settled (no GET),
 * and with the own signer running, the approver signs what it approved. */
static void map_approve(const tg_event *ev, tg_key_sink *sink)
{
    /* a slice CSR's first event: when it was first seen (slice_tenant) */
    if (!ev->deleted && tg_json_path_string(ev->obj, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL))
        rs_memo_note_seen(ev->s, ev->obj);
    if (!ev->deleted && !tg_json_path_string(ev->obj, "status", "certificate", NULL))
        tg_key_emit(sink, "approve", "", tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

static long reconcile_csr_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    (void)ns;
    return tg_reconcile_csr(s, api, name);
}

/* A binding's event only updates the index: the next approval reads it
 * (approvals happen on CSR events; nothing is re-queued). */
static void map_binding(const tg_event *ev, tg_key_sink *sink)
{
    (void)sink;
    tg_binding_index_note(ev->s->binding_index, ev->obj, ev->deleted);
}

const tg_controller_desc tg_ctl_approver = {
    .name = "approver", .key_prefix = "approve", .bit = TG_CTL_APPROVER, .side = "provider",
    .scope = {.where = TG_WHERE_CLUSTER,
              .acts_on = "CSRs labelled liqo.io/remote-tenant-csr=true (each judged against the Tenant or "
                         "ResourceSlice it names)",
              .writes = "the CSR's approval"},
    .finishes = 1,
    .subs = {{TG_INF_CSRS, 1, map_approve}, {TG_INF_ROLEBINDINGS, 0, map_binding},
             {TG_INF_CLUSTERROLEBINDINGS, 0, map_binding}}, .nsubs = 3,
    .reconcile = reconcile_csr_key,
};

/* Approved (by anyone) and not yet issued: the own signer's turn, unless the
 * approver runs here too and signs as it approves (one reconcile, not two
 * racing PUTs of the same certificate). */
static void map_sign(const tg_event *ev, tg_key_sink *sink)
{
    if (!(ev->s->controllers & TG_CTL_APPROVER) && ev->s->own_ca.cert && !ev->deleted &&
        !tg_json_path_string(ev->obj, "status", "certificate", NULL) && rc_csr_decided(ev->obj) > 0)
        tg_key_emit(sink, "sign", "", tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

const tg_controller_desc tg_ctl_own_signer = {
    .name = "signer", .key_prefix = "sign", .bit = TG_CTL_SIGNER, .side = "provider",
    .scope = {.where = TG_WHERE_CLUSTER,
              .acts_on = "approved CSRs labelled liqo.io/remote-tenant-csr=true for signerName "
                         "tenantgate.io/identity (with --ca-cert)",
              .writes = "the CSR's status.certificate"},
    .finishes = 1,
    .subs = {{TG_INF_CSRS, 1, map_sign}}, .nsubs = 1,
    .reconcile = reconcile_csr_key,   /* signs what is approved for the own signer, and nothing else */
};
