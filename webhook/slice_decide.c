/* slice_decide.c - see slice_decide.h. */
#include "slice_decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/name_owner.h"
#include "pki/slice.h"
#include "pki/slice_tenant_policy.h"
#include "pki/tenant.h"
#include "webhook/placement.h"
#include "webhook/slice_quantity.h"

/* Liqo's own denial texts (its ResourceSlice webhook), kept word for word. */
#define LIQO_DUPLICATE "a resourceslice with the same name already exists in the cluster"

static int intercepted(const tg_review_request *req)
{
    return (req->op == TG_OP_CREATE || req->op == TG_OP_UPDATE) &&
           strcmp(req->resource_group, TG_TENANT_GROUP) == 0 && strcmp(req->resource, TG_SLICE_RESOURCE) == 0 &&
           req->sub_resource[0] == '\0';
}

/* metadata.<map>[key] of obj, or NULL. */
static const char *meta_value(json_object *obj, const char *map, const char *key)
{
    json_object *m = obj ? tg_json_path(obj, "metadata", map, NULL) : NULL;
    return m ? tg_json_string(m, key) : NULL;
}

static int same_value(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* What group liqo.io (a consumer's ControlPlane identity) may not touch on
 * UPDATE. Liqo guards the first two; the others say whose slice it is (a
 * replicated copy, of which consumer, for which provider): without them the
 * provider would take the copy for a local slice of its own. */
static const struct {
    const char *map, *key, *what;
} guarded[] = {
    {"labels", TG_LABEL_REMOTE_CLUSTER_ID, "the remoteClusterID label"},
    {"annotations", TG_ANNOTATION_CORDON, "the " TG_ANNOTATION_CORDON " annotation"},
    {"labels", TG_LABEL_REPLICATED, "the " TG_LABEL_REPLICATED " label"},
    {"labels", TG_LABEL_ORIGIN_ID, "the " TG_LABEL_ORIGIN_ID " label"},
    {"labels", TG_LABEL_REMOTE_ID, "the " TG_LABEL_REMOTE_ID " label"},
    {"labels", TG_LABEL_REPLICATION, "the " TG_LABEL_REPLICATION " label"},
};

static int check_control_plane_change(const tg_review_request *req, tg_verdict *v)
{
    if (req->op != TG_OP_UPDATE || !tg_review_user_in_group(req, TG_GROUP_CONTROL_PLANE))
        return 0;
    for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
        const char *was = meta_value(req->old_object, guarded[i].map, guarded[i].key);
        const char *now = meta_value(req->object, guarded[i].map, guarded[i].key);
        if (!same_value(was, now))
            return tg_verdict_deny(v, TG_FORBIDDEN_CHANGE,
                                   "control plane users (group %s) can't %s %s: expected %s%.*s%s, found %s%.*s%s",
                                   TG_GROUP_CONTROL_PLANE, !was ? "add" : (!now ? "delete" : "change"),
                                   guarded[i].what, was ? "\"" : "", TG_SHOWN, was ? was : "none", was ? "\"" : "",
                                   now ? "\"" : "", TG_SHOWN, now ? now : "none", now ? "\"" : "");
    }
    return 0;
}

/* A consumer's ControlPlane identity writes only replicated copies into its
 * tenant namespace: a slice of theirs without the label is not "local" (a
 * local slice would be the provider's own), it is refused. */
static int check_control_plane_replicated(const tg_review_request *req, const char *replicated, tg_verdict *v)
{
    if (!tg_review_user_in_group(req, TG_GROUP_CONTROL_PLANE) || (replicated && strcmp(replicated, "true") == 0))
        return 0;
    return tg_verdict_deny(v, TG_LABEL_MISMATCH,
                           "a slice written by a control plane user (group %s) is a consumer's replicated copy: "
                           "expected label %s=true, found %s%.*s%s",
                           TG_GROUP_CONTROL_PLANE, TG_LABEL_REPLICATED, replicated ? "\"" : "", TG_SHOWN,
                           replicated ? replicated : "no such label", replicated ? "\"" : "");
}

/* Liqo parity: local slice names are unique in the cluster (the virtual
 * node is named after the slice). */
static int check_local_name(const tg_review_request *req, const tg_lookup *lk, const char *name, tg_verdict *v)
{
    if (req->op != TG_OP_CREATE || !name[0])
        return 0;
    if (lk->ops->local_slice_name_exists(lk, name))
        return tg_verdict_deny(v, TG_DUPLICATE,
                               LIQO_DUPLICATE ": expected no local ResourceSlice (%s=true) named %.*s, found one",
                               TG_LABEL_REPLICATION, TG_SHOWN, name);
    return 0;
}

/* Step 2: the replicator's labels name the consumer (source: where its id
 * came from). */
static int check_labels(json_object *obj, const char *consumer, const char *source, tg_verdict *v)
{
    const char *origin = meta_value(obj, "labels", TG_LABEL_ORIGIN_ID);
    const char *remote = meta_value(obj, "labels", TG_LABEL_REMOTE_CLUSTER_ID);

    if (!origin || strcmp(origin, consumer) != 0)
        return tg_verdict_deny(v, TG_LABEL_MISMATCH, "expected label %s=%.*s (%s), found %s%.*s%s",
                               TG_LABEL_ORIGIN_ID, TG_SHOWN, consumer, source, origin ? "\"" : "", TG_SHOWN,
                               origin ? origin : "no such label", origin ? "\"" : "");
    if (remote && strcmp(remote, consumer) != 0)
        return tg_verdict_deny(v, TG_LABEL_MISMATCH, "expected label %s=%.*s (%s), found \"%.*s\"",
                               TG_LABEL_REMOTE_CLUSTER_ID, TG_SHOWN, consumer, source, TG_SHOWN, remote);
    return 0;
}

/* Step 1 for the CSR: present, and strict base64. */
static int decode_csr(json_object *obj, tg_bytes *out, tg_verdict *v)
{
    json_object *spec = tg_json_path(obj, "spec", NULL), *field = NULL;
    char err[128];

    if (!spec || !json_object_object_get_ex(spec, "csr", &field) || !field ||
        !json_object_is_type(field, json_type_string) || json_object_get_string_len(field) == 0)
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                               "expected spec.csr (filled by the consumer before replication), found none");
    out->data = tg_base64_decode(json_object_get_string(field), (size_t)json_object_get_string_len(field), &out->len,
                                 err, sizeof(err));
    if (!out->data)
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE, "spec.csr: expected base64, found %s", err);
    return 0;
}

