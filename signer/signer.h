/* signer.h - the signer process: configuration shared by the reconcilers,
 * the controllers' names, and the reconcile entry point the workers call. */
#ifndef TG_SIGNER_SIGNER_H
#define TG_SIGNER_SIGNER_H

#include <pthread.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "common/metrics.h"
#include "kube/cache.h"
#include "kube/kubeconfig.h"
#include "pki/issue.h"
#include "pki/keys.h"
#include "signer/api.h"
#include "signer/settled.h"
#include "signer/slice_offer.h"
#include "signer/slice_resources.h"
#include "signer/workqueue.h"

/* --controllers bits, one per row of signer/controllers.def: TG_CTL_<BIT>. */
enum tg_controller_index {
#define TG_CONTROLLER(descriptor, BIT, file) TG_CTL_INDEX_##BIT,
#include "signer/controllers.def"
#undef TG_CONTROLLER
    TG_CTL_COUNT
};
enum tg_controller_bit {
#define TG_CONTROLLER(descriptor, BIT, file) TG_CTL_##BIT = 1u << TG_CTL_INDEX_##BIT,
#include "signer/controllers.def"
#undef TG_CONTROLLER
};
#define TG_CTL_ALL ((1u << TG_CTL_COUNT) - 1u)

#define TG_LABEL_TENANT_NS "tenantgate.io/tenant-namespace"
/* Liqo's mark of a tenant namespace (value "true"), with liqo.io/remote-cluster-id. */
#define TG_LABEL_LIQO_TENANT_NS "liqo.io/tenant-namespace"
/* Liqo's own tenant controller's finalizer: the signer stands in for that
 * controller, so a Tenant finalized under one mode (docs/LIQO.md, guard or
 * replace) is released by whichever side runs when it is deleted. */
#define TG_TENANT_FINALIZER "tenant.liqo.io/finalizer"
/* What tenantgate before 2026-11-29 put on: still released, and replaced. */
#define TG_TENANT_FINALIZER_LEGACY "tenantgate.io/tenant"
/* The consumer's role in the tenant namespace: Liqo's liqo-remote-controlplane without
 * /status, bound in its place and when no ClusterRole is labelled remote-controlplane. */
#define TG_CONSUMER_CLUSTERROLE "tenantgate-remote-consumer"
/* Liqo's cluster-wide virtual-kubelet ClusterRole (metrics.liqo.io), bound
 * to Group <consumer> by ClusterRoleBinding TG_CLUSTERWIDE_BINDING_PREFIX<consumer>. */
#define TG_CLUSTERWIDE_CLUSTERROLE "liqo-virtual-kubelet-remote-clusterwide"
#define TG_CLUSTERWIDE_BINDING_PREFIX "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"
#define TG_KEYS_SECRET "authentication-keys"
#define TG_NONCE_SECRET "liqo-nonce"
#define TG_SIGNED_NONCE_SECRET "liqo-signed-nonce"
/* Liqo's kubeconfig Secret metadata (pkg/consts/authentication.go) */
#define TG_LABEL_IDENTITY_TYPE "liqo.io/identity-type"
#define TG_ANNOTATION_REMOTE_TENANT_NS "liqo.io/remote-tenant-namespace"

