/* informers.c - the informers the controllers share (controller.h): each is
 * declared once here and started once, whichever controllers ask for it.
 *
 * What the reconcilers read from each cache besides metadata is named in
 * keep_fields; the rest of each object is dropped on store, which keeps the
 * signer's memory flat in the number of Tenants. */
#include "signer/controller.h"

#include "kube/cache.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"
#include "signer/csr_cert.h"

#define AUTH_API "/apis/authentication.liqo.io/v1beta1"

static const char *const keep_nothing[] = {NULL};
static const char *const keep_nonce[] = {"data.nonce", NULL};
/* the peer a Tenant or an Identity is for: judged against its namespace */
static const char *const keep_cluster_id[] = {"spec.clusterID", NULL};
/* The CSRs' annotations: a slice's CSR names its slice there (the handler
 * wakes the slice, remoteresourceslice finds its CSRs); the signer's CSRs
 * carry no other annotation. spec.username: who made it (tg_csr_made_by).
 * status.certificate as its digest (csr_cert.h): 1.5 KB less an issued CSR.
 * Of the conditions what rc_csr_decided and a denied slice's status read,
 * not their times. */
static const char *const keep_csr[] = {"metadata.annotations", "spec.username", "status.certificate",
                                       "status.conditions.type", "status.conditions.status",
                                       "status.conditions.reason", "status.conditions.message", NULL};
static const char *const keep_local_slice[] = {"spec.providerClusterID", "spec.consumerClusterID", NULL};
/* remoteresourceslice sums the consumer's other slices from this cache
 * (maxPerTenant): class, grant, and whether Resources is Accepted (of the
 * conditions only type and status: their messages would double the size);
 * spec.consumerClusterID tells this cluster's own local slices apart. */
/* The whole spec (class, consumer, resources, and the CSR, about 1 KB of
 * base64): a slice's first pass, which makes its CSR, reads the slice from
 * here instead of a GET (provider_resourceslice.c cached_first_pass). */
static const char *const keep_tenant_slice[] = {"spec", "status.resources", "status.conditions.type",
                                                "status.conditions.status", NULL};

/* What tg_binding_owner_of reads of a binding besides its metadata (labels
 * included): a binding with many subjects costs only their kinds and names. */
#define BINDING_FIELDS "subjects.kind", "subjects.name", "roleRef.kind", "roleRef.name"
static const char *const keep_binding[] = {BINDING_FIELDS, NULL};
/* A RoleBinding's annotations too: the Tenant controller prunes from this
 * cache (tenant_rbac.c), and a revocable consumer's binding says in one that
 * it lists per-certificate groups. Indexed by namespace for that reader. */
static const char *const keep_rolebinding[] = {BINDING_FIELDS, "metadata.annotations", NULL};

/* The metadata each provider cache's readers look at beside the name,
 * namespace, resourceVersion and deletionTimestamp (tg_cache_keep_metadata):
 * at 10,000 Tenants the uid, creationTimestamp, generation, finalizers and
 * ownerReferences nobody reads cost about 6 MB. The consumer side's caches
 * keep all their metadata (their readers check finalizers and owners).
 * Namespaces, nonces and bindings: labels only (the scope, the nonce's
 * peer, tg_binding_owner_of). */
static const char *const meta_labels[] = {"labels", NULL};
/* A Namespace's uid owns the NameClaims made in its name (name_claim.h):
 * from here, the approver makes them without a GET of the Namespace. */
static const char *const meta_namespace[] = {"labels", "uid", NULL};
/* A Tenant's uid and creation time tell its CSRs from a former Tenant's of
 * the same name (provider_tenant.c); a CSR's and a Renew's creation time
 * order them (the newest CSR, a Renew made after its Tenant). */
static const char *const meta_tenant[] = {"labels", "uid", "creationTimestamp", NULL};
static const char *const meta_created[] = {"labels", "creationTimestamp", NULL};

#define IN_SIGNER(field) offsetof(tg_signer, field)

