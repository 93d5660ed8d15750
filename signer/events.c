/* events.c - the one informer handler of every controller (events.h). */
#include "signer/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"

typedef struct handler_ref {
    struct tg_events *e;
    tg_informer_id id;
} handler_ref;

struct tg_events {
    tg_signer *s;
    tg_metric_family *m_out_of_scope;
    tg_cache *caches[TG_INF_COUNT];
    handler_ref refs[TG_INF_COUNT];
    json_object *noted;       /* "controller|ns/name" already logged out of scope (a set) */
    int replayed;             /* the start-up replay ran: namespace changes replay their objects */
    tg_events_replay_fn own_replay; /* the watches of their own (tg_events_set_own_replay) */
    void *own_replay_data;
};

struct tg_key_sink {
    tg_events *e;
    /* the keys come from another informer than their controller's own: what
     * they depend on changed (a wake-up), see tg_key_emit */
    int wake;
};

static int enabled(const tg_signer *s, const tg_controller_desc *d)
{
    return (s->controllers & d->bit) != 0;
}

int tg_events_wanted(const tg_signer *s, tg_informer_id id)
{
    for (const tg_controller_desc *const *d = tg_controller_descriptors; *d; d++) {
        if (!enabled(s, *d))
            continue;
        /* every controller in a tenant namespace judges by the Namespace's labels */
        if (id == TG_INF_NAMESPACES && tg_scope_where_tenant((*d)->scope.where))
            return 1;
        for (int i = 0; i < (*d)->nsubs; i++)
            if ((*d)->subs[i].informer == id)
                return 1;
    }
    return 0;
}

typedef struct ns_look {
    tg_ns_facts f;
    char *cid;
    size_t cid_len;
} ns_look;

static void on_ns_visit(json_object *o, void *data)
{
    ns_look *l = data;
    tg_ns_facts f = tg_ns_facts_of(o);

    l->f = f;
    if (f.cluster_id && strlen(f.cluster_id) < l->cid_len) {
        strcpy(l->cid, f.cluster_id);
        l->f.cluster_id = l->cid;
    } else {
        l->f.cluster_id = NULL;   /* too long to be a cluster id */
        l->f.tenant = 0;
    }
}

tg_ns_facts tg_ns_facts_lookup(tg_signer *s, const char *ns, char *cid, size_t cid_len)
{
    ns_look l = {.cid = cid, .cid_len = cid_len};

    if (ns && *ns && s->ns_cache)
        tg_cache_get(s->ns_cache, NULL, ns, on_ns_visit, &l);
    return l.f;
}

int tg_key_material_allowed(tg_signer *s, const char *ns, const char *peer)
{
    char cid[256];
    tg_ns_facts f = tg_ns_facts_lookup(s, ns, cid, sizeof(cid));

    if (f.known && f.tenant && f.cluster_id && peer && strcmp(peer, f.cluster_id) == 0)
        return 1;
    tg_log(TG_LOG_WARN, "key material not written: expected the peer's tenant namespace liqo-tenant-<peer>, "
           "labelled liqo.io/tenant-namespace=true and liqo.io/remote-cluster-id=<peer>",
           TG_LOG_STR("namespace", ns ? ns : ""), TG_LOG_STR("peer", peer ? peer : ""),
           TG_LOG_STR("namespace_peer", f.cluster_id ? f.cluster_id : ""),
           TG_LOG_STR("namespace_labelled", f.labelled ? "true" : "false"));
    return 0;
}

/* Said once per object and controller, not at every event; forgotten when the object goes. */
static void note_out_of_scope(tg_events *e, const tg_controller_desc *d, const char *ns, const char *name,
                              tg_scope_verdict v)
{
    char mark[TG_WQ_KEY_MAX + 64];

    snprintf(mark, sizeof(mark), "%s|%s/%s", d->name, ns ? ns : "", name ? name : "");
    if (json_object_object_get_ex(e->noted, mark, NULL))
        return;
    json_object_object_add(e->noted, mark, NULL);
    tg_log(TG_LOG_WARN, "object out of the controller's scope: ignored", TG_LOG_STR("controller", d->name),
           TG_LOG_STR("namespace", ns ? ns : ""), TG_LOG_STR("name", name ? name : ""),
           TG_LOG_STR("reason", tg_scope_verdict_name(v)), TG_LOG_STR("expected", d->scope.acts_on));
    if (e->m_out_of_scope)
        tg_counter_add(tg_metric_series_get(e->m_out_of_scope, (const char *[]){d->name}), 1);
}

