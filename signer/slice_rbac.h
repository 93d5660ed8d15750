/* slice_rbac.h - the per-slice RoleBinding tenantgate-rslice-<name> to
 * tenantgate-resourceslice-user, owned by the slice. */
#ifndef TG_SIGNER_SLICE_RBAC_H
#define TG_SIGNER_SLICE_RBAC_H

#include "signer/slice_ctx.h"

int rs_ensure_binding(slice_ctx *c, int present);

#endif
