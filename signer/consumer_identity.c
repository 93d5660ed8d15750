/* consumer_identity.c - the consumer's Identity controller: renders the
 * kubeconfig of an Identity (its certificate with the cluster key) into the
 * kubeconfig-<identity> Secret and points status.kubeconfigSecretRef at it.
 *
 * A Secret being deleted is never written (issue 36 #8): after an
 * unauthenticate the old Identity's Secret lingers, held by the replicator's
 * finalizer, and a new Identity of the same name written into it would lose
 * its kubeconfig when it goes. The controller waits until it is gone, then
 * creates it; the Secret informer (main.c, "idsecret") wakes the Identity
 * whenever its Secret is deleted, so a missing one is written again. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/events.h"
#include "pki/keys.h"
#include "signer/kubeconfig_render.h"
#include "signer/renewal.h"
#include "signer/renewal_trial.h"
#include "signer/renewal_watch.h"

/* Liqo's names for the keys of a kubeconfig Secret that carry an Identity's
 * spec.authParams.awsConfig (identityManager/const.go), which its identity
 * manager reads to sign requests for EKS. */
static const struct {
    const char *field;   /* in awsConfig */
    const char *key;     /* in the Secret's data */
} aws_keys[] = {
    {"awsAccessKeyID", "awsAccessKeyID"},
    {"awsSecretAccessKey", "awsSecretAccessKey"},
    {"awsRegion", "awsRegion"},
    {"awsClusterName", "awsEksClusterID"},
    {"awsUserArn", "awsIamUserArn"},
};

/* The kubeconfig-<identity> Secret as Liqo's readers expect it (README,
 * "Kubeconfig Secrets"): labels liqo.io/remote-cluster-id and
 * liqo.io/identity-type select it (getters.GetControlPlaneKubeconfigSecretByClusterID);
 * for a ControlPlane Identity, the annotation liqo.io/remote-tenant-namespace
 * names the provider's tenant namespace (CRD replicator, identity manager);
 * data.kubeconfig, plus the AWS keys when the Identity has awsConfig;
 * owned by the Identity. */
static json_object *kubeconfig_secret(json_object *id, const char *sname, const char *ns, const char *kc_b64)
{
    const char *pid = tg_json_path_string(id, "spec", "clusterID", NULL);
    const char *type = tg_json_path_string(id, "spec", "type", NULL);
    const char *idns = tg_json_path_string(id, "spec", "namespace", NULL);
    json_object *aws = tg_json_path(id, "spec", "authParams", "awsConfig", NULL);
    json_object *sec = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
    json_object *owner = json_object_new_object(), *owners = json_object_new_array(), *data = json_object_new_object();
    size_t i;

    json_object_object_add(sec, "apiVersion", rc_jstr("v1"));
    json_object_object_add(sec, "kind", rc_jstr("Secret"));
    json_object_object_add(meta, "name", rc_jstr(sname));
    json_object_object_add(meta, "namespace", rc_jstr(ns));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(pid));
    json_object_object_add(labels, TG_LABEL_IDENTITY_TYPE, rc_jstr(type));
    json_object_object_add(meta, "labels", labels);
    if (type && strcmp(type, "ControlPlane") == 0 && idns && *idns) {
        json_object *annotations = json_object_new_object();
        json_object_object_add(annotations, TG_ANNOTATION_REMOTE_TENANT_NS, rc_jstr(idns));
        json_object_object_add(meta, "annotations", annotations);
    }
    json_object_object_add(owner, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(owner, "kind", rc_jstr("Identity"));
    json_object_object_add(owner, "name", rc_jstr(tg_json_path_string(id, "metadata", "name", NULL)));
    json_object_object_add(owner, "uid", rc_jstr(tg_json_path_string(id, "metadata", "uid", NULL)));
    json_object_object_add(owner, "controller", json_object_new_boolean(1));
    json_object_object_add(owner, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, owner);
    json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(sec, "metadata", meta);
    json_object_object_add(data, "kubeconfig", rc_jstr(kc_b64));
    for (i = 0; aws && i < sizeof(aws_keys) / sizeof(aws_keys[0]); i++) {
        const char *v = tg_json_string(aws, aws_keys[i].field);
        char *b64 = v ? tg_base64_encode((const unsigned char *)v, strlen(v), NULL) : NULL;
        if (b64)
            json_object_object_add(data, aws_keys[i].key, rc_jstr(b64));
        rc_free_secret(b64, b64 ? strlen(b64) : 0);
    }
    json_object_object_add(sec, "data", data);
    return sec;
}

