/* replica_plan.c - see replica_plan.h. */
#include "signer/replica_plan.h"

#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"

const tg_repl_kind tg_repl_kinds[TG_REPL_KINDS] = {
    {"replrs", "/apis/authentication.liqo.io/v1beta1", "resourceslices", "ResourceSlice",
     "authentication.liqo.io/v1beta1", 1},
    {"replrn", "/apis/authentication.liqo.io/v1beta1", "renews", "Renew", "authentication.liqo.io/v1beta1", 0},
    {"replnm", "/apis/offloading.liqo.io/v1beta1", "namespacemaps", "NamespaceMap", "offloading.liqo.io/v1beta1", 0},
};

const tg_repl_kind *tg_repl_kind_of(const char *code)
{
    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (strcmp(tg_repl_kinds[i].code, code) == 0)
            return &tg_repl_kinds[i];
    return NULL;
}

int tg_repl_ready(const tg_repl_kind *k, json_object *obj)
{
    const char *c = tg_json_path_string(obj, "spec", "consumerClusterID", NULL);
    const char *csr = tg_json_path_string(obj, "spec", "csr", NULL);

    return !k->needs_request || (c && *c && csr && *csr);
}

json_object *tg_repl_remote_labels(json_object *local_labels, const char *local_id)
{
    json_object *out = json_object_new_object();

    if (!out)
        return NULL;
    if (local_labels && json_object_is_type(local_labels, json_type_object)) {
        json_object_object_foreach(local_labels, k, v) {
            if (strcmp(k, TG_LABEL_OWNERSHIP) == 0)
                continue;
            json_object_object_add(out, k, json_object_get(v));
        }
    }
    json_object_object_add(out, TG_LABEL_REPLICATION, json_object_new_string("false"));
    json_object_object_add(out, TG_LABEL_REPLICATED, json_object_new_string("true"));
    json_object_object_add(out, TG_LABEL_ORIGIN_ID, json_object_new_string(local_id));
    json_object_object_add(out, TG_LABEL_REMOTE_CLUSTER_ID, json_object_new_string(local_id));
    return out;
}

int tg_repl_differ(json_object *a, json_object *b)
{
    /* json_object_equal compares numbers, strings and members by value,
     * regardless of member order; NULL is JSON null. */
    return !json_object_equal(a, b);
}

static int label_is(json_object *obj, const char *key, const char *want)
{
    const char *v = tg_json_path_string(obj, "metadata", "labels", key, NULL);

    return v && want && strcmp(v, want) == 0;
}

int tg_repl_is_local(json_object *obj, const char *remote)
{
    const char *rid = tg_json_path_string(obj, "metadata", "labels", TG_LABEL_REMOTE_ID, NULL);

    return label_is(obj, TG_LABEL_REPLICATION, "true") && rid && *rid && (!remote || strcmp(rid, remote) == 0);
}

int tg_repl_is_our_copy(json_object *obj, const char *local_id, const char *remote)
{
    return label_is(obj, TG_LABEL_REPLICATED, "true") && label_is(obj, TG_LABEL_ORIGIN_ID, local_id) &&
           label_is(obj, TG_LABEL_REMOTE_ID, remote);
}

int tg_repl_has_finalizer(json_object *obj, const char *name)
{
    json_object *f = tg_json_path(obj, "metadata", "finalizers", NULL);
    size_t i, n = f && json_object_is_type(f, json_type_array) ? json_object_array_length(f) : 0;

    for (i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(f, i);
        if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), name) == 0)
            return 1;
    }
    return 0;
}

json_object *tg_repl_finalizers_with(json_object *obj, const char *name, int add)
{
    json_object *f = tg_json_path(obj, "metadata", "finalizers", NULL), *out = json_object_new_array();
    size_t i, n = f && json_object_is_type(f, json_type_array) ? json_object_array_length(f) : 0;
    int have = 0;

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(f, i);
        int same = json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), name) == 0;
        if (same && (!add || have))
            continue;           /* removed, or a duplicate */
        have |= same;
        json_object_array_add(out, json_object_get(e));
    }
    if (add && !have)
        json_object_array_add(out, json_object_new_string(name));
    return out;
}

unsigned tg_repl_plan(const tg_repl_state *st)
{
    unsigned steps = 0;

    if (st->remote && !st->remote_ours)
        return TG_REPL_CONFLICT;
    /* Gone or going: the copy goes first, then the finalizer (Liqo's order),
     * so a slice's rights on the provider never outlive the local object. */
    if (!st->local || st->deleting) {
        if (st->remote && !st->remote_deleting)
            return TG_REPL_DELETE_REMOTE | TG_REPL_WAIT_GONE;
        if (st->remote)
            return TG_REPL_WAIT_GONE;
        return st->local && st->finalizer ? TG_REPL_REMOVE_FINALIZER : 0;
    }
    if (!st->remote && !st->ready)
        return 0;               /* nothing to send yet, nothing to hold back */
    /* The finalizer is on before any copy exists: a copy never outlives
     * an object deleted while this process was down. */
    if (!st->finalizer)
        steps |= TG_REPL_ADD_FINALIZER;
    if (!st->remote)
        return steps | TG_REPL_CREATE;
    if (st->remote_deleting)
        return steps | TG_REPL_WAIT_GONE;   /* recreated once it is gone */
    if (st->spec_differs && st->ready)
        steps |= TG_REPL_UPDATE_SPEC;
    if (st->status_differs)
        steps |= TG_REPL_PULL_STATUS;
    return steps;
}
