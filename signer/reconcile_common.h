/* reconcile_common.h - the controllers' entry points (one file each) and the
 * few helpers more than one of them needs, one concept per file: rc_object.c
 * (JSON objects, bindings), rc_secret.c (Secret data, the nonce), rc_csr.c
 * (the CSRs we make), rfc3339.c (time).
 *
 * Every reconciler reads the live object, compares it with what it should be
 * and makes the smallest change; running one twice changes nothing, so a
 * restart resumes from the API state. Every decision is logged without
 * secret material. Internal to the signer: not for the unit tests. */
#ifndef TG_SIGNER_RECONCILE_COMMON_H
#define TG_SIGNER_RECONCILE_COMMON_H

#include <stddef.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "signer/controller.h"
#include "signer/rfc3339.h"
#include "signer/signer.h"

#define TENANTS_API "/apis/authentication.liqo.io/v1beta1"
#define CSR_API "/apis/certificates.k8s.io/v1/certificatesigningrequests"

/* ---------- controllers ---------- */

/* provider */
long tg_reconcile_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name);   /* provider_nonce.c */
long tg_reconcile_tenant(tg_signer *s, tg_api *api, const char *ns, const char *name);  /* provider_tenant.c */
long tg_reconcile_csr(tg_signer *s, tg_api *api, const char *name);                     /* provider_approver.c */
long tg_reconcile_remote_slice(tg_signer *s, tg_api *api, const char *ns, const char *name); /* provider_resourceslice.c */
long tg_reconcile_remote_renew(tg_signer *s, tg_api *api, const char *ns, const char *name); /* provider_renew.c */
long tg_reconcile_bootstrapgc(tg_signer *s, tg_api *api, const char *ns);              /* provider_bootstrapgc.c */
/* provider_signer.c: sign an approved CSR with the own CA and PUT its status. */
long tg_sign_csr(tg_signer *s, tg_api *api, json_object *csr, const char *name);

/* consumer */
long tg_reconcile_keys(tg_signer *s, tg_api *api);                                      /* consumer_keys.c */
long tg_reconcile_signed_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name); /* consumer_noncesigner.c */
long tg_reconcile_identity(tg_signer *s, tg_api *api, const char *ns, const char *name); /* consumer_identity.c */
long tg_reconcile_resourceslice(tg_signer *s, tg_api *api, const char *ns, const char *name); /* consumer_resourceslice.c */
long tg_reconcile_renew(tg_signer *s, tg_api *api, const char *ns, const char *name);  /* consumer_renew.c */
long tg_reconcile_auth_token(tg_signer *s, tg_api *api, const char *ns, const char *name); /* consumer_authtoken.c */
/* consumer_replicator.c: code is a replicated kind's key prefix (replica_plan.h). */
long tg_reconcile_replica(tg_signer *s, tg_api *api, const char *code, const char *ns, const char *name);
/* consumer_keys.c: the cluster key (owned by s, loaded once), created in the
 * authentication-keys Secret when missing and create is set; NULL with err. */
EVP_PKEY *tg_cluster_key(tg_signer *s, tg_api *api, int create, char *err, size_t err_len);

/* ---------- shared helpers (rc_object.c, rc_secret.c, rc_csr.c) ---------- */

/* A json string ("" for NULL). */
json_object *rc_jstr(const char *s);
/* Room for a resourceVersion that rc_cached_rv copies. */
#define RC_RV_LEN 64
/* The resourceVersion of ns/name in the synced cache c, copied into rv
 * (RC_RV_LEN bytes); NULL when c is NULL or not synced, the object is not
 * there, or its version does not fit. */
const char *rc_cached_rv(tg_cache *c, const char *ns, const char *name, char *rv);
/* metadata.ownerReferences naming one authentication.liqo.io/v1beta1 owner
 * (kind, name, uid) as controller, blocking its deletion. */
json_object *rc_controller_owner(const char *kind, const char *name, const char *uid);
/* A new authentication.liqo.io/v1beta1 object of kind ns/name with these labels
 * (taken) and ownerReferences owners (taken, may be NULL). */
json_object *rc_auth_object(const char *kind, const char *ns, const char *name, json_object *labels,
                            json_object *owners);
/* data[key] of a Secret, base64-decoded (malloc'd, NUL-terminated), or NULL. */
unsigned char *rc_secret_data(json_object *secret, const char *key, size_t *len);
/* Cleanse and free secret bytes (p may be NULL). */
void rc_free_secret(void *p, size_t len);
/* {"data":{key: base64(value)}} merge patch on a Secret; rv (optional) makes
 * it fail with 409 when the Secret changed. Returns the HTTP status or -1. */
long rc_patch_secret_data(tg_api *api, const char *ns, const char *name, const char *key, const void *value,
                          size_t len, const char *rv, char *err, size_t err_len);
