/* events.h - the one informer handler of every controller (controller.h).
 *
 * An event goes to the controllers subscribed to its informer. For a
 * controller's own objects the object is first judged against the
 * controller's scope (scope_rule.h) with its Namespace's labels; every key a
 * mapper emits is judged too, by its namespace, against the key's own
 * controller. What is out of scope is dropped before it is queued, logged
 * once per object and counted in tenantgate_signer_out_of_scope_total.
 *
 * Until the Namespace informer has synced nothing can be judged: events are
 * held back, and once every informer has synced tg_events_replay passes each
 * cached object through the handler, which queues every existing object as
 * the first list used to. A Namespace whose labels change replays the objects
 * in it. Loop thread only, except tg_ns_facts_lookup. */
#ifndef TG_SIGNER_EVENTS_H
#define TG_SIGNER_EVENTS_H

#include "common/metrics.h"
#include "kube/cache.h"
#include "signer/controller.h"

typedef struct tg_events tg_events;

/* out_of_scope: the {controller} counter (may be NULL). */
tg_events *tg_events_new(tg_signer *s, tg_metric_family *out_of_scope);
void tg_events_free(tg_events *e);

/* The handlers of informer id, to pass to it, and its cache once made. */
tg_cache_handlers tg_events_handlers(tg_events *e, tg_informer_id id);
void tg_events_set_cache(tg_events *e, tg_informer_id id, tg_cache *cache);

/* 1 when some enabled controller listens to informer id (or needs the
 * Namespace informer, for that id). */
int tg_events_wanted(const tg_signer *s, tg_informer_id id);

/* Every cached object through the handler (after all informers synced), and
 * the keys of controllers that wake at start. */
void tg_events_replay(tg_events *e);

/* ---- a controller with watches of its own (the replicator) ----
 * Its handlers ask here, so its objects meet the same rule, the same log
 * line and the same counter as everyone else's. */

/* 1 once the Namespace labels are known: before, nothing can be judged and
 * the start-up replay brings every object back. */
int tg_events_ready(tg_events *e);

/* Judge d's own object: 1 in scope; 0 out of it, logged once and counted in
 * tenantgate_signer_out_of_scope_total{d}. deleted: the object is gone; its
 * note is forgotten and nothing is counted. */
int tg_events_judge(tg_events *e, const tg_controller_desc *d, json_object *obj, int deleted);

/* Judge a key of d by namespace and name alone, the same way. */
int tg_events_judge_key(tg_events *e, const tg_controller_desc *d, const char *ns, const char *name);

/* replay(data, ns) passes the own watch's cached objects through its
 * handlers again: all of them (ns NULL) at the start-up replay, those of ns
 * when its labels change. One hook; NULL removes it. */
typedef void (*tg_events_replay_fn)(void *data, const char *ns);
void tg_events_set_own_replay(tg_events *e, tg_events_replay_fn fn, void *data);

/* What the Namespace cache knows of ns; the cluster id is copied into cid
 * (cid_len bytes). Any thread. */
tg_ns_facts tg_ns_facts_lookup(tg_signer *s, const char *ns, char *cid, size_t cid_len);

/* 1 when key material (the cluster private key, a kubeconfig) made for peer
 * may be written into ns: peer's tenant namespace, liqo-tenant-<peer> labelled
 * for peer (the labels alone are no anchor: scope_rule.h).
 * The last check before the write, whatever woke the reconcile; a refusal
 * is logged. Any thread. */
int tg_key_material_allowed(tg_signer *s, const char *ns, const char *peer);

#endif
