/* unpeer.c - the pure part of the force paths (unpeer.h). */
#include "unpeer.h"

#include <stdio.h>
#include <string.h>

#include "online.h"
#include "kube/json.h"

#define OFFLOADING_API "/apis/offloading.liqo.io/v1beta1"

const cli_unpeer_kind cli_unpeer_consumer_kinds[] = {
    { CLI_AUTH_API, "resourceslices", "ResourceSlice", 1 },
    { CLI_AUTH_API, "renews", "Renew", 1 },
    { OFFLOADING_API, "namespacemaps", "NamespaceMap", 1 },
    { CLI_AUTH_API, "identities", "Identity", 0 },
    { "/api/v1", "secrets", "Secret", 0 },
    { NULL, NULL, NULL, 0 },
};

const cli_unpeer_kind cli_unpeer_provider_kinds[] = {
    { CLI_AUTH_API, "resourceslices", "ResourceSlice", 1 },
    { CLI_AUTH_API, "renews", "Renew", 1 },
    { OFFLOADING_API, "namespacemaps", "NamespaceMap", 1 },
    { NULL, NULL, NULL, 0 },
    { CLI_AUTH_API, "tenants", "Tenant", 0 },   /* another than the consumer's own, if any */
};

/* The replicator's (tenantgate's, named as Liqo's crd-replicator names
 * them): they wait for the provider to answer 404 for the copy. */
const char *const cli_unpeer_consumer_finalizers[] = {
    "crdreplicator.liqo.io/resource",
    "crdreplicator.liqo.io/operator",
    NULL,
};

/* The Tenant's (Liqo's name, and tenantgate's older one) and, on a copy,
 * the replicator's should a provider also consume. */
const char *const cli_unpeer_provider_finalizers[] = {
    "tenant.liqo.io/finalizer",
    "tenantgate.io/tenant",
    "crdreplicator.liqo.io/resource",
    NULL,
};

int cli_unpeer_namespace_is_tenant(json_object *ns, const char *id)
{
    char want[128];
    const char *name = tg_json_path_string(ns, "metadata", "name", NULL);
    const char *tenant = tg_json_path_string(ns, "metadata", "labels", CLI_LABEL_TENANT_NS, NULL);
    const char *rid = tg_json_path_string(ns, "metadata", "labels", CLI_LABEL_REMOTE_ID, NULL);

    if (id == NULL || cli_tenant_namespace_name(want, sizeof(want), id) != 0)
        return 0;
    return name && tenant && rid && strcmp(name, want) == 0 && strcmp(tenant, "true") == 0 &&
           strcmp(rid, id) == 0;
}

static int is_ours(const char *f, const char *const *ours)
{
    for (size_t i = 0; ours[i] != NULL; i++)
        if (strcmp(f, ours[i]) == 0)
            return 1;
    return 0;
}

json_object *cli_unpeer_strip_patch(json_object *obj, const char *const *ours)
{
    json_object *fins = tg_json_path(obj, "metadata", "finalizers", NULL);
    const char *rv = tg_json_path_string(obj, "metadata", "resourceVersion", NULL);
    json_object *keep, *meta, *patch;
    size_t n, dropped = 0;

    if (fins == NULL || !json_object_is_type(fins, json_type_array))
        return NULL;
    keep = json_object_new_array();
    n = json_object_array_length(fins);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(fins, i);
        const char *f = json_object_get_string(it);

        if (f != NULL && is_ours(f, ours))
            dropped++;
        else
            json_object_array_add(keep, json_object_get(it));
    }
    if (dropped == 0) {
        json_object_put(keep);
        return NULL;
    }
    meta = json_object_new_object();
    json_object_object_add(meta, "finalizers", keep);
    if (rv != NULL)   /* a finalizer added meanwhile is not dropped unseen */
        json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
    patch = json_object_new_object();
    json_object_object_add(patch, "metadata", meta);
    return patch;
}

void cli_unpeer_left_line(char *buf, size_t len, const char *why, const char *kind, const char *ns,
                          const char *name, const char *consumer_id)
{
    snprintf(buf, len, "provider %s: %s %s/%s left: run `kubectl tenantgate unauthenticate "
             "--provider-side --remote-cluster-id %s` on the provider",
             why, kind, ns, name, consumer_id);
}
