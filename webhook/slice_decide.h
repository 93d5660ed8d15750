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
 * Beyond Liqo, the two-way-peering ambiguity (issue 36), in a tenant
 * namespace, on CREATE and on an UPDATE that makes the claim:
 *  - a slice labelled liqo.io/replication=true whose spec.consumerClusterID
 *    or label liqo.io/originID is this cluster's id is this cluster's own
 *    local slice, which the signer signs for with the cluster key:
 *    SliceClaimsLocalCluster (403) unless the requester is one of the
 *    trusted local-slice writers (local_writers.h). Without a known cluster
 *    id every liqo.io/replication=true slice counts as such a claim (fail
 *    closed).
 * A first copy (Liqo's crd-replicator writes it before the consumer fills
 * spec.consumerClusterID and spec.csr: neither is set, nor was on UPDATE) is
 * judged with the requester's user name as the consumer id in place of
 * consumerClusterID: the user must be in group liqo.io with a valid cluster
 * id (else MalformedResourceSlice), then steps 2-4, 6 and the quantities;
 * the CSR is judged once it arrives.
 * As Liqo's provider with --default-resource-slice-class-enabled=false (its
 * reconciler denies such a slice's Resources), a replicated slice of the
 * default class (spec.class "default" or none) is refused at CREATE, and at
 * an UPDATE that moves it into that class: DefaultResourceSliceClassDisabled
 * (403). Slices admitted before the switch was turned off stay updatable;
 * the signer denies their Resources.
 * An UPDATE of an object being deleted is allowed (finalizers must go). */
#ifndef TG_WEBHOOK_SLICE_DECIDE_H
#define TG_WEBHOOK_SLICE_DECIDE_H

#include "webhook/decide.h"
#include "webhook/local_writers.h"

#define TG_SLICE_RESOURCE "resourceslices"
#define TG_LABEL_REPLICATION "liqo.io/replication"
#define TG_LABEL_REPLICATED "liqo.io/replicated"
#define TG_LABEL_ORIGIN_ID "liqo.io/originID"
#define TG_LABEL_REMOTE_ID "liqo.io/remoteID"
#define TG_ANNOTATION_CORDON "liqo.io/cordon"
#define TG_GROUP_CONTROL_PLANE "liqo.io"

typedef struct tg_slice_opts {
    const char *cluster_id;               /* this cluster's id (--cluster-id, or Liqo's ConfigMap); NULL: unknown */
    const tg_local_writers *local_writers; /* trusted for this cluster's own local slices; NULL: nobody */
    int default_class_disabled;           /* --default-resource-slice-class-enabled=false */
} tg_slice_opts;

/* opts NULL: no cluster id, nobody trusted. */
void tg_decide_validate_slice(const tg_review_request *req, const tg_lookup *lk, const tg_slice_opts *opts,
                              tg_decision *d);

#endif
