/* slice_ctx.h - what the provider's ResourceSlice controller's files share
 * (provider_resourceslice.c and the slice_*.c files, one concept each): the
 * reconcile's context, the certificate outcome and Liqo's wording. Internal
 * to the signer. */
#ifndef TG_SIGNER_SLICE_CTX_H
#define TG_SIGNER_SLICE_CTX_H

#include <stdio.h>

#include <json-c/json.h>

#include "pki/slice.h"
#include "signer/reconcile_common.h"

#define SECRET_PREFIX "liqo-remote-certificate-"
#define BINDING_PREFIX "tenantgate-rslice-"
/* Liqo's condition reasons and messages (RRS), kept word for word. */
#define AUTH_ACCEPTED "ResourceSliceAuthenticationAccepted"
#define AUTH_DENIED "ResourceSliceAuthenticationDenied"
#define RES_ACCEPTED "ResourceSliceResourcesAccepted"
#define RES_DENIED "ResourceSliceResourcesDenied"
/* Liqo's NotMatchingCSRError text. */
#define CSR_MISMATCH "the stored and the provided CSR do not match"

/* A CSR made, not decided: the CSR informer wakes the slice when it is;
 * this is the safety net. (Stale and denied CSRs: slice_plan.h.) */
#define WAIT_MS 10000
/* ... and while the caches show nothing new, looks are skips for this long
 * (below TG_SLICE_CSR_STALE_S, when a pending CSR is replaced). */
#define WAIT_HOLD_MS 120000
/* The CSR informer may lag our own POST: no second CSR for this long unless
 * the cache shows the first; meanwhile the slice is looked at every second. */
#define CSR_PENDING_MS 60000
#define CACHE_LAG_MS 1000
/* How long this process remembers a Resources verdict it wrote (grant_put):
 * far longer than the slice informer takes to show the write. */
#define GRANT_RECORD_MS 600000
/* Resources=Denied: looked at again this often. A change of the policy
 * ConfigMap wakes them at once (its watch); this is the safety net, and
 * what frees room among the siblings (maxPerTenant) waits for. */
#define RES_DENIED_RECHECK_MS 60000

/* The slice as a pass waiting for its CSR wrote it, or as the approver
 * read it live to decide that CSR (api.h, "our own writes"): the pass the
 * CSR's issue wakes reads it back at that version instead of a GET. The
 * approver's read is the fresher in a burst (the pass's may be minutes
 * old when the CSR's turn comes) and comes just before the issue. */
#define SLICE_STASH_MS 30000

static inline const char *rs_slice_stash_key(const char *ns, const char *name, char *key, size_t len)
{
    snprintf(key, len, "slice-obj/%s/%s", ns, name);
    return key;
}

/* reconcile_slice on a cached copy (a slice never decided) that would do
 * more than make its CSR and wait, and the live slice is not at the cached
 * version: the pass runs again on the live slice (the projection lacks what
 * a write reads: annotations, the status as a whole). */
#define RS_NEED_LIVE (-100)

/* A consumer's Tenant as a slice pass or the approver last read it live:
 * the slice passes read it back while the Tenant informer shows that very
 * version (read_tenant). Kept past a burst's queue (one Tenant per
 * consumer: a few KB each). */
#define TENANT_READ_MS 120000

static inline const char *rs_slice_tenant_key(const char *ns, const char *consumer, char *key, size_t len)
{
    snprintf(key, len, "slice-tenant/%s/%s", ns, consumer);
    return key;
}

typedef struct slice_ctx {
    tg_signer *s;
    tg_api *api;
    json_object *slice, *tenant;
    const char *ns, *name, *uid, *consumer, *csr_b64;
    const char *deps;            /* slice_settled.h's text before the pass, or NULL: settle nothing */
    int cached;                  /* slice is the informer's projection, not a read (RS_NEED_LIVE) */
    json_object *copy;           /* that projection once replaced by a live read (pointers into it hold) */
    char user[TG_SLICE_USER_MAX];
    char err[512];
} slice_ctx;

/* The certificate outcome. */
typedef struct cert_result {
    char *signed_b64;            /* the certificate to publish (base64 PEM), malloc'd, or NULL */
    int denied;                  /* Authentication=Denied with reason/message */
    char reason[48];
    char message[512];
    long requeue_ms;             /* > 0: look again then */
    char made[256];              /* the CSR this pass made, or "" */
} cert_result;

#endif
