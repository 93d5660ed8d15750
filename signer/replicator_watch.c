/* replicator_watch.c - see replicator_watch.h. */
#include "signer/replicator_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/log.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/controller.h"
#include "signer/reconcile_common.h"
#include "signer/remote_pool.h"
#include "signer/replica_plan.h"

struct tg_repl_watch;

/* One informer whose events become queue keys of a kind in a local namespace. */
typedef struct kind_ref {
    struct tg_repl_watch *w;
    const tg_repl_kind *kind;
    const char *local_ns;      /* NULL: the object's own namespace (local informers) */
    tg_informer *inf;
} kind_ref;

/* The copies behind one ControlPlane Secret. */
typedef struct remote_watch {
    char key[320];             /* the Secret, "ns/name" */
    char ns[256];              /* its namespace: where the local objects are */
    unsigned char digest[32];  /* kubeconfig and remote namespace it was built from */
    tg_kube_client *client;
    kind_ref refs[TG_REPL_KINDS];
    struct remote_watch *next;
} remote_watch;

struct tg_repl_watch {
    uv_loop_t *loop;
    tg_signer *s;
    tg_events *events;         /* the one scope judge and its counter */
    unsigned kinds;
    tg_informer *secrets;
    kind_ref local[TG_REPL_KINDS];
    remote_watch *remotes;
    uv_timer_t resync;
};

/* A key of the local namespace ns, judged like any controller's key. */
static void enqueue(tg_repl_watch *w, const tg_repl_kind *k, const char *ns, const char *name)
{
    char key[TG_WQ_KEY_MAX];

    if (!ns || !name || !tg_events_judge_key(w->events, &tg_ctl_replicator, ns, name))
        return;
    snprintf(key, sizeof(key), "%s/%s/%s", k->code, ns, name);
    tg_wq_add(w->s->q, key, tg_wq_now_ms());
}

/* A local object to replicate: judged by the replicator's scope rule like
 * every controller's own objects (events.h), then queued. */
static void on_local(tg_repl_watch *w, const tg_repl_kind *k, json_object *o, int deleted)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    char key[TG_WQ_KEY_MAX];

    if (!ns || !name || !tg_events_ready(w->events) || !tg_events_judge(w->events, &tg_ctl_replicator, o, deleted))
        return;
    snprintf(key, sizeof(key), "%s/%s/%s", k->code, ns, name);
    tg_wq_add(w->s->q, key, tg_wq_now_ms());
}

static void on_obj(kind_ref *r, json_object *o, int deleted)
{
    if (!r->local_ns) {
        on_local(r->w, r->kind, o, deleted);
        return;
    }
    /* a remote copy: its key is in the Secret's namespace, judged by that */
    enqueue(r->w, r->kind, r->local_ns, tg_json_path_string(o, "metadata", "name", NULL));
}

static void on_add(json_object *o, void *data) { on_obj(data, o, 0); }
static void on_update(json_object *old_obj, json_object *o, void *data)
{
    (void)old_obj;
    on_obj(data, o, 0);
}
static void on_delete(json_object *o, void *data) { on_obj(data, o, 1); }

static const char *const keep_nothing[] = {NULL};

static tg_informer *start_informer(tg_kube_client *c, kind_ref *r, const char *path, const char *selector,
                                   char *err, size_t err_len)
{
    tg_informer_opts o = {.path = path, .label_selector = selector, .keep_fields = keep_nothing, .compact = 1};
    tg_informer *inf;

    o.handlers = (tg_cache_handlers){.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .data = r};
    if (!(inf = tg_informer_new(c, &o, err, err_len)))
        return NULL;
    if (tg_informer_start(inf, err, err_len) != 0) {
        tg_informer_free(inf);
        return NULL;
    }
    return inf;
}

/* ---------- every local object of a namespace, every key ---------- */

typedef struct visit_ctx {
    tg_repl_watch *w;
    const tg_repl_kind *kind;
    const char *only_ns;       /* filter, or NULL */
    const char *as_ns;         /* the key's namespace, or NULL: the object's */
} visit_ctx;

static void on_visit(json_object *o, void *data)
{
    visit_ctx *v = data;
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);

    if (v->only_ns && (!ns || strcmp(ns, v->only_ns) != 0))
        return;
    if (v->as_ns)
        enqueue(v->w, v->kind, v->as_ns, tg_json_path_string(o, "metadata", "name", NULL));
    else
        on_local(v->w, v->kind, o, 0);
}

