/* replica_plan.h - the CRD replicator's decisions, free of I/O (Liqo's
 * internal/crdReplicator/reflection/handler.go, PROTOCOL.md 7).
 *
 * A local object labelled liqo.io/replication=true + liqo.io/remoteID=P is
 * copied into P's tenant namespace: spec goes down, status comes back, and
 * the finalizer crdreplicator.liqo.io/resource keeps the local object until
 * its copy is gone. These functions say what the copy's labels are, whether
 * spec or status differ, and which steps a reconcile takes. */
#ifndef TG_SIGNER_REPLICA_PLAN_H
#define TG_SIGNER_REPLICA_PLAN_H

#include <json-c/json.h>

#define TG_REPL_FINALIZER "crdreplicator.liqo.io/resource"
/* On the ControlPlane kubeconfig Secret while local objects hold
 * TG_REPL_FINALIZER: their copies can still be deleted when the Secret's
 * namespace or its Identity is being deleted (Liqo's crdReplicator-operator). */
#define TG_REPL_SECRET_FINALIZER "crdreplicator.liqo.io/operator"
#define TG_LABEL_REPLICATION "liqo.io/replication"
#define TG_LABEL_REMOTE_ID "liqo.io/remoteID"
#define TG_LABEL_REPLICATED "liqo.io/replicated"
#define TG_LABEL_ORIGIN_ID "liqo.io/originID"
#define TG_LABEL_OWNERSHIP "liqo.io/ownership"

/* The replicated kinds (Liqo's internal/crdReplicator/resources). */
typedef struct tg_repl_kind {
    const char *code;          /* queue key prefix */
    const char *group_path;    /* "/apis/<group>/<version>" */
    const char *plural;
    const char *kind;
    const char *api_version;
    int needs_request;         /* sent only once the consumer filled the request */
} tg_repl_kind;

#define TG_REPL_KINDS 3
#define TG_REPL_NAMESPACEMAPS 2    /* index of the offloading kind, served only with Liqo's offloading CRDs */
extern const tg_repl_kind tg_repl_kinds[TG_REPL_KINDS];
/* The kind of a queue key prefix, or NULL. */
const tg_repl_kind *tg_repl_kind_of(const char *code);

/* 1 when obj's spec may be sent: a ResourceSlice needs consumerClusterID and
 * csr (the provider's admission refuses a slice without them,
 * MalformedResourceSlice); other kinds always. */
int tg_repl_ready(const tg_repl_kind *k, json_object *obj);

/* The labels of the remote copy from the local object's labels (may be
 * NULL): every label kept, except replication=false, replicated=true,
 * originID=<local id>, remote-cluster-id=<local id> and no ownership label.
 * A new object; NULL when out of memory. */
json_object *tg_repl_remote_labels(json_object *local_labels, const char *local_id);

/* 1 when the two values differ (a missing value equals JSON null). */
int tg_repl_differ(json_object *a, json_object *b);

/* 1 when obj is local and meant for remote cluster id: replication=true
 * and remoteID equal to it (remote NULL: any remoteID). */
int tg_repl_is_local(json_object *obj, const char *remote);

/* 1 when obj is a copy this cluster made for remote cluster id remote:
 * replicated=true, originID=local_id, remoteID=remote. */
int tg_repl_is_our_copy(json_object *obj, const char *local_id, const char *remote);

/* 1 when metadata.finalizers holds name. */
int tg_repl_has_finalizer(json_object *obj, const char *name);

/* metadata.finalizers with name added (add) or removed (!add): a new array. */
json_object *tg_repl_finalizers_with(json_object *obj, const char *name, int add);

/* What one reconcile knows. */
typedef struct tg_repl_state {
    int local;             /* the local object exists */
    int deleting;          /* it has a deletionTimestamp */
    int finalizer;         /* it carries TG_REPL_FINALIZER */
    int ready;             /* its spec is complete enough to send (slices: csr, consumerClusterID) */
    int remote;            /* the copy exists on the provider */
    int remote_ours;       /* ... and is labelled as this cluster's copy */
    int remote_deleting;   /* ... and is being deleted there */
    int spec_differs;      /* local spec != copy's spec */
    int status_differs;    /* copy's status != local status */
} tg_repl_state;

/* Steps, in the order they are taken. */
#define TG_REPL_ADD_FINALIZER 0x01u
#define TG_REPL_CREATE 0x02u
#define TG_REPL_UPDATE_SPEC 0x04u
#define TG_REPL_PULL_STATUS 0x08u
#define TG_REPL_DELETE_REMOTE 0x10u
#define TG_REPL_REMOVE_FINALIZER 0x20u
#define TG_REPL_WAIT_GONE 0x40u     /* the copy is going: look again soon */
#define TG_REPL_CONFLICT 0x80u      /* a same-name object that is not our copy: touch nothing */

unsigned tg_repl_plan(const tg_repl_state *st);

#endif
