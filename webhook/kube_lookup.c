/* kube_lookup.c - lookup.h over informer caches, and the live nonce read. */
#include "kube_lookup.h"

#include <stdatomic.h>
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
#include "kube/tenant_json.h"
#include "webhook/live_gate.h"
#include "webhook/nonce_secret.h"

#define NAMESPACES_PATH "/api/v1/namespaces"
#define TENANTS_PATH "/apis/authentication.liqo.io/v1beta1/tenants"
#define SECRETS_PATH "/api/v1/secrets"
#define SLICES_PATH "/apis/authentication.liqo.io/v1beta1/resourceslices"
/* Local slices only: the duplicate-name rule is about them (slice_decide.h). */
#define LOCAL_SLICE_SELECTOR "liqo.io/replication=true"
#define NONCE_SELECTOR TG_LABEL_NONCE "=true"
/* Only a namespace's liqo-nonce can be a nonce (nonce_secret.h), and a label
 * is something anyone who may create a Secret can set: by name too, so that
 * Secrets labelled elsewhere - up to 1 MiB each, in any number - are never
 * listed into this process. One per namespace can still come (informer.c
 * shrinks a list page that grows too big). */
#define NONCE_FIELDS "metadata.name=" TG_NONCE_SECRET_NAME
/* The live read: a list in one namespace, by name (the RBAC grants list, not
 * get), so that a Secret without the labels is seen and named in the denial. */
#define LIVE_PATH_FMT "/api/v1/namespaces/%s/secrets?fieldSelector=metadata.name%%3D" TG_NONCE_SECRET_NAME
/* Under kube-apiserver's 10 s default webhook timeout, with room to answer. */
#define LIVE_TIMEOUT_MS 4000
/* Reads of one namespace start at least this far apart (live_gate.h): a
 * flood of reviews for it costs the API server four reads a second. */
#define LIVE_MIN_INTERVAL_MS 250

struct tg_kube_lookup {
    uv_loop_t *loop;
    tg_kube_config config;         /* kept for the workers' clients */
    tg_kube_client *client;        /* main loop: the informers */
    tg_informer *namespaces;       /* labelled liqo.io/tenant-namespace=true */
    tg_informer *tenants;
    tg_informer *nonces;           /* Secrets labelled liqo.io/nonce=true, read by (namespace, name) */
    tg_informer *local_slices;     /* ResourceSlices labelled liqo.io/replication=true, metadata only */
    tg_lookup lookup;
    tg_live_nonce live;
    int nworkers;
    struct live_worker *live_workers;  /* [i] used only by worker i's thread */
    struct {
        atomic_ulong reads, resumed, started, queued, refused;
    } live_stats;
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
           tg_informer_synced(kl->nonces) && tg_informer_synced(kl->local_slices);
}

/* ---------- digests: what each admission reads, made once per stored object ---------- */

/* The two labels placement reads on a Namespace (placement.c). */
typedef struct ns_digest {
    int has[2];
    char value[2][TG_LABEL_VALUE_MAX];
} ns_digest;

static const char *const ns_digest_keys[2] = {TG_LABEL_TENANT_NAMESPACE, TG_LABEL_REMOTE_CLUSTER_ID};

static void *ns_digest_of(json_object *obj)
{
    ns_digest *d = calloc(1, sizeof(*d));

    for (int i = 0; d && i < 2; i++) {
        const char *v = labels_get(obj, ns_digest_keys[i]);
        /* A longer value is "no such label", as it always was here. */
        if (v && strlen(v) < TG_LABEL_VALUE_MAX) {
            d->has[i] = 1;
            memcpy(d->value[i], v, strlen(v) + 1);
        }
    }
    return d;
}

static void *nonce_digest_of(json_object *obj)
{
    return tg_nonce_digest_new(obj);
}

