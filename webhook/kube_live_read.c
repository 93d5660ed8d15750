/* kube_live_read.c - see kube_live_read.h. */
#include "kube_live_read.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "common/log.h"
#include "kube/client.h"
#include "kube/json.h"
#include "webhook/live_gate.h"
#include "webhook/lookup.h"
#include "webhook/nonce_secret.h"

/* A list in one namespace, by name (the RBAC grants list, not get), so that
 * a Secret without the labels is seen and named in the denial. */
#define LIVE_PATH_FMT "/api/v1/namespaces/%s/secrets?fieldSelector=metadata.name%%3D" TG_NONCE_SECRET_NAME
/* Under kube-apiserver's 10 s default webhook timeout, with room to answer. */
#define LIVE_TIMEOUT_MS 4000
/* Reads of one namespace start at least this far apart (live_gate.h): a
 * flood of reviews for it costs the API server four reads a second. */
#define LIVE_MIN_INTERVAL_MS 250

struct tg_kube_live {
    const tg_kube_config *config;  /* the workers' clients are made from it */
    int nworkers;
    struct live_worker *workers;   /* [i] used only by worker i's thread */
    tg_live_nonce live;
    struct {
        atomic_ulong reads, resumed, started, queued, refused;
    } stats;
};

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
    tg_kube_live *kv;
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
        count(&lw->kv->stats.resumed);
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
    count(&lw->kv->stats.reads);
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

static live_worker *worker_ready(tg_kube_live *kv, uv_loop_t *loop, int worker)
{
    live_worker *lw = &kv->workers[worker];
    char err[256];

    if (lw->loop)
        return lw;
    if (!(lw->client = tg_kube_client_new(loop, kv->config, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot create the worker's API client", TG_LOG_STR("error", err));
        return NULL;
    }
    lw->kv = kv;
    lw->loop = loop;
    tg_live_gate_init(&lw->gate, LIVE_MIN_INTERVAL_MS);
    uv_timer_init(loop, &lw->timer);
    lw->timer.data = lw;
    return lw;
}

static int live_fetch(void *self, uv_loop_t *loop, int worker, const char *ns, const char *cluster_id,
                      tg_live_nonce_done done, void *cbdata)
{
    tg_kube_live *kv = self;
    live_worker *lw;
    live_req *lr;

    if (worker < 0 || worker >= kv->nworkers || strlen(cluster_id) >= TG_LABEL_VALUE_MAX ||
        strlen(ns) >= TG_LABEL_VALUE_MAX)
        return TG_LIVE_FETCH_FAILED;
    if (!(lw = worker_ready(kv, loop, worker)) || !(lr = calloc(1, sizeof(*lr))))
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
        count(&kv->stats.started);
        return 0;
    case TG_LIVE_QUEUED:
        count(&kv->stats.queued);
        kick(lw);
        return 0;
    case TG_LIVE_BUSY:
    default:
        free(lr);
        count(&kv->stats.refused);
        return TG_LIVE_FETCH_BUSY;
    }
}

static void live_worker_stop(void *self, int worker)
{
    tg_kube_live *kv = self;
    live_worker *lw;
    tg_live_waiter *left;

    if (worker < 0 || worker >= kv->nworkers || !(lw = &kv->workers[worker])->loop)
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
    tg_kube_live *kv = self;

    out->reads = atomic_load_explicit(&kv->stats.reads, memory_order_relaxed);
    out->resumed = atomic_load_explicit(&kv->stats.resumed, memory_order_relaxed);
    out->started = atomic_load_explicit(&kv->stats.started, memory_order_relaxed);
    out->queued = atomic_load_explicit(&kv->stats.queued, memory_order_relaxed);
    out->refused = atomic_load_explicit(&kv->stats.refused, memory_order_relaxed);
}

tg_kube_live *tg_kube_live_new(const tg_kube_config *config, int workers)
{
    tg_kube_live *kv = calloc(1, sizeof(*kv));

    if (!kv || !(kv->workers = calloc((size_t)(workers > 0 ? workers : 1), sizeof(*kv->workers)))) {
        free(kv);
        return NULL;
    }
    kv->config = config;
    kv->nworkers = workers;
    kv->live.fetch = live_fetch;
    kv->live.worker_stop = live_worker_stop;
    kv->live.stats = live_stats;
    kv->live.self = kv;
    return kv;
}

const tg_live_nonce *tg_kube_live_get(tg_kube_live *kv)
{
    return &kv->live;
}

void tg_kube_live_free(tg_kube_live *kv)
{
    if (!kv)
        return;
    free(kv->workers);
    free(kv);
}