const tg_informer_desc tg_informer_descs[TG_INF_COUNT] = {
    [TG_INF_NAMESPACES] = {.name = "namespace", .path = "/api/v1/namespaces", .keep_fields = keep_nothing,
                           .keep_metadata = meta_namespace, .cache_offset = IN_SIGNER(ns_cache)},
    /* Found by label, which anyone who may create a Secret can set: by name
     * too, so labelled Secrets of other names are never listed. */
    [TG_INF_NONCES] = {.name = "nonce", .path = "/api/v1/secrets", .label_selector = "liqo.io/nonce=true",
                       .field_selector = "metadata.name=" TG_NONCE_SECRET, .keep_fields = keep_nonce,
                       .keep_metadata = meta_labels, .index_metadata = TG_CACHE_BY_NAMESPACE,
                       .cache_offset = IN_SIGNER(nonce_cache)},
    /* By name too: the approver looks up the Tenants named like a slice's
     * user, in any namespace, there rather than by a LIST per slice CSR. */
    [TG_INF_TENANTS] = {.name = "tenant", .path = AUTH_API "/tenants", .keep_fields = keep_cluster_id,
                        .keep_metadata = meta_tenant,
                        .index_metadata = TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME,
                        .cache_offset = IN_SIGNER(tenant_cache)},
    [TG_INF_CSRS] = {.name = "csr", .path = "/apis/certificates.k8s.io/v1/certificatesigningrequests",
                     .label_selector = TG_LABEL_TENANT_CSR "=true", .index_label = TG_LABEL_REMOTE_CLUSTER_ID,
                     .keep_fields = keep_csr, .keep_metadata = meta_created, .shrink_path = "status.certificate",
                     .shrink = tg_cert_digest_noted, .cache_offset = IN_SIGNER(csr_cache),
                     .noticed = tg_note_foreign_csr},
    [TG_INF_SIGNED_NONCES] = {.name = "signednonce", .path = "/api/v1/secrets",
                              .label_selector = "liqo.io/signed-nonce=true",
                              .field_selector = "metadata.name=" TG_SIGNED_NONCE_SECRET, .keep_fields = keep_nothing,
                              .index_metadata = TG_CACHE_BY_NAMESPACE},
    [TG_INF_IDENTITIES] = {.name = "identity", .path = AUTH_API "/identities", .keep_fields = keep_cluster_id,
                           .index_metadata = TG_CACHE_BY_NAMESPACE},
    [TG_INF_LOCAL_SLICES] = {.name = "rslice", .path = AUTH_API "/resourceslices",
                             .label_selector = "liqo.io/replication=true,liqo.io/remoteID",
                             .keep_fields = keep_local_slice, .index_metadata = TG_CACHE_BY_NAMESPACE},
    [TG_INF_TENANT_SLICES] = {.name = "remoteslice", .path = AUTH_API "/resourceslices",
                              .keep_fields = keep_tenant_slice, .index_metadata = TG_CACHE_BY_NAMESPACE,
                              .cache_offset = IN_SIGNER(slice_cache)},
    [TG_INF_LOCAL_RENEWS] = {.name = "renew", .path = AUTH_API "/renews", .label_selector = "liqo.io/replication=true",
                             .keep_fields = keep_nothing, .index_metadata = TG_CACHE_BY_NAMESPACE},
    [TG_INF_REMOTE_RENEWS] = {.name = "remoterenew", .path = AUTH_API "/renews",
                              .label_selector = "liqo.io/replicated=true,liqo.io/originID",
                              .keep_fields = keep_nothing, .keep_metadata = meta_created,
                              .index_metadata = TG_CACHE_BY_NAMESPACE, .cache_offset = IN_SIGNER(renew_cache)},
    /* Their deletion wakes the Identity that writes them (issue 36 #8). */
    [TG_INF_IDENTITY_SECRETS] = {.name = "idsecret", .path = "/api/v1/secrets",
                                 .label_selector = TG_LABEL_IDENTITY_TYPE, .keep_fields = keep_nothing,
                                 .index_metadata = TG_CACHE_BY_NAMESPACE},
    /* Any namespace's, judged by the controller's scope (the install namespace). */
    [TG_INF_AUTH_TOKENS] = {.name = "authtoken", .path = "/api/v1/secrets",
                            .label_selector = "discovery.liqo.io/auth-token", .keep_fields = keep_nothing,
                            .index_metadata = TG_CACHE_BY_NAMESPACE},
    /* Every one, in any namespace: a binding anywhere that names a cluster id
     * or slice user grants it (NameBound, binding_index.h). */
    [TG_INF_ROLEBINDINGS] = {.name = "rolebinding", .path = "/apis/rbac.authorization.k8s.io/v1/rolebindings",
                             .keep_fields = keep_rolebinding, .keep_metadata = meta_labels,
                             .index_metadata = TG_CACHE_BY_NAMESPACE, .cache_offset = IN_SIGNER(rb_cache)},
    [TG_INF_CLUSTERROLEBINDINGS] = {.name = "clusterrolebinding", .keep_metadata = meta_labels,
                                    .path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                                    .keep_fields = keep_binding, .cache_offset = IN_SIGNER(crb_cache)},
    /* Only its events: a change wakes the Denied slices (provider_resourceslice.c).
     * Namespace and name are flags (--slice-policy-configmap): main.c sets both. */
    [TG_INF_SLICE_POLICY] = {.name = "slicepolicy", .path = "/api/v1/configmaps", .keep_fields = keep_nothing},
};
