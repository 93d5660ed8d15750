/* quantity.h - Kubernetes quantities ("500m", "8Gi", "1e3") as exact
 * integers, for the slice decisions of both the signer (what it grants,
 * signer/slice_resources.h) and the webhook (a tenant's policy,
 * pki/slice_tenant_policy.h). Pure: no I/O. */
#ifndef TG_PKI_QUANTITY_H
#define TG_PKI_QUANTITY_H

#include <stddef.h>

/* A Kubernetes quantity ("500m", "8Gi", "1e3") in thousandths of its unit;
 * 0 or -1 when malformed or out of range. */
int tg_quantity_milli(const char *q, __int128 *milli);

/* An exact text of milli thousandths: "1500m", "2" (2000m), "8Gi" and "512Mi"
 * (whole multiples of 2^30 and 2^20). */
void tg_quantity_text(__int128 milli, char *buf, size_t len);

#endif
