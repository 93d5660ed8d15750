/* consumer_resourceslice.c - the consumer's ResourceSlice controller
 * (PROTOCOL.md 5a; Liqo's localresourceslice and identitycreator).
 *
 * For a local slice (labels liqo.io/replication=true and liqo.io/remoteID):
 *  - fills the spec fields the consumer owns when they are missing:
 *    consumerClusterID (this cluster), providerClusterID (the slice's
 *    liqo.io/remote-cluster-id label, else its namespace's), and csr
 *    (CN <name>-<12 hex of sha256(consumer)>, O <consumer>, the cluster key;
 *    annotation tenantgate.io/revocable "true": O a fresh group of the slice
 *    user instead, docs/revocation.md "Slices").
 *    An existing CSR is never regenerated: the provider keeps the certificate
 *    it issued for exactly that request.
 *  - once the provider's verdict is back in status: Authentication=Accepted
 *    applies Identity resourceslice-<name> (type ResourceSlice, owned by the
 *    slice, authParams from status) - the Identity controller then writes its
 *    kubeconfig Secret; Denied deletes that Identity.
 * It never writes the slice's status: that is the provider's. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/slice.h"

/* On a consumer's slice: its CSR in the revocable form (the name cli/slice.h writes). */
#define TG_ANNOTATION_REVOCABLE "tenantgate.io/revocable"
#define SLICE_PATH TENANTS_API "/namespaces/%s/resourceslices/%s"
#define IDENTITY_PATH TENANTS_API "/namespaces/%s/identities/%s"

/* The provider id: the slice's label, else its namespace's label (*nsobj
 * holds that namespace; the caller puts it). NULL when neither says. */
static const char *provider_of(tg_api *api, json_object *slice, const char *ns, json_object **nsobj, char *err,
                               size_t err_len)
{
    const char *id = tg_json_path_string(slice, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    if (id && *id)
        return id;
    if (rc_get_namespace(api, ns, nsobj, err, err_len) != 200)
        return NULL;
    return tg_json_path_string(*nsobj, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
}

/* The slice's CSR: Liqo's form, or with annotation tenantgate.io/revocable
 * "true" a fresh group of the slice user in place of O=<consumer>
 * (docs/revocation.md "Slices"). NULL on error. */
static char *slice_csr(json_object *slice, EVP_PKEY *key, const char *name, const char *consumer)
{
    const char *rev = tg_json_path_string(slice, "metadata", "annotations", TG_ANNOTATION_REVOCABLE, NULL);
    char user[TG_SLICE_USER_MAX], group[TG_CERT_GROUP_MAX];

    if (!rev || strcmp(rev, "true") != 0)
        return tg_slice_csr_build(key, name, consumer, NULL);
    if (tg_slice_user_name(name, consumer, user, sizeof(user)) != 0 ||
        tg_cert_group_make(user, group, sizeof(group)) != 0)
        return NULL;
    return tg_slice_csr_build_group(key, name, consumer, group, NULL);
}

/* Merge patch of the missing spec fields; 0 when nothing was missing or the
 * patch landed, -1 with err. */
static int fill_spec(tg_signer *s, tg_api *api, json_object *slice, const char *ns, const char *name, char *err,
                     size_t err_len)
{
    json_object *nsobj = NULL, *patch, *pspec;
    const char *consumer = tg_json_path_string(slice, "spec", "consumerClusterID", NULL);
    const char *provider = tg_json_path_string(slice, "spec", "providerClusterID", NULL);
    const char *csr = tg_json_path_string(slice, "spec", "csr", NULL);
    char path[768], *pem = NULL, *b64 = NULL;
    EVP_PKEY *key;
    long st;
    int rc = -1;

    if (consumer && *consumer && provider && *provider && csr && *csr)
        return 0;
    pspec = json_object_new_object();
    if (!consumer || !*consumer) {
        consumer = s->cluster_id;
        json_object_object_add(pspec, "consumerClusterID", rc_jstr(consumer));
    }
    if (!provider || !*provider) {
        if (!(provider = provider_of(api, slice, ns, &nsobj, err, err_len)) || !*provider) {
            snprintf(err, err_len, "no provider id: neither the slice nor namespace %s has label %s", ns,
                     TG_LABEL_REMOTE_CLUSTER_ID);
            goto out;
        }
        json_object_object_add(pspec, "providerClusterID", rc_jstr(provider));
    }
    if (!csr || !*csr) {
        if (!(key = tg_cluster_key(s, api, 0, err, err_len)))
            goto out;
        if (!(pem = slice_csr(slice, key, name, consumer)) ||
            !(b64 = tg_base64_encode((unsigned char *)pem, strlen(pem), NULL))) {
            snprintf(err, err_len, "cannot build the slice's CSR");
            goto out;
        }
        json_object_object_add(pspec, "csr", rc_jstr(b64));
    }
    patch = json_object_new_object();
    json_object_object_add(patch, "spec", json_object_get(pspec));
    /* The resourceVersion makes a concurrent change (someone else filling a
     * field) a 409 and a retry, never an overwrite. */
    json_object_object_add(patch, "metadata", json_object_new_object());
    json_object_object_add(tg_json_path(patch, "metadata", NULL), "resourceVersion",
                           rc_jstr(tg_json_path_string(slice, "metadata", "resourceVersion", NULL)));
    snprintf(path, sizeof(path), SLICE_PATH, ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    json_object_put(patch);
    if (st == 200) {
        tg_log(TG_LOG_INFO, "resourceslice request filled", TG_LOG_STR("namespace", ns), TG_LOG_STR("slice", name),
               TG_LOG_BOOL("csr", !csr || !*csr));
        rc = 0;
    }
out:
    free(b64);
    free(pem);
    json_object_put(pspec);
    json_object_put(nsobj);
    return rc;
}

/* Identity resourceslice-<name>, server-side applied. */
static long apply_identity(tg_api *api, json_object *slice, const char *ns, const char *name, char *err,
                           size_t err_len)
{
    json_object *labels = json_object_new_object(), *spec = json_object_new_object(), *id;
    json_object *auth = tg_json_path(slice, "status", "authParams", NULL);
    const char *provider = tg_json_path_string(slice, "spec", "providerClusterID", NULL);
    char idname[320], path[768];
    long st;

    snprintf(idname, sizeof(idname), "resourceslice-%s", name);
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(provider));
    json_object_object_add(labels, "liqo.io/resourceslice-name", rc_jstr(name));
    id = rc_auth_object("Identity", ns, idname, labels,
                        rc_controller_owner("ResourceSlice", name, tg_json_path_string(slice, "metadata", "uid", NULL)));
    json_object_object_add(spec, "clusterID", rc_jstr(provider));
    json_object_object_add(spec, "type", rc_jstr("ResourceSlice"));
    json_object_object_add(spec, "authParams", json_object_get(auth));
    json_object_object_add(id, "spec", spec);
    snprintf(path, sizeof(path), IDENTITY_PATH "?fieldManager=tenantgate-signer&force=true", ns, idname);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_APPLY, id, NULL, err, err_len);
    json_object_put(id);
    return st;
}

/* The status of condition type, or NULL. */
static const char *condition(json_object *slice, const char *type)
{
    json_object *conds = tg_json_path(slice, "status", "conditions", NULL);
    size_t n = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;

    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = tg_json_string(c, "type");
        if (t && strcmp(t, type) == 0)
            return tg_json_string(c, "status");
    }
    return NULL;
}

