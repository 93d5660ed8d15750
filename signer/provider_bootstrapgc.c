/* provider_bootstrapgc.c - the provider's bootstrapgc controller: removes a
 * tenant namespace tenantgate-auth's /v1/nonce made (bootstrap_ns.h) once
 * nothing keeps it: no Tenant in it and its bootstrap token deleted, spent
 * or expired, for --bootstrap-grace. So a token holder cannot leave
 * namespaces behind, and a refused or abandoned peering cleans up after
 * itself. It deletes nothing else: the namespace must carry the token label
 * and the tenant labels and be named liqo-tenant-<its id>, and the DELETE
 * carries the uid and resourceVersion it judged. */
#include "signer/reconcile_common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/json.h"
#include "signer/bootstrap_ns.h"

/* When a pass first found a namespace unkept ("name/uid" -> ms): the grace
 * runs from there. In memory only: a restart starts the grace again, which
 * errs on keeping. */
static pthread_mutex_t unkept_mu = PTHREAD_MUTEX_INITIALIZER;
static json_object *unkept;

static const char *or_empty(const char *v) { return v ? v : ""; }

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The recorded time for key; with note, record now when there is none. */
static long long unkept_since(const char *key, int note, long long now)
{
    json_object *v = NULL;
    long long since = 0;

    pthread_mutex_lock(&unkept_mu);
    if (!unkept)
        unkept = json_object_new_object();
    if (json_object_object_get_ex(unkept, key, &v))
        since = json_object_get_int64(v);
    else if (note)
        json_object_object_add(unkept, key, json_object_new_int64(now));
    pthread_mutex_unlock(&unkept_mu);
    return since;
}

static void forget(const char *key)
{
    pthread_mutex_lock(&unkept_mu);
    if (unkept)
        json_object_object_del(unkept, key);
    pthread_mutex_unlock(&unkept_mu);
}

/* 1 when a Tenant is in ns, 0 none, -1 on a failed read (err). */
static int has_tenant(tg_api *api, const char *ns, char *err, size_t err_len)
{
    char path[320];
    json_object *list = NULL, *items;
    long st;
    int n;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants", ns);
    if ((st = tg_api_get(api, path, &list, err, err_len)) == 404)
        return 0;                  /* no Tenant CRD: none */
    if (st != 200)
        return -1;
    n = json_object_object_get_ex(list, "items", &items) ? (int)json_object_array_length(items) : 0;
    json_object_put(list);
    return n > 0;
}

/* The token's expiration (tg_bootstrap_token_expiration), or -2 on a failed read. */
static long long token_expiration(tg_signer *s, tg_api *api, const char *token_id, char *err, size_t err_len)
{
    char path[320];
    json_object *sec = NULL;
    long long exp;
    long st;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/tenantgate-token-%s", s->token_ns, token_id);
    if ((st = tg_api_get(api, path, &sec, err, err_len)) == 404)
        return -1;
    if (st != 200)
        return -2;
    exp = tg_bootstrap_token_expiration(sec, token_id);
    json_object_put(sec);
    return exp;
}

