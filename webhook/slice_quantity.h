/* slice_quantity.h - the quantities a ResourceSlice asks for (spec.resources),
 * judged at admission (PROTOCOL.md 5a). Pure: no I/O.
 *
 * The CRD's pattern lets through "-8", "0" and "1e999". A negative or zero
 * quantity would lower the consumer's sum against maxPerTenant (the signer
 * adds up accepted slices), and a huge one is out of the signer's range: each
 * must be a Kubernetes quantity of at least 1n and below 10^27, written with
 * at most 30 digits, an exponent of at most 3 digits, in 64 characters. */
#ifndef TG_WEBHOOK_SLICE_QUANTITY_H
#define TG_WEBHOOK_SLICE_QUANTITY_H

#include <json-c/json.h>

#include "pki/verdict.h"

typedef enum tg_quantity_class {
    TG_QUANTITY_POSITIVE = 0,      /* within the range above */
    TG_QUANTITY_ZERO,              /* "0", "-0", "0.0Gi", "0e5" */
    TG_QUANTITY_NEGATIVE,
    TG_QUANTITY_OUT_OF_RANGE,      /* below 1n or from 10^27 on */
    TG_QUANTITY_MALFORMED,         /* not a quantity, or too long */
} tg_quantity_class;

/* What text is, as a quantity. */
tg_quantity_class tg_quantity_classify(const char *text);

/* Every member of resources (spec.resources; NULL: none asked) is a positive
 * quantity (a string or an integer). 0, or -1 with v:
 * MalformedResourceSlice naming the resource and what was found. */
int tg_slice_quantities_check(json_object *resources, tg_verdict *v);

#endif
