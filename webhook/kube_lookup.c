/* kube_lookup.c - lookup.h over informer caches, and the live nonce read. */
#include "kube_lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/kubeconfig.h"

#define NAMESPACES_PATH "/api/v1/namespaces"
#define TENANTS_PATH "/apis/authentication.liqo.io/v1beta1/tenants"
#define SECRETS_PATH "/api/v1/secrets"
#define NONCE_SELECTOR TG_LABEL_NONCE "=true"
/* Under kube-apiserver's 10 s default webhook timeout, with room to answer. */
#define LIVE_TIMEOUT_MS 4000
/* base64 of the longest nonce text we accept */
#define NONCE_B64_MAX (((TG_LOOKUP_NONCE_MAX - 1) / 3 + 1) * 4 + 1)

struct tg_kube_lookup {
    uv_loop_t *loop;
    tg_kube_config config;         /* kept for the workers' clients */
    tg_kube_client *client;        /* main loop: the informers */
    tg_informer *namespaces;       /* labelled liqo.io/tenant-namespace=true */
    tg_informer *tenants;
    tg_informer *nonces;           /* Secrets labelled liqo.io/nonce=true, indexed by cluster id */
    tg_lookup lookup;
    tg_live_nonce live;
    int nworkers;
    tg_kube_client **worker_clients;   /* [i] used only by worker i's thread */
};

/* ---------- cache readers (any thread; visitors copy, never keep) ---------- */

static const char *labels_get(json_object *obj, const char *key)
{
    json_object *labels = tg_json_path(obj, "metadata", "labels", NULL);
    return labels ? tg_json_string(labels, key) : NULL;
}

static int kl_synced(const tg_lookup *lk)
{
    tg_kube_lookup *kl = lk->data;
    return tg_informer_synced(kl->namespaces) && tg_informer_synced(kl->tenants) &&
           tg_informer_synced(kl->nonces);
}

typedef struct label_visit {
    const char *key;
    char *value;
    int found;
} label_visit;

static void visit_label(json_object *obj, void *data)
{
    label_visit *lv = data;
    const char *v = labels_get(obj, lv->key);

    if (v && strlen(v) < TG_LABEL_VALUE_MAX) {
        memcpy(lv->value, v, strlen(v) + 1);
        lv->found = 1;
    }
}