#define SECRET_GOING_MS 1000   /* a Secret being deleted: look again (its delete event usually comes first) */

/* The kubeconfig Secret ns/sname as it is: *going 1 when it has a
 * deletionTimestamp, *old its data.kubeconfig (malloc'd, secret) or NULL.
 * 0, or -1 when it cannot be read (err). */
static int read_secret(tg_api *api, const char *ns, const char *sname, int *going, unsigned char **old,
                       size_t *old_len, char *err, size_t err_len)
{
    char path[1024];
    json_object *sec = NULL;
    long st;

    *going = 0;
    *old = NULL;
    *old_len = 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, sname);
    if ((st = tg_api_get(api, path, &sec, err, err_len)) == 404)
        return 0;
    if (st != 200)
        return -1;
    *going = tg_json_path_string(sec, "metadata", "deletionTimestamp", NULL) != NULL;
    *old = rc_secret_data(sec, "kubeconfig", old_len);
    json_object_put(sec);
    return 0;
}

/* NotBefore/NotAfter of the client certificate in a kubeconfig. 0 or -1. */
static int kubeconfig_validity(const unsigned char *kc, size_t len, time_t *nb, time_t *na)
{
    tg_kube_config cfg;
    char err[256];
    int r = -1;

    memset(&cfg, 0, sizeof(cfg));
    if (tg_kube_config_parse(&cfg, (const char *)kc, len, "/nonexistent", NULL, err, sizeof(err)) != 0)
        return -1;
    if (cfg.cert)
        r = tg_cert_validity((const unsigned char *)cfg.cert, cfg.cert_len, nb, na);
    tg_kube_config_free(&cfg);
    return r;
}

/* Try the new kubeconfig on the provider before it replaces the old one
 * (renewal_trial.h): 0 when it authenticates as its certificate's CN. A
 * failure is logged, counted and recorded as an Event; the caller keeps the
 * old kubeconfig and retries with back-off. */
static int try_kubeconfig(tg_signer *s, tg_api *api, json_object *id, const char *ns, const char *name,
                          const char *kc, size_t kc_len, const unsigned char *crt, size_t crt_len)
{
    char key[640], cn[256], why[512] = "", msg[768];
    const char *reason = TG_TRIAL_UNUSABLE;

    snprintf(key, sizeof(key), "trial/%s/%s", ns, name);
    if (tg_cert_common_name(crt, crt_len, cn, sizeof(cn)) != 0)
        snprintf(why, sizeof(why), "spec.authParams.signedCRT: expected a certificate with a subject CN");
    else if (!s->trial_pool)
        snprintf(why, sizeof(why), "no client for trials");
    else if (tg_renewal_trial(s->trial_pool, key, kc, kc_len, cn, &reason, why, sizeof(why)) == 0) {
        tg_log(TG_LOG_INFO, "renewed kubeconfig tried on the provider", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("identity", name), TG_LOG_STR("user", cn));
        return 0;
    }
    if (s->m_trial_failures)
        tg_counter_add(tg_metric_series_get(s->m_trial_failures, (const char *[]){reason}), 1);
    tg_log(TG_LOG_WARN, "renewed kubeconfig failed its trial: the old one is kept", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("identity", name), TG_LOG_STR("reason", reason), TG_LOG_STR("error", why));
    snprintf(msg, sizeof(msg), "%s: %s; the kubeconfig in use is kept", reason, why);
    tg_api_event(api, id, "Warning", "RenewalTrialFailed", msg);
    return -1;
}

/* The RenewalOverdue condition and gauge for the certificate in use, valid
 * [nb, na); the log line and Event when it flips. Sets *conds to the
 * status.conditions to write (NULL: unchanged). Returns the milliseconds
 * until it must be looked at again (0: not before the next change). */
static long watch_overdue(tg_signer *s, tg_api *api, json_object *id, const char *ns, const char *name, time_t nb,
                          time_t na, json_object **conds)
{
    time_t now = time(NULL);
    tg_overdue_view v = tg_overdue_view_of(nb, na, now, s->renewal_grace_pct);
    char key[640], until[32];
    int flipped = 0;

    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (s->m_renewal_overdue)
        tg_gauge_set(tg_metric_series_get(s->m_renewal_overdue, (const char *[]){key}), v.overdue);
    *conds = tg_overdue_conditions(tg_json_path(id, "status", "conditions", NULL), &v, now, &flipped);
    rc_rfc3339(na, until, sizeof(until));
    if (*conds && flipped && v.overdue) {
        tg_log(TG_LOG_WARN, "identity certificate renewal overdue", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("identity", name), TG_LOG_STR("not_after", until));
        tg_api_event(api, id, "Warning", TG_COND_RENEWAL_OVERDUE,
                     "no renewed certificate arrived in time: see condition RenewalOverdue");
    } else if (*conds && flipped && tg_json_path(id, "status", "conditions", NULL)) {
        tg_log(TG_LOG_INFO, "identity certificate renewal on time", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("identity", name), TG_LOG_STR("not_after", until));
    }
    /* a second past the overdue time, so that the look finds it overdue */
    return v.overdue ? 0 : (long)((v.overdue_at - now + 1) * 1000);
}

