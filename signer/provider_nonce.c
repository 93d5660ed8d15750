/* provider_nonce.c - the provider's nonce controller (PROTOCOL.md 6): the
 * Secret liqo-nonce of a tenant namespace gets a fresh nonce when it has none;
 * one is never overwritten. Other Secrets carrying the nonce label are left
 * alone (tenant_scope.h). In a namespace tenantgate-auth's /v1/nonce made
 * (bootstrap_ns.h) it also makes the Secret: auth may create no Secret
 * there, so that its identity can mint no ServiceAccount token. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/nonce.h"
#include "signer/bootstrap_ns.h"
#include "signer/tenant_scope.h"

/* What the cache shows of a nonce Secret: only what the decision needs, so no
 * nonce text is copied out. */
typedef struct nonce_view {
    int found;
    int has_nonce;                 /* data.nonce is set */
    int has_cluster;               /* the cluster label is set (and fits) */
    char cluster[128];
} nonce_view;

static void view_secret(json_object *sec, nonce_view *v)
{
    const char *b64 = tg_json_path_string(sec, "data", "nonce", NULL);
    const char *cid = tg_json_path_string(sec, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    v->found = 1;
    v->has_nonce = b64 && *b64;
    v->has_cluster = cid && strlen(cid) < sizeof(v->cluster);
    snprintf(v->cluster, sizeof(v->cluster), "%s", v->has_cluster ? cid : "");
}

static void on_nonce_visit(json_object *sec, void *data) { view_secret(sec, data); }

/* Out of scope: say so (debug, names only) and count it; nothing to retry. */
static long skip(tg_signer *s, const char *ns, const char *name, tg_scope sc)
{
    const char *reason = tg_scope_reason(sc);

    tg_log(TG_LOG_DEBUG, "nonce Secret ignored: only liqo-nonce in liqo-tenant-<its cluster id> is filled",
           TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name), TG_LOG_STR("reason", reason));
    if (s->m_nonce_skips)
        tg_counter_add(tg_metric_series_get(s->m_nonce_skips, (const char *[]){reason}), 1);
    return TG_RECONCILE_OK;
}

/* No liqo-nonce in ns: make it, filled, when ns is a namespace /v1/nonce
 * made for its id (live labels); otherwise nothing to do. */
