/* tenant_scope.c - the labelled Secrets the signer may act on (tenant_scope.h). */
#include "signer/tenant_scope.h"

#include <string.h>

#include "signer/signer.h"

tg_scope tg_tenant_scope_of(const char *ns, const char *cluster_id)
{
    static const size_t plen = sizeof(TG_TENANT_NAMESPACE_PREFIX) - 1;

    if (!ns || strncmp(ns, TG_TENANT_NAMESPACE_PREFIX, plen) != 0 || !ns[plen])
        return TG_SCOPE_NAMESPACE;
    /* liqo-tenant-A is A's: a Secret there labelled for B belongs to no
     * peering the rest of the protocol would recognise. */
    if (!cluster_id || strcmp(ns + plen, cluster_id) != 0)
        return TG_SCOPE_CLUSTER;
    return TG_SCOPE_OK;
}

tg_scope tg_nonce_scope_of(const char *ns, const char *name, const char *cluster_id)
{
    if (!name || strcmp(name, TG_NONCE_SECRET) != 0)
        return TG_SCOPE_NAME;
    return tg_tenant_scope_of(ns, cluster_id);
}

tg_scope tg_signed_nonce_scope_of(const char *ns, const char *name, const char *cluster_id, int ns_tenant,
                                  const char *ns_cluster_id)
{
    if (!name || strcmp(name, TG_SIGNED_NONCE_SECRET) != 0)
        return TG_SCOPE_NAME;
    if (!ns_tenant)
        return TG_SCOPE_NAMESPACE;
    if (!cluster_id || !*cluster_id || !ns_cluster_id || strcmp(cluster_id, ns_cluster_id) != 0)
        return TG_SCOPE_CLUSTER;
    /* the labels of a namespace its own user may have set: the name decides */
    return tg_tenant_scope_of(ns, cluster_id) == TG_SCOPE_OK ? TG_SCOPE_OK : TG_SCOPE_NAMESPACE;
}

const char *tg_scope_reason(tg_scope s)
{
    switch (s) {
    case TG_SCOPE_OK:
        return "ok";
    case TG_SCOPE_NAME:
        return "name";
    case TG_SCOPE_NAMESPACE:
        return "namespace";
    case TG_SCOPE_CLUSTER:
        return "cluster";
    }
    return "unknown";
}
