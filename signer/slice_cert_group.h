/* slice_cert_group.h - a revocable slice certificate's rights
 * (docs/revocation.md "Slices"). Internal to the signer.
 *
 * A slice certificate that carries its slice user's per-certificate group
 * (pki/cert_group.h) carries no Group <consumer>: its rights are the ones
 * bound to its group, in ClusterRoleBinding
 * liqo-binding-liqo-virtual-kubelet-remote-clusterwide-<slice user> (Liqo's
 * virtual-kubelet role, as Group <consumer> is bound for Liqo's slices), so
 * `kubectl tenantgate revoke` can take them away alone. */
#ifndef TG_SIGNER_SLICE_CERT_GROUP_H
#define TG_SIGNER_SLICE_CERT_GROUP_H

#include "signer/slice_ctx.h"

/* Bind the group of certificate cert_b64 (base64 PEM) when it carries one;
 * nothing for Liqo's form. 0, or -1 with c->err (retry). */
int rs_bind_cert_group(slice_ctx *c, const char *cert_b64);

#endif
