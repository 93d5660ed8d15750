/* controller.h - one constant descriptor per controller (signer/<controller>.c),
 * gathered in tg_controller_descriptors[] (controllers.c); main.c starts,
 * wires and scopes them all through one loop (events.c), and the workers
 * dispatch a queue key by its prefix (reconcile.c).
 *
 * Adding a controller = one file exporting a tg_controller_desc + one row in
 * controllers.c (docs/signer.md "Adding a controller"). */
#ifndef TG_SIGNER_CONTROLLER_H
#define TG_SIGNER_CONTROLLER_H

#include <stddef.h>

#include <json-c/json.h>

#include "signer/scope_rule.h"
#include "signer/signer.h"

/* The informers the controllers share (informers.c): each runs once, whoever
 * asks for it. */
typedef enum tg_informer_id {
    TG_INF_NAMESPACES = 0,    /* every Namespace, labels only: the scope's trust anchor */
    TG_INF_NONCES,            /* liqo-nonce Secrets labelled liqo.io/nonce=true */
    TG_INF_TENANTS,           /* Tenants, metadata and spec.clusterID */
    TG_INF_CSRS,              /* the signer's CSRs (liqo.io/remote-tenant-csr=true) */
    TG_INF_SIGNED_NONCES,     /* liqo-signed-nonce Secrets labelled liqo.io/signed-nonce=true */
    TG_INF_IDENTITIES,        /* Identities */
    TG_INF_LOCAL_SLICES,      /* the consumer's local ResourceSlices (liqo.io/replication=true) */
    TG_INF_TENANT_SLICES,     /* every ResourceSlice (the provider's: scoped by namespace, not labels) */
    TG_INF_LOCAL_RENEWS,      /* the consumer's Renews (liqo.io/replication=true) */
    TG_INF_REMOTE_RENEWS,     /* replicated Renews on the provider */
    TG_INF_IDENTITY_SECRETS,  /* kubeconfig Secrets labelled liqo.io/identity-type, metadata only */
    TG_INF_AUTH_TOKENS,       /* Secrets labelled discovery.liqo.io/auth-token (a provider's token) */
    TG_INF_ROLEBINDINGS,      /* every RoleBinding: subjects and roleRef.kind (the approver's NameBound) */
    TG_INF_CLUSTERROLEBINDINGS, /* every ClusterRoleBinding: the same */
    TG_INF_SLICE_POLICY,      /* the slice policy ConfigMap, metadata only (its path: main.c) */
    TG_INF_COUNT
} tg_informer_id;

typedef struct tg_informer_desc {
    const char *name;                 /* metric label {informer} */
    const char *path;
    const char *label_selector;       /* or NULL */
    const char *field_selector;       /* or NULL */
    const char *index_label;          /* or NULL */
    unsigned index_metadata;          /* TG_CACHE_BY_* */
    const char *const *keep_fields;   /* beside metadata */
    const char *const *keep_metadata; /* of metadata, beside name, namespace, resourceVersion,
                                       * deletionTimestamp; NULL: all (tg_cache_keep_metadata) */
    const char *shrink_path;          /* a string field kept shrunk (tg_cache_shrink_field), */
    char *(*shrink)(const char *value);   /* by this; NULL: none */
    /* where the reconcilers find this cache in tg_signer, or 0: nowhere */
    size_t cache_offset;
    /* said of each object when the informer first meets it, in or out of
     * any scope (the CSRs someone else made), or NULL */
    void (*noticed)(tg_signer *s, json_object *obj);
} tg_informer_desc;

extern const tg_informer_desc tg_informer_descs[TG_INF_COUNT];

/* What an event hands a controller's mapper. */
typedef struct tg_event {
    tg_signer *s;
    tg_informer_id informer;
    json_object *obj;                 /* as the cache stores it (kept fields only) */
    int deleted;
} tg_event;

/* A mapper emits queue keys through this; the generic handler checks each
 * key's namespace against the key's own controller before it is queued. */
typedef struct tg_key_sink tg_key_sink;
void tg_key_emit(tg_key_sink *sink, const char *prefix, const char *ns, const char *name);

/* One informer a controller listens to. own: its events are this
 * controller's own objects, judged against its scope before the mapper runs;
 * otherwise they only wake keys (still judged by namespace): something the
 * key's last decision rested on changed, so the key's settled record
 * (settled.h, kept under the queue key) is forgotten and the pass runs in
 * full. A decision taken because a thing is missing or terminating is taken
 * again through such a wake-up from that thing's informer, or, where there
 * is none, a bounded requeue (docs/signer.md "Decisions taken again"). */
typedef struct tg_subscription {
    tg_informer_id informer;
    int own;
    void (*map)(const tg_event *ev, tg_key_sink *sink);
} tg_subscription;

#define TG_MAX_SUBSCRIPTIONS 4

typedef struct tg_controller_desc {
    const char *name;                 /* --controllers name, metric label {controller} */
    const char *key_prefix;           /* queue keys "<prefix>/<ns>/<name>" */
    int prefix_family;                /* 1: every key whose kind starts with key_prefix */
    unsigned bit;                     /* TG_CTL_* */
    const char *side;                 /* "provider" or "consumer" */
    tg_scope_rule scope;
    int wake_at_start;                /* queue "<prefix>/<its namespace>/<scope.name>" once synced */
    int finishes;                     /* its keys finish what another controller's pass started (a CSR
                                       * waiting for its decision): queued first (tg_wq_add_first) */
    tg_subscription subs[TG_MAX_SUBSCRIPTIONS];
    int nsubs;
    /* kind: the key's prefix (the replicator's kinds differ) */
    long (*reconcile)(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name);
} tg_controller_desc;

/* The table (controllers.c), NULL-terminated. */
extern const tg_controller_desc *const tg_controller_descriptors[];

/* The descriptor owning a queue key's kind, or NULL. */
const tg_controller_desc *tg_controller_by_kind(const char *kind);

/* --controllers LIST to bits; -1 on an unknown name or an empty list. */
int tg_controllers_parse(const char *list, unsigned *bits);

/* The descriptors of every controller (controllers.def), each defined at the
 * end of its own file. */
#define TG_CONTROLLER(descriptor, BIT, file) extern const tg_controller_desc tg_ctl_##descriptor;
#include "signer/controllers.def"
#undef TG_CONTROLLER

/* provider_approver.c: a CSR with our labels that we did not make (TG_INF_CSRS' noticed). */
void tg_note_foreign_csr(tg_signer *s, json_object *csr);

/* A key for prefix/ns/name into key (TG_WQ_KEY_MAX); 0, or -1 when too long. */
int tg_key_format(char *key, const char *prefix, const char *ns, const char *name);

#endif