static void enqueue_local(tg_repl_watch *w, const char *only_ns)
{
    for (int i = 0; i < TG_REPL_KINDS; i++) {
        visit_ctx v = {.w = w, .kind = &tg_repl_kinds[i], .only_ns = only_ns};
        if (w->local[i].inf)
            tg_cache_foreach(tg_informer_cache(w->local[i].inf), on_visit, &v);
    }
}

static void on_resync(uv_timer_t *t)
{
    tg_repl_watch *w = t->data;

    enqueue_local(w, NULL);
    /* Copies whose original is gone (deleted while the finalizer was
     * removed by hand, or before this process ran): their keys find no
     * local object and delete them. */
    for (remote_watch *rw = w->remotes; rw; rw = rw->next)
        for (int i = 0; i < TG_REPL_KINDS; i++) {
            visit_ctx v = {.w = w, .kind = &tg_repl_kinds[i], .as_ns = rw->ns};
            if (rw->refs[i].inf)
                tg_cache_foreach(tg_informer_cache(rw->refs[i].inf), on_visit, &v);
        }
}

/* ---------- remote informers per Secret ---------- */

static void remote_stop(remote_watch *rw)
{
    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (rw->refs[i].inf) {
            tg_informer_free(rw->refs[i].inf);
            rw->refs[i].inf = NULL;
        }
    if (rw->client) {
        tg_kube_client_free(rw->client);
        rw->client = NULL;
    }
}

/* The Secret's kubeconfig (secret bytes, malloc'd) and remote namespace. */
static char *secret_kubeconfig(json_object *sec, size_t *len, const char **remote_ns)
{
    *remote_ns = tg_json_path_string(sec, "metadata", "annotations", TG_ANNOTATION_REMOTE_TENANT_NS, NULL);
    return (char *)rc_secret_data(sec, "kubeconfig", len);
}

static void remote_start(tg_repl_watch *w, remote_watch *rw, const char *kc, size_t kc_len, const char *remote_ns)
{
    tg_kube_config cfg;
    char err[512], path[512], sel[320];
    int i;

    memset(&cfg, 0, sizeof(cfg));
    if (tg_kube_config_parse(&cfg, kc, kc_len, "/nonexistent", NULL, err, sizeof(err)) != 0 || cfg.token_file ||
        !(rw->client = tg_kube_client_new(w->loop, &cfg, err, sizeof(err)))) {
        if (cfg.token_file)
            snprintf(err, sizeof(err), "the kubeconfig names a token file: refused");
        tg_log(TG_LOG_WARN, "replicator: cannot use a ControlPlane kubeconfig Secret", TG_LOG_STR("secret", rw->key),
               TG_LOG_STR("error", err));
        tg_kube_config_free(&cfg);
        return;
    }
    tg_kube_config_free(&cfg);
    snprintf(sel, sizeof(sel), TG_LABEL_REPLICATED "=true," TG_LABEL_ORIGIN_ID "=%s", w->s->cluster_id);
    for (i = 0; i < TG_REPL_KINDS; i++) {
        const tg_repl_kind *k = &tg_repl_kinds[i];
        if (!(w->kinds & (1u << i)))
            continue;
        rw->refs[i] = (kind_ref){.w = w, .kind = k, .local_ns = rw->ns};
        snprintf(path, sizeof(path), "%s/namespaces/%s/%s", k->group_path, remote_ns, k->plural);
        if (!(rw->refs[i].inf = start_informer(rw->client, &rw->refs[i], path, sel, err, sizeof(err))))
            tg_log(TG_LOG_WARN, "replicator: cannot watch the remote copies", TG_LOG_STR("secret", rw->key),
                   TG_LOG_STR("kind", k->plural), TG_LOG_STR("error", err));
    }
    tg_log(TG_LOG_INFO, "replicator: watching the remote tenant namespace", TG_LOG_STR("secret", rw->key),
           TG_LOG_STR("remote_namespace", remote_ns));
}

static remote_watch *remote_find(tg_repl_watch *w, const char *key, remote_watch ***link)
{
    remote_watch **p;

    for (p = &w->remotes; *p; p = &(*p)->next)
        if (strcmp((*p)->key, key) == 0)
            break;
    if (link)
        *link = p;
    return *p;
}

/* What a remote client is built from, the kubeconfig and the remote
 * namespace, as one SHA-256: equal digests, nothing to rebuild. All zero when
 * hashing fails (out of memory). */