/* It holds a nonce: wiped before it goes. */
static void nonce_digest_free(void *d)
{
    tg_nonce_digest_free(d);
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

typedef struct ns_digest_visit {
    int key;                       /* index into ns_digest_keys, or -1: a label the digest
                                    * does not hold (absent: only the text had it) */
    char *value;
    int found, digested;
} ns_digest_visit;

static void visit_ns_digest(const void *digest, void *data)
{
    const ns_digest *d = digest;
    ns_digest_visit *v = data;

    if (!d)
        return;                    /* out of memory when it was stored: read the object */
    v->digested = 1;
    if (v->key >= 0 && d->has[v->key]) {
        memcpy(v->value, d->value[v->key], strlen(d->value[v->key]) + 1);
        v->found = 1;
    }
}

static int kl_namespace_label(const tg_lookup *lk, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                              int *ns_exists)
{
    tg_kube_lookup *kl = lk->data;
    tg_cache *c = tg_informer_cache(kl->namespaces);
    label_visit lv = {.key = key, .value = value};
    ns_digest_visit dv = {.key = -1, .value = value};

    for (int i = 0; i < 2; i++)
        if (strcmp(key, ns_digest_keys[i]) == 0)
            dv.key = i;
    /* A Namespace with a digest kept nothing else (digest only,
     * start_informer): a label outside the digest reads as absent, and
     * placement.c asks for none. */
    *ns_exists = tg_cache_get_digest(c, NULL, ns, visit_ns_digest, &dv);
    if (!*ns_exists || dv.digested)
        return dv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
    /* Stored without a digest (out of memory then): it kept its text. */
    tg_cache_get(c, NULL, ns, visit_label, &lv);
    return lv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

/* The duplicate checks are index lookups (one hash probe each), so that an
 * admission costs the same with 5,000 cached Tenants as with 5. */
static size_t kl_tenants_in_namespace(const tg_lookup *lk, const char *ns)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_namespace(tg_informer_cache(kl->tenants), ns, NULL, NULL);
}

static int kl_tenant_name_exists(const tg_lookup *lk, const char *name)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_name(tg_informer_cache(kl->tenants), name, NULL, NULL) > 0;
}

typedef struct nonce_visit {
    const char *ns;
    const char *cluster_id;
    char *nonce;
    size_t *len;
    tg_nonce_state state;
    int digested;
} nonce_visit;

static void visit_nonce(json_object *obj, void *data)
{
    nonce_visit *nv = data;

    nv->state = tg_nonce_secret_read(obj, nv->ns, nv->cluster_id, nv->nonce, nv->len);
}

/* The key is (namespace, liqo-nonce): tg_nonce_secret_read's first test. */
static void visit_nonce_digest(const void *digest, void *data)
{
    nonce_visit *nv = data;

    if (!digest)
        return;
    nv->digested = 1;
    nv->state = tg_nonce_digest_read(digest, nv->cluster_id, nv->nonce, nv->len);
}

/* By (namespace, name) only: the informer lists every Secret labelled
 * liqo.io/nonce=true, but one outside the Tenant's namespace never counts. */
static int kl_nonce_secret(const tg_lookup *lk, const char *ns, const char *cluster_id, char nonce[TG_LOOKUP_NONCE_MAX],
                           size_t *len)
{
    tg_kube_lookup *kl = lk->data;
    tg_cache *c = tg_informer_cache(kl->nonces);
    nonce_visit nv = {.ns = ns, .cluster_id = cluster_id, .nonce = nonce, .len = len, .state = TG_NONCE_ABSENT};

    if (tg_cache_get_digest(c, ns, TG_NONCE_SECRET_NAME, visit_nonce_digest, &nv) && !nv.digested)
        tg_cache_get(c, ns, TG_NONCE_SECRET_NAME, visit_nonce, &nv);
    return nv.state;
}

typedef struct tenant_visit {
    const char *cluster_id;
    tg_lookup_tenant *out;
    int found;
} tenant_visit;

