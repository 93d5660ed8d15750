/* slice_resources.h - what a provider grants a ResourceSlice of the default
 * class (PROTOCOL.md 5a; Liqo's remoteresourceslice and, beyond Liqo, a
 * policy). Pure: no I/O, no clock; table-driven tests.
 *
 * Liqo grants every request: its defaults (--default-node-resources; its
 * chart's cpu 4, memory 8Gi, pods 110, ephemeral-storage 20Gi) overlaid by
 * what the slice asks for. tenantgate
 * does the same, then applies the class's policy when there is one:
 *   {"maxPerSlice": {"cpu": "8", ...}, "maxPerTenant": {"cpu": "32", ...}}
 * maxPerSlice bounds what one slice is granted; maxPerTenant bounds the sum
 * over the consumer's accepted slices of that class. A resource the policy
 * does not name is not limited. */
#ifndef TG_SIGNER_SLICE_RESOURCES_H
#define TG_SIGNER_SLICE_RESOURCES_H

#include <stddef.h>
#include <json-c/json.h>

#include "pki/quantity.h"   /* tg_quantity_milli, tg_quantity_text */
#include "pki/verdict.h"    /* tg_reason_name: the reason codes below */

/* Liqo's --default-node-resources ("cpu=4,memory=8Gi,...": its ResourceMap,
 * pkg/utils/args/resourcemap.go) as an object of name -> quantity text. ""
 * gives {} (no defaults, as Liqo). NULL with err for a chunk without exactly
 * one "=", an empty name, or a value that is not a quantity greater than 0. */
json_object *tg_slice_defaults_parse(const char *flag, char *err, size_t err_len);

/* The decision. defaults: tg_slice_defaults_parse's (NULL: Liqo's chart's);
 * request: spec.resources (may be NULL); policy: the class's
 * policy object (may be NULL: no limits); others: the summed status.resources
 * of the consumer's other accepted slices of the class (may be NULL).
 * 0 with *granted (a new object: defaults overlaid by the request), or -1
 * with why ("cpu: 10 asked, at most 8 per slice (2 over)"). A malformed
 * quantity or policy is -1 too, and so is a requested quantity <= 0
 * (tg_slice_request_nonpositive). A negative sum in others counts as 0. */
int tg_slice_resources_decide(json_object *defaults, json_object *request, json_object *policy, json_object *others,
                              json_object **granted, char *why, size_t why_len);

/* 1 when a quantity of request (spec.resources, may be NULL) is zero or
 * negative, with why naming the first; else 0. A "-8" asked would lower
 * the consumer's total under maxPerTenant, and "0" grants nothing: both are
 * refused (PROTOCOL.md 5a, NonPositiveQuantity). Malformed ones are not
 * this function's business (decide refuses them). */
int tg_slice_request_nonpositive(json_object *request, char *why, size_t why_len);

/* others += add, quantity by quantity (others an object; add may be NULL).
 * A negative quantity of add counts as 0: no slice lowers the total.
 * 0, or -1 when a quantity of add is malformed (others unchanged then in that key). */
int tg_slice_resources_add(json_object *others, json_object *add);

/* The Tenant's state as the Resources condition sees it. */
typedef enum tg_slice_tenant_state {
    TG_SLICE_T_ACTIVE = 0,
    TG_SLICE_T_CORDONED,
    TG_SLICE_T_DRAINED,
} tg_slice_tenant_state;

/* Reason codes of a Resources=Denied (the message starts with one; pki/reasons.def). */
#define TG_RES_DENY_DRAINED tg_reason_name(TG_TENANT_DRAINED)
#define TG_RES_DENY_CORDONED tg_reason_name(TG_TENANT_CORDONED)
#define TG_RES_DENY_POLICY tg_reason_name(TG_POLICY_EXCEEDED)
#define TG_RES_DENY_QUANTITY tg_reason_name(TG_NON_POSITIVE_QUANTITY)
#define TG_RES_DENY_CLASS_DISABLED tg_reason_name(TG_DEFAULT_SLICE_CLASS_DISABLED)

/* What the provider's flags make of the default class (Liqo's SliceStatusOptions). */
typedef struct tg_slice_provider {
    json_object *defaults;        /* --default-node-resources; NULL: Liqo's chart's */
    int default_class_disabled;   /* --default-resource-slice-class-enabled=false */
} tg_slice_provider;

/* The Resources condition of a slice (Liqo's rules, then the policy):
 * class (NULL or "" counts as "default") other than "default" -> 0, leave it
 * alone; Drained -> -1 TenantDrained; Cordoned -> 0 when the condition
 * already has a status (cur_status non-empty), else -1 TenantCordoned;
 * Active -> the default class disabled (prov): -1
 * DefaultResourceSliceClassDisabled; a quantity <= 0 asked: -1
 * NonPositiveQuantity; else tg_slice_resources_decide with prov's defaults:
 * 1 with *granted, or -1 PolicyExceeded. prov NULL: Liqo's defaults, class
 * enabled. On -1, reason (>= 40 bytes) and why are filled. */
int tg_slice_resources_verdict(const tg_slice_provider *prov, const char *class_, tg_slice_tenant_state tenant,
                               const char *cur_status,
                               json_object *request, json_object *policy, json_object *others,
                               json_object **granted, char *reason, size_t reason_len, char *why, size_t why_len);

#endif