typedef struct tg_signer {
    /* configuration (read-only once the workers start) */
    const char *cluster_id;
    const char *namespace_;          /* install namespace */
    const char *signer_name;
    char *api_server;                /* authParams.apiServer */
    char *ca_pem;                    /* authParams.ca (PEM), may be NULL */
    size_t ca_len;
    long csr_expiration_s;           /* 0: none requested */
    int allow_no_handshake;
    tg_key_type key_type;            /* --key-type: the keys the consumer makes (cluster key, token CSRs) */
    int rotate_nonce_on_unpeer;      /* --nonce-rotation on-unpeer (default); 0: keep (Liqo's way) */
    const char *slice_policy_ns;     /* the slice policy ConfigMap; NULL: no policy */
    const char *slice_policy_name;
    json_object *node_labels;        /* --cluster-labels: a slice's status.nodeLabels; NULL: none */
    tg_slice_provider slice_provider; /* --default-node-resources, --default-resource-slice-class-enabled */
    tg_slice_offer slice_offer;      /* --enable-storage, --ingress-classes, --load-balancer-classes */
    const char *quota_limits_enforcement;   /* --quota-limits-enforcement (Liqo's Quota); NULL: None */
    const char *token_ns;            /* --token-namespace: tenantgate-auth's bootstrap tokens */
    long bootstrap_grace_s;          /* --bootstrap-grace (bootstrapgc) */
    int renewal_grace_pct;           /* --renewal-grace-percent: when a renewal is overdue (renewal.h) */
    /* Liqo's Quota CRD served: (until_ms << 1) | served, atomic (slice_liqo_quota.c) */
    uint64_t quota_crd;
    unsigned controllers;
    /* The API server's name for this process (kube/whoami.h): the CSRs whose
     * spec.username is not this are someone else's and count for no Tenant
     * or slice (tg_csr_made_by). NULL: not known, every CSR counts. */
    const char *self_user;
    tg_ca own_ca;                    /* own-signer mode when own_ca.cert is set */
    tg_kube_config cfg;
    tg_workqueue *q;
    /* the consumer's cluster key, loaded once (a secret: never logged) */
    pthread_mutex_t key_mu;
    EVP_PKEY *cluster_key;
    volatile int is_leader;          /* workers act only while set */
    /* The informers' stores, read by the reconcilers through visitors only
     * (cache.h); NULL when that informer does not run. Synced before any
     * worker starts, so a lookup is as good as a list taken at start-up. */
    tg_cache *ns_cache;              /* Namespaces, labels only: the scope's trust anchor (scope_rule.h) */
    tg_cache *csr_cache;             /* tenant and slice CSRs, indexed by remote cluster id */
    tg_cache *tenant_cache;          /* Tenants (metadata only) */
    tg_cache *nonce_cache;           /* labelled nonce Secrets */
    tg_cache *renew_cache;           /* replicated Renews (provider), metadata only */
    tg_cache *slice_cache;           /* every ResourceSlice (provider), by namespace; spec.class,
                                      * spec.consumerClusterID, status.resources, conditions' type and status */
    /* every RoleBinding and ClusterRoleBinding (subjects, roleRef.kind) and
     * their subjects' names (binding_index.h): the approver's NameBound */
    tg_cache *rb_cache, *crb_cache;
    struct tg_binding_index *binding_index;
    tg_cache *cp_secret_cache;       /* ControlPlane kubeconfig Secrets (replicator), with data.kubeconfig */
    struct tg_remote_pool *remote_pool; /* the replicator's clients for providers */
    struct tg_remote_pool *trial_pool;  /* clients that try renewed kubeconfigs (renewal_trial.h) */
    tg_cache *repl_caches[3];        /* the replicator's local objects by kind (replica_plan.h), metadata only */
    /* RoleBindings this process created or found, marked by "ns/name" for a
     * while (tenant_rbac.c): a Tenant reconcile POSTs its binding only when
     * not known to exist. */
    tg_settled *rb_known;
    /* What the reconcilers settled (settled.h): the watch events of their
     * own writes cost no GET. NULL: every event runs the full reconcile. */
    tg_settled *settled;
    /* What the slice controller read of each certificate and CSR (cert_facts.h):
     * each text is parsed once. NULL: parsed at every look. */
    struct tg_cert_memo *cert_memo;
    /* metrics (thread-safe updates; NULL families are skipped) */
    tg_metric_family *m_reconciles;  /* {controller, result} */
    tg_metric_family *m_settled_skips; /* {controller} */
    tg_metric_family *m_decisions;   /* {decision, reason} */
    tg_metric_family *m_tenant_verdicts; /* {verdict, reason} */
    tg_metric_family *m_issue_seconds;
    tg_metric_family *m_cert_expiry; /* {cluster_id} */
    tg_metric_family *m_slice_verdicts; /* {condition, status, reason}: slice denials */
    tg_metric_family *m_nonce_skips; /* {reason}: labelled Secrets the nonce controller left alone */
    tg_metric_family *m_replicated;  /* {kind, action}: the replicator's writes */
    tg_metric_family *m_foreign_csrs; /* CSR events of CSRs with our labels made by someone else */
    tg_metric_family *m_renewal_overdue; /* {identity}: 1 while an Identity's renewal is overdue */
    tg_metric_family *m_trial_failures;  /* {reason}: renewed kubeconfigs that failed their trial */
} tg_signer;

/* What a reconcile asks of the queue. */
#define TG_RECONCILE_OK 0            /* done: forget the failures */
#define TG_RECONCILE_RETRY (-1)      /* failed: back off */
/* > 0: done for now, look again after that many milliseconds */

/* Reconcile one key ("tenant/NS/NAME", "approve//NAME", ...) on a worker. */
long tg_signer_reconcile(tg_signer *s, tg_api *api, const char *key);

#endif