/* status: kubeconfigSecretRef and the conditions (NULL: unchanged) in one
 * merge patch, only when something changes. HTTP status (200 when nothing
 * to write). */
static long patch_status(tg_api *api, json_object *id, const char *ns, const char *name, const char *sname,
                         json_object *conds, char *err, size_t err_len)
{
    const char *have = tg_json_path_string(id, "status", "kubeconfigSecretRef", "name", NULL);
    json_object *patch, *stj, *ref;
    char path[1024];
    long st;

    if (have && strcmp(have, sname) == 0 && !conds)
        return 200;
    patch = json_object_new_object();
    stj = json_object_new_object();
    ref = json_object_new_object();
    json_object_object_add(ref, "name", rc_jstr(sname));
    json_object_object_add(stj, "kubeconfigSecretRef", ref);
    if (conds)
        json_object_object_add(stj, "conditions", json_object_get(conds));
    json_object_object_add(patch, "status", stj);
    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s/status", ns, name);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    json_object_put(patch);
    return st;
}

/* Write the kubeconfig Secret (server-side apply: create or update in one
 * idempotent call). 0, 1 when its deletion began between the look and the
 * write (the kubeconfig goes with it: write it again once it is gone), -1. */
static int apply_secret(tg_api *api, json_object *id, const char *ns, const char *sname, const char *kc_b64,
                        char *err, size_t err_len)
{
    json_object *sec = kubeconfig_secret(id, sname, ns, kc_b64), *applied = NULL;
    char path[1024];
    long st;
    int r;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s?fieldManager=tenantgate-signer&force=true", ns,
             sname);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_APPLY, sec, &applied, err, err_len);
    r = st != 200 && st != 201 ? -1 : tg_json_path_string(applied, "metadata", "deletionTimestamp", NULL) ? 1 : 0;
    json_object_put(applied);
    json_object_put(sec);
    return r;
}

