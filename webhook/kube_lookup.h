/* kube_lookup.h - the lookups (lookup.h) fed by the cluster: informers on
 * the main loop for tenant Namespaces, Tenants, nonce Secrets and local and
 * replicated ResourceSlices, readable from every worker under the caches'
 * read locks, plus the live read of a nonce Secret on the asking worker's
 * own loop (kube_live_read.h).
 *
 * While the API server cannot be reached the caches are not synced: /readyz
 * answers 503 and Tenant admissions get a 500 "cache not synced" error, so
 * failurePolicy Fail refuses them instead of a made-up denial. */
#ifndef TG_WEBHOOK_KUBE_LOOKUP_H
#define TG_WEBHOOK_KUBE_LOOKUP_H

#include <uv.h>

#include "webhook/lookup.h"
#include "webhook/server.h"

typedef struct tg_kube_lookup tg_kube_lookup;

/* kubeconfig NULL: $KUBECONFIG, in-cluster, ~/.kube/config (kubectl's
 * search). The informers start on loop at once. NULL with err when the
 * configuration cannot be read (a missing API server is not an error). */
tg_kube_lookup *tg_kube_lookup_new(uv_loop_t *loop, const char *kubeconfig, int workers, char *err,
                                   size_t err_len);
const tg_lookup *tg_kube_lookup_get(tg_kube_lookup *kl);
const tg_live_nonce *tg_kube_lookup_live(tg_kube_lookup *kl);
/* This cluster's id as Liqo keeps it (kube/clusterid.h): the one ConfigMap
 * labelled app.kubernetes.io/name=clusterid-configmap in ns, read once,
 * synchronously on the loop, before the server starts. 0 with id, or -1 with
 * why (none, several, a bad id, or the list failed). */
int tg_kube_lookup_cluster_id(tg_kube_lookup *kl, const char *ns, char *id, size_t id_len, char *why,
                              size_t why_len);
/* Cache the slice policy ConfigMap ns/name (its data only, one object by
 * field selector: kube_slice_policy.c) for the consumers' own entries. Call
 * before the server starts; until its first list every admission waits, as
 * for the other caches (fail closed). 0, or -1 with err. */
int tg_kube_lookup_watch_slice_policy(tg_kube_lookup *kl, const char *ns, const char *name, char *err,
                                      size_t err_len);
/* After the workers stopped; runs loop until the informers are closed. */
void tg_kube_lookup_free(tg_kube_lookup *kl);

#endif
