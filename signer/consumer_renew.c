/* consumer_renew.c - the consumer's Renew controller (Liqo v1.2's local
 * renewer; PROTOCOL.md 7).
 *
 * The provider renews the ControlPlane certificate on its own; a Renew is how
 * the new one travels back. For each ControlPlane Identity this controller
 * keeps a Renew of the same name and namespace (labels for replication to the
 * provider, owned by the Identity, spec consumerClusterID and identityType),
 * and when the provider has answered with a certificate other than the
 * Identity's, copies renew.status.authParams into identity.spec.authParams.
 * The Identity controller then rewrites the kubeconfig. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"

#define RENEW_PATH TENANTS_API "/namespaces/%s/renews/%s"

/* The Renew as it should be, server-side applied. */
static long apply_renew(tg_signer *s, tg_api *api, json_object *id, const char *ns, const char *name, char *err,
                        size_t err_len)
{
    const char *pid = tg_json_path_string(id, "spec", "clusterID", NULL);
    json_object *labels = json_object_new_object(), *spec = json_object_new_object(), *r;
    char path[768];
    long st;

    json_object_object_add(labels, "liqo.io/replication", rc_jstr("true"));
    json_object_object_add(labels, "liqo.io/remoteID", rc_jstr(pid));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(pid));
    r = rc_auth_object("Renew", ns, name, labels,
                       rc_controller_owner("Identity", name, tg_json_path_string(id, "metadata", "uid", NULL)));
    json_object_object_add(spec, "consumerClusterID", rc_jstr(s->cluster_id));
    json_object_object_add(spec, "identityType", rc_jstr("ControlPlane"));
    json_object_object_add(r, "spec", spec);
    snprintf(path, sizeof(path), RENEW_PATH "?fieldManager=tenantgate-signer&force=true", ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_APPLY, r, NULL, err, err_len);
    json_object_put(r);
    return st;
}

/* 1 when the Renew carries what apply_renew would write. */
static int renew_current(tg_signer *s, json_object *renew, json_object *id)
{
    const char *pid = tg_json_path_string(id, "spec", "clusterID", NULL);
    const char *cons = tg_json_path_string(renew, "spec", "consumerClusterID", NULL);
    const char *type = tg_json_path_string(renew, "spec", "identityType", NULL);
    const char *rid = tg_json_path_string(renew, "metadata", "labels", "liqo.io/remoteID", NULL);
    const char *repl = tg_json_path_string(renew, "metadata", "labels", "liqo.io/replication", NULL);

    return pid && cons && type && rid && repl && strcmp(cons, s->cluster_id) == 0 &&
           strcmp(type, "ControlPlane") == 0 && strcmp(rid, pid) == 0 && strcmp(repl, "true") == 0;
}

/* The provider's answer into the Identity, when it is a new certificate. */
static int apply_answer(tg_api *api, json_object *renew, json_object *id, const char *ns, const char *name,
                        char *err, size_t err_len)
{
    json_object *auth = tg_json_path(renew, "status", "authParams", NULL), *patch, *spec;
    const char *crt = tg_json_path_string(renew, "status", "authParams", "signedCRT", NULL);
    const char *have = tg_json_path_string(id, "spec", "authParams", "signedCRT", NULL);
    char path[768];
    long st;

    if (!crt || !*crt || (have && strcmp(have, crt) == 0))
        return 0;
    patch = json_object_new_object();
    spec = json_object_new_object();
    json_object_object_add(spec, "authParams", json_object_get(auth));
    json_object_object_add(patch, "spec", spec);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s", ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    json_object_put(patch);
    if (st != 200)
        return -1;
    tg_log(TG_LOG_INFO, "identity updated from a completed certificate renewal", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("identity", name));
    tg_api_event(api, id, "Normal", "CertificateRenewed", "Updated AuthParams from completed certificate renewal");
    return 0;
}

long tg_reconcile_renew(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[768], err[512] = "";
    json_object *id = NULL, *renew = NULL;
    const char *type;
    long st, ret = TG_RECONCILE_RETRY;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s", ns, name);
    if ((st = tg_api_get(api, path, &id, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;           /* its Renew is owned by it: garbage-collected */
    if (st != 200)
        goto out;
    type = tg_json_path_string(id, "spec", "type", NULL);
    if (!type || strcmp(type, "ControlPlane") != 0 || tg_json_path(id, "metadata", "deletionTimestamp", NULL) ||
        !tg_json_path_string(id, "spec", "clusterID", NULL)) {
        ret = TG_RECONCILE_OK;
        goto out;
    }
    snprintf(path, sizeof(path), RENEW_PATH, ns, name);
    if ((st = tg_api_get(api, path, &renew, err, sizeof(err))) != 200 && st != 404)
        goto out;
    if (st == 404 || !renew_current(s, renew, id)) {
        st = apply_renew(s, api, id, ns, name, err, sizeof(err));
        if (st != 200 && st != 201)
            goto out;
        tg_log(TG_LOG_INFO, "renew ensured", TG_LOG_STR("namespace", ns), TG_LOG_STR("renew", name));
    }
    if (renew && apply_answer(api, renew, id, ns, name, err, sizeof(err)) != 0)
        goto out;
    ret = TG_RECONCILE_OK;
out:
    if (ret != TG_RECONCILE_OK)
        tg_log(TG_LOG_WARN, "renew reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("renew", name),
               TG_LOG_STR("error", err));
    json_object_put(renew);
    json_object_put(id);
    return ret;
}

/* ---------- descriptor ---------- */

/* A Renew is named after its Identity: either's event wakes the Renew. */
static void map_renew(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "renew", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_renew(s, api, ns, name);
}

const tg_controller_desc tg_ctl_renew = {
    .name = "renew", .key_prefix = "renew", .bit = TG_CTL_RENEW, .side = "consumer",
    .scope = {.where = TG_WHERE_TENANT_NS,
              .acts_on = "Renews (liqo.io/replication=true) of ControlPlane Identities in a tenant namespace",
              .writes = "the Renew (spec.csr under the cluster key) and its Identity's authParams"},
    .subs = {{TG_INF_LOCAL_RENEWS, 1, map_renew}, {TG_INF_IDENTITIES, 0, map_renew}}, .nsubs = 2,
    .reconcile = reconcile_key,
};