/* GET the namespace ns into *out (caller puts; NULL unless 200). Returns the
 * HTTP status or -1 with err: each caller decides what a 404 means. */
long rc_get_namespace(tg_api *api, const char *ns, json_object **out, char *err, size_t err_len);
/* The cached nonce Secret ns/name: 1 found (*b64 its data.nonce or NULL),
 * 0 not cached, -1 out of memory. */
int rc_cached_nonce_b64(tg_signer *s, const char *ns, const char *name, char **b64);
/* The nonce text of a tenant namespace from the cache (malloc'd, secret), or NULL. */
char *rc_cached_nonce(tg_signer *s, const char *ns);
/* The nonce text of a tenant namespace, read live (malloc'd, secret) or NULL;
 * *secret_out (if not NULL) receives the Secret (caller puts). */
char *rc_read_nonce(tg_api *api, const char *ns, json_object **secret_out);
/* The decision a CSR's conditions record: 1 Approved, -1 Denied or Failed, 0 none. */
int rc_csr_decided(json_object *csr);
/* The CSRs the Tenant and ResourceSlice controllers make carry this label:
 * the first 32 hex digits of SHA-256 over spec.request (the object's spec.csr
 * as stored, base64), so a label selector finds the CSRs made for the
 * current request without keeping the requests themselves. */
#define TG_LABEL_CSR_REQUEST "tenantgate.io/request-sha256"
/* When we made the CSR (wall clock, ms): orders CSRs of the same second. */
#define TG_LABEL_CSR_CREATED_MS "tenantgate.io/created-ms"
/* The uid of the Tenant a CSR was made for: a re-peering (a new Tenant of
 * the same consumer) never takes the old peering's CSR. */
#define TG_LABEL_CSR_TENANT_UID "tenantgate.io/tenant-uid"
#define TG_REQUEST_HASH_LEN 32
void rc_request_hash(const char *csr_b64, char out[TG_REQUEST_HASH_LEN + 1]);
/* The newest of the CSRs a visitor has met so far. */
typedef struct rc_csr_pick {
    char name[256];
    char ts[64];        /* creationTimestamp */
    long long ms;       /* our label TG_LABEL_CSR_CREATED_MS, 0 if absent */
    int issued;
    int denied;
    int found;
} rc_csr_pick;
/* Take (name, ts) if it is newer than what p holds: newest stamp, then the
 * newest creation in milliseconds (creationTimestamp has whole seconds, and
 * a CSR made at once after a denial often shares its second with the denied
 * one), then the greatest name. The caller checks that name and ts fit.
 * 1 taken. */
int rc_csr_pick_newer(rc_csr_pick *p, const char *name, const char *ts, long long ms, int issued, int denied);
/* POST a certificates.k8s.io/v1 CSR for request_b64 (base64 PEM, as the
 * object stores it): generateName liqo-identity-, labels
 * liqo.io/remote-tenant-csr=true, liqo.io/remote-cluster-id=cid, the request
 * hash and created-ms plus `labels` (taken, may be NULL), `annotations`
 * (taken, may be NULL), s->signer_name, client usages and
 * s->csr_expiration_s. On 201 *created (if not NULL) is its name. Returns
 * the HTTP status or -1 with err. */
long rc_create_csr(tg_signer *s, tg_api *api, const char *request_b64, const char *cid, const char *hash,
                   json_object *labels, json_object *annotations, char *created, size_t created_len, char *err,
                   size_t err_len);
/* status.authParams for a certificate (base64 PEM): signedCRT, ca (the
 * configured bundle), apiServer and proxyURL (NULL: none). A new object. */
json_object *rc_auth_params(tg_signer *s, const char *signed_b64, const char *proxy_url);
/* A RoleBinding ns/name (ns NULL: a ClusterRoleBinding name) of subjects to
 * ClusterRole `role`, labelled liqo.io/remote-cluster-id=cid, with
 * ownerReferences owners (NULL: none); owners and subjects are borrowed. A
 * new object. */
json_object *rc_binding_doc(const char *ns, const char *name, const char *cid, const char *role,
                           json_object *owners, json_object *subjects);
/* POST a RoleBinding ns/name (ns NULL: a ClusterRoleBinding name) binding
 * subject (kind "User" or "Group") to ClusterRole `role`, labelled
 * liqo.io/remote-cluster-id=cid, with ownerReferences owners (taken, may be
 * NULL). Returns the HTTP status (409: exists) or -1. */
long rc_post_binding(tg_api *api, const char *ns, const char *name, const char *cid, const char *subject_kind,
                     const char *subject, const char *role, json_object *owners, char *err, size_t err_len);
/* Count a reconcile skipped because the informers show it settled. */
void rc_count_skip(tg_signer *s, const char *controller);

/* How long the answer of rc_create_csr's POST stays kept for the approver
 * (its PUT carries the resourceVersion: a 409 means read it live). */
#define CSR_STASH_MS 60000

#endif
