/* provider_renew.c - the provider's answer to Renews (Liqo v1.2's remote
 * renewer; PROTOCOL.md 6).
 *
 * The Tenant controller renews a consumer's ControlPlane certificate on its
 * own (at two thirds of its lifetime) and writes it into the Tenant's status.
 * A consumer learns of it through the Renew it keeps, replicated into its
 * tenant namespace here (labels liqo.io/replicated=true, liqo.io/originID):
 * this controller copies the Tenant's status.authParams into the Renew's
 * status whenever the certificates differ. Renews of other identity types,
 * of another consumer than the namespace's, or being deleted are left alone. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/renewal.h"

/* The Tenant of consumer cid in ns: by name first (Tenants are named after
 * their consumer), *out the Tenant or NULL. The HTTP status. */
static long get_tenant(tg_api *api, const char *ns, const char *cid, json_object **out, char *err, size_t err_len)
{
    char path[768];

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/tenants/%s", ns, cid);
    return tg_api_get(api, path, out, err, err_len);
}

/* The provider's side of "renewal you can watch" (issue 48 #3): the Tenant
 * controller renews on its own, so a certificate past its renewal time plus
 * the grace means renewal is stuck here (CSR not approved or not signed, the
 * signer down for a while): logged while it lasts. Returns the milliseconds
 * until the certificate becomes overdue (0: it is, or cannot be read). */
static long check_overdue(tg_signer *s, const char *ns, const char *cid, const char *crt_b64)
{
    char err[128], until[32];
    unsigned char *pem;
    size_t len = 0;
    time_t nb, na, at, now = time(NULL);
    long ms = 0;

    if (!(pem = tg_base64_decode(crt_b64, strlen(crt_b64), &len, err, sizeof(err))))
        return 0;
    if (tg_cert_validity(pem, len, &nb, &na) == 0) {
        at = tg_renewal_overdue_at(nb, na, s->renewal_grace_pct);
        rc_rfc3339(na, until, sizeof(until));
        if (now > at)
            tg_log(TG_LOG_WARN, "tenant certificate renewal overdue: no renewed certificate for the consumer",
                   TG_LOG_STR("namespace", ns), TG_LOG_STR("cluster_id", cid), TG_LOG_STR("not_after", until));
        else
            ms = (long)(at - now + 1) * 1000;
    }
    free(pem);
    return ms;
}

static void on_cached(json_object *obj, void *data)
{
    (void)obj;
    (void)data;
}

long tg_reconcile_remote_renew(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[768], err[512] = "";
    json_object *renew = NULL, *tenant = NULL, *patch, *status;
    const char *cid, *type, *origin, *have, *crt;
    long st, ret = TG_RECONCILE_RETRY, look_again;

    /* Woken by a Tenant event: most consumers keep no Renew; the informer
     * knows without a GET. */
    if (s->renew_cache && !tg_cache_get(s->renew_cache, ns, name, on_cached, NULL))
        return TG_RECONCILE_OK;
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/renews/%s", ns, name);
    if ((st = tg_api_get(api, path, &renew, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto out;
    ret = TG_RECONCILE_OK;
    cid = tg_json_path_string(renew, "spec", "consumerClusterID", NULL);
    type = tg_json_path_string(renew, "spec", "identityType", NULL);
    origin = tg_json_path_string(renew, "metadata", "labels", "liqo.io/originID", NULL);
    if (!cid || !type || strcmp(type, "ControlPlane") != 0 || !origin || strcmp(origin, cid) != 0 ||
        tg_json_path(renew, "metadata", "deletionTimestamp", NULL))
        goto out;
    if ((st = get_tenant(api, ns, cid, &tenant, err, sizeof(err))) == 404) {
        /* Not this consumer's tenant namespace, or no Tenant (yet): the Tenant's events wake us. */
        tg_api_event(api, renew, "Warning", "TenantNotFound", "no Tenant of spec.consumerClusterID in this namespace");
        goto out;
    }
    if (st != 200) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    crt = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    have = tg_json_path_string(renew, "status", "authParams", "signedCRT", NULL);
    if (crt && *crt && (look_again = check_overdue(s, ns, cid, crt)) > 0)
        ret = look_again;
    if (!crt || !*crt || (have && strcmp(have, crt) == 0))
        goto out;
    patch = json_object_new_object();
    status = json_object_new_object();
    json_object_object_add(status, "authParams", json_object_get(tg_json_path(tenant, "status", "authParams", NULL)));
    json_object_object_add(patch, "status", status);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/renews/%s/status", ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, sizeof(err));
    json_object_put(patch);
    if (st != 200) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    tg_log(TG_LOG_INFO, "renew answered with the Tenant's certificate", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("renew", name), TG_LOG_STR("cluster_id", cid));
out:
    if (ret < 0)
        tg_log(TG_LOG_WARN, "remote renew reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("renew", name),
               TG_LOG_STR("error", err));
    json_object_put(tenant);
    json_object_put(renew);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_renew(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "remoterenew", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

/* A Tenant's new certificate answers its consumer's Renew, named after the
 * ControlPlane Identity: controlplane-<this cluster>. */
static void map_tenant_to_renew(const tg_event *ev, tg_key_sink *sink)
{
    char name[256];

    snprintf(name, sizeof(name), "controlplane-%s", ev->s->cluster_id);
    tg_key_emit(sink, "remoterenew", tg_json_path_string(ev->obj, "metadata", "namespace", NULL), name);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_remote_renew(s, api, ns, name);
}

const tg_controller_desc tg_ctl_remote_renew = {
    .name = "remoterenew", .key_prefix = "remoterenew", .bit = TG_CTL_REMOTE_RENEW, .side = "provider",
    .scope = {.where = TG_WHERE_TENANT_NS,
              .acts_on = "replicated Renews (liqo.io/replicated=true) in a tenant namespace",
              .writes = "the Renew's status (the Tenant's certificate)"},
    .subs = {{TG_INF_REMOTE_RENEWS, 1, map_renew}, {TG_INF_TENANTS, 0, map_tenant_to_renew}}, .nsubs = 2,
    .reconcile = reconcile_key,
};