/* Step 6: the slice's user must not be a consumer's ControlPlane user (a
 * cluster id): its certificate would act as that consumer. */
static int check_user_name(const tg_lookup *lk, const char *name, const char *consumer, tg_verdict *v)
{
    char user[TG_SLICE_USER_MAX];

    if (tg_slice_user_name(name, consumer, user, sizeof(user)) != 0 || !lk->ops->tenant_cluster_id_exists(lk, user))
        return 0;
    return tg_verdict_deny(v, TG_DUPLICATE,
                           "expected the slice's user %.*s (<metadata.name>-<sha256(spec.consumerClusterID)[:12]>) "
                           "to be no consumer's cluster id, found a Tenant of cluster %.*s",
                           TG_SHOWN * 2, user, TG_SHOWN, user);
}

/* One owner per name (PROTOCOL.md 3): the slice's user is unclaimed, or
 * claimed by this very slice (path slice, holder <consumer>/<slice>: the
 * approver's claim, found again on UPDATE or a re-created copy). Another
 * path or holder owns it: its certificate would act as that owner. */
static int check_user_claim(const tg_lookup *lk, const char *name, const char *consumer, tg_verdict *v)
{
    char user[TG_SLICE_USER_MAX], path[16], holder[TG_LOOKUP_WHERE_MAX], want[TG_LOOKUP_WHERE_MAX];

    if (!lk->ops->name_claim || tg_slice_user_name(name, consumer, user, sizeof(user)) != 0 ||
        lk->ops->name_claim(lk, user, path, holder) != TG_LOOKUP_FOUND)
        return 0;
    snprintf(want, sizeof(want), "%.63s/%.253s", consumer, name);
    if (tg_name_path_parse(path) == TG_NAME_PATH_SLICE && strcmp(holder, want) == 0)
        return 0;
    return tg_verdict_deny_code(v, 403, TG_NAME_OWNED,
                                "expected the slice's user %.*s to be unclaimed or claimed by this slice (path slice "
                                "holder %.*s), found NameClaim of path %.15s holder %.*s",
                                TG_SHOWN * 2, user, TG_SHOWN * 2, want, path, TG_SHOWN * 2, holder);
}

