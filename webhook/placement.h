/* placement.h - the namespace checks Tenants and replicated ResourceSlices
 * share (PROTOCOL.md 5 step 2): the object must sit in a tenant namespace, and
 * that namespace must be its consumer's, liqo-tenant-<id> labelled for <id>.
 * Pure over lookup.h. */
#ifndef TG_WEBHOOK_PLACEMENT_H
#define TG_WEBHOOK_PLACEMENT_H

#include "pki/verdict.h"
#include "webhook/lookup.h"

/* Namespace ns carries liqo.io/tenant-namespace=true; else WrongNamespace (400). */
int tg_placement_tenant_namespace(const tg_lookup *lk, const char *ns, tg_verdict *v);

/* Namespace ns is named liqo-tenant-<cluster_id>, else WrongNamespace (400),
 * and carries liqo.io/remote-cluster-id=<cluster_id>, else LabelMismatch
 * (403). The name is the anchor: creating a Namespace is cluster-scoped, while
 * a Role covering namespaces may label its own. field names where cluster_id
 * came from. */
int tg_placement_owner(const tg_lookup *lk, const char *ns, const char *cluster_id, const char *field,
                       tg_verdict *v);

/* Names in messages: bounded, so a hostile value cannot push the reason out. */
#define TG_SHOWN 63

#endif
