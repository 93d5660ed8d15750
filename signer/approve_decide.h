/* approve_decide.h - the CSR approver's decision (PROTOCOL.md 6), pure.
 *
 * The built-in kube-apiserver-client signer checks only usages, so this is
 * the gate: approve a labelled CertificateSigningRequest only when it asks
 * for exactly what the Tenant it claims to come from was admitted with. */
#ifndef TG_SIGNER_APPROVE_DECIDE_H
#define TG_SIGNER_APPROVE_DECIDE_H

#include <stddef.h>
#include <json-c/json.h>

#include "pki/verdict.h"

#define TG_SIGNER_NAME_KUBE "kubernetes.io/kube-apiserver-client"
#define TG_SIGNER_NAME_OWN "tenantgate.io/identity"
#define TG_LABEL_TENANT_CSR "liqo.io/remote-tenant-csr"

/* Reasons written into the Approved/Denied condition (pki/reasons.def). */
#define TG_APPROVE_REASON tg_reason_name(TG_TENANT_VALIDATED)
#define TG_DENY_NO_TENANT tg_reason_name(TG_NO_MATCHING_TENANT)
#define TG_DENY_SIGNER tg_reason_name(TG_SIGNER_NAME_MISMATCH)
#define TG_DENY_USAGES tg_reason_name(TG_USAGES_MISMATCH)
#define TG_DENY_REQUEST tg_reason_name(TG_REQUEST_NOT_FROM_TENANT)
#define TG_DENY_MALFORMED tg_reason_name(TG_MALFORMED_CSR)
#define TG_DENY_TENANT_DELETED tg_reason_name(TG_TENANT_DELETED)

typedef struct tg_approve_policy {
    const char *signer_name;       /* the signerName our Tenant controller uses */
    int allow_no_handshake;        /* the webhook's switch: accept TolerateNoHandshake Tenants */
} tg_approve_policy;

typedef struct tg_approve_decision {
    int approve;                   /* 1 approve, 0 deny */
    char reason[48];               /* CamelCase condition reason (a PROTOCOL.md 5 code or TG_DENY_*) */
    char message[400];             /* one line, never secret material */
} tg_approve_decision;

/* csr: the CertificateSigningRequest object; tenant: the Tenant it names (by
 * the liqo.io/remote-cluster-id label), or NULL when there is none; nonce:
 * that tenant namespace's nonce text, or NULL. Checks, in order: signerName,
 * usages (digital signature, client auth, optionally key encipherment,
 * nothing else), a Tenant exists and is not being deleted, the Tenant still
 * passes tg_tenant_check with the nonce (PROTOCOL.md 5 steps 3-10), the CSR request
 * passes tg_csr_check for the Tenant's cluster id and key, and it is
 * byte-for-byte the Tenant's spec.csr. Always fills out; returns out->approve. */
int tg_approve_decide(json_object *csr, json_object *tenant, const char *nonce,
                      const tg_approve_policy *policy, tg_approve_decision *out);

/* ---------- ResourceSlices (PROTOCOL.md 5a and 6a) ---------- */

/* A CSR made for a replicated slice carries this annotation: "<ns>/<name>"
 * of the slice (names may be longer than a label value). */
#define TG_ANNOTATION_CSR_SLICE "tenantgate.io/resourceslice"
#define TG_APPROVE_REASON_SLICE tg_reason_name(TG_RESOURCE_SLICE_VALIDATED)
#define TG_DENY_NO_SLICE tg_reason_name(TG_NO_MATCHING_RESOURCE_SLICE)
#define TG_DENY_SLICE_DELETED tg_reason_name(TG_RESOURCE_SLICE_DELETED)
#define TG_DENY_REQUEST_SLICE tg_reason_name(TG_REQUEST_NOT_FROM_RESOURCE_SLICE)

/* The provider's authentication of a replicated slice (the webhook's checks
 * of PROTOCOL.md 5a again, on live objects): labels liqo.io/replicated=true
 * and liqo.io/originID = spec.consumerClusterID (a valid id), the namespace
 * liqo-tenant-<consumer>, its Tenant (NULL: none) named after the consumer,
 * not being deleted and not Drained, and spec.csr with CN <name>-<h>, O
 * <consumer> and the Tenant's key (tg_slice_csr_check). Reasons are the
 * PROTOCOL.md 5/5a codes. Always fills out; returns out->approve. */
int tg_slice_auth_decide(json_object *slice, json_object *tenant, const tg_approve_policy *policy,
                         tg_approve_decision *out);

/* The approver's decision on a CSR annotated TG_ANNOTATION_CSR_SLICE: signer
 * and usages as for a Tenant, the slice (NULL: none) exists and is not being
 * deleted, its label liqo.io/remote-cluster-id on the CSR names the slice's
 * consumer, tg_slice_auth_decide passes, and spec.request is byte-for-byte
 * the slice's spec.csr. Always fills out; returns out->approve. */
int tg_approve_decide_slice(json_object *csr, json_object *slice, json_object *tenant,
                            const tg_approve_policy *policy, tg_approve_decision *out);

/* ---------- one user name, two kinds of identity (issue 36 #7) ---------- */

/* A slice's user is <slice>-<12 hex of sha256(consumer)>, a ControlPlane
 * user is the consumer's cluster id, and both are users of the same API
 * server: a cluster id of that shape ("web-0123456789ab") could be
 * impersonated by another consumer's slice of the right name, or could
 * impersonate that slice. The approver refuses a certificate whose user
 * name the other kind already holds (PROTOCOL.md 6). */
#define TG_DENY_USER_TAKEN tg_reason_name(TG_USER_NAME_TAKEN)

/* The slice name a user name would come from: "<name>-<12 lowercase hex>"
 * with a non-empty name -> 0 with name (NUL-terminated, len >= 254), else -1. */
int tg_slice_user_slice_name(const char *user, char *name, size_t len);

/* After an approval of a slice's CSR: tenants (a JSON array of Tenants, NULL
 * when none) holding the slice's user name as their cluster id
 * (metadata.name or spec.clusterID) turn it into a denial UserNameTaken.
 * Leaves a denial alone. Returns out->approve. */
int tg_approve_slice_user_free(json_object *slice, json_object *tenants, tg_approve_decision *out);

/* After an approval of a Tenant's CSR for cluster id cid: a slice in slices
 * (a JSON array of ResourceSlices, NULL when none) whose user name
 * (tg_slice_user_name of its name and spec.consumerClusterID) is cid turns it
 * into a denial UserNameTaken. Leaves a denial alone. Returns out->approve. */
int tg_approve_cluster_id_free(const char *cid, json_object *slices, tg_approve_decision *out);

/* ---------- who made a CSR ---------- */

/* 1 when user made the CSR: its spec.username, which the API server writes
 * from the creator's credentials and no creator can choose, is exactly user.
 * The Tenant and ResourceSlice controllers count only their own CSRs, so a
 * copy with our labels made by anyone else (a denied request, a far-future
 * created-ms) cannot hold a Tenant or a slice back. user NULL: not known
 * (tg_whoami failed), every CSR counts, as before the check. */
int tg_csr_made_by(json_object *csr, const char *user);

#endif