long tg_reconcile_identity(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512] = "", sname[320];
    json_object *id = NULL, *conds = NULL;
    const char *pid, *type, *server, *ca_b64, *crt_b64, *proxy, *idns, *uid;
    unsigned char *ca = NULL, *crt = NULL, *old = NULL;
    size_t ca_len = 0, crt_len = 0, kc_len = 0, key_len = 0, old_len = 0;
    char *key_pem = NULL, *kc = NULL, *kc_b64 = NULL;
    EVP_PKEY *k;
    tg_kubeconfig_in in;
    time_t nb, na;
    long st, ret = TG_RECONCILE_RETRY, look_again;
    int going, kept = 0;

    snprintf(path, sizeof(path), TENANTS_API "/namespaces/%s/identities/%s", ns, name);
    if ((st = tg_api_get(api, path, &id, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    pid = tg_json_path_string(id, "spec", "clusterID", NULL);
    type = tg_json_path_string(id, "spec", "type", NULL);
    server = tg_json_path_string(id, "spec", "authParams", "apiServer", NULL);
    ca_b64 = tg_json_path_string(id, "spec", "authParams", "ca", NULL);
    crt_b64 = tg_json_path_string(id, "spec", "authParams", "signedCRT", NULL);
    proxy = tg_json_path_string(id, "spec", "authParams", "proxyURL", NULL);
    idns = tg_json_path_string(id, "spec", "namespace", NULL);
    uid = tg_json_path_string(id, "metadata", "uid", NULL);
    if (!pid || !crt_b64 || !uid || !(crt = tg_base64_decode(crt_b64, strlen(crt_b64), &crt_len, err, sizeof(err))) ||
        (ca_b64 && !(ca = tg_base64_decode(ca_b64, strlen(ca_b64), &ca_len, err, sizeof(err))))) {
        tg_log(TG_LOG_WARN, "identity incomplete", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name));
        tg_api_event(api, id, "Warning", "InvalidIdentity", "spec.clusterID and spec.authParams (signedCRT, ca) must be set and base64");
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!tg_key_material_allowed(s, ns, pid)) {
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!(k = tg_cluster_key(s, api, 0, err, sizeof(err))) || !(key_pem = tg_key_private_pem(k, &key_len)))
        goto fail;
    in = (tg_kubeconfig_in){.provider_id = pid, .server = server, .ca = ca, .ca_len = ca_len, .proxy_url = proxy,
                            .cert = crt, .cert_len = crt_len, .key_pem = key_pem, .key_len = key_len,
                            .user = s->cluster_id,
                            .namespace_ = type && strcmp(type, "ControlPlane") == 0 ? idns : NULL};
    if (!(kc = tg_kubeconfig_render(&in, &kc_len, err, sizeof(err))) ||
        !(kc_b64 = tg_base64_encode((unsigned char *)kc, kc_len, NULL)))
        goto fail;
    snprintf(sname, sizeof(sname), "kubeconfig-%s", name);
    if (read_secret(api, ns, sname, &going, &old, &old_len, err, sizeof(err)) != 0)
        goto fail;
    if (going) {
        tg_log(TG_LOG_INFO, "identity kubeconfig secret still being deleted: waiting to create it again",
               TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name), TG_LOG_STR("secret", sname));
        ret = SECRET_GOING_MS;
        goto out;
    }
    /* A kubeconfig in use is replaced only by one that works (issue 48 #3). */
    if (old && (old_len != kc_len || memcmp(old, kc, kc_len) != 0) &&
        try_kubeconfig(s, api, id, ns, name, kc, kc_len, crt, crt_len) != 0)
        kept = 1;
    if (!kept) {
        if ((going = apply_secret(api, id, ns, sname, kc_b64, err, sizeof(err))) < 0)
            goto fail;
        if (going) {
            ret = SECRET_GOING_MS;
            goto out;
        }
    }
    /* The certificate in use: the old one when the new one was not taken. */
    if (kept ? kubeconfig_validity(old, old_len, &nb, &na) : tg_cert_validity(crt, crt_len, &nb, &na)) {
        nb = na = 0;
        look_again = 0;
    } else {
        look_again = watch_overdue(s, api, id, ns, name, nb, na, &conds);
    }
    if ((st = patch_status(api, id, ns, name, sname, conds, err, sizeof(err))) != 200)
        goto fail;
    if (kept) {
        snprintf(err, sizeof(err), "the renewed kubeconfig failed its trial");
        goto fail;
    }
    tg_log(TG_LOG_INFO, "identity kubeconfig written", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name),
           TG_LOG_STR("secret", sname));
    ret = look_again > 0 ? look_again : TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "identity reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("identity", name),
           TG_LOG_STR("error", err));
    ret = TG_RECONCILE_RETRY;
out:
    rc_free_secret(kc_b64, kc_b64 ? strlen(kc_b64) : 0);
    rc_free_secret(kc, kc_len);
    rc_free_secret(key_pem, key_len);
    rc_free_secret(old, old_len);
    free(ca);
    free(crt);
    json_object_put(conds);
    json_object_put(id);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_identity(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "identity", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

/* A kubeconfig-<identity> Secret deleted: its Identity writes it again. */
static void map_kubeconfig_secret(const tg_event *ev, tg_key_sink *sink)
{
    const char *name = tg_json_path_string(ev->obj, "metadata", "name", NULL);
    static const char prefix[] = "kubeconfig-";

    if (ev->deleted && name && strncmp(name, prefix, sizeof(prefix) - 1) == 0 && name[sizeof(prefix) - 1])
        tg_key_emit(sink, "identity", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                    name + sizeof(prefix) - 1);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_identity(s, api, ns, name);
}

const tg_controller_desc tg_ctl_identity = {
    .name = "identity", .key_prefix = "identity", .bit = TG_CTL_IDENTITY, .side = "consumer",
    .scope = {.where = TG_WHERE_TENANT_NS, .peer = TG_PEER_SPEC_CLUSTER_ID,
              .acts_on = "Identity whose spec.clusterID is the remote cluster id of its tenant namespace",
              .writes = "Secret kubeconfig-<identity> (the cluster private key) and the Identity's status, "
                        "in that namespace"},
    .subs = {{TG_INF_IDENTITIES, 1, map_identity}, {TG_INF_IDENTITY_SECRETS, 0, map_kubeconfig_secret}}, .nsubs = 2,
    .reconcile = reconcile_key,
};