static long create_for_bootstrap_ns(tg_api *api, const char *ns, const char *name)
{
    json_object *nsobj = NULL, *sec = NULL, *meta, *labels, *data;
    char err[256], path[320], nonce[TG_NONCE_TEXT_LEN + 1], *b64 = NULL;
    const char *cid, *tid;
    long st, rc = TG_RECONCILE_OK;

    if ((st = rc_get_namespace(api, ns, &nsobj, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    if (strcmp(name, TG_NONCE_SECRET) != 0 || !tg_bootstrap_ns_of(nsobj, &cid, &tid))
        goto out;
    if (tg_nonce_generate(nonce) != 0 || !(b64 = tg_base64_encode((unsigned char *)nonce, TG_NONCE_TEXT_LEN, NULL))) {
        snprintf(err, sizeof(err), "cannot generate a nonce");
        goto fail;
    }
    sec = json_object_new_object();
    meta = json_object_new_object();
    labels = json_object_new_object();
    data = json_object_new_object();
    json_object_object_add(sec, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(sec, "kind", json_object_new_string("Secret"));
    json_object_object_add(meta, "name", json_object_new_string(TG_NONCE_SECRET));
    json_object_object_add(labels, "liqo.io/nonce", json_object_new_string("true"));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, json_object_new_string(cid));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(sec, "metadata", meta);
    json_object_object_add(data, "nonce", json_object_new_string(b64));
    json_object_object_add(sec, "data", data);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
    st = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, sec, NULL, err, sizeof(err));
    if (st == 409)                 /* made meanwhile: fill it if it is empty */
        rc = TG_RECONCILE_RETRY;
    else if (st != 201)
        goto fail;
    else
        tg_log(TG_LOG_INFO, "nonce created", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name),
               TG_LOG_STR("made_for_token", tid));
    goto out;
fail:
    tg_log(TG_LOG_WARN, "nonce reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
    rc = TG_RECONCILE_RETRY;
out:
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (b64) {
        OPENSSL_cleanse(b64, strlen(b64));
        free(b64);
    }
    if (sec) {
        /* the nonce's base64 is in the tree's copy too */
        json_object *d = json_object_object_get(sec, "data");
        json_object *n = d ? json_object_object_get(d, "nonce") : NULL;
        if (n)
            OPENSSL_cleanse((char *)json_object_get_string(n), (size_t)json_object_get_string_len(n));
    }
    json_object_put(sec);
    json_object_put(nsobj);
    return rc;
}

/* Give the tenant namespace's liqo-nonce a nonce if it has none; never overwrite. */
long tg_reconcile_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], nonce[TG_NONCE_TEXT_LEN + 1];
    json_object *sec = NULL;
    nonce_view v = {0};
    tg_scope sc;
    long st;

    /* A Secret out of scope costs no GET: its name and namespace say so, or
     * the labels the cache has (else the live ones below). A nonce in the
     * cache is final, so a filled Secret costs none either. */
    if (s->nonce_cache && tg_cache_synced(s->nonce_cache))
        tg_cache_get(s->nonce_cache, ns, name, on_nonce_visit, &v);
    sc = tg_nonce_scope_of(ns, name, v.has_cluster ? v.cluster : NULL);
    if (sc != TG_SCOPE_OK && (v.found || sc != TG_SCOPE_CLUSTER))
        return skip(s, ns, name, sc);
    if (v.found && v.has_nonce)
        return TG_RECONCILE_OK;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return create_for_bootstrap_ns(api, ns, name);
    if (st != 200)
        goto fail;
    /* Decide again on the live labels; the patch below carries this
     * resourceVersion, so a relabel in between makes it fail (409) and retry. */
    memset(&v, 0, sizeof(v));
    view_secret(sec, &v);
    if ((sc = tg_nonce_scope_of(ns, name, v.has_cluster ? v.cluster : NULL)) != TG_SCOPE_OK) {
        json_object_put(sec);
        return skip(s, ns, name, sc);
    }
    if (v.has_nonce) {
        json_object_put(sec);
        return TG_RECONCILE_OK;
    }
    if (tg_nonce_generate(nonce) != 0) {
        snprintf(err, sizeof(err), "cannot generate a nonce");
        goto fail;
    }
    st = rc_patch_secret_data(api, ns, name, "nonce", nonce, TG_NONCE_TEXT_LEN,
                              tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, sizeof(err));
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (st != 200)
        goto fail;
    tg_log(TG_LOG_INFO, "nonce created", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
    json_object_put(sec);
    return TG_RECONCILE_OK;
fail:
    tg_log(TG_LOG_WARN, "nonce reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
    json_object_put(sec);
    return TG_RECONCILE_RETRY;
}

/* ---------- descriptor ---------- */

static void map_nonce(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "nonce", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

/* A namespace /v1/nonce made wakes its liqo-nonce, which does not exist yet. */
static void map_bootstrap_ns(const tg_event *ev, tg_key_sink *sink)
{
    const char *cid, *tid;

    if (!ev->deleted && tg_bootstrap_ns_of(ev->obj, &cid, &tid))
        tg_key_emit(sink, "nonce", tg_json_path_string(ev->obj, "metadata", "name", NULL), TG_NONCE_SECRET);
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_nonce(s, api, ns, name);
}

const tg_controller_desc tg_ctl_nonce = {
    .name = "nonce", .key_prefix = "nonce", .bit = TG_CTL_NONCE, .side = "provider",
    .scope = {.where = TG_WHERE_TENANT_NS, .name = TG_NONCE_SECRET, .peer = TG_PEER_LABEL,
              .acts_on = "Secret liqo-nonce labelled liqo.io/nonce=true and liqo.io/remote-cluster-id=<the "
                         "namespace's remote cluster id>, in a tenant namespace",
              .writes = "that Secret's data.nonce; the Secret itself in a namespace tenantgate-auth's "
                        "/v1/nonce made (label tenantgate.io/bootstrap-token-id)"},
    .subs = {{TG_INF_NONCES, 1, map_nonce}, {TG_INF_NAMESPACES, 0, map_bootstrap_ns}}, .nsubs = 2,
    .reconcile = reconcile_key,
};
