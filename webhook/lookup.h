/* lookup.h - what the admission decision needs to know about the cluster
 * (PROTOCOL.md 5, steps 2 and 5), behind an interface so that the decision stays
 * pure and is tested with a table of fake clusters.
 *
 * The production implementation reads watch-fed informer caches (any thread,
 * under their read locks) and never blocks: a live read of the nonce Secret
 * before denying NonceNotFound is a separate asynchronous step the server
 * drives on the worker's loop (see decide.h, need_live_nonce). */
#ifndef TG_WEBHOOK_LOOKUP_H
#define TG_WEBHOOK_LOOKUP_H

#include <stddef.h>
#include <stdlib.h>

#include "pki/nonce.h"

#define TG_LABEL_TENANT_NAMESPACE "liqo.io/tenant-namespace"
#define TG_LABEL_NONCE "liqo.io/nonce"
#define TG_NONCE_DATA_KEY "nonce"

/* Results of the lookups. */
#define TG_LOOKUP_FOUND 1
#define TG_LOOKUP_NOT_FOUND 0
#define TG_LOOKUP_ERROR (-1)      /* cannot tell (caches not synced, I/O): never a denial reason */

/* The longest label value Kubernetes allows is 63; room for a NUL. */
#define TG_LABEL_VALUE_MAX 64

/* "<namespace>/<name>" of an object, as a denial names it. */
#define TG_LOOKUP_WHERE_MAX 320

/* Room for a nonce text and its NUL: ours are TG_NONCE_TEXT_LEN (88). */
#define TG_LOOKUP_NONCE_MAX 256

/* What a nonce lookup found, for the decision and its denial message. */
typedef enum tg_nonce_state {
    TG_NONCE_ABSENT = 0,           /* no Secret liqo-nonce in the namespace */
    TG_NONCE_FOUND,                /* the nonce text */
    TG_NONCE_UNLABELLED,           /* the Secret lacks liqo.io/nonce=true */
    TG_NONCE_OTHER_CLUSTER,        /* its liqo.io/remote-cluster-id is not the Tenant's cluster */
    TG_NONCE_EMPTY,                /* no usable data.nonce: missing, empty, not base64, too long */
} tg_nonce_state;

typedef struct tg_lookup tg_lookup;

/* What a ResourceSlice decision needs of the consumer's Tenant. */
typedef struct tg_lookup_tenant {
    int drained;                   /* spec.tenantCondition == Drained */
    int no_handshake;              /* spec.authzPolicy == TolerateNoHandshake */
    unsigned char *public_key;     /* spec.publicKey, base64-decoded, malloc'd; NULL when absent */
    size_t public_key_len;
} tg_lookup_tenant;

static inline void tg_lookup_tenant_clear(tg_lookup_tenant *t)
{
    free(t->public_key);
    t->public_key = NULL;
    t->public_key_len = 0;
}

/* One informer cache, for the metrics. */
typedef struct tg_lookup_cache_stats {
    const char *cache;             /* "namespaces", "tenants", "nonce_secrets", "local_slices", "name_claims",
                                    * "replicated_slices", "slice_policy" */
    size_t objects;
    unsigned long failures;        /* lists or watches that failed (kube/informer.h) */
} tg_lookup_cache_stats;

typedef struct tg_lookup_ops {
    /* 1 when every cache the decision reads has completed its first list. */
    int (*synced)(const tg_lookup *lk);

    /* The value of label `key` on Namespace `ns`, copied into value.
     * TG_LOOKUP_FOUND; TG_LOOKUP_NOT_FOUND when the namespace has no such
     * label; *ns_exists says whether the namespace itself is known. */
    int (*namespace_label)(const tg_lookup *lk, const char *ns, const char *key,
                           char value[TG_LABEL_VALUE_MAX], int *ns_exists);

    /* How many Tenants live in namespace ns. */
    size_t (*tenants_in_namespace)(const tg_lookup *lk, const char *ns);

    /* 1 when a Tenant called name exists in any namespace. */
    int (*tenant_name_exists)(const tg_lookup *lk, const char *name);

    /* The nonce for a Tenant of consumer cluster_id in namespace ns: Secret
     * ns/liqo-nonce (nonce_secret.h says what makes it count), nothing else.
     * Returns a tg_nonce_state; on TG_NONCE_FOUND the text is copied into
     * nonce, NUL-terminated, and *len set. */
    int (*nonce_secret)(const tg_lookup *lk, const char *ns, const char *cluster_id,
                        char nonce[TG_LOOKUP_NONCE_MAX], size_t *len);

    /* The Tenant in namespace ns whose spec.clusterID is cluster_id, into
     * *out (clear it with tg_lookup_tenant_clear). TG_LOOKUP_FOUND or
     * TG_LOOKUP_NOT_FOUND (also when its publicKey is not valid base64). */
    int (*tenant_for_cluster)(const tg_lookup *lk, const char *ns, const char *cluster_id,
                              tg_lookup_tenant *out);

    /* 1 when a local ResourceSlice (label liqo.io/replication=true) called
     * name exists in any namespace. */
    int (*local_slice_name_exists)(const tg_lookup *lk, const char *name);

    /* 1 when a Tenant whose spec.clusterID is cluster_id exists in any
     * namespace (a consumer's ControlPlane user name). */
    int (*tenant_cluster_id_exists)(const tg_lookup *lk, const char *cluster_id);

    /* 1 when user is the user name of a replicated ResourceSlice
     * (<name>-<12 hex of sha256(consumer)>, pki/slice.h) in any namespace;
     * its namespace and name then go into where ("ns/name", truncated). */
    int (*slice_user_exists)(const tg_lookup *lk, const char *user, char where[TG_LOOKUP_WHERE_MAX]);

    /* Optional (may be NULL: not checked). The NameClaim of name
     * (pki/name_owner.h): TG_LOOKUP_FOUND with its spec.path and spec.holder
     * copied (truncated), or TG_LOOKUP_NOT_FOUND. */
    int (*name_claim)(const tg_lookup *lk, const char *name, char path[16], char holder[TG_LOOKUP_WHERE_MAX]);

    /* Optional (may be NULL: no consumer has a policy). Consumer
     * cluster_id's own slice policy: key tenant.<cluster_id> of the slice
     * policy ConfigMap (pki/slice_tenant_policy.h). TG_LOOKUP_FOUND with
     * *entry a malloc'd copy of its text (the caller frees it);
     * TG_LOOKUP_NOT_FOUND when there is no such ConfigMap or key;
     * TG_LOOKUP_ERROR when it cannot tell (out of memory). */
    int (*slice_tenant_policy)(const tg_lookup *lk, const char *cluster_id, char **entry);

    /* Optional (may be NULL), for metrics only: each cache's objects and
     * failed lists or watches so far. Fills up to cap entries; returns how
     * many. Called on the loop that runs the informers. */
    size_t (*cache_stats)(const tg_lookup *lk, tg_lookup_cache_stats *out, size_t cap);
} tg_lookup_ops;

struct tg_lookup {
    const tg_lookup_ops *ops;
    void *data;
};

#endif
