/* kube_live_read.h - the live read of a nonce Secret (server.h's
 * tg_live_nonce) for the webhook's cluster lookups: one API client per
 * worker, created on that worker's thread on first use; reads of one
 * namespace spaced by live_gate.h. */
#ifndef TG_WEBHOOK_KUBE_LIVE_READ_H
#define TG_WEBHOOK_KUBE_LIVE_READ_H

#include "kube/kubeconfig.h"
#include "webhook/server.h"

typedef struct tg_kube_live tg_kube_live;

/* config is kept (not copied): it must outlive the result. NULL when out
 * of memory. */
tg_kube_live *tg_kube_live_new(const tg_kube_config *config, int workers);
const tg_live_nonce *tg_kube_live_get(tg_kube_live *kv);
/* After the workers stopped (tg_live_nonce.worker_stop for each). */
void tg_kube_live_free(tg_kube_live *kv);

#endif
