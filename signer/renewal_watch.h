/* renewal_watch.h - the Identity's RenewalOverdue condition (issue 48 #3),
 * pure: what status.conditions should be for the certificate in use.
 *
 * Liqo's Identity status has kubeconfigSecretRef only; status.conditions is
 * tenantgate's addition (manifests/crds, the CRD test's OUR_EXTRA_FIELDS).
 * Liqo's readers ignore it, and a Liqo controller that writes the whole
 * status back drops it until the next reconcile sets it again. */
#ifndef TG_SIGNER_RENEWAL_WATCH_H
#define TG_SIGNER_RENEWAL_WATCH_H

#include <time.h>

#include <json-c/json.h>

#include "pki/verdict.h"

#define TG_COND_RENEWAL_OVERDUE "RenewalOverdue"
/* Its reasons (docs/signer.md, "Renewal you can watch"). */
#define TG_OVERDUE_NOT_RENEWED tg_reason_name(TG_CERTIFICATE_NOT_RENEWED)   /* True: past renew-at + grace */
#define TG_OVERDUE_ON_TIME tg_reason_name(TG_RENEWAL_ON_TIME)               /* False */

typedef struct tg_overdue_view {
    int overdue;                   /* tg_renewal_overdue of the certificate in use */
    time_t renew_at, overdue_at, not_after;
} tg_overdue_view;

/* The view of a certificate valid [not_before, not_after) at now. */
tg_overdue_view tg_overdue_view_of(time_t not_before, time_t not_after, time_t now, int grace_pct);

/* The status.conditions array the Identity should carry, given the one it
 * has (conditions, may be NULL): the other conditions kept, ours set from v;
 * lastTransitionTime kept while the status stays. A new array, or NULL when
 * conditions already says exactly this (nothing to write). *flipped is 1
 * when the status flipped (or the condition is new) and the result is not NULL. */
json_object *tg_overdue_conditions(json_object *conditions, const tg_overdue_view *v, time_t now, int *flipped);

#endif
