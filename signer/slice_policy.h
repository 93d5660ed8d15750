/* slice_policy.h - the policies of a slice, read from the policy ConfigMap:
 * its class's (data[<class>]) and its consumer's own (data[tenant.<id>],
 * pki/slice_tenant_policy.h). */
#ifndef TG_SIGNER_SLICE_POLICY_H
#define TG_SIGNER_SLICE_POLICY_H

#include "signer/slice_ctx.h"

/* One read of the ConfigMap: *policy the class's policy (NULL: none),
 * *tenant_entry a malloc'd copy of the consumer's entry text (NULL: none;
 * pki/slice_tenant_policy.c judges it, malformed or not). -1 with c->err on
 * a failed read; *bad set (and why) when the class's entry is not JSON. */
int rs_class_policy(slice_ctx *c, const char *class_, json_object **policy, char **tenant_entry, char *why,
                    size_t why_len, int *bad);
int rs_is_default_class(const char *class_);

#endif
