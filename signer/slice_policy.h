/* slice_policy.h - the class policy of a slice, read from the policy ConfigMap. */
#ifndef TG_SIGNER_SLICE_POLICY_H
#define TG_SIGNER_SLICE_POLICY_H

#include "signer/slice_ctx.h"

int rs_class_policy(slice_ctx *c, const char *class_, json_object **policy, char *why, size_t why_len, int *bad);
int rs_is_default_class(const char *class_);

#endif
