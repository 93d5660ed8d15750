/* nonce_scope.h - which labelled Secrets the provider's nonce controller may
 * fill (PROTOCOL.md 3 and 6). Pure: names in, a verdict out; no I/O.
 *
 * The nonce for consumer C is the Secret liqo-nonce in C's tenant namespace,
 * liqo-tenant-C (the name Liqo and `kubectl tenantgate create nonce` give
 * it), labelled liqo.io/remote-cluster-id=C. The controller watches Secrets
 * by label only, and a label is something anyone who may create a Secret
 * somewhere can set: without this rule the signer would write fresh nonces
 * into objects of whoever asked, e.g. a Secret in `default`. The webhook
 * never counts such a Secret (webhook/nonce_secret.h); the signer must not
 * fill it either.
 *
 * The rule is on names, not on the namespace's liqo.io/tenant-namespace
 * label: the signer may not read namespaces (manifests/signer/rbac.yaml),
 * and creating a namespace needs cluster-wide rights anyway. A tenant
 * namespace under another name gets no nonce from the signer. */
#ifndef TG_SIGNER_NONCE_SCOPE_H
#define TG_SIGNER_NONCE_SCOPE_H

#define TG_TENANT_NAMESPACE_PREFIX "liqo-tenant-"

typedef enum tg_nonce_scope {
    TG_NONCE_SCOPE_OK = 0,       /* liqo-nonce in liqo-tenant-C, labelled for C */
    TG_NONCE_SCOPE_NAME,         /* not named liqo-nonce */
    TG_NONCE_SCOPE_NAMESPACE,    /* not in a namespace named liqo-tenant-<id> */
    TG_NONCE_SCOPE_CLUSTER,      /* no liqo.io/remote-cluster-id, or not the namespace's <id> */
} tg_nonce_scope;

/* Judge the labelled Secret ns/name whose liqo.io/remote-cluster-id label is
 * cluster_id (NULL when it has none). Any NULL or empty name is out of scope. */
tg_nonce_scope tg_nonce_scope_of(const char *ns, const char *name, const char *cluster_id);

/* The verdict as a short word for logs and the metric label: "ok", "name",
 * "namespace", "cluster". */
const char *tg_nonce_scope_reason(tg_nonce_scope s);

#endif
