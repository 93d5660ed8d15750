/* slice_tenant_policy.h - one consumer's own ResourceSlice policy: which
 * classes it may use and its own maxima (issue 48; PROTOCOL.md 5a). Pure:
 * no I/O, no clock. The webhook (at admission) and the signer (when it
 * decides Resources) call the same function, so they never disagree on what
 * an entry allows.
 *
 * The entry is the value of key "tenant.<consumer cluster id>" of the slice
 * policy ConfigMap (the per-class keys' ConfigMap, in the install namespace:
 * only the provider's admin writes it), JSON:
 *   {"classes": ["default", "gpu"],
 *    "maxPerSlice": {"cpu": "2", "memory": "4Gi"},
 *    "maxPerTenant": {"cpu": "8"}}
 * Every member is optional: no "classes" allows every class, a resource a
 * maximum does not name is not limited by it. A consumer without an entry is
 * not limited (the per-class policy still holds). An entry that is not that
 * shape (not JSON, an unknown member such as a misspelt "maxPerslice", a
 * class that is not a string, a maximum that is not a quantity >= 0) allows
 * nothing: TenantPolicyInvalid (fail closed, a typo never lifts a limit). */
#ifndef TG_PKI_SLICE_TENANT_POLICY_H
#define TG_PKI_SLICE_TENANT_POLICY_H

#include <stddef.h>
#include <json-c/json.h>

/* The ConfigMap key of a consumer's entry: this prefix and its cluster id. */
#define TG_TENANT_POLICY_KEY_PREFIX "tenant."
/* The longest class name an entry may list (a label value's length). */
#define TG_TENANT_POLICY_CLASS_MAX 63

typedef enum tg_tenant_policy_verdict {
    TG_TPOL_ALLOWED = 0,
    TG_TPOL_CLASS_NOT_ALLOWED,   /* ClassNotAllowed */
    TG_TPOL_EXCEEDED,            /* TenantPolicyExceeded */
    TG_TPOL_INVALID,             /* TenantPolicyInvalid */
} tg_tenant_policy_verdict;

/* "ClassNotAllowed", "TenantPolicyExceeded", "TenantPolicyInvalid"; "" when allowed. */
const char *tg_tenant_policy_reason(tg_tenant_policy_verdict v);

/* "tenant.<consumer>" into buf. 0, or -1 when it does not fit. */
int tg_tenant_policy_key(const char *consumer, char *buf, size_t len);

/* The decision. entry: the entry's text (NULL: none, allowed); class_:
 * spec.class (NULL or "" is "default"); resources: what the slice is judged
 * by, name -> quantity (the webhook: spec.resources, what is asked; the
 * signer: what it would grant, defaults included; NULL: nothing); others:
 * the summed grants of the consumer's other accepted slices (NULL: unknown,
 * maxPerTenant not checked). Checks, in order: the entry's shape, the class,
 * maxPerSlice, maxPerTenant. Not ALLOWED: why says what was expected and
 * found ("cpu: 4 asked, at most 2 per slice for this consumer (2 over)"). */
tg_tenant_policy_verdict tg_tenant_policy_check(const char *entry, const char *class_, json_object *resources,
                                                json_object *others, char *why, size_t why_len);

#endif
