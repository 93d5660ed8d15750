/* replicator_watch.h - what wakes the replicator (consumer_replicator.c),
 * all on the signer's main loop:
 *  - the ControlPlane kubeconfig Secrets (labels liqo.io/identity-type=
 *    ControlPlane and liqo.io/remote-cluster-id; annotation
 *    liqo.io/remote-tenant-namespace), cached with their kubeconfig for the
 *    workers;
 *  - the local objects to replicate (liqo.io/replication=true,
 *    liqo.io/remoteID) of each replicated kind;
 *  - per Secret, a client built from its kubeconfig and informers on the
 *    copies in the remote tenant namespace (liqo.io/replicated=true,
 *    liqo.io/originID=<this cluster>), so a status written there is pulled
 *    back at once. A Secret whose content changes gets a new client and
 *    new informers, and every local object of its namespace is looked at;
 *  - a periodic resync: every key of the local and remote caches again.
 * Events only become queue keys "<kind code>/<local namespace>/<name>".
 * Every Secret and local object is first judged by the replicator's scope
 * rule through events.h, as every controller's objects are (docs/signer.md
 * "Scope"): out of it, it is ignored, logged once and counted in
 * tenantgate_signer_out_of_scope_total{controller="replicator"}. */
#ifndef TG_SIGNER_REPLICATOR_WATCH_H
#define TG_SIGNER_REPLICATOR_WATCH_H

#include <uv.h>

#include "kube/client.h"
#include "signer/events.h"
#include "signer/signer.h"

#define TG_REPL_RESYNC_MS (5 * 60 * 1000)

typedef struct tg_repl_watch tg_repl_watch;

/* kinds: bit i set for tg_repl_kinds[i]. Sets s->cp_secret_cache and
 * events' replay hook (tg_events_set_own_replay). Returns NULL with err. */
tg_repl_watch *tg_repl_watch_new(uv_loop_t *loop, tg_kube_client *local, tg_signer *s, tg_events *events,
                                 unsigned kinds, char *err, size_t err_len);

/* The handlers of the Secret informer and of the local informer of
 * tg_repl_kinds[kind], as the informers call them (tests feed events). */
tg_cache_handlers tg_repl_watch_secret_handlers(tg_repl_watch *w);
tg_cache_handlers tg_repl_watch_local_handlers(tg_repl_watch *w, int kind);

/* 1 once the Secrets and the local objects are listed (the remote informers
 * do not hold the workers back: a provider may be down). */
int tg_repl_watch_synced(tg_repl_watch *w);

/* Remote informers running, and how many have listed (metrics, tests). */
void tg_repl_watch_remotes(tg_repl_watch *w, int *running, int *synced);

/* On the loop thread, after the workers stopped; run the loop afterwards. */
void tg_repl_watch_free(tg_repl_watch *w);

#endif
