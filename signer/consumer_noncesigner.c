/* consumer_noncesigner.c - the consumer's nonce signer: a nonce Secret that
 * holds a nonce and no signature gets signedNonce, signed with the cluster key.
 * Only liqo-signed-nonce in the tenant namespace of the provider it is
 * labelled for (tenant_scope.h): the label alone would let whoever may
 * create a Secret anywhere have the cluster key sign a nonce of their
 * choice. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/nonce.h"
#include "pki/signature.h"
#include "signer/tenant_scope.h"

/* The Secret's scope (tenant_scope.h), from its labels and its namespace's;
 * -1 with err when the namespace could not be read. */
static int scope_of(tg_api *api, json_object *sec, const char *ns, const char *name, char *err, size_t err_len)
{
    json_object *nsobj = NULL;
    const char *tenant;
    long st;
    int sc;

    /* A namespace that is gone has no labels: out of scope, not an error. */
    if ((st = rc_get_namespace(api, ns, &nsobj, err, err_len)) != 200 && st != 404)
        return -1;
    tenant = tg_json_path_string(nsobj, "metadata", "labels", TG_LABEL_LIQO_TENANT_NS, NULL);
    sc = (int)tg_signed_nonce_scope_of(ns, name, tg_json_path_string(sec, "metadata", "labels",
                                                                  TG_LABEL_REMOTE_CLUSTER_ID, NULL),
                                       tenant && strcmp(tenant, "true") == 0,
                                       tg_json_path_string(nsobj, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID,
                                                           NULL));
    json_object_put(nsobj);
    return sc;
}

long tg_reconcile_signed_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512];
    json_object *sec = NULL;
    unsigned char *nonce = NULL, *sig = NULL;
    size_t nlen = 0, slen = 0;
    EVP_PKEY *k;
    long st, ret = TG_RECONCILE_RETRY;
    int sc;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    if ((sc = scope_of(api, sec, ns, name, err, sizeof(err))) < 0)
        goto fail;
    if (sc != TG_SCOPE_OK) {
        tg_log(TG_LOG_WARN, "signed-nonce Secret ignored: only liqo-signed-nonce in the tenant namespace of the "
               "provider it is labelled for (liqo-tenant-<id>, labelled for <id>) is signed",
               TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name), TG_LOG_STR("reason", tg_scope_reason((tg_scope)sc)));
        if (s->m_nonce_skips)
            tg_counter_add(tg_metric_series_get(s->m_nonce_skips, (const char *[]){tg_scope_reason((tg_scope)sc)}), 1);
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (tg_json_path_string(sec, "data", "signedNonce", NULL) || !(nonce = rc_secret_data(sec, "nonce", &nlen))) {
        ret = TG_RECONCILE_OK;   /* already signed, or nothing to sign yet */
        goto out;
    }
    if (!tg_nonce_text_valid((char *)nonce, nlen)) {
        tg_log(TG_LOG_WARN, "nonce to sign is not a nonce", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
        ret = TG_RECONCILE_OK;
        goto out;
    }
    if (!(k = tg_cluster_key(s, api, 1, err, sizeof(err))))
        goto fail;
    if (tg_nonce_sign(k, (char *)nonce, nlen, &sig, &slen) != 0) {
        snprintf(err, sizeof(err), "signing failed");
        goto fail;
    }
    st = rc_patch_secret_data(api, ns, name, "signedNonce", sig, slen,
                              tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, sizeof(err));
    if (st != 200)
        goto fail;
    tg_log(TG_LOG_INFO, "nonce signed", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
    ret = TG_RECONCILE_OK;
    goto out;
fail:
    tg_log(TG_LOG_WARN, "nonce signer failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
out:
    rc_free_secret(nonce, nlen);
    free(sig);
    json_object_put(sec);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_signed_nonce(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "signednonce", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_signed_nonce(s, api, ns, name);
}

const tg_controller_desc tg_ctl_noncesigner = {
    .name = "noncesigner", .key_prefix = "signednonce", .bit = TG_CTL_NONCESIGNER, .side = "consumer",
    .scope = {.where = TG_WHERE_TENANT_NS, .name = TG_SIGNED_NONCE_SECRET, .peer = TG_PEER_LABEL,
              .acts_on = "Secret liqo-signed-nonce labelled liqo.io/signed-nonce=true and "
                         "liqo.io/remote-cluster-id=<the namespace's remote cluster id>, in a tenant namespace",
              .writes = "that Secret's data.signedNonce"},
    .subs = {{TG_INF_SIGNED_NONCES, 1, map_signed_nonce}}, .nsubs = 1,
    .reconcile = reconcile_key,
};
