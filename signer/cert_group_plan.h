/* cert_group_plan.h - which per-certificate groups a revocable identity's
 * bindings list (pki/cert_group.h, docs/signer.md "Revocation"), pure.
 *
 * A binding tenantgate makes for an identity whose certificates carry a
 * per-certificate group lists one Group subject per live group instead of
 * the bare user: the current request's group, and each earlier one until
 * its certificate's NotAfter (the consumer may still be switching to the
 * new one), never a revoked one. The binding remembers the groups and their
 * NotAfter in an annotation, so no other object is needed. */
#ifndef TG_SIGNER_CERT_GROUP_PLAN_H
#define TG_SIGNER_CERT_GROUP_PLAN_H

#include <stdint.h>

#include <json-c/json.h>

/* On a binding: {"<group>": <NotAfter, unix seconds>, ...} as JSON text. */
#define TG_ANNOTATION_CERT_GROUPS "tenantgate.io/cert-groups"
/* The revocation records: a ConfigMap of this name in the signer's namespace. */
#define TG_REVOKED_CONFIGMAP "tenantgate-revoked-certificates"

/* The groups to list (a new object {group: NotAfter}): those of annotation
 * (its text, NULL: none) that are cid's, not revoked (revoked: the records'
 * data, NULL: none) and not expired at now, and current (NULL or "": none)
 * unless revoked, with NotAfter the later of what was recorded and
 * current_not_after. */
json_object *tg_cert_groups_next(const char *annotation, const char *cid, const char *current,
                                 int64_t current_not_after, json_object *revoked, int64_t now);

/* The RBAC subjects of groups: one Group each, in name order. */
json_object *tg_cert_groups_subjects(json_object *groups);

/* 1 when subjects (a binding's) list exactly the groups of subj (both
 * arrays of subjects), in any order. */
int tg_cert_groups_same(json_object *subjects, json_object *subj);

#endif