static long delete_namespace(tg_api *api, json_object *nsobj, const char *ns, const char *token_id)
{
    json_object *opts = json_object_new_object(), *pre = json_object_new_object();
    char path[320], err[256];
    long st;

    json_object_object_add(pre, "uid", json_object_new_string(or_empty(tg_json_path_string(nsobj, "metadata", "uid", NULL))));
    json_object_object_add(pre, "resourceVersion",
                           json_object_new_string(or_empty(tg_json_path_string(nsobj, "metadata", "resourceVersion", NULL))));
    json_object_object_add(opts, "preconditions", pre);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    st = tg_api_call(api, "DELETE", path, TG_KUBE_CT_JSON, opts, NULL, err, sizeof(err));
    json_object_put(opts);
    if (st == 200 || st == 202 || st == 404) {
        tg_log(TG_LOG_INFO, "tenant namespace of an unused bootstrap token removed", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("token_id", token_id));
        return TG_RECONCILE_OK;
    }
    if (st == 409)                 /* it changed since it was judged: judge again */
        return 1000;
    tg_log(TG_LOG_WARN, "cannot remove the tenant namespace", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
    return TG_RECONCILE_RETRY;
}

long tg_reconcile_bootstrapgc(tg_signer *s, tg_api *api, const char *ns)
{
    json_object *nsobj = NULL;
    const char *cid, *tid;
    char err[256], key[320];
    tg_bgc_facts f = {.now_ms = now_ms(), .grace_ms = s->bootstrap_grace_s * 1000};
    long long recheck;
    long st, rc = TG_RECONCILE_OK;
    int tenant;

    if ((st = rc_get_namespace(api, ns, &nsobj, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        return TG_RECONCILE_RETRY;
    snprintf(key, sizeof(key), "%s/%s", ns, or_empty(tg_json_path_string(nsobj, "metadata", "uid", NULL)));
    if (!tg_bootstrap_ns_of(nsobj, &cid, &tid)) {
        forget(key);
        goto out;                  /* not one /v1/nonce made, or going already */
    }
    if ((tenant = has_tenant(api, ns, err, sizeof(err))) < 0 ||
        (f.token_expires_s = token_expiration(s, api, tid, err, sizeof(err))) == -2) {
        tg_log(TG_LOG_WARN, "bootstrapgc read failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
        rc = TG_RECONCILE_RETRY;
        goto out;
    }
    f.tenant = tenant;
    f.unkept_since_ms = unkept_since(key, 0, f.now_ms);
    switch (tg_bgc_decide(&f, &recheck)) {
    case TG_BGC_KEEP:
        forget(key);
        rc = recheck > 0 ? (long)recheck : TG_RECONCILE_OK;
        break;
    case TG_BGC_WAIT:
        (void)unkept_since(key, 1, f.now_ms);
        rc = (long)recheck;
        break;
    case TG_BGC_DELETE:
        if ((rc = delete_namespace(api, nsobj, ns, tid)) == TG_RECONCILE_OK)
            forget(key);
        break;
    }
out:
    json_object_put(nsobj);
    return rc;
}

/* ---------- descriptor ---------- */

static void map_namespace(const tg_event *ev, tg_key_sink *sink)
{
    const char *cid, *tid, *name = tg_json_path_string(ev->obj, "metadata", "name", NULL);

    if (!ev->deleted && tg_bootstrap_ns_of(ev->obj, &cid, &tid))
        tg_key_emit(sink, "bootstrapgc", name, name);
}

/* A Tenant gone (refused ones never come) may leave its namespace unkept. */
static void map_tenant(const tg_event *ev, tg_key_sink *sink)
{
    const char *ns = tg_json_path_string(ev->obj, "metadata", "namespace", NULL);

    if (ev->deleted)
        tg_key_emit(sink, "bootstrapgc", ns, ns);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    (void)name;
    return tg_reconcile_bootstrapgc(s, api, ns);
}

const tg_controller_desc tg_ctl_bootstrapgc = {
    .name = "bootstrapgc", .key_prefix = "bootstrapgc", .bit = TG_CTL_BOOTSTRAPGC, .side = "provider",
    .scope = {.where = TG_WHERE_TENANT_NS, .name = NULL, .peer = TG_PEER_ANY,
              .acts_on = "Namespace liqo-tenant-<id> labelled as the tenant namespace of <id> and with "
                         "tenantgate.io/bootstrap-token-id (made by tenantgate-auth's /v1/nonce)",
              .writes = "deletes that Namespace once no Tenant and no live bootstrap token kept it for "
                        "--bootstrap-grace"},
    .subs = {{TG_INF_NAMESPACES, 0, map_namespace}, {TG_INF_TENANTS, 0, map_tenant}}, .nsubs = 2,
    .reconcile = reconcile_key,
};
