/* unpeer.h - what `unauthenticate --force` (consumer) and
 * `unauthenticate --provider-side` (provider) clear, and the pure decisions
 * they take: which namespace is the peering's, which finalizers they may
 * take off, the line naming what was left on an unreachable provider.
 * No I/O; unit tested (tests/test_unpeer.c). docs/cli.md "Unpeering from a
 * cluster that is gone". */
#ifndef TG_CLI_UNPEER_H
#define TG_CLI_UNPEER_H

#include <stddef.h>
#include <json-c/json.h>

#include "online.h"

/* One collection cleared in the peering's tenant namespace. */
typedef struct cli_unpeer_kind {
    const char *api;         /* "/api/v1" or "/apis/GROUP/VERSION" */
    const char *resource;    /* plural */
    const char *kind;        /* for messages */
    int replicated;          /* the consumer's replicator copies it to the provider */
} cli_unpeer_kind;

/* Ended by a row whose resource is NULL. The consumer's: what the signer and
 * Liqo keep for one provider in liqo-tenant-<provider>. The provider's: the
 * consumer's replicated copies in liqo-tenant-<consumer> (the Tenant and the
 * namespace are handled on their own). */
extern const cli_unpeer_kind cli_unpeer_consumer_kinds[];
extern const cli_unpeer_kind cli_unpeer_provider_kinds[];

/* Finalizers the force paths take off, ended by NULL: only those whose owner
 * waits for the other cluster (the replicator's), or, on the provider, the
 * Tenant's once the signer had its bounded chance. Any other stays. */
extern const char *const cli_unpeer_consumer_finalizers[];
extern const char *const cli_unpeer_provider_finalizers[];

/* 1 when ns (a Namespace) is the tenant namespace of cluster id: named
 * liqo-tenant-<id> and labelled liqo.io/tenant-namespace=true and
 * liqo.io/remote-cluster-id=<id>. Only such a namespace is cleared: the
 * labels of a Namespace are the trust anchor (docs/signer.md "Scope"). */
int cli_unpeer_namespace_is_tenant(json_object *ns, const char *id);

/* A merge patch taking the finalizers in ours off obj (guarded by its
 * resourceVersion), or NULL when obj carries none of them. */
json_object *cli_unpeer_strip_patch(json_object *obj, const char *const *ours);

/* The line for one object left on the provider:
 * "provider <why>: KIND NS/NAME left: run `kubectl tenantgate unauthenticate
 *  --provider-side --remote-cluster-id CONSUMER` on the provider". */
void cli_unpeer_left_line(char *buf, size_t len, const char *why, const char *kind, const char *ns,
                          const char *name, const char *consumer_id);

/* --- flow_unpeer.c (cluster access) ------------------------------------ */

/* The tenant namespace of id on c: *found 0 when liqo-tenant-<id> does not
 * exist; an error (exit 1) when it exists without id's tenant labels, which
 * is then no peering's to clear. */
int cli_unpeer_tenant_ns(cli_flow *f, cli_cluster *c, const char *id, char *ns, size_t ns_len, int *found);

/* Delete ns with what kinds lists in it, taking the finalizers in fins off
 * whatever they hold, until the namespace is gone or the flow's deadline.
 * *stripped counts the finalizers taken off. */
int cli_unpeer_clear_namespace(cli_flow *f, cli_cluster *c, const char *ns, const cli_unpeer_kind *kinds,
                               const char *const *fins, int *stripped);

/* DELETE path; 404 (of the object) is fine. *existed when it was there. */
int cli_unpeer_delete(cli_flow *f, cli_cluster *c, const cli_api_call *call, const char *path, int *existed);

#endif
