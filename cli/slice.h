/* slice.h - the ResourceSlice a consumer creates (liqoctl create resourceslice
 * parity, PROTOCOL.md 5a) and reading the provider's verdict back. Pure: no
 * I/O; unit tested. */
#ifndef TG_CLI_SLICE_H
#define TG_CLI_SLICE_H

#include <stddef.h>
#include <json-c/json.h>

#define CLI_SLICE_MAX_RESOURCES 32

typedef struct cli_slice_request {
    const char *name;
    const char *namespace_;            /* the consumer's tenant namespace for the provider */
    const char *provider_id;
    const char *class_;                /* "default" when NULL */
    const char *cpu, *memory, *pods;   /* NULL or "" when not asked for */
    const char *resources[CLI_SLICE_MAX_RESOURCES];   /* "name=quantity" */
    size_t nresources;
    int no_virtual_node;
    int revocable;                     /* annotation tenantgate.io/revocable: the signer's CSR carries a group */
} cli_slice_request;

/* On a consumer's slice: the consumer signer makes its CSR in the revocable
 * form (docs/revocation.md "Slices"). */
#define CLI_SLICE_REVOCABLE_ANNOTATION "tenantgate.io/revocable"

/* A slice name: a lowercase DNS subdomain of at most 253 characters. */
int cli_slice_name_valid(const char *name);

/* A Kubernetes quantity as the CRD's pattern accepts it: "4", "500m",
 * "8Gi", "1e3", "+.5". */
int cli_quantity_valid(const char *q);

/* The local ResourceSlice: labels liqo.io/replication=true, liqo.io/remoteID and
 * liqo.io/remote-cluster-id = provider, annotation liqo.io/create-virtual-node
 * unless no_virtual_node, spec {class, providerClusterID, resources}. NULL with
 * err (a bad quantity or --resource, a repeated resource name). */
json_object *cli_slice_object(const cli_slice_request *r, char *err, size_t err_len);

typedef enum cli_slice_state {
    CLI_SLICE_PENDING = 0,             /* no condition of that type yet */
    CLI_SLICE_ACCEPTED,
    CLI_SLICE_DENIED,
} cli_slice_state;

/* The status of condition `type` ("Authentication" or "Resources") of slice;
 * for DENIED its reason and message into why ("Reason: message"). */
cli_slice_state cli_slice_condition(json_object *slice, const char *type, char *why, size_t why_len);

#endif