static void forget_note(tg_events *e, const tg_controller_desc *d, const char *ns, const char *name)
{
    char mark[TG_WQ_KEY_MAX + 64];

    snprintf(mark, sizeof(mark), "%s|%s/%s", d->name, ns ? ns : "", name ? name : "");
    json_object_object_del(e->noted, mark);
}

void tg_key_emit(tg_key_sink *sink, const char *prefix, const char *ns, const char *name)
{
    tg_events *e = sink->e;
    const tg_controller_desc *d = tg_controller_by_kind(prefix);
    char key[TG_WQ_KEY_MAX];

    if (!d || !enabled(e->s, d) || tg_key_format(key, prefix, ns, name) != 0)
        return;
    if (!tg_events_judge_key(e, d, ns, name))
        return;
    /* A wake-up means something the key's last decision rested on changed
     * (a Tenant, a nonce, a CSR): the settled record of that decision, kept
     * under the key itself, must not turn the pass into a skip. */
    if (sink->wake && e->s->settled)
        tg_settled_forget(e->s->settled, key);
    /* Either way the key finishes work a pass started: before new work. */
    if (sink->wake || d->finishes)
        tg_wq_add_first(e->s->q, key, tg_wq_now_ms());
    else
        tg_wq_add(e->s->q, key, tg_wq_now_ms());
}

/* d's own object against d's rule, with the facts of its namespace. */
static int judge_own(tg_events *e, const tg_controller_desc *d, json_object *o, const tg_ns_facts *f, int deleted)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    tg_scope_verdict v = tg_scope_judge(&d->scope, e->s->namespace_, e->s->cluster_id, o, f);

    if (v == TG_IN_SCOPE)
        return 1;
    if (deleted)
        forget_note(e, d, ns, name);
    else
        note_out_of_scope(e, d, ns, name, v);
    return 0;
}

int tg_events_judge(tg_events *e, const tg_controller_desc *d, json_object *obj, int deleted)
{
    char cid[256];
    tg_ns_facts f = tg_ns_facts_lookup(e->s, tg_json_path_string(obj, "metadata", "namespace", NULL), cid,
                                       sizeof(cid));

    return judge_own(e, d, obj, &f, deleted);
}

int tg_events_judge_key(tg_events *e, const tg_controller_desc *d, const char *ns, const char *name)
{
    char cid[256];
    tg_ns_facts f = tg_ns_facts_lookup(e->s, ns, cid, sizeof(cid));
    tg_scope_verdict v = tg_scope_judge_key(&d->scope, e->s->namespace_, ns, name, &f);

    if (v == TG_IN_SCOPE)
        return 1;
    note_out_of_scope(e, d, ns, name, v);
    return 0;
}

void tg_events_set_own_replay(tg_events *e, tg_events_replay_fn fn, void *data)
{
    e->own_replay = fn;
    e->own_replay_data = data;
}

/* An object's event through each enabled controller that listens to its informer. */
static void dispatch(tg_events *e, tg_informer_id id, json_object *o, int deleted)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    tg_event ev = {.s = e->s, .informer = id, .obj = o, .deleted = deleted};
    tg_key_sink sink = {.e = e};
    char cid[256];
    tg_ns_facts f = tg_ns_facts_lookup(e->s, ns, cid, sizeof(cid));

    for (const tg_controller_desc *const *d = tg_controller_descriptors; *d; d++) {
        if (!enabled(e->s, *d))
            continue;
        for (int i = 0; i < (*d)->nsubs; i++) {
            const tg_subscription *sub = &(*d)->subs[i];
            if (sub->informer != id)
                continue;
            if (sub->own && !judge_own(e, *d, o, &f, deleted))
                continue;
            sink.wake = !sub->own;
            sub->map(&ev, &sink);
        }
    }
}

static void replay_namespace(tg_events *e, const char *ns);

/* Nothing is judged before the Namespace labels are known: the start-up replay queues it. */
static int can_judge(tg_events *e)
{
    return !e->caches[TG_INF_NAMESPACES] || tg_cache_synced(e->caches[TG_INF_NAMESPACES]);
}

int tg_events_ready(tg_events *e)
{
    return can_judge(e);
}