static int kl_namespace_label(const tg_lookup *lk, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                              int *ns_exists)
{
    tg_kube_lookup *kl = lk->data;
    label_visit lv = {.key = key, .value = value};

    *ns_exists = tg_cache_get(tg_informer_cache(kl->namespaces), NULL, ns, visit_label, &lv);
    return lv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

typedef struct match_visit {
    const char *field;             /* "namespace" or "name" */
    const char *want;
    size_t count;
} match_visit;

static void visit_match(json_object *obj, void *data)
{
    match_visit *mv = data;
    const char *v = tg_json_path_string(obj, "metadata", mv->field, NULL);

    if (v && strcmp(v, mv->want) == 0)
        mv->count++;
}

static size_t kl_tenants_in_namespace(const tg_lookup *lk, const char *ns)
{
    tg_kube_lookup *kl = lk->data;
    match_visit mv = {.field = "namespace", .want = ns};

    tg_cache_foreach(tg_informer_cache(kl->tenants), visit_match, &mv);
    return mv.count;
}

static int kl_tenant_name_exists(const tg_lookup *lk, const char *name)
{
    tg_kube_lookup *kl = lk->data;
    match_visit mv = {.field = "name", .want = name};

    tg_cache_foreach(tg_informer_cache(kl->tenants), visit_match, &mv);
    return mv.count > 0;
}

typedef struct nonce_visit {
    size_t matches;                /* Secrets for this cluster */
    char b64[NONCE_B64_MAX];
    int usable;                    /* the last one had a non-empty, bounded data.nonce */
} nonce_visit;

static void visit_nonce(json_object *obj, void *data)
{
    nonce_visit *nv = data;
    json_object *d = tg_json_path(obj, "data", NULL);
    const char *v = d ? tg_json_string(d, TG_NONCE_DATA_KEY) : NULL;
    const char *flag = labels_get(obj, TG_LABEL_NONCE);

    if (!flag || strcmp(flag, "true") != 0)
        return;
    nv->matches++;
    nv->usable = v && v[0] && strlen(v) < sizeof(nv->b64);
    if (nv->usable)
        memcpy(nv->b64, v, strlen(v) + 1);
}

/* One usable Secret -> its nonce text. The rules of lookup.h. */
static int nonce_from_visit(nonce_visit *nv, char nonce[TG_LOOKUP_NONCE_MAX], size_t *len)
{
    unsigned char *raw;
    size_t n = 0;
    int rc = TG_LOOKUP_NOT_FOUND;
    char derr[128];

    if (nv->matches != 1 || !nv->usable)
        goto out;
    raw = tg_base64_decode(nv->b64, strlen(nv->b64), &n, derr, sizeof(derr));
    if (raw && n > 0 && n < TG_LOOKUP_NONCE_MAX && !memchr(raw, '\0', n)) {
        memcpy(nonce, raw, n);
        nonce[n] = '\0';
        *len = n;
        rc = TG_LOOKUP_FOUND;
    }
    if (raw) {
        OPENSSL_cleanse(raw, n);
        free(raw);
    }
out:
    OPENSSL_cleanse(nv->b64, sizeof(nv->b64));
    return rc;
}

static int kl_nonce_for_cluster(const tg_lookup *lk, const char *cluster_id, char nonce[TG_LOOKUP_NONCE_MAX],
                                size_t *len)
{
    tg_kube_lookup *kl = lk->data;
    nonce_visit nv = {0};

    tg_cache_get_by_index(tg_informer_cache(kl->nonces), cluster_id, visit_nonce, &nv);
    return nonce_from_visit(&nv, nonce, len);
}

static void kl_cache_sizes(const tg_lookup *lk, size_t *namespaces, size_t *tenants, size_t *nonce_secrets)
{
    tg_kube_lookup *kl = lk->data;

    *namespaces = tg_informer_count(kl->namespaces);
    *tenants = tg_informer_count(kl->tenants);
    *nonce_secrets = tg_informer_count(kl->nonces);
}

static const tg_lookup_ops kube_ops = {
    .synced = kl_synced,
    .namespace_label = kl_namespace_label,
    .tenants_in_namespace = kl_tenants_in_namespace,
    .tenant_name_exists = kl_tenant_name_exists,
    .nonce_for_cluster = kl_nonce_for_cluster,
    .cache_sizes = kl_cache_sizes,
};

/* ---------- live read (worker threads) ---------- */

typedef struct live_req {
    tg_live_nonce_done done;
    void *cbdata;
    char cluster_id[TG_LABEL_VALUE_MAX];
} live_req;

static void on_live_response(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    live_req *lr = data;
    json_object *list = NULL, *items;
    nonce_visit nv = {0};
    char nonce[TG_LOOKUP_NONCE_MAX];
    size_t len = 0;

    if (resp->status != 200 || !(list = tg_json_parse(resp->body, resp->body_len, NULL, 0)) ||
        !(items = tg_json_path(list, "items", NULL)) || !json_object_is_type(items, json_type_array)) {
        tg_log(TG_LOG_WARN, "live read of the nonce Secret failed", TG_LOG_STR("cluster_id", lr->cluster_id),
               TG_LOG_INT("status", resp->status), TG_LOG_STR("error", resp->error));
        if (list)
            json_object_put(list);
        lr->done(lr->cbdata, NULL, 0, -1);
        free(lr);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *item = json_object_array_get_idx(items, i);
        const char *id = labels_get(item, "liqo.io/remote-cluster-id");
        if (id && strcmp(id, lr->cluster_id) == 0)
            visit_nonce(item, &nv);
    }
    json_object_put(list);
    if (nonce_from_visit(&nv, nonce, &len) == TG_LOOKUP_FOUND)
        lr->done(lr->cbdata, nonce, len, 0);
    else
        lr->done(lr->cbdata, NULL, 0, 0);
    OPENSSL_cleanse(nonce, sizeof(nonce));
    free(lr);
}

static int live_fetch(void *self, uv_loop_t *loop, int worker, const char *cluster_id, tg_live_nonce_done done,
                      void *cbdata)
{
    tg_kube_lookup *kl = self;
    tg_kube_client **cp;
    live_req *lr;
    char selector[192], *escaped, path[512], err[256];
    tg_kube_request_opts opts = {.timeout_ms = LIVE_TIMEOUT_MS, .max_body = (size_t)4 << 20};

    if (worker < 0 || worker >= kl->nworkers || strlen(cluster_id) >= TG_LABEL_VALUE_MAX)
        return -1;
    cp = &kl->worker_clients[worker];
    if (!*cp && !(*cp = tg_kube_client_new(loop, &kl->config, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot create the worker's API client", TG_LOG_STR("error", err));
        return -1;
    }
    snprintf(selector, sizeof(selector), NONCE_SELECTOR ",liqo.io/remote-cluster-id=%s", cluster_id);
    if (!(escaped = tg_kube_escape(selector)))
        return -1;
    snprintf(path, sizeof(path), SECRETS_PATH "?labelSelector=%s", escaped);
    free(escaped);
    if (!(lr = calloc(1, sizeof(*lr))))
        return -1;
    lr->done = done;
    lr->cbdata = cbdata;
    snprintf(lr->cluster_id, sizeof(lr->cluster_id), "%s", cluster_id);
    opts.path = path;
    if (!tg_kube_request_start(*cp, &opts, on_live_response, lr, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cannot start the live nonce read", TG_LOG_STR("error", err));
        free(lr);
        return -1;
    }
    return 0;
}

static void live_worker_stop(void *self, int worker)
{
    tg_kube_lookup *kl = self;

    if (worker >= 0 && worker < kl->nworkers && kl->worker_clients[worker]) {
        tg_kube_client_free(kl->worker_clients[worker]);
        kl->worker_clients[worker] = NULL;
    }
}

/* ---------- life cycle ---------- */

static tg_informer *start_informer(tg_kube_lookup *kl, const char *path, const char *selector,
                                   const char *index_label, char *err, size_t err_len)
{
    tg_informer_opts opts = {.path = path, .label_selector = selector, .index_label = index_label};
    tg_informer *inf = tg_informer_new(kl->client, &opts, err, err_len);

    if (inf && tg_informer_start(inf, err, err_len) != 0) {
        tg_informer_free(inf);
        return NULL;
    }
    return inf;
}

tg_kube_lookup *tg_kube_lookup_new(uv_loop_t *loop, const char *kubeconfig, int workers, char *err,
                                   size_t err_len)
{
    tg_kube_lookup *kl = calloc(1, sizeof(*kl));

    if (!kl || !(kl->worker_clients = calloc((size_t)(workers > 0 ? workers : 1), sizeof(*kl->worker_clients)))) {
        snprintf(err, err_len, "out of memory");
        free(kl);
        return NULL;
    }
    kl->loop = loop;
    kl->nworkers = workers;
    if (tg_kube_config_load(&kl->config, kubeconfig, NULL, err, err_len) != 0)
        goto fail;
    if (!(kl->client = tg_kube_client_new(loop, &kl->config, err, err_len)))
        goto fail;
    if (!(kl->namespaces = start_informer(kl, NAMESPACES_PATH, TG_LABEL_TENANT_NAMESPACE "=true", NULL, err,
                                          err_len)) ||
        !(kl->tenants = start_informer(kl, TENANTS_PATH, NULL, NULL, err, err_len)) ||
        !(kl->nonces = start_informer(kl, SECRETS_PATH, NONCE_SELECTOR, "liqo.io/remote-cluster-id", err,
                                      err_len)))
        goto fail;
    kl->lookup.ops = &kube_ops;
    kl->lookup.data = kl;
    kl->live.fetch = live_fetch;
    kl->live.worker_stop = live_worker_stop;
    kl->live.self = kl;
    tg_log(TG_LOG_INFO, "watching the cluster", TG_LOG_STR("context", kl->config.context));
    return kl;

fail:
    tg_kube_lookup_free(kl);
    return NULL;
}

const tg_lookup *tg_kube_lookup_get(tg_kube_lookup *kl)
{
    return &kl->lookup;
}

const tg_live_nonce *tg_kube_lookup_live(tg_kube_lookup *kl)
{
    return &kl->live;
}

void tg_kube_lookup_free(tg_kube_lookup *kl)
{
    if (!kl)
        return;
    if (kl->namespaces)
        tg_informer_free(kl->namespaces);
    if (kl->tenants)
        tg_informer_free(kl->tenants);
    if (kl->nonces)
        tg_informer_free(kl->nonces);
    if (kl->client)
        tg_kube_client_free(kl->client);
    uv_run(kl->loop, UV_RUN_DEFAULT);
    tg_kube_config_free(&kl->config);
    free(kl->worker_clients);
    free(kl);
}
