/* slice_certificate.h - the slice's certificate: its Kubernetes CSR, the
 * cache Secret liqo-remote-certificate-<name> owned by the slice, and
 * renewal at 2/3 of the lifetime. */
#ifndef TG_SIGNER_SLICE_CERTIFICATE_H
#define TG_SIGNER_SLICE_CERTIFICATE_H

#include "signer/slice_ctx.h"

int rs_slice_certificate(slice_ctx *c, cert_result *cr);
json_object *rs_slice_owner(slice_ctx *c);
int rs_owned_by_slice(json_object *obj, const char *uid);

#endif