/* Accepted: the Identity; Denied: none. */
static int sync_identity(tg_api *api, json_object *slice, const char *ns, const char *name, char *err,
                         size_t err_len)
{
    const char *auth = condition(slice, "Authentication");
    char path[768];
    long st;

    if (auth && strcmp(auth, "Denied") == 0) {
        snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/resourceslice-%s", ns, name);
        st = tg_api_call(api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, err, err_len);
        if (st == 200 || st == 202)
            tg_log(TG_LOG_INFO, "resourceslice denied, identity deleted", TG_LOG_STR("namespace", ns),
                   TG_LOG_STR("slice", name));
        return st == 200 || st == 202 || st == 404 ? 0 : -1;
    }
    if (!auth || strcmp(auth, "Accepted") != 0)
        return 0;
    if (!tg_json_path_string(slice, "spec", "providerClusterID", NULL) ||
        !tg_json_path_string(slice, "status", "authParams", "signedCRT", NULL)) {
        snprintf(err, err_len, "Authentication Accepted but spec.providerClusterID or status.authParams.signedCRT "
                               "is missing");
        return -1;
    }
    st = apply_identity(api, slice, ns, name, err, err_len);
    if (st != 200 && st != 201)
        return -1;
    return 0;
}

long tg_reconcile_resourceslice(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[768], err[512] = "";
    json_object *slice = NULL;
    long st;
    int rc;

    snprintf(path, sizeof(path), SLICE_PATH, ns, name);
    if ((st = tg_api_get(api, path, &slice, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;               /* gone: its Identity goes with it (owner) */
    if (st != 200)
        goto fail;
    if (tg_json_path(slice, "metadata", "deletionTimestamp", NULL)) {
        json_object_put(slice);
        return TG_RECONCILE_OK;
    }
    if (fill_spec(s, api, slice, ns, name, err, sizeof(err)) != 0)
        goto fail;
    rc = sync_identity(api, slice, ns, name, err, sizeof(err));
    json_object_put(slice);
    if (rc != 0)
        goto fail_logged;
    return TG_RECONCILE_OK;
fail:
    json_object_put(slice);
fail_logged:
    tg_log(TG_LOG_WARN, "resourceslice reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("slice", name),
           TG_LOG_STR("error", err));
    return TG_RECONCILE_RETRY;
}

/* ---------- descriptor ---------- */

static void map_slice(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "rslice", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_resourceslice(s, api, ns, name);
}

const tg_controller_desc tg_ctl_resourceslice = {
    .name = "resourceslice", .key_prefix = "rslice", .bit = TG_CTL_RESOURCESLICE, .side = "consumer",
    .scope = {.where = TG_WHERE_TENANT_NS, .peer = TG_PEER_SLICE_PROVIDER,
              .acts_on = "local ResourceSlices (liqo.io/replication=true) in a tenant namespace whose "
                         "spec.providerClusterID and liqo.io/remote-cluster-id, when set, are the namespace's "
                         "remote cluster id",
              .writes = "the slice's spec (a CSR under the cluster key), Identity resourceslice-<slice> in "
                        "that namespace"},
    .subs = {{TG_INF_LOCAL_SLICES, 1, map_slice}}, .nsubs = 1,
    .reconcile = reconcile_key,
};
