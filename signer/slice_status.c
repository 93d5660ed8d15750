/* slice_status.c - the slice's Authentication and Resources conditions
 * (Liqo's wording) and the /status PATCH (slice_status.h). */
#include "signer/slice_status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"

/* ---------- status ---------- */

/* A condition turned Denied (or its message changed). */
void rs_count_verdict(tg_signer *s, const char *condition, const char *status, const char *reason)
{
    if (s->m_slice_verdicts)
        tg_counter_add(tg_metric_series_get(s->m_slice_verdicts, (const char *[]){condition, status, reason}), 1);
}

/* The condition of type in the slice's status, or NULL. */
json_object *rs_condition_of(json_object *slice, const char *type)
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

int rs_same_text(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Liqo's condition shape; lastTransitionTime kept while nothing changes. */
json_object *rs_make_condition(json_object *old, const char *type, const char *status, const char *reason,
                               const char *message)
{
    json_object *c = json_object_new_object();
    const char *old_ts = old ? tg_json_string(old, "lastTransitionTime") : NULL;
    char now[32];

    rc_rfc3339(time(NULL), now, sizeof(now));
    if (!old || !old_ts || !rs_same_text(tg_json_string(old, "status"), status) ||
        !rs_same_text(tg_json_string(old, "reason"), reason) || !rs_same_text(tg_json_string(old, "message"), message))
        old_ts = now;
    json_object_object_add(c, "type", rc_jstr(type));
    json_object_object_add(c, "status", rc_jstr(status));
    json_object_object_add(c, "lastTransitionTime", rc_jstr(old_ts));
    json_object_object_add(c, "reason", rc_jstr(reason));
    json_object_object_add(c, "message", rc_jstr(message));
    return c;
}

/* status.conditions with auth and res (either NULL: kept as it is). */
json_object *rs_conditions_with(json_object *slice, json_object *auth, json_object *res)
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

/* PATCH /status unless it would change nothing: 1 written (*after, if not
 * NULL, the slice as the answer shows it, or NULL), 0 nothing to write, -1
 * with c->err. */
int rs_patch_status(slice_ctx *c, json_object *st, json_object **after)
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

/* A copy of a parsed flag's list, or [] when it was not given. */
static json_object *list_or_empty(json_object *list)
{
    json_object *copy = NULL;

    if (list && json_object_deep_copy(list, &copy, NULL) == 0)
        return copy;
    return json_object_new_array();
}

int rs_offered_classes(slice_ctx *c, json_object *st, int accepted)
{
    const tg_slice_offer *o = &c->s->slice_offer;
    json_object *list = NULL, *storage;

    if (!accepted) {
        /* a denied slice is offered nothing */
        json_object_object_add(st, "storageClasses", json_object_new_array());
        json_object_object_add(st, "ingressClasses", json_object_new_array());
        json_object_object_add(st, "loadBalancerClasses", json_object_new_array());
        return 0;
    }
    if (o->enable_storage) {
        /* Liqo lists every StorageClass of the provider (cluster-scoped, RBAC list) */
        if (tg_api_get(c->api, "/apis/storage.k8s.io/v1/storageclasses", &list, c->err, sizeof(c->err)) != 200) {
            json_object_put(list);
            return -1;
        }
        storage = tg_slice_storage_classes(list, o->real_storage_class);
        json_object_put(list);
    } else {
        storage = json_object_new_array();
    }
    json_object_object_add(st, "storageClasses", storage);
    json_object_object_add(st, "ingressClasses", list_or_empty(o->ingress_classes));
    json_object_object_add(st, "loadBalancerClasses", list_or_empty(o->load_balancer_classes));
    return 0;
}