static void source_digest(const char *kc, size_t kc_len, const char *remote_ns, unsigned char digest[32])
{
    EVP_MD_CTX *sha = EVP_MD_CTX_new();

    if (!sha || EVP_DigestInit_ex(sha, EVP_sha256(), NULL) != 1 || EVP_DigestUpdate(sha, kc, kc_len) != 1 ||
        EVP_DigestUpdate(sha, "\n", 1) != 1 || EVP_DigestUpdate(sha, remote_ns, strlen(remote_ns)) != 1 ||
        EVP_DigestFinal_ex(sha, digest, NULL) != 1)
        memset(digest, 0, 32);
    EVP_MD_CTX_free(sha);
}

static void on_secret(json_object *sec, int deleted, tg_repl_watch *w)
{
    const char *ns = tg_json_path_string(sec, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(sec, "metadata", "name", NULL);
    const char *remote_ns = NULL;
    char key[320], *kc = NULL;
    size_t kc_len = 0;
    unsigned char digest[32];
    remote_watch *rw, **link;

    if (!ns || !name || !tg_events_ready(w->events))
        return;                           /* the start-up replay brings it back */
    if (!deleted && tg_json_path(sec, "metadata", "deletionTimestamp", NULL)) {
        /* held by our finalizer until its namespace holds no replicated object */
        snprintf(key, sizeof(key), "replsec/%s/%s", ns, name);
        tg_wq_add(w->s->q, key, tg_wq_now_ms());
        /* and its objects decide again at once: one the provider refuses,
         * waiting out its backoff, may now be let go (consumer_replicator.c) */
        enqueue_local(w, ns);
    }
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    rw = remote_find(w, key, &link);
    /* The replicator's scope rule (a Secret labelled for its namespace's
     * peer in liqo-tenant-<peer>): out of it, never connect with it and
     * drop what it started. */
    if (!tg_events_judge(w->events, &tg_ctl_replicator, sec, deleted))
        deleted = 1;
    if (!deleted)
        kc = secret_kubeconfig(sec, &kc_len, &remote_ns);
    if (deleted || !kc || !remote_ns || !*remote_ns) {
        if (rw) {
            *link = rw->next;
            remote_stop(rw);
            free(rw);
        }
        tg_remote_pool_drop(w->s->remote_pool, key);
        rc_free_secret(kc, kc_len);
        enqueue_local(w, ns);
        return;
    }
    source_digest(kc, kc_len, remote_ns, digest);
    if (rw && memcmp(rw->digest, digest, sizeof(digest)) == 0) {
        rc_free_secret(kc, kc_len);
        return;                           /* metadata only: nothing to rebuild */
    }
    if (rw) {
        remote_stop(rw);
        tg_log(TG_LOG_INFO, "replicator: ControlPlane kubeconfig changed, remote client rebuilt",
               TG_LOG_STR("secret", key));
    } else if ((rw = calloc(1, sizeof(*rw)))) {
        snprintf(rw->key, sizeof(rw->key), "%s", key);
        snprintf(rw->ns, sizeof(rw->ns), "%s", ns);
        rw->next = w->remotes;
        w->remotes = rw;
    }
    if (rw) {
        memcpy(rw->digest, digest, sizeof(digest));
        remote_start(w, rw, kc, kc_len, remote_ns);
    }
    rc_free_secret(kc, kc_len);
    enqueue_local(w, ns);
}

static void on_secret_add(json_object *o, void *data) { on_secret(o, 0, data); }
static void on_secret_update(json_object *old_obj, json_object *o, void *data)
{
    (void)old_obj;
    on_secret(o, 0, data);
}
static void on_secret_delete(json_object *o, void *data) { on_secret(o, 1, data); }

typedef struct secret_replay {
    tg_repl_watch *w;
    const char *only_ns;
} secret_replay;

static void on_secret_replay(json_object *sec, void *data)
{
    secret_replay *r = data;
    const char *ns = tg_json_path_string(sec, "metadata", "namespace", NULL);

    if (!r->only_ns || (ns && strcmp(ns, r->only_ns) == 0))
        on_secret(sec, 0, r->w);
}

/* Judged again (events.h): everything once the Namespaces are known, a
 * namespace's objects when its labels change. */
static void on_replay(void *data, const char *ns)
{
    secret_replay r = {.w = data, .only_ns = ns};

    tg_cache_foreach(tg_informer_cache(r.w->secrets), on_secret_replay, &r);
    if (ns)
        enqueue_local(r.w, ns);          /* on_secret did for the namespaces with a Secret */
    else
        enqueue_local(r.w, NULL);
}

/* ---------- lifecycle ---------- */

static const char *const keep_secret[] = {"data.kubeconfig", "metadata.annotations", NULL};

tg_repl_watch *tg_repl_watch_new(uv_loop_t *loop, tg_kube_client *local, tg_signer *s, tg_events *events,
                                 unsigned kinds, char *err, size_t err_len)
{
    tg_repl_watch *w = calloc(1, sizeof(*w));
    tg_informer_opts so = {.path = "/api/v1/secrets",
                           .label_selector = TG_LABEL_IDENTITY_TYPE "=ControlPlane," TG_LABEL_REMOTE_CLUSTER_ID,
                           .index_label = TG_LABEL_REMOTE_CLUSTER_ID, .keep_fields = keep_secret};
    char path[256];
    int i;

    if (!w) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    w->loop = loop;
    w->s = s;
    w->events = events;
    w->kinds = kinds;
    so.handlers = (tg_cache_handlers){.on_add = on_secret_add, .on_update = on_secret_update,
                                      .on_delete = on_secret_delete, .data = w};
    if (!(w->secrets = tg_informer_new(local, &so, err, err_len)))
        goto fail;
    s->cp_secret_cache = tg_informer_cache(w->secrets);
    for (i = 0; i < TG_REPL_KINDS; i++) {
        const tg_repl_kind *k = &tg_repl_kinds[i];
        if (!(kinds & (1u << i)))
            continue;
        w->local[i] = (kind_ref){.w = w, .kind = k};
        snprintf(path, sizeof(path), "%s/%s", k->group_path, k->plural);
        if (!(w->local[i].inf = start_informer(local, &w->local[i], path,
                                               TG_LABEL_REPLICATION "=true," TG_LABEL_REMOTE_ID, err, err_len)))
            goto fail;
        s->repl_caches[i] = tg_informer_cache(w->local[i].inf);
    }
    if (tg_informer_start(w->secrets, err, err_len) != 0)
        goto fail;
    uv_timer_init(loop, &w->resync);
    w->resync.data = w;
    uv_timer_start(&w->resync, on_resync, TG_REPL_RESYNC_MS, TG_REPL_RESYNC_MS);
    tg_events_set_own_replay(events, on_replay, w);
    return w;
fail:
    for (i = 0; i < TG_REPL_KINDS; i++)
        if (w->local[i].inf)
            tg_informer_free(w->local[i].inf);
    if (w->secrets)
        tg_informer_free(w->secrets);
    s->cp_secret_cache = NULL;
    memset(s->repl_caches, 0, sizeof(s->repl_caches));
    free(w);
    return NULL;
}

int tg_repl_watch_synced(tg_repl_watch *w)
{
    if (!tg_informer_synced(w->secrets))
        return 0;
    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (w->local[i].inf && !tg_informer_synced(w->local[i].inf))
            return 0;
    return 1;
}

void tg_repl_watch_remotes(tg_repl_watch *w, int *running, int *synced)
{
    *running = *synced = 0;
    for (remote_watch *rw = w->remotes; rw; rw = rw->next)
        for (int i = 0; i < TG_REPL_KINDS; i++)
            if (rw->refs[i].inf) {
                (*running)++;
                *synced += tg_informer_synced(rw->refs[i].inf);
            }
}

static void on_resync_closed(uv_handle_t *h)
{
    free(h->data);
}

void tg_repl_watch_free(tg_repl_watch *w)
{
    remote_watch *rw, *next;

    if (!w)
        return;
    tg_events_set_own_replay(w->events, NULL, NULL);
    for (rw = w->remotes; rw; rw = next) {
        next = rw->next;
        remote_stop(rw);
        free(rw);
    }
    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (w->local[i].inf)
            tg_informer_free(w->local[i].inf);
    tg_informer_free(w->secrets);
    w->s->cp_secret_cache = NULL;
    memset(w->s->repl_caches, 0, sizeof(w->s->repl_caches));
    uv_close((uv_handle_t *)&w->resync, on_resync_closed);
}

tg_cache_handlers tg_repl_watch_secret_handlers(tg_repl_watch *w)
{
    return (tg_cache_handlers){.on_add = on_secret_add, .on_update = on_secret_update,
                               .on_delete = on_secret_delete, .data = w};
}

tg_cache_handlers tg_repl_watch_local_handlers(tg_repl_watch *w, int kind)
{
    kind_ref *r = &w->local[kind];

    return (tg_cache_handlers){.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .data = r};
}