/* Copies what a slice decision needs out of the first Tenant of the cluster. */
static void visit_tenant(json_object *obj, void *data)
{
    tenant_visit *tv = data;
    const char *id = tg_json_path_string(obj, "spec", "clusterID", NULL);
    const char *cond = tg_json_path_string(obj, "spec", "tenantCondition", NULL);
    const char *policy = tg_json_path_string(obj, "spec", "authzPolicy", NULL);
    const char *key = tg_json_path_string(obj, "spec", "publicKey", NULL);
    char err[64];

    if (tv->found || !id || strcmp(id, tv->cluster_id) != 0)
        return;
    tv->found = 1;
    tv->out->drained = cond && strcmp(cond, "Drained") == 0;
    tv->out->no_handshake = policy && strcmp(policy, "TolerateNoHandshake") == 0;
    if (key && key[0])
        tv->out->public_key = tg_base64_decode(key, strlen(key), &tv->out->public_key_len, err, sizeof(err));
}

static int kl_tenant_for_cluster(const tg_lookup *lk, const char *ns, const char *cluster_id, tg_lookup_tenant *out)
{
    tg_kube_lookup *kl = lk->data;
    tenant_visit tv = {.cluster_id = cluster_id, .out = out};

    memset(out, 0, sizeof(*out));
    /* Tenants are named after their consumer (Liqo and our CLI): a direct
     * hit first, then the namespace's others for a Tenant someone named
     * otherwise. */
    tg_cache_get(tg_informer_cache(kl->tenants), ns, cluster_id, visit_tenant, &tv);
    if (!tv.found)
        tg_cache_get_by_namespace(tg_informer_cache(kl->tenants), ns, visit_tenant, &tv);
    return tv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

static int kl_local_slice_name_exists(const tg_lookup *lk, const char *name)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_name(tg_informer_cache(kl->local_slices), name, NULL, NULL) > 0;
}

static size_t kl_cache_stats(const tg_lookup *lk, tg_lookup_cache_stats *out, size_t cap)
{
    tg_kube_lookup *kl = lk->data;
    const struct { const char *cache; tg_informer *inf; } caches[] = {
        {"namespaces", kl->namespaces},
        {"tenants", kl->tenants},
        {"nonce_secrets", kl->nonces},
        {"local_slices", kl->local_slices},
    };
    size_t n;

    for (n = 0; n < cap && n < sizeof(caches) / sizeof(caches[0]); n++)
        out[n] = (tg_lookup_cache_stats){.cache = caches[n].cache,
                                         .objects = tg_informer_count(caches[n].inf),
                                         .failures = tg_informer_stats_get(caches[n].inf)->failures};
    return n;
}

static const tg_lookup_ops kube_ops = {
    .synced = kl_synced,
    .namespace_label = kl_namespace_label,
    .tenants_in_namespace = kl_tenants_in_namespace,
    .tenant_name_exists = kl_tenant_name_exists,
    .nonce_secret = kl_nonce_secret,
    .tenant_for_cluster = kl_tenant_for_cluster,
    .local_slice_name_exists = kl_local_slice_name_exists,
    .cache_stats = kl_cache_stats,
};

/* ---------- live read (worker threads) ---------- */

/* One review waiting for a read of its namespace (live_gate.h). */
typedef struct live_req {
    tg_live_waiter node;           /* first: the gate hands back this pointer */
    tg_live_nonce_done done;
    void *cbdata;
    char cluster_id[TG_LABEL_VALUE_MAX];
} live_req;

/* One read out: at most one per gate slot, so a fixed array holds them all. */
typedef struct live_read {
    struct live_worker *lw;
    int busy;
    char ns[TG_LABEL_VALUE_MAX];
} live_read;

