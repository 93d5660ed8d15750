/* slice_liqo_quota.c - Liqo's offloading Quota for a slice's user
 * (slice_liqo_quota.h): the spec (pure), whether the CRD is served, and the
 * GET, POST, PUT or DELETE that brings the stored Quota to it. */
#include "signer/slice_liqo_quota.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "signer/slice_certificate.h"
#include "signer/slice_status.h"
#include "signer/workqueue.h"

/* Whether the Quota CRD is served is asked again this often: Liqo may be
 * installed or removed while the signer runs. */
#define QUOTA_CRD_RECHECK_MS 60000

/* ---------- pure: the spec ---------- */

int tg_liqo_quota_enforcement_valid(const char *value)
{
    return value && (strcmp(value, "None") == 0 || strcmp(value, "Soft") == 0 || strcmp(value, "Hard") == 0);
}

/* Liqo's reading of a cordon annotation: present and not false, False or 0. */
static int annotation_set(json_object *slice, const char *key)
{
    json_object *v = tg_json_path(slice, "metadata", "annotations", key, NULL);
    const char *s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

    if (!v)
        return 0;
    return !s || !(strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "0") == 0);
}

json_object *tg_liqo_quota_spec(json_object *slice, const char *user, const char *enforcement, int tenant_cordoned)
{
    json_object *rc = rs_condition_of(slice, "Resources"), *granted, *spec, *copy = NULL;
    const char *st = rc ? tg_json_string(rc, "status") : NULL;

    if (!user || !*user || !st || strcmp(st, "Accepted") != 0)
        return NULL;
    granted = tg_json_path(slice, "status", "resources", NULL);
    if (granted && !json_object_is_type(granted, json_type_object))
        return NULL;   /* not a resource list: nothing to admit against */
    if (granted ? json_object_deep_copy(granted, &copy, NULL) != 0 : !(copy = json_object_new_object()))
        return NULL;
    spec = json_object_new_object();
    json_object_object_add(spec, "user", json_object_new_string(user));
    json_object_object_add(spec, "limitsEnforcement", json_object_new_string(
                               tg_liqo_quota_enforcement_valid(enforcement) ? enforcement : TG_QUOTA_ENFORCEMENT_DEFAULT));
    json_object_object_add(spec, "resources", copy);
    if (tenant_cordoned || annotation_set(slice, TG_ANNOTATION_CORDON) || annotation_set(slice, TG_ANNOTATION_CORDON_TENANT))
        json_object_object_add(spec, "cordoned", json_object_new_boolean(1));
    return spec;
}

/* ---------- is the CRD served ---------- */

/* s->quota_crd: (until_ms << 1) | served, read and written whole. */
static int quota_crd_served(slice_ctx *c)
{
    uint64_t now = tg_wq_now_ms(), known = __atomic_load_n(&c->s->quota_crd, __ATOMIC_RELAXED);
    json_object *list = NULL, *res;
    int served = 0;
    long r;

    if (known >> 1 > now)
        return (int)(known & 1);
    r = tg_api_get(c->api, TG_LIQO_OFFLOADING_API, &list, c->err, sizeof(c->err));
    if (r == 403)   /* discovery refused (a hardened cluster): no Quota, said once a minute */
        tg_log(TG_LOG_WARN, "liqo quota crd not discoverable", TG_LOG_STR("error", c->err));
    else if (r != 200 && r != 404) {
        json_object_put(list);
        return -1;
    }
    res = tg_json_path(list, "resources", NULL);
    for (size_t i = 0; res && json_object_is_type(res, json_type_array) && i < json_object_array_length(res); i++) {
        const char *name = tg_json_path_string(json_object_array_get_idx(res, i), "name", NULL);
        served |= name && strcmp(name, "quotas") == 0;
    }
    json_object_put(list);
    __atomic_store_n(&c->s->quota_crd, ((now + QUOTA_CRD_RECHECK_MS) << 1) | (uint64_t)served, __ATOMIC_RELAXED);
    return served;
}

/* ---------- writes ---------- */

static int tenant_cordoned(json_object *tenant)
{
    const char *cond = tenant ? tg_json_path_string(tenant, "spec", "tenantCondition", NULL) : NULL;

    return cond && (strcmp(cond, "Cordoned") == 0 || strcmp(cond, "Drained") == 0);
}