/* Step 4: the consumer has a Tenant in the namespace, and it is not Drained.
 * On 0, t is filled and the caller clears it. */
static int find_live_tenant(const tg_lookup *lk, const char *ns, const char *consumer, tg_lookup_tenant *t,
                            tg_verdict *v)
{
    memset(t, 0, sizeof(*t));
    if (lk->ops->tenant_for_cluster(lk, ns, consumer, t) != TG_LOOKUP_FOUND)
        return tg_verdict_deny(v, TG_SLICE_TENANT_NOT_FOUND,
                               "expected a Tenant of %.*s (spec.consumerClusterID) in namespace %.*s, found none",
                               TG_SHOWN, consumer, TG_SHOWN, ns);
    if (t->drained) {
        tg_lookup_tenant_clear(t);
        return tg_verdict_deny(v, TG_SLICE_TENANT_DRAINED,
                               "expected the Tenant of %.*s to be Active or Cordoned, found Drained", TG_SHOWN,
                               consumer);
    }
    return 0;
}

/* Steps 4 and 5 against the consumer's Tenant. */
static int check_against_tenant(const tg_lookup *lk, const char *ns, const char *name, const char *consumer,
                                const tg_bytes *csr, tg_verdict *v)
{
    tg_lookup_tenant t;
    tg_bytes key;
    int rc;

    if (find_live_tenant(lk, ns, consumer, &t, v) != 0)
        return -1;
    key = (tg_bytes){.data = t.public_key, .len = t.public_key_len};
    if (!t.no_handshake && !t.public_key) {
        tg_lookup_tenant_clear(&t);
        return tg_verdict_deny(v, TG_CSR_PUBLIC_KEY_MISMATCH,
                               "spec.csr: expected the key of the Tenant of %.*s, found a Tenant without spec.publicKey",
                               TG_SHOWN, consumer);
    }
    rc = tg_slice_csr_check(csr, name, consumer, t.no_handshake ? NULL : &key, v);
    tg_lookup_tenant_clear(&t);
    return rc;
}

/* spec.<field> absent, null or "": not filled yet. Any other value counts as
 * filled, and is judged. */
static int spec_field_unfilled(json_object *obj, const char *field)
{
    json_object *spec = obj ? tg_json_path(obj, "spec", NULL) : NULL, *f = NULL;

    if (!spec || !json_object_object_get_ex(spec, field, &f) || !f)
        return 1;
    return json_object_is_type(f, json_type_string) && json_object_get_string_len(f) == 0;
}

static int spec_unfilled(json_object *obj)
{
    return spec_field_unfilled(obj, "consumerClusterID") && spec_field_unfilled(obj, "csr");
}

/* Liqo's crd-replicator writes its first copy of a slice before the consumer
 * has filled spec.consumerClusterID and spec.csr. A copy with neither (and, on
 * UPDATE, whose stored object had neither: filled fields never go back) is a
 * first copy. It asks for no certificate yet. */
static int is_first_copy(const tg_review_request *req)
{
    return spec_unfilled(req->object) && (req->op != TG_OP_UPDATE || spec_unfilled(req->old_object));
}

