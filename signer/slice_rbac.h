/* slice_rbac.h - the slice user's rights on the provider: none of its own, as
 * under Liqo's provider (LIQO.md "Rights"); an older signer's per-slice
 * RoleBinding tenantgate-rslice-<name> is removed. */
#ifndef TG_SIGNER_SLICE_RBAC_H
#define TG_SIGNER_SLICE_RBAC_H

#include "signer/slice_ctx.h"

/* 0 when no binding of ours is left for the slice, -1 on an API error (c->err). */
int rs_drop_old_binding(slice_ctx *c);

#endif