/* 1 when the stored Quota q is ours and says spec already. */
static int up_to_date(slice_ctx *c, json_object *q, json_object *spec)
{
    return rs_owned_by_slice(q, c->uid) == 1 && json_object_equal(tg_json_path(q, "spec", NULL), spec);
}

/* The stored Quota q (or a new one when NULL) with spec and our ownership. */
static json_object *quota_object(slice_ctx *c, json_object *q, json_object *spec)
{
    json_object *o = NULL, *meta;

    if (q && json_object_deep_copy(q, &o, NULL) != 0)
        return NULL;
    if (!o) {
        o = json_object_new_object();
        json_object_object_add(o, "apiVersion", rc_jstr("offloading.liqo.io/v1beta1"));
        json_object_object_add(o, "kind", rc_jstr("Quota"));
        meta = json_object_new_object();
        json_object_object_add(meta, "name", rc_jstr(c->user));
        json_object_object_add(meta, "namespace", rc_jstr(c->ns));
        json_object_object_add(o, "metadata", meta);
    }
    meta = tg_json_path(o, "metadata", NULL);
    if (!meta || !json_object_is_type(meta, json_type_object)) {
        json_object_put(o);
        return NULL;
    }
    json_object_object_add(meta, "ownerReferences", rs_slice_owner(c));
    json_object_object_add(o, "spec", json_object_get(spec));
    json_object_object_del(o, "status");
    return o;
}

/* No grant: our Quota goes; one another owner keeps (an operator's) stays. */
static int drop_quota(slice_ctx *c, const char *path, json_object *q)
{
    long r;

    if (!q || rs_owned_by_slice(q, c->uid) != 1)
        return 0;
    r = tg_api_call(c->api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, c->err, sizeof(c->err));
    return r == 200 || r == 404 ? 0 : -1;
}

/* POST a new Quota, or PUT the stored one (its resourceVersion: a
 * concurrent change answers 409 and the slice is looked at again). */
static int write_quota(slice_ctx *c, const char *path, json_object *q, json_object *spec)
{
    char coll[1024];
    json_object *o = quota_object(c, q, spec);
    long r;

    if (!o) {
        snprintf(c->err, sizeof(c->err), "Quota %s/%s: out of memory", c->ns, c->user);
        return -1;
    }
    if (q) {
        r = tg_api_call(c->api, "PUT", path, TG_KUBE_CT_JSON, o, NULL, c->err, sizeof(c->err));
    } else {
        snprintf(coll, sizeof(coll), TG_LIQO_OFFLOADING_API "/namespaces/%s/quotas", c->ns);
        r = tg_api_call(c->api, "POST", coll, TG_KUBE_CT_JSON, o, NULL, c->err, sizeof(c->err));
        if (r == 404)   /* the CRD went away since it was looked up: nothing to keep */
            __atomic_store_n(&c->s->quota_crd, (tg_wq_now_ms() + QUOTA_CRD_RECHECK_MS) << 1, __ATOMIC_RELAXED);
    }
    json_object_put(o);
    if (r == 200 || r == 201 || r == 404)
        tg_log(r == 404 ? TG_LOG_DEBUG : TG_LOG_INFO, r == 404 ? "liqo quota crd gone" : "liqo quota written",
               TG_LOG_STR("namespace", c->ns), TG_LOG_STR("quota", c->user));
    return r == 200 || r == 201 || r == 404 ? 0 : -1;
}

int rs_ensure_liqo_quota(slice_ctx *c, json_object *slice_now, int present)
{
    char path[1024];
    json_object *spec = NULL, *q = NULL;
    int served = quota_crd_served(c), ret;
    long r;

    if (served <= 0)
        return served;
    snprintf(path, sizeof(path), TG_LIQO_OFFLOADING_API "/namespaces/%s/quotas/%s", c->ns, c->user);
    if ((r = tg_api_get(c->api, path, &q, c->err, sizeof(c->err))) != 200 && r != 404) {
        json_object_put(q);
        return -1;
    }
    if (present)
        spec = tg_liqo_quota_spec(slice_now, c->user, c->s->quota_limits_enforcement, tenant_cordoned(c->tenant));
    if (!spec)
        ret = drop_quota(c, path, q);
    else
        ret = up_to_date(c, q, spec) ? 0 : write_quota(c, path, q, spec);
    json_object_put(spec);
    json_object_put(q);
    return ret;
}