/* Worker i's live reads; touched only by worker i's thread. */
typedef struct live_worker {
    tg_kube_lookup *kl;
    uv_loop_t *loop;               /* NULL until the worker's first live read */
    tg_kube_client *client;
    tg_live_gate gate;
    uv_timer_t timer;              /* starts the reads the gate has scheduled */
    live_read reads[TG_LIVE_GATE_SLOTS];
} live_worker;

static void count(atomic_ulong *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void answer_each(tg_live_waiter *w, const char *ns, json_object *items)
{
    while (w) {
        live_req *lr = (live_req *)w;
        char nonce[TG_LOOKUP_NONCE_MAX];
        size_t len = 0;
        tg_nonce_state st = TG_NONCE_ABSENT;

        w = w->next;
        if (!items) {
            lr->done(lr->cbdata, NULL, 0, -1);
            free(lr);
            continue;
        }
        /* At most one Secret has that name in that namespace; the rule is
         * checked here again, whatever the API server sent. */
        for (size_t i = 0; i < json_object_array_length(items) && st == TG_NONCE_ABSENT; i++)
            st = tg_nonce_secret_read(json_object_array_get_idx(items, i), ns, lr->cluster_id, nonce, &len);
        if (st == TG_NONCE_FOUND)
            lr->done(lr->cbdata, nonce, len, TG_NONCE_FOUND);
        else
            lr->done(lr->cbdata, NULL, 0, (int)st);
        OPENSSL_cleanse(nonce, sizeof(nonce));
        free(lr);
    }
}

static void on_due(uv_timer_t *t);

/* Let the loop start whatever the gate has due (never from inside fetch:
 * a read that fails to start answers its waiters). */
static void kick(live_worker *lw)
{
    uv_timer_start(&lw->timer, on_due, 0, 0);
}

static void on_live_response(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    live_read *rd = data;
    live_worker *lw = rd->lw;
    json_object *list = NULL, *items = NULL;

    (void)r;
    if (resp->tls_resumed)
        count(&lw->kl->live_stats.resumed);
    if (resp->status != 200 || !(list = tg_json_parse(resp->body, resp->body_len, NULL, 0)) ||
        !(items = tg_json_path(list, "items", NULL)) || !json_object_is_type(items, json_type_array)) {
        tg_log(TG_LOG_WARN, "live read of the nonce Secret failed", TG_LOG_STR("namespace", rd->ns),
               TG_LOG_INT("status", resp->status), TG_LOG_STR("error", resp->error));
        items = NULL;
    }
    answer_each(tg_live_gate_finish(&lw->gate, rd->ns, uv_now(lw->loop)), rd->ns, items);
    rd->busy = 0;
    if (list)
        json_object_put(list);
    kick(lw);     /* the next read of this namespace may be due */
}

static int start_read(live_worker *lw, const char *ns)
{
    live_read *rd = NULL;
    char path[256], err[256];
    tg_kube_request_opts opts = {.timeout_ms = LIVE_TIMEOUT_MS, .max_body = (size_t)4 << 20};

    for (int i = 0; i < TG_LIVE_GATE_SLOTS && !rd; i++)
        if (!lw->reads[i].busy)
            rd = &lw->reads[i];
    if (!rd)
        return -1;     /* cannot happen: one read per slot */
    rd->lw = lw;
    snprintf(rd->ns, sizeof(rd->ns), "%s", ns);
    /* A DNS label (the decision checked): nothing to escape. */
    snprintf(path, sizeof(path), LIVE_PATH_FMT, ns);
    opts.path = path;
    if (!tg_kube_request_start(lw->client, &opts, on_live_response, rd, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cannot start the live nonce read", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("error", err));
        return -1;
    }
    rd->busy = 1;
    count(&lw->kl->live_stats.reads);
    return 0;
}

/* The reads the gate has scheduled and that are due now. */
static void on_due(uv_timer_t *t)
{
    live_worker *lw = t->data;
    const char *ns;
    uint64_t wait;

    while ((ns = tg_live_gate_due(&lw->gate, uv_now(lw->loop), &wait)) != NULL) {
        char name[TG_LABEL_VALUE_MAX];

        snprintf(name, sizeof(name), "%s", ns);
        if (start_read(lw, name) != 0)
            answer_each(tg_live_gate_finish(&lw->gate, name, uv_now(lw->loop)), name, NULL);
    }
    if (wait != UINT64_MAX)
        uv_timer_start(&lw->timer, on_due, wait, 0);
}

static live_worker *worker_ready(tg_kube_lookup *kl, uv_loop_t *loop, int worker)
{
    live_worker *lw = &kl->live_workers[worker];
    char err[256];

    if (lw->loop)
        return lw;
    if (!(lw->client = tg_kube_client_new(loop, &kl->config, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot create the worker's API client", TG_LOG_STR("error", err));
        return NULL;
    }
    lw->kl = kl;
    lw->loop = loop;
    tg_live_gate_init(&lw->gate, LIVE_MIN_INTERVAL_MS);
    uv_timer_init(loop, &lw->timer);
    lw->timer.data = lw;
    return lw;
}

static int live_fetch(void *self, uv_loop_t *loop, int worker, const char *ns, const char *cluster_id,
                      tg_live_nonce_done done, void *cbdata)
{
    tg_kube_lookup *kl = self;
    live_worker *lw;
    live_req *lr;

    if (worker < 0 || worker >= kl->nworkers || strlen(cluster_id) >= TG_LABEL_VALUE_MAX ||
        strlen(ns) >= TG_LABEL_VALUE_MAX)
        return TG_LIVE_FETCH_FAILED;
    if (!(lw = worker_ready(kl, loop, worker)) || !(lr = calloc(1, sizeof(*lr))))
        return TG_LIVE_FETCH_FAILED;
    lr->done = done;
    lr->cbdata = cbdata;
    snprintf(lr->cluster_id, sizeof(lr->cluster_id), "%s", cluster_id);
    switch (tg_live_gate_join(&lw->gate, ns, &lr->node, uv_now(loop))) {
    case TG_LIVE_READ_NOW:
        if (start_read(lw, ns) != 0) {
            tg_live_gate_finish(&lw->gate, ns, uv_now(loop));    /* hands back lr alone */
            free(lr);
            return TG_LIVE_FETCH_FAILED;
        }
        count(&kl->live_stats.started);
        return 0;
    case TG_LIVE_QUEUED:
        count(&kl->live_stats.queued);
        kick(lw);
        return 0;
    case TG_LIVE_BUSY:
    default:
        free(lr);
        count(&kl->live_stats.refused);
        return TG_LIVE_FETCH_BUSY;
    }
}

static void live_worker_stop(void *self, int worker)
{
    tg_kube_lookup *kl = self;
    live_worker *lw;
    tg_live_waiter *left;

    if (worker < 0 || worker >= kl->nworkers || !(lw = &kl->live_workers[worker])->loop)
        return;
    /* The loop stops: the reviews still waiting are not answered (the
     * server is past its grace period), their records are freed. */
    tg_kube_client_free(lw->client);
    lw->client = NULL;
    for (left = tg_live_gate_drain(&lw->gate); left;) {
        live_req *lr = (live_req *)left;

        left = left->next;
        free(lr);
    }
    uv_close((uv_handle_t *)&lw->timer, NULL);
}

static void live_stats(void *self, tg_live_nonce_stats *out)
{
    tg_kube_lookup *kl = self;

    out->reads = atomic_load_explicit(&kl->live_stats.reads, memory_order_relaxed);
    out->resumed = atomic_load_explicit(&kl->live_stats.resumed, memory_order_relaxed);
    out->started = atomic_load_explicit(&kl->live_stats.started, memory_order_relaxed);
    out->queued = atomic_load_explicit(&kl->live_stats.queued, memory_order_relaxed);
    out->refused = atomic_load_explicit(&kl->live_stats.refused, memory_order_relaxed);
}

/* ---------- life cycle ---------- */

/* What the lookups read, and nothing else is kept (metadata, minus
 * managedFields, always is): a Namespace's and a Tenant's metadata, a nonce
 * Secret's data.nonce. managedFields alone is most of a small object's tree. */
static const char *const keep_metadata[] = {NULL};
static const char *const keep_nonce[] = {"data." TG_NONCE_DATA_KEY, NULL};
/* A replicated ResourceSlice is checked against its consumer's Tenant
 * (tenant_for_cluster): these fields of it, and nothing else. */
static const char *const keep_tenant[] = {"spec.clusterID", "spec.tenantCondition", "spec.authzPolicy",
                                          "spec.publicKey", NULL};

/* Every cache stores its objects as compact JSON text (cache.h): a json-c
 * tree costs about 700 bytes per JSON object (each carries a 16-slot hash
 * table), 2-3 KB per cached Namespace or Secret, and the text a tenth of
 * that. A read of the text is a parse (~57,000 instructions for a small
 * object), so what an admission reads of Namespaces and nonce Secrets is
 * kept beside them as a digest, made once when they are stored, and their
 * text is not kept at all (tg_cache_keep_digest_only: about 350 bytes less
 * per object); the duplicate checks are index counts. No parse on the
 * admission path. */
static tg_informer *start_informer(tg_kube_lookup *kl, const char *path, const char *selector,
                                   const char *field, unsigned index_metadata, const char *const *keep,
                                   void *(*digest)(json_object *), void (*digest_free)(void *), char *err,
                                   size_t err_len)
{
    tg_informer_opts opts = {.path = path, .label_selector = selector, .field_selector = field,
                             .index_metadata = index_metadata, .keep_fields = keep, .compact = 1};
    tg_informer *inf = tg_informer_new(kl->client, &opts, err, err_len);

    if (inf && digest && (tg_cache_set_digest(tg_informer_cache(inf), digest, digest_free) != 0 ||
                          tg_cache_keep_digest_only(tg_informer_cache(inf)) != 0)) {
        snprintf(err, err_len, "out of memory");
        tg_informer_free(inf);
        return NULL;
    }
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

    if (!kl || !(kl->live_workers = calloc((size_t)(workers > 0 ? workers : 1), sizeof(*kl->live_workers)))) {
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
    /* Namespaces and nonce Secrets are read by key; Tenants by namespace and
     * by name too (duplicates), local slices by name. */
    if (!(kl->namespaces = start_informer(kl, NAMESPACES_PATH, TG_LABEL_TENANT_NAMESPACE "=true", NULL, 0,
                                          keep_metadata, ns_digest_of, free, err, err_len)) ||
        !(kl->tenants = start_informer(kl, TENANTS_PATH, NULL, NULL, TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME,
                                       keep_tenant, NULL, NULL, err, err_len)) ||
        !(kl->nonces = start_informer(kl, SECRETS_PATH, NONCE_SELECTOR, NONCE_FIELDS, 0, keep_nonce,
                                      nonce_digest_of, nonce_digest_free, err, err_len)) ||
        !(kl->local_slices = start_informer(kl, SLICES_PATH, LOCAL_SLICE_SELECTOR, NULL, TG_CACHE_BY_NAME,
                                            keep_metadata, NULL, NULL, err, err_len)))
        goto fail;
    kl->lookup.ops = &kube_ops;
    kl->lookup.data = kl;
    kl->live.fetch = live_fetch;
    kl->live.worker_stop = live_worker_stop;
    kl->live.stats = live_stats;
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
    if (kl->local_slices)
        tg_informer_free(kl->local_slices);
    if (kl->client)
        tg_kube_client_free(kl->client);
    uv_run(kl->loop, UV_RUN_DEFAULT);
    tg_kube_config_free(&kl->config);
    free(kl->live_workers);
    free(kl);
}