/* spec.<field> of a and b, the same JSON (both absent counts as the same). */
static int same_spec_field(json_object *a, json_object *b, const char *field)
{
    json_object *x = tg_json_path(a, "spec", field, NULL), *y = tg_json_path(b, "spec", field, NULL);
    return (!x && !y) || (x && y && json_object_equal(x, y));
}

static const struct {
    tg_tenant_policy_verdict v;
    tg_reason r;
} policy_reasons[] = {
    {TG_TPOL_CLASS_NOT_ALLOWED, TG_CLASS_NOT_ALLOWED},
    {TG_TPOL_EXCEEDED, TG_TENANT_POLICY_EXCEEDED},
    {TG_TPOL_INVALID, TG_TENANT_POLICY_INVALID},
};

/* The consumer's own entry of the slice policy (pki/slice_tenant_policy.h)
 * against what the slice asks (spec.class, spec.resources), on CREATE and on
 * an UPDATE that changes either: a slice admitted before the policy
 * tightened stays updatable (the signer denies its Resources). maxPerTenant
 * is the signer's alone: the siblings' grants are written after admission,
 * and only the signer decides a consumer's slices one at a time. */
static int check_tenant_policy(const tg_review_request *req, const tg_lookup *lk, const char *consumer,
                               tg_verdict *v)
{
    char *entry = NULL, why[300] = "";
    tg_tenant_policy_verdict pv;
    int found;

    if (!lk->ops->slice_tenant_policy ||
        (req->op == TG_OP_UPDATE && same_spec_field(req->object, req->old_object, "class") &&
         same_spec_field(req->object, req->old_object, "resources")))
        return 0;
    if ((found = lk->ops->slice_tenant_policy(lk, consumer, &entry)) == TG_LOOKUP_ERROR)
        return tg_verdict_deny(v, TG_TENANT_POLICY_INVALID,
                               "data.%s%.*s of the slice policy ConfigMap: expected a readable entry, found none "
                               "(out of memory)", TG_TENANT_POLICY_KEY_PREFIX, TG_SHOWN, consumer);
    pv = found == TG_LOOKUP_FOUND
             ? tg_tenant_policy_check(entry, tg_json_path_string(req->object, "spec", "class", NULL),
                                      tg_json_path(req->object, "spec", "resources", NULL), NULL, why, sizeof(why))
             : TG_TPOL_ALLOWED;
    free(entry);
    for (size_t i = 0; i < sizeof(policy_reasons) / sizeof(policy_reasons[0]); i++)
        if (policy_reasons[i].v == pv)
            return tg_verdict_deny(v, policy_reasons[i].r, "consumer %.*s (data.%s%.*s of the slice policy "
                                   "ConfigMap): %s", TG_SHOWN, consumer, TG_TENANT_POLICY_KEY_PREFIX, TG_SHOWN,
                                   consumer, why);
    return 0;
}

/* A first copy is admitted from the consumer itself: its ControlPlane user
 * (name = its cluster id, group liqo.io) is what says whose copy it is, in
 * place of spec.consumerClusterID, and every other rule holds for that id. The
 * CSR is judged when it arrives. */
static int check_first_copy(const tg_review_request *req, const tg_lookup *lk, const char *ns, const char *name,
                            tg_verdict *v)
{
    const char *user = req->user_name;
    tg_lookup_tenant t;

    if (!tg_review_user_in_group(req, TG_GROUP_CONTROL_PLANE) || !tg_cluster_id_valid(user))
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                               "expected spec.consumerClusterID and spec.csr (only a consumer's control plane user, "
                               "group %s, may write a copy before they are filled), found neither, written by "
                               "user \"%.*s\"",
                               TG_GROUP_CONTROL_PLANE, TG_SHOWN, user);
    if (tg_slice_quantities_check(tg_json_path(req->object, "spec", "resources", NULL), v) != 0 ||
        check_labels(req->object, user, "the requesting user", v) != 0 ||
        tg_placement_tenant_namespace(lk, ns, v) != 0 ||
        tg_placement_owner(lk, ns, user, "the requesting user", v) != 0 ||
        find_live_tenant(lk, ns, user, &t, v) != 0)
        return -1;
    tg_lookup_tenant_clear(&t);
    if (check_user_name(lk, name, user, v) != 0)
        return -1;
    return check_tenant_policy(req, lk, user, v);
}

