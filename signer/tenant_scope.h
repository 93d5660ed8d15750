/* tenant_scope.h - which labelled Secrets the signer may act on (PROTOCOL.md
 * 3, 6 and 7). Pure: names in, a verdict out; no I/O.
 *
 * The signer finds the Secrets it works with by label, and a label is
 * something anyone who may create a Secret somewhere can set. So a labelled
 * Secret counts only in the tenant namespace of the cluster it is labelled
 * for: liqo-tenant-<id> with liqo.io/remote-cluster-id=<id>, the name Liqo
 * and `kubectl tenantgate` give that namespace. Two Secrets depend on it:
 *  - the provider's nonce for consumer C, liqo-nonce in liqo-tenant-C.
 *    Without the rule the nonce controller would write fresh nonces into
 *    objects of whoever asked, e.g. a Secret in `default`; the webhook never
 *    counts such a Secret (webhook/nonce_secret.h) and the signer does not
 *    fill it;
 *  - the consumer's ControlPlane kubeconfig of provider P, in liqo-tenant-P.
 *    Without the rule the replicator would connect to whatever server a
 *    labelled Secret names, with the credentials it holds, and write what
 *    that server answers into the status of the namespace's objects: status
 *    the Secret's author may not be allowed to write.
 *
 * The rule is on names: creating a namespace of a given name needs
 * cluster-wide rights. It is checked again by the reconcilers, after the
 * generic scope check every event passes first (scope_rule.h: the
 * Namespace's name and labels, from the signer's Namespace informer); so a
 * nonce is filled only in a namespace both named and labelled for its
 * cluster. */
#ifndef TG_SIGNER_TENANT_SCOPE_H
#define TG_SIGNER_TENANT_SCOPE_H

#define TG_TENANT_NAMESPACE_PREFIX "liqo-tenant-"

typedef enum tg_scope {
    TG_SCOPE_OK = 0,       /* in liqo-tenant-<id>, labelled for <id> (and named as expected) */
    TG_SCOPE_NAME,         /* not the expected name (the nonce: liqo-nonce) */
    TG_SCOPE_NAMESPACE,    /* not in a namespace named liqo-tenant-<id> */
    TG_SCOPE_CLUSTER,      /* no liqo.io/remote-cluster-id, or not the namespace's <id> */
} tg_scope;

/* Judge a Secret in ns whose liqo.io/remote-cluster-id label is cluster_id
 * (NULL when it has none): OK, NAMESPACE or CLUSTER. A NULL or empty
 * namespace is out of scope. */
tg_scope tg_tenant_scope_of(const char *ns, const char *cluster_id);

/* The nonce rule: the Secret ns/name must be liqo-nonce, then as above. The
 * name is judged first. */
tg_scope tg_nonce_scope_of(const char *ns, const char *name, const char *cluster_id);

/* The consumer's signed nonce: the Secret must be liqo-signed-nonce, labelled
 * with a provider's cluster id, in that provider's tenant namespace:
 * liqo-tenant-<id>, labelled liqo.io/tenant-namespace=true (ns_tenant) and
 * liqo.io/remote-cluster-id=<id> (ns_cluster_id, NULL when none). The labels
 * alone are no anchor: a Role that covers namespaces may label its own
 * Namespace, and the cluster key would then sign what its holder puts in a
 * Secret there. Checked in that order: name, labels, cluster, namespace name. */
tg_scope tg_signed_nonce_scope_of(const char *ns, const char *name, const char *cluster_id, int ns_tenant,
                                  const char *ns_cluster_id);

/* The verdict as a short word for logs and metric labels: "ok", "name",
 * "namespace", "cluster". */
const char *tg_scope_reason(tg_scope s);

#endif