static void on_add(json_object *o, void *data)
{
    handler_ref *r = data;

    if (tg_informer_descs[r->id].noticed)
        tg_informer_descs[r->id].noticed(r->e->s, o);
    if (r->id == TG_INF_NAMESPACES) {
        /* Its objects' events may have come first, on their own watches, and been judged
         * without these labels: judge them again now. */
        tg_ns_facts now = tg_ns_facts_of(o);
        const char *name = tg_json_path_string(o, "metadata", "name", NULL);
        if (r->e->replayed && name && now.tenant)
            replay_namespace(r->e, name);
        if (can_judge(r->e))       /* controllers that subscribe to Namespaces (bootstrapgc) */
            dispatch(r->e, r->id, o, 0);
        return;
    }
    if (can_judge(r->e))
        dispatch(r->e, r->id, o, 0);
}

typedef struct replay_ctx {
    tg_events *e;
    tg_informer_id id;
} replay_ctx;

static void on_replay_visit(json_object *o, void *data)
{
    replay_ctx *c = data;

    dispatch(c->e, c->id, o, 0);
}

/* A Namespace whose tenant labels changed: what is in it is judged again. */
static void replay_namespace(tg_events *e, const char *ns)
{
    for (int id = 0; id < TG_INF_COUNT; id++) {
        replay_ctx c = {.e = e, .id = (tg_informer_id)id};
        if (id != TG_INF_NAMESPACES && e->caches[id] && (tg_informer_descs[id].index_metadata & TG_CACHE_BY_NAMESPACE))
            tg_cache_get_by_namespace(e->caches[id], ns, on_replay_visit, &c);
    }
    if (e->own_replay)
        e->own_replay(e->own_replay_data, ns);
}

static int same_facts(const tg_ns_facts *a, const tg_ns_facts *b)
{
    return a->tenant == b->tenant && !a->cluster_id == !b->cluster_id &&
           (!a->cluster_id || strcmp(a->cluster_id, b->cluster_id) == 0);
}

static void on_update(json_object *old_obj, json_object *o, void *data)
{
    handler_ref *r = data;

    if (r->id == TG_INF_NAMESPACES) {
        tg_ns_facts was = tg_ns_facts_of(old_obj), now = tg_ns_facts_of(o);
        const char *name = tg_json_path_string(o, "metadata", "name", NULL);
        if (r->e->replayed && name && !same_facts(&was, &now))
            replay_namespace(r->e, name);
        if (can_judge(r->e))
            dispatch(r->e, r->id, o, 0);
        return;
    }
    if (can_judge(r->e))
        dispatch(r->e, r->id, o, 0);
}

static void on_delete(json_object *o, void *data)
{
    handler_ref *r = data;

    if (r->id != TG_INF_NAMESPACES && can_judge(r->e))
        dispatch(r->e, r->id, o, 1);
}

tg_events *tg_events_new(tg_signer *s, tg_metric_family *out_of_scope)
{
    tg_events *e = calloc(1, sizeof(*e));

    if (!e || !(e->noted = json_object_new_object())) {
        free(e);
        return NULL;
    }
    e->s = s;
    e->m_out_of_scope = out_of_scope;
    for (int id = 0; id < TG_INF_COUNT; id++)
        e->refs[id] = (handler_ref){.e = e, .id = (tg_informer_id)id};
    return e;
}

void tg_events_free(tg_events *e)
{
    if (!e)
        return;
    json_object_put(e->noted);
    free(e);
}

tg_cache_handlers tg_events_handlers(tg_events *e, tg_informer_id id)
{
    return (tg_cache_handlers){.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .data = &e->refs[id]};
}

void tg_events_set_cache(tg_events *e, tg_informer_id id, tg_cache *cache)
{
    e->caches[id] = cache;
}

void tg_events_replay(tg_events *e)
{
    tg_key_sink sink = {.e = e};

    for (int id = 0; id < TG_INF_COUNT; id++) {
        replay_ctx c = {.e = e, .id = (tg_informer_id)id};
        if (e->caches[id])         /* Namespaces too: their subscribers (bootstrapgc) */
            tg_cache_foreach(e->caches[id], on_replay_visit, &c);
    }
    if (e->own_replay)
        e->own_replay(e->own_replay_data, NULL);
    for (const tg_controller_desc *const *d = tg_controller_descriptors; *d; d++)
        if ((*d)->wake_at_start && enabled(e->s, *d))
            tg_key_emit(&sink, (*d)->key_prefix, (*d)->scope.where == TG_WHERE_INSTALL_NS ? e->s->namespace_ : "",
                        (*d)->scope.name);
    e->replayed = 1;
}