/* The beyond-Liqo check of a replicated slice. */
static int check_replicated(const tg_review_request *req, const tg_lookup *lk, const char *ns, const char *name,
                            tg_verdict *v)
{
    const char *consumer = tg_json_path_string(req->object, "spec", "consumerClusterID", NULL);
    tg_bytes csr = {0};
    int rc = -1;

    if (is_first_copy(req))
        return check_first_copy(req, lk, ns, name, v);
    if (!consumer || !consumer[0])
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                               "expected spec.consumerClusterID (filled by the consumer before replication), found none");
    if (!tg_cluster_id_valid(consumer))
        return tg_verdict_deny(v, TG_INVALID_CLUSTER_ID,
                               "spec.consumerClusterID: expected at most 63 characters of [a-z0-9-], starting and "
                               "ending alphanumeric, found \"%.*s\"",
                               TG_SHOWN, consumer);
    if (decode_csr(req->object, &csr, v) != 0 ||
        tg_slice_quantities_check(tg_json_path(req->object, "spec", "resources", NULL), v) != 0 ||
        check_labels(req->object, consumer, "spec.consumerClusterID", v) != 0)
        goto out;
    if (tg_placement_tenant_namespace(lk, ns, v) != 0 ||
        tg_placement_owner(lk, ns, consumer, "spec.consumerClusterID", v) != 0)
        goto out;
    if (check_against_tenant(lk, ns, name, consumer, &csr, v) != 0 || check_user_name(lk, name, consumer, v) != 0 ||
        check_user_claim(lk, name, consumer, v) != 0 || check_tenant_policy(req, lk, consumer, v) != 0)
        goto out;
    rc = 0;
out:
    free(csr.data);
    return rc;
}

/* The slice says it is this cluster's own local one: replication=true and
 * its consumer (spec.consumerClusterID or label liqo.io/originID) is self;
 * with self unknown, replication=true alone. Exact comparisons, as the
 * signer's (signer/scope_rule.c): what it would not take for its own is no
 * claim. */
static int claims_local(json_object *obj, const char *self)
{
    const char *replication = meta_value(obj, "labels", TG_LABEL_REPLICATION);
    const char *consumer = obj ? tg_json_path_string(obj, "spec", "consumerClusterID", NULL) : NULL;
    const char *origin = meta_value(obj, "labels", TG_LABEL_ORIGIN_ID);

    if (!replication || strcmp(replication, "true") != 0)
        return 0;
    if (!self)
        return 1;
    return (consumer && strcmp(consumer, self) == 0) || (origin && strcmp(origin, self) == 0);
}

static int in_tenant_namespace(const tg_lookup *lk, const char *ns)
{
    char value[TG_LABEL_VALUE_MAX];
    int ns_exists = 0;

    return lk->ops->namespace_label(lk, ns, TG_LABEL_TENANT_NAMESPACE, value, &ns_exists) == TG_LOOKUP_FOUND &&
           ns_exists && strcmp(value, "true") == 0;
}

/* Two-way peering: in a tenant namespace, this cluster's own local slice and
 * a consumer's request look alike but for the consumer they name. Only a
 * trusted writer makes one; an UPDATE of a slice that already claimed it
 * (admitted when made) is not a new claim. */
