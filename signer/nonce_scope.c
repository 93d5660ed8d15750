/* nonce_scope.c - the Secrets the nonce controller may fill (nonce_scope.h). */
#include "signer/nonce_scope.h"

#include <string.h>

#include "signer/signer.h"

tg_nonce_scope tg_nonce_scope_of(const char *ns, const char *name, const char *cluster_id)
{
    static const size_t plen = sizeof(TG_TENANT_NAMESPACE_PREFIX) - 1;

    if (!name || strcmp(name, TG_NONCE_SECRET) != 0)
        return TG_NONCE_SCOPE_NAME;
    if (!ns || strncmp(ns, TG_TENANT_NAMESPACE_PREFIX, plen) != 0 || !ns[plen])
        return TG_NONCE_SCOPE_NAMESPACE;
    /* liqo-tenant-A holds A's nonce only: a Secret there labelled for B is
     * not the nonce of any Tenant the webhook would admit. */
    if (!cluster_id || strcmp(ns + plen, cluster_id) != 0)
        return TG_NONCE_SCOPE_CLUSTER;
    return TG_NONCE_SCOPE_OK;
}

const char *tg_nonce_scope_reason(tg_nonce_scope s)
{
    switch (s) {
    case TG_NONCE_SCOPE_OK:
        return "ok";
    case TG_NONCE_SCOPE_NAME:
        return "name";
    case TG_NONCE_SCOPE_NAMESPACE:
        return "namespace";
    case TG_NONCE_SCOPE_CLUSTER:
        return "cluster";
    }
    return "unknown";
}
