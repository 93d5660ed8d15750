/* slice_quota.c - the maxPerTenant ledger: the Resources verdict of a slice
 * against the grants of the consumer's other slices, with this process's own
 * last writes recorded until the cache shows them (slice_quota.h). */
#include "signer/slice_quota.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "pki/slice_tenant_policy.h"
#include "signer/slice_resources.h"
#include "signer/slice_policy.h"
#include "signer/slice_status.h"

/* Resources decisions of one consumer are made one at a time: the sum of
 * the other accepted slices (maxPerTenant) must include a slice accepted a
 * moment ago by another worker. One process acts (leader election). */
pthread_mutex_t rs_res_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---------- the consumer's other slices (maxPerTenant) ----------
 *
 * The sum of the other accepted slices' grants comes from the slice
 * informer's cache (indexed by namespace), not a LIST per reconcile.
 * The catch is our own last write: the Resources decisions of one consumer
 * are made one at a time (rs_res_mu), and when two slices are accepted back to
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

/* Until then (tg_wq_now_ms), every sum is read live: a record was lost. Under rs_res_mu. */
static uint64_t grants_lost_until;

static void grant_key(const char *uid, char *key, size_t len)
{
    snprintf(key, len, "slice-grant/%s", uid);
}

/* What a slice holds in the sum, read from an object (cached, listed or
 * returned by our PATCH): its status.resources when Resources=Accepted. */
static json_object *accepted_grant(json_object *o)
{
    json_object *rc = rs_condition_of(o, "Resources");
    const char *st = rc ? tg_json_string(rc, "status") : NULL;

    return st && strcmp(st, "Accepted") == 0 ? tg_json_path(o, "status", "resources", NULL) : NULL;
}

/* Record the outcome of a status write that carried a Resources verdict:
 * wrote 1 with after (the PATCH's answer), or -1 (failed: unknown). */
void rs_grant_note(slice_ctx *c, int wrote, json_object *after)
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
tg_slice_grant_record rs_grant_get(tg_signer *s, const char *uid, const char *cached_rv, json_object **granted)
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
        rec = rs_grant_get(l->s, tg_json_path_string(o, "metadata", "uid", NULL),
                        tg_json_path_string(o, "metadata", "resourceVersion", NULL), &recorded);
    switch (tg_slice_sibling_source_of(tg_json_path(o, "metadata", "deletionTimestamp", NULL) != NULL,
                                       rs_is_default_class(tg_json_path_string(o, "spec", "class", NULL)), rec)) {
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
 * the default class. NULL with c->err on a failed call. Under rs_res_mu. */
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

/* The consumer's own policy (pki/slice_tenant_policy.h) over what the class
 * verdict would grant (defaults included) and the siblings' grants: v as
 * given, or -1 with reason and why. Shared with the webhook, which judges
 * what is asked at admission; this holds for slices admitted while it was
 * down or before the policy tightened. */
static int tenant_verdict(int v, const char *entry, const char *class_, json_object **granted, json_object *others,
                          char *reason, size_t reason_len, char *why, size_t why_len)
{
    tg_tenant_policy_verdict pv;

    if (v <= 0 || !entry)
        return v;
    pv = tg_tenant_policy_check(entry, class_, *granted, others, why, why_len);
    if (pv == TG_TPOL_ALLOWED)
        return v;
    snprintf(reason, reason_len, "%s", tg_tenant_policy_reason(pv));
    json_object_put(*granted);
    *granted = NULL;
    return -1;
}

/* Another class is its own controller's (Liqo): the consumer's policy only
 * takes it away (ClassNotAllowed, or a broken entry), and grants nothing. */
static int other_class_verdict(const char *entry, const char *class_, char *reason, size_t reason_len, char *why,
                               size_t why_len)
{
    tg_tenant_policy_verdict pv = tg_tenant_policy_check(entry, class_, NULL, NULL, why, why_len);

    if (pv == TG_TPOL_ALLOWED)
        return 0;
    snprintf(reason, reason_len, "%s", tg_tenant_policy_reason(pv));
    return -1;
}

/* Fill patch (the status object) with the Resources condition and fields.
 * 0, or -1 with c->err. *res_denied set when Denied. Called under rs_res_mu. */
int rs_resources_status(slice_ctx *c, json_object *st, json_object **res_cond, int *res_denied)
{
    const char *class_ = tg_json_path_string(c->slice, "spec", "class", NULL);
    json_object *old = rs_condition_of(c->slice, "Resources"), *policy = NULL, *others = NULL, *granted = NULL;
    char reason[48] = "", why[400] = "", msg[512], *entry = NULL;
    int v, bad = 0, active;

    *res_cond = NULL;
    *res_denied = 0;
    if (!c->tenant)
        return 0;   /* no Tenant: Liqo writes nothing */
    active = tenant_state(c->tenant) == TG_SLICE_T_ACTIVE;
    if (active && rs_class_policy(c, class_, &policy, &entry, why, sizeof(why), &bad) != 0)
        return -1;
    if (!rs_is_default_class(class_)) {
        json_object_put(policy);
        policy = NULL;
        v = entry ? other_class_verdict(entry, class_, reason, sizeof(reason), why, sizeof(why)) : 0;
    } else if (active && !(others = others_granted(c))) {
        json_object_put(policy);
        free(entry);
        return -1;
    } else if (bad) {
        snprintf(reason, sizeof(reason), "%s", TG_RES_DENY_POLICY);
        v = -1;
    } else {
        v = tg_slice_resources_verdict(&c->s->slice_provider, class_, tenant_state(c->tenant),
                                       old ? tg_json_string(old, "status") : NULL,
                                       tg_json_path(c->slice, "spec", "resources", NULL), policy, others, &granted,
                                       reason, sizeof(reason), why, sizeof(why));
        v = tenant_verdict(v, entry, class_, &granted, others, reason, sizeof(reason), why, sizeof(why));
    }
    free(entry);
    if (v > 0) {
        null_dropped(granted, tg_json_path(c->slice, "status", "resources", NULL));
        json_object_object_add(st, "resources", granted);
        *res_cond = rs_make_condition(old, "Resources", "Accepted", RES_ACCEPTED, "ResourceSlice resources accepted");
    } else if (v < 0) {
        snprintf(msg, sizeof(msg), "ResourceSlice resources denied (%s): %s", reason, why);
        /* Liqo names this one in the condition's reason (its reason, its switch) */
        *res_cond = rs_make_condition(old, "Resources", "Denied",
                                      strcmp(reason, TG_RES_DENY_CLASS_DISABLED) == 0 ? reason : RES_DENIED, msg);
        *res_denied = 1;
        if (!old || !rs_same_text(tg_json_string(old, "message"), msg))
            rs_count_verdict(c->s, "Resources", "Denied", reason);
    }
    if (v != 0 && rs_offered_classes(c, st, v > 0) != 0) {
        json_object_put(policy);
        json_object_put(others);
        return -1;
    }
    if (v != 0) {
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
