/* scope_rule.h - which objects a controller may act on, as data, and the one
 * pure judge of an object against it (docs/signer.md "Controllers").
 *
 * Labels on an object are no permission: anyone who may create the object
 * sets them. The trust anchor is the Namespace's name with its labels: a
 * tenant namespace of peer <peer> is named liqo-tenant-<peer> and carries
 * liqo.io/tenant-namespace=true (or tenantgate.io/tenant-namespace=true) and
 * liqo.io/remote-cluster-id=<peer>. Creating a Namespace of a chosen name
 * takes cluster-wide rights, and the labels are guarded at admission
 * (manifests/policy); a namespace-scoped Role may label its own Namespace, so
 * the labels alone are no anchor (docs/signer.md "Security"). A controller whose object names its peer
 * (a label, spec.clusterID, spec.providerClusterID) acts only when that peer
 * is the namespace's, so key material made for peer P lands only in P's
 * tenant namespace. Pure: JSON and strings in, a verdict out; no I/O. */
#ifndef TG_SIGNER_SCOPE_RULE_H
#define TG_SIGNER_SCOPE_RULE_H

#include <json-c/json.h>

/* Where a controller's objects live. */
typedef enum tg_scope_where {
    TG_WHERE_TENANT_NS = 0,   /* a tenant namespace: named liqo-tenant-<id>, labelled for <id> */
    TG_WHERE_INSTALL_NS,      /* the signer's --namespace */
    TG_WHERE_CLUSTER,         /* cluster-scoped objects (no namespace) */
} tg_scope_where;

/* Where an object names the peer it is for; that peer must be the tenant
 * namespace's liqo.io/remote-cluster-id. */
typedef enum tg_scope_peer {
    TG_PEER_ANY = 0,          /* the object names none: the namespace decides */
    TG_PEER_LABEL,            /* label liqo.io/remote-cluster-id (required) */
    TG_PEER_SPEC_CLUSTER_ID,  /* spec.clusterID (required): Tenants, Identities */
    TG_PEER_SLICE_PROVIDER,   /* a local slice: spec.providerClusterID and label liqo.io/remote-cluster-id,
                               * each when set (the controller fills them in) */
    TG_PEER_NOT_LOCAL_SLICE,  /* a peer's slice: any slice but this cluster's own local ones
                               * (liqo.io/replication=true with spec.consumerClusterID = self) */
    TG_PEER_REPLICATED,       /* what the replicator reads: labels liqo.io/remote-cluster-id and
                               * liqo.io/remoteID, each when set; one at least */
} tg_scope_peer;

typedef struct tg_scope_rule {
    tg_scope_where where;
    const char *name;         /* the one object name acted on, or NULL: any */
    tg_scope_peer peer;
    const char *acts_on;      /* what it acts on, in words (docs, logs) */
    const char *writes;       /* where it may write, in words */
} tg_scope_rule;

/* What is known of the object's namespace (from the Namespace informer). */
typedef struct tg_ns_facts {
    int known;                /* the Namespace is in the cache */
    int tenant;               /* a tenant namespace: labelled as one, and named
                               * liqo-tenant-<cluster_id> (either alone is no anchor) */
    int labelled;             /* the tenant label alone, whatever the name (logs) */
    const char *cluster_id;   /* its liqo.io/remote-cluster-id, or NULL */
} tg_ns_facts;

typedef enum tg_scope_verdict {
    TG_IN_SCOPE = 0,
    TG_OUT_NAMESPACE,         /* not in a namespace of the rule's kind */
    TG_OUT_NAME,              /* not the one name the controller acts on */
    TG_OUT_PEER,              /* names another peer than its tenant namespace (or none) */
    TG_OUT_LOCAL,             /* this cluster's own local slice (not the provider side's) */
} tg_scope_verdict;

/* The facts of a Namespace object (its name and labels). Strings point into ns. */
tg_ns_facts tg_ns_facts_of(json_object *ns);

/* Judge a namespace/name alone (a wake-up key, before its object is read):
 * where and name only. */
tg_scope_verdict tg_scope_judge_key(const tg_scope_rule *r, const char *install_ns, const char *ns,
                                    const char *name, const tg_ns_facts *nsf);

/* Judge an object: where, name and peer. self_id: this cluster's id. */
tg_scope_verdict tg_scope_judge(const tg_scope_rule *r, const char *install_ns, const char *self_id,
                                json_object *obj, const tg_ns_facts *nsf);

/* 1 when slice is this cluster's own local ResourceSlice (it consumes from
 * the namespace's peer): liqo.io/replication=true and spec.consumerClusterID
 * = self_id. The provider side leaves those alone; every other slice of a
 * tenant namespace is the peer's, whatever its labels. */
int tg_slice_is_own_local(json_object *slice, const char *self_id);

/* The verdict as a word for logs: "ok", "namespace", "name", "peer", "local". */
const char *tg_scope_verdict_name(tg_scope_verdict v);

/* 1 when the rule's objects live in a tenant namespace. */
int tg_scope_where_tenant(tg_scope_where w);

/* The rule's namespace kind in words: "tenant namespace", "install namespace", "cluster". */
const char *tg_scope_where_name(tg_scope_where w);

#endif
