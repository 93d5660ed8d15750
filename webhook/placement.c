/* placement.c - see placement.h. */
#include "placement.h"

#include <string.h>

#include "kube/tenant_json.h"
#include "pki/tenant.h"

int tg_placement_tenant_namespace(const tg_lookup *lk, const char *ns, tg_verdict *v)
{
    char value[TG_LABEL_VALUE_MAX];
    int ns_exists = 0, rc;

    rc = lk->ops->namespace_label(lk, ns, TG_LABEL_TENANT_NAMESPACE, value, &ns_exists);
    if (!ns_exists)
        return tg_verdict_deny_code(v, 400, TG_WRONG_NAMESPACE,
                                    "expected namespace %.*s to carry label %s=true, found no tenant "
                                    "namespace of that name",
                                    TG_SHOWN, ns, TG_LABEL_TENANT_NAMESPACE);
    if (rc != TG_LOOKUP_FOUND || strcmp(value, "true") != 0)
        return tg_verdict_deny_code(v, 400, TG_WRONG_NAMESPACE,
                                    "expected namespace %.*s to carry label %s=true, found %s%.*s%s", TG_SHOWN,
                                    ns, TG_LABEL_TENANT_NAMESPACE, rc == TG_LOOKUP_FOUND ? "\"" : "",
                                    TG_SHOWN, rc == TG_LOOKUP_FOUND ? value : "no such label",
                                    rc == TG_LOOKUP_FOUND ? "\"" : "");
    return 0;
}

/* ns is liqo-tenant-<cluster_id>. */
static int named_for(const char *ns, const char *cluster_id)
{
    static const size_t plen = sizeof(TG_TENANT_NAMESPACE_PREFIX) - 1;

    return strncmp(ns, TG_TENANT_NAMESPACE_PREFIX, plen) == 0 && strcmp(ns + plen, cluster_id) == 0;
}

int tg_placement_owner(const tg_lookup *lk, const char *ns, const char *cluster_id, const char *field,
                       tg_verdict *v)
{
    char value[TG_LABEL_VALUE_MAX];
    int ns_exists = 0, rc;

    /* The labels alone are no anchor: a Role that covers namespaces may label
     * its own Namespace. Only a cluster-wide principal makes this name. An
     * invalid id is refused by its own check (InvalidClusterID), the more
     * telling reason; no Namespace can bear its name anyway. */
    if (tg_cluster_id_valid(cluster_id) && !named_for(ns, cluster_id))
        return tg_verdict_deny_code(v, 400, TG_WRONG_NAMESPACE,
                                    "expected namespace %s%.*s (the tenant namespace of %s), found %.*s",
                                    TG_TENANT_NAMESPACE_PREFIX, TG_SHOWN, cluster_id, field, TG_SHOWN, ns);
    rc = lk->ops->namespace_label(lk, ns, TG_LABEL_REMOTE_CLUSTER_ID, value, &ns_exists);
    if (rc != TG_LOOKUP_FOUND || strcmp(value, cluster_id) != 0)
        return tg_verdict_deny_code(v, 403, TG_LABEL_MISMATCH,
                                    "expected %s to equal label %s of namespace %.*s, found "
                                    "%.*s vs %s%.*s%s",
                                    field, TG_LABEL_REMOTE_CLUSTER_ID, TG_SHOWN, ns, TG_SHOWN, cluster_id,
                                    rc == TG_LOOKUP_FOUND ? "\"" : "", TG_SHOWN,
                                    rc == TG_LOOKUP_FOUND ? value : "no such label",
                                    rc == TG_LOOKUP_FOUND ? "\"" : "");
    return 0;
}
