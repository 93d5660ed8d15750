/* slice_decide.h - the admission decision for ResourceSlices (PROTOCOL.md 5a)
 * (/validate/resourceslices), pure like decide.h.
 *
 * Liqo parity, for every slice:
 *  - CREATE of a local slice (not labelled liqo.io/replicated=true) whose
 *    name a local slice (liqo.io/replication=true) already has anywhere:
 *    Duplicate, with Liqo's message.
 *  - UPDATE by a member of group liqo.io (a consumer's ControlPlane identity)
 *    that adds, changes or removes label liqo.io/remote-cluster-id or
 *    annotation liqo.io/cordon: ForbiddenChange.
 * Beyond Liqo, for every slice:
 *  - the same for the labels that say whose slice it is: liqo.io/replicated,
 *    liqo.io/originID, liqo.io/remoteID, liqo.io/replication (ForbiddenChange);
 *  - CREATE or UPDATE by group liqo.io of a slice not labelled
 *    liqo.io/replicated=true: LabelMismatch (a consumer writes replicated
 *    copies only; such a slice is never taken for a local one);
 *  - spec.resources: positive quantities (slice_quantity.h),
 *    MalformedResourceSlice.
 * Beyond Liqo, for a replicated slice (liqo.io/replicated=true, the copy a
 * consumer puts in its tenant namespace here), on CREATE and UPDATE:
 *  1 MalformedResourceSlice  no consumerClusterID or csr, csr not base64
 *  2 InvalidClusterID
 *  3 LabelMismatch           labels liqo.io/originID (required) and
 *                            liqo.io/remote-cluster-id (when present) equal
 *                            consumerClusterID (400)
 *  4 WrongNamespace / LabelMismatch (403)  the tenant namespace of that consumer
 *  5 SliceTenantNotFound     no Tenant of the consumer in the namespace
 *  6 SliceTenantDrained      that Tenant is Drained
 *  7 InvalidCSR, CSRForbiddenContent, CSRSubjectMismatch,
 *    CSRPublicKeyMismatch    the CSR (pki/slice.h), key = the Tenant's
 *  8 Duplicate (403)         the slice's user <name>-<h> is the cluster id of
 *                            a Tenant (a consumer's ControlPlane user)
 * A first copy (Liqo's crd-replicator writes it before the consumer fills
 * spec.consumerClusterID and spec.csr: neither is set, nor was on UPDATE) is
 * judged with the requester's user name as the consumer id in place of
 * consumerClusterID: the user must be in group liqo.io with a valid cluster
 * id (else MalformedResourceSlice), then steps 2-4, 6 and the quantities;
 * the CSR is judged once it arrives.
 * An UPDATE of an object being deleted is allowed (finalizers must go). */
#ifndef TG_WEBHOOK_SLICE_DECIDE_H
#define TG_WEBHOOK_SLICE_DECIDE_H

#include "webhook/decide.h"

#define TG_SLICE_RESOURCE "resourceslices"
#define TG_LABEL_REPLICATION "liqo.io/replication"
#define TG_LABEL_REPLICATED "liqo.io/replicated"
#define TG_LABEL_ORIGIN_ID "liqo.io/originID"
#define TG_LABEL_REMOTE_ID "liqo.io/remoteID"
#define TG_ANNOTATION_CORDON "liqo.io/cordon"
#define TG_GROUP_CONTROL_PLANE "liqo.io"

void tg_decide_validate_slice(const tg_review_request *req, const tg_lookup *lk, tg_decision *d);

#endif
