/* slice_quota.h - the maxPerTenant ledger: the Resources verdict of a slice
 * against the grants of the consumer's other slices, with this process's own
 * last writes recorded until the cache shows them. */
#ifndef TG_SIGNER_SLICE_QUOTA_H
#define TG_SIGNER_SLICE_QUOTA_H

#include <pthread.h>
#include "signer/slice_ctx.h"
#include "signer/slice_plan.h"

/* Resources decisions of one consumer are made one at a time (see slice_quota.c). */
extern pthread_mutex_t rs_res_mu;

tg_slice_grant_record rs_grant_get(tg_signer *s, const char *uid, const char *cached_rv, json_object **granted);
void rs_grant_note(slice_ctx *c, int wrote, json_object *after);
int rs_resources_status(slice_ctx *c, json_object *st, json_object **res_cond, int *res_denied);

#endif
