/* tenant_finalizer.c - the Tenant's finalizer (tenant_finalizer.h): put on
 * while it is peered, taken off once its deletion is done. */
#include "signer/tenant_finalizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/nonce.h"
#include "signer/reconcile_common.h"
#include "signer/tenant_rbac.h"
#include "signer/unpeer_plan.h"

long tg_tenant_set_finalizer(tg_api *api, json_object *tenant, const char *ns, const char *name, int add,
                             json_object **out, char *err, size_t err_len)
{
    json_object *old = tg_json_path(tenant, "metadata", "finalizers", NULL);
    json_object *list = json_object_new_array(), *patch = json_object_new_object(), *meta = json_object_new_object();
    char path[1024];
    size_t i;
    long r;

    for (i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
        json_object *f = json_object_array_get_idx(old, i);
        if (json_object_is_type(f, json_type_string) && strcmp(json_object_get_string(f), TG_TENANT_FINALIZER) != 0 &&
            strcmp(json_object_get_string(f), TG_TENANT_FINALIZER_LEGACY) != 0)
            json_object_array_add(list, json_object_get(f));
    }
    if (add)
        json_object_array_add(list, rc_jstr(TG_TENANT_FINALIZER));
    json_object_object_add(meta, "finalizers", list);
    json_object_object_add(meta, "resourceVersion", rc_jstr(tg_json_path_string(tenant, "metadata", "resourceVersion", NULL)));
    json_object_object_add(patch, "metadata", meta);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", ns, name);
    r = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, out, err, err_len);
    json_object_put(patch);
    return r;
}

static int has_finalizer(json_object *tenant, const char *name)
{
    json_object *f = tg_json_path(tenant, "metadata", "finalizers", NULL);
    size_t i;

    for (i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
        json_object *e = json_object_array_get_idx(f, i);
        if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), name) == 0)
            return 1;
    }
    return 0;
}

/* Ours to release: Liqo's name, or the one earlier tenantgate versions used. */
static int holds_tenant(json_object *tenant)
{
    return has_finalizer(tenant, TG_TENANT_FINALIZER) || has_finalizer(tenant, TG_TENANT_FINALIZER_LEGACY);
}

int tg_tenant_needs_finalizer(json_object *tenant)
{
    return !has_finalizer(tenant, TG_TENANT_FINALIZER) || has_finalizer(tenant, TG_TENANT_FINALIZER_LEGACY);
}

typedef struct replica_look {
    const char *cid;
    time_t deleted_at;      /* the Tenant's deletion */
    size_t n;
} replica_look;

static void on_replica(json_object *o, void *data)
{
    replica_look *l = data;
    const char *origin = tg_json_path_string(o, "metadata", "labels", "liqo.io/originID", NULL);
    time_t made = rc_parse_rfc3339(tg_json_path_string(o, "metadata", "creationTimestamp", NULL));

    /* One made after the Tenant's deletion is the next peering's (the
     * consumer authenticated again at once, its new Identity's Renew came
     * here): it does not hold the old Tenant, whose end the next peering's
     * Tenant waits for. */
    if (origin && strcmp(origin, l->cid) == 0 && !(made > 0 && l->deleted_at > 0 && made > l->deleted_at))
        l->n++;
}

/* The consumer's Renews replicated into ns before deleted_at, from the
 * remoterenew informer (without it, none known: nothing to wait for).
 * Slices need no wait: `liqoctl unauthenticate` refuses while the consumer
 * has any, and Liqo's consumer drops its slice only after its replicator
 * deleted the copy here. */
static size_t consumer_replicas(tg_signer *s, const char *ns, const char *cid, time_t deleted_at)
{
    replica_look l = {.cid = cid, .deleted_at = deleted_at};

    if (s->renew_cache)
        tg_cache_get_by_namespace(s->renew_cache, ns, on_replica, &l);
    return l.n;
}

long tg_tenant_finalize(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *name,
                        const char *cid, int64_t *wait_ms, char *err, size_t err_len)
{
    json_object *sec = NULL;
    char *old = NULL, nonce[TG_NONCE_TEXT_LEN + 1];
    time_t deleted_at;
    long r;

    if (!holds_tenant(tenant))
        return 200;
    deleted_at = rc_parse_rfc3339(tg_json_path_string(tenant, "metadata", "deletionTimestamp", NULL));
    *wait_ms = tg_unpeer_wait_ms(deleted_at, time(NULL), consumer_replicas(s, ns, cid, deleted_at));
    if (*wait_ms > 0)
        return 202;
    if ((r = tg_tenant_bind(s, api, ns, cid, tenant, 0, err, err_len)) >= 300 || r < 0)
        return r;
    /* Liqo's consumer keeps its signed nonce across peerings and refuses
     * another nonce later (liqoctl: "nonce secret already exists with a
     * different nonce"): rotate only when asked to. */
    if (s->rotate_nonce_on_unpeer)
        old = rc_read_nonce(api, ns, &sec);
    if (sec) {
        if (tg_nonce_generate(nonce) != 0) {
            rc_free_secret(old, old ? strlen(old) : 0);
            json_object_put(sec);
            return -1;
        }
        r = rc_patch_secret_data(api, ns, TG_NONCE_SECRET, "nonce", nonce, TG_NONCE_TEXT_LEN,
                                 tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, err_len);
        OPENSSL_cleanse(nonce, sizeof(nonce));
        rc_free_secret(old, old ? strlen(old) : 0);
        json_object_put(sec);
        if (r != 200)
            return r;
        tg_log(TG_LOG_INFO, "nonce rotated", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name));
    }
    r = tg_tenant_set_finalizer(api, tenant, ns, name, 0, NULL, err, err_len);
    if (r == 200)
        tg_log(TG_LOG_INFO, "tenant finalized", TG_LOG_STR("namespace", ns), TG_LOG_STR("tenant", name));
    return r == 404 ? 200 : r;
}
