/* kube_lookup_none.c - kube_lookup.h for builds without the API client
 * (kube/client.cmake absent): the cluster is never readable, so the webhook
 * never becomes ready and answers Tenant admissions with 500. */
#include "kube_lookup.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "webhook/lookup_unavailable.h"

struct tg_kube_lookup {
    int unused;
};

tg_kube_lookup *tg_kube_lookup_new(uv_loop_t *loop, const char *kubeconfig, int workers, char *err,
                                   size_t err_len)
{
    tg_log_msg(TG_LOG_WARN, "built without the Kubernetes client: caches will never sync");
    return calloc(1, sizeof(tg_kube_lookup));
}

const tg_lookup *tg_kube_lookup_get(tg_kube_lookup *kl)
{
    return &tg_lookup_unavailable;
}

const tg_live_nonce *tg_kube_lookup_live(tg_kube_lookup *kl)
{
    return NULL;
}

int tg_kube_lookup_cluster_id(tg_kube_lookup *kl, const char *ns, char *id, size_t id_len, char *why,
                              size_t why_len)
{
    snprintf(why, why_len, "built without the Kubernetes client");
    return -1;
}

int tg_kube_lookup_watch_slice_policy(tg_kube_lookup *kl, const char *ns, const char *name, char *err,
                                      size_t err_len)
{
    return 0;   /* nothing is ever ready here */
}

void tg_kube_lookup_free(tg_kube_lookup *kl)
{
    free(kl);
}
