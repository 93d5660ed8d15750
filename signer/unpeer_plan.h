/* unpeer_plan.h - when the Tenant controller may take a deleted Tenant's
 * consumer bindings away (docs/LIQO.md "Replace mode", unpeering).
 *
 * `liqoctl unauthenticate` deletes the consumer's control-plane Identity and,
 * at once, the Tenant. The consumer's crd-replicator then deletes its copies
 * on the provider (the Renew `controlplane-<provider>` that Liqo v1.2 keeps
 * as long as the Identity) with the consumer's own rights. Unbinding first
 * leaves that copy behind for good (the replicator gets 403, then 401 once
 * the certificate expires), so the bindings stay while the consumer's Renews
 * are left, up to a grace period after the deletion: a consumer that never
 * cleans up (gone, or cut off) does not hold its Tenant forever.
 * Pure: no I/O. */
#ifndef TG_SIGNER_UNPEER_PLAN_H
#define TG_SIGNER_UNPEER_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* How long a deleted Tenant's bindings wait for the consumer's replicas: a
 * live consumer takes about a second (its garbage collector, then one DELETE). */
#define TG_UNPEER_GRACE_S 10
/* How often the Tenant is looked at again meanwhile. */
#define TG_UNPEER_POLL_MS 500

/* 0: unbind now. > 0: keep the bindings, look again after that many ms.
 * deleted_at: the Tenant's deletionTimestamp (0 if unreadable: unbind now);
 * replicas_left: the consumer's replicated objects still in the namespace. */
int64_t tg_unpeer_wait_ms(time_t deleted_at, time_t now, size_t replicas_left);

#endif
