/* lookup_unavailable.c - see lookup_unavailable.h. */
#include "lookup_unavailable.h"

static int never_synced(const tg_lookup *lk)
{
    return 0;
}

static int no_label(const tg_lookup *lk, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                    int *ns_exists)
{
    *ns_exists = 0;
    return TG_LOOKUP_ERROR;
}

static size_t no_tenants(const tg_lookup *lk, const char *ns)
{
    return 0;
}

static int no_tenant(const tg_lookup *lk, const char *name)
{
    return 0;
}

static int no_nonce(const tg_lookup *lk, const char *ns, const char *cluster_id, char nonce[TG_LOOKUP_NONCE_MAX],
                    size_t *len)
{
    return TG_NONCE_ABSENT;        /* never asked: not synced */
}

static int no_tenant_for_cluster(const tg_lookup *lk, const char *ns, const char *cluster_id, tg_lookup_tenant *out)
{
    return TG_LOOKUP_ERROR;
}

static int no_slice_user(const tg_lookup *lk, const char *user, char where[TG_LOOKUP_WHERE_MAX])
{
    return 0;
}

static const tg_lookup_ops unavailable_ops = {
    .synced = never_synced,
    .namespace_label = no_label,
    .tenants_in_namespace = no_tenants,
    .tenant_name_exists = no_tenant,
    .nonce_secret = no_nonce,
    .tenant_for_cluster = no_tenant_for_cluster,
    .local_slice_name_exists = no_tenant,
    .tenant_cluster_id_exists = no_tenant,
    .slice_user_exists = no_slice_user,
    .cache_stats = NULL,
};

const tg_lookup tg_lookup_unavailable = {.ops = &unavailable_ops, .data = NULL};
