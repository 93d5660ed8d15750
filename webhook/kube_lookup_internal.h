/* kube_lookup_internal.h - what the files of kube_lookup.h share: the
 * informers (kube_lookup.c starts them) and the readers over them
 * (kube_lookup_read.c). */
#ifndef TG_WEBHOOK_KUBE_LOOKUP_INTERNAL_H
#define TG_WEBHOOK_KUBE_LOOKUP_INTERNAL_H

#include <uv.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"
#include "webhook/kube_live_read.h"
#include "webhook/kube_lookup.h"

struct tg_kube_lookup {
    uv_loop_t *loop;
    tg_kube_config config;         /* kept for the workers' clients */
    tg_kube_client *client;        /* main loop: the informers */
    tg_informer *namespaces;       /* labelled liqo.io/tenant-namespace=true, digest only */
    tg_informer *tenants;
    tg_informer *nonces;           /* Secrets labelled liqo.io/nonce=true, read by (namespace, name) */
    tg_informer *local_slices;     /* ResourceSlices labelled liqo.io/replication=true, metadata only */
    tg_informer *replicated_slices;    /* labelled liqo.io/replicated=true: metadata, consumerClusterID */
    tg_informer *claims;           /* NameClaims (cluster-scoped): spec only */
    tg_informer *slice_policy;     /* the slice policy ConfigMap, by name: data only; NULL: off */
    char slice_policy_ns[64], slice_policy_name[254];
    tg_lookup lookup;
    tg_kube_live *live;
};

/* The readers; lookup.data is the tg_kube_lookup. */
extern const tg_lookup_ops tg_kube_lookup_ops;

/* lookup.h's slice_tenant_policy over kl->slice_policy (kube_slice_policy.c). */
int tg_kube_slice_tenant_policy(const tg_lookup *lk, const char *cluster_id, char **entry);

#endif
