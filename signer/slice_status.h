/* slice_status.h - the slice's Authentication and Resources conditions
 * (Liqo's wording) and the /status PATCH. */
#ifndef TG_SIGNER_SLICE_STATUS_H
#define TG_SIGNER_SLICE_STATUS_H

#include "signer/slice_ctx.h"

void rs_count_verdict(tg_signer *s, const char *condition, const char *status, const char *reason);
json_object *rs_condition_of(json_object *slice, const char *type);
int rs_same_text(const char *a, const char *b);
json_object *rs_make_condition(json_object *old, const char *type, const char *status, const char *reason,
                               const char *message);
json_object *rs_conditions_with(json_object *slice, json_object *auth, json_object *res);
int rs_patch_status(slice_ctx *c, json_object *st, json_object **after);

/* status.storageClasses, ingressClasses and loadBalancerClasses into st, as
 * Liqo fills them for an accepted slice (slice_offer.h; --enable-storage
 * lists the StorageClasses live); empty lists for a denied one. 0, or -1
 * with c->err when the list fails (retried, as Liqo requeues). */
int rs_offered_classes(slice_ctx *c, json_object *st, int accepted);

#endif
