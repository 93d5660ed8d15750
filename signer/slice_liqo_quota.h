/* slice_liqo_quota.h - Liqo's offloading Quota for a slice's user, kept by
 * the provider's ResourceSlice controller as Liqo's quotacreator does when
 * Liqo's authentication module is off (replace mode, LIQO.md): Quota
 * <user> in the tenant namespace, spec.user <user>, spec.resources the
 * slice's granted status.resources, spec.limitsEnforcement from
 * --quota-limits-enforcement, spec.cordoned while the slice or its Tenant is
 * cordoned; owned by the slice. Liqo's ShadowPod webhook admits the user's
 * offloaded pods against it. Only where the Quota CRD is served. */
#ifndef TG_SIGNER_SLICE_LIQO_QUOTA_H
#define TG_SIGNER_SLICE_LIQO_QUOTA_H

#include <json-c/json.h>

#include "signer/slice_ctx.h"

#define TG_LIQO_OFFLOADING_API "/apis/offloading.liqo.io/v1beta1"
/* Liqo's cordon annotations on a slice (pkg/consts/authentication.go). */
#define TG_ANNOTATION_CORDON "liqo.io/cordon"
#define TG_ANNOTATION_CORDON_TENANT "liqo.io/cordon-tenant"
#define TG_QUOTA_ENFORCEMENT_DEFAULT "None"

/* 1 when value is one of Liqo's LimitsEnforcement values (None, Soft, Hard). Pure. */
int tg_liqo_quota_enforcement_valid(const char *value);

/* The Quota's spec for slice (as its status now stands) and user, or NULL
 * when the slice holds no accepted grant (Resources not Accepted).
 * tenant_cordoned: the Tenant is Cordoned or Drained. Pure; a new object. */
json_object *tg_liqo_quota_spec(json_object *slice, const char *user, const char *enforcement, int tenant_cordoned);

/* Make, update or (no grant: present 0 or no spec) delete the Quota of
 * c->user from slice_now. 0 when done or the CRD is not served, -1 with c->err. */
int rs_ensure_liqo_quota(slice_ctx *c, json_object *slice_now, int present);

#endif
