/* tenant_finalizer.h - the Tenant's finalizer: the Tenant controller puts
 * it on (Liqo's name; the one earlier tenantgate versions used goes) and
 * takes it off when the Tenant's deletion is done. */
#ifndef TG_SIGNER_TENANT_FINALIZER_H
#define TG_SIGNER_TENANT_FINALIZER_H

#include <stdint.h>

#include <json-c/json.h>

#include "signer/signer.h"

/* 1 when the Tenant lacks our finalizer or still has the legacy one. */
int tg_tenant_needs_finalizer(json_object *tenant);

/* Merge-patch metadata.finalizers at the Tenant's resourceVersion: ours
 * (add) or none of ours. *out (if not NULL) receives the updated Tenant on
 * success (caller puts). The HTTP status or -1 with err. */
long tg_tenant_set_finalizer(tg_api *api, json_object *tenant, const char *ns, const char *name, int add,
                             json_object **out, char *err, size_t err_len);

/* Deletion: once the consumer's replicas are gone (unpeer_plan.h), bindings
 * away, nonce rotated with --nonce-rotation on-unpeer (an old Tenant no
 * longer verifies), finalizer off. 200 done, 202 waiting (*wait_ms set),
 * else the failing status or -1 with err. */
long tg_tenant_finalize(tg_signer *s, tg_api *api, json_object *tenant, const char *ns, const char *name,
                        const char *cid, int64_t *wait_ms, char *err, size_t err_len);

#endif