static int check_local_claim(const tg_review_request *req, const tg_lookup *lk, const tg_slice_opts *opts,
                             const char *ns, tg_verdict *v)
{
    const char *self = opts ? opts->cluster_id : NULL;

    if (!claims_local(req->object, self) || (req->op == TG_OP_UPDATE && claims_local(req->old_object, self)) ||
        !in_tenant_namespace(lk, ns) || tg_local_writers_match(opts ? opts->local_writers : NULL, req))
        return 0;
    if (!self)
        return tg_verdict_deny(v, TG_SLICE_CLAIMS_LOCAL_CLUSTER,
                               "this cluster's id is unknown (--cluster-id), so a slice labelled %s=true in tenant "
                               "namespace %.*s may be its own local slice: expected a trusted local-slice writer "
                               "(--local-slice-writers), found user \"%.*s\"",
                               TG_LABEL_REPLICATION, TG_SHOWN, ns, TG_SHOWN, req->user_name);
    return tg_verdict_deny(v, TG_SLICE_CLAIMS_LOCAL_CLUSTER,
                           "a slice labelled %s=true whose consumer (spec.consumerClusterID or label %s) is this "
                           "cluster, %.*s, is this cluster's own local slice: expected a trusted local-slice writer "
                           "(--local-slice-writers), found user \"%.*s\"",
                           TG_LABEL_REPLICATION, TG_LABEL_ORIGIN_ID, TG_SHOWN, self, TG_SHOWN, req->user_name);
}

/* The default class turned off on this provider: refused when a replicated
 * slice enters it (CREATE, or an UPDATE from another class). */
static int check_class(const tg_review_request *req, const tg_slice_opts *opts, tg_verdict *v)
{
    const char *class_ = tg_json_path_string(req->object, "spec", "class", NULL);

    if (!opts || !opts->default_class_disabled ||
        (req->op == TG_OP_UPDATE && req->old_object &&
         tg_slice_class_is_default(tg_json_path_string(req->old_object, "spec", "class", NULL))))
        return 0;
    return tg_slice_class_check(class_, 0, v);
}

static int needs_cache(const tg_lookup *lk)
{
    return !lk->ops->synced(lk) || !lk->ops->tenant_for_cluster || !lk->ops->local_slice_name_exists ||
           !lk->ops->tenant_cluster_id_exists;
}

void tg_decide_validate_slice(const tg_review_request *req, const tg_lookup *lk, const tg_slice_opts *opts,
                              tg_decision *d)
{
    const char *name, *ns, *replicated;

    tg_decision_init(d);
    if (!intercepted(req)) {
        d->reason = tg_reason_name(TG_NOT_INTERCEPTED);
        return;
    }
    d->intercepted = 1;
    if (!req->object || !json_object_is_type(tg_json_path(req->object, "metadata", NULL), json_type_object)) {
        tg_verdict_deny(&d->verdict, TG_MALFORMED_RESOURCE_SLICE,
                        "request.object: expected a ResourceSlice with metadata, found none");
        goto out;
    }
    if (req->op == TG_OP_UPDATE && tg_json_path_string(req->object, "metadata", "deletionTimestamp", NULL))
        goto out;
    replicated = meta_value(req->object, "labels", TG_LABEL_REPLICATED);
    if (check_control_plane_change(req, &d->verdict) != 0 ||
        check_control_plane_replicated(req, replicated, &d->verdict) != 0)
        goto out;

    name = req->name[0] ? req->name : tg_json_path_string(req->object, "metadata", "name", NULL);
    ns = req->namespace_[0] ? req->namespace_ : tg_json_path_string(req->object, "metadata", "namespace", NULL);
    if (needs_cache(lk)) {
        tg_decide_error(d, TG_CACHE_NOT_SYNCED, "cache not synced, retry later");
        d->intercepted = 1;
        return;
    }
    if (check_local_claim(req, lk, opts, ns ? ns : "", &d->verdict) != 0)
        goto out;
    if (replicated && strcmp(replicated, "true") == 0 && check_class(req, opts, &d->verdict) != 0)
        goto out;
    if (replicated && strcmp(replicated, "true") == 0)
        check_replicated(req, lk, ns ? ns : "", name ? name : "", &d->verdict);
    else if (tg_slice_quantities_check(tg_json_path(req->object, "spec", "resources", NULL), &d->verdict) == 0)
        check_local_name(req, lk, name ? name : "", &d->verdict);
out:
    tg_decision_finish(d);
}
