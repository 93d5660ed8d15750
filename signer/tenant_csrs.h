/* tenant_csrs.h - what the Tenant controller reads of the CSR informer's
 * cache for one Tenant: the CSRs we made for its peering, the newest of
 * them (its settled fingerprint) and the newest of its current request. */
#ifndef TG_SIGNER_TENANT_CSRS_H
#define TG_SIGNER_TENANT_CSRS_H

#include <time.h>

#include "signer/signer.h"
#include "signer/tenant_plan.h"

/* What a Tenant reconcile reads of the CSR cache. */
typedef struct tg_tenant_csr_view {
    char fp[300];          /* "<name>:<issued>:<denied>" of the newest CSR of (ns, cid), or "-" */
    char newest[256];      /* its name, or "" */
    tg_csr_state state;    /* of the newest one made from the current request */
    char cur_name[256];    /* its name, or "" */
    char *certificate;     /* its status.certificate as the cache keeps it (csr_cert.h: a
                            * digest), malloc'd, or NULL */
    int denied;            /* how many made from the current request are denied */
    time_t created;        /* its creationTimestamp (0 if none) */
    int ours_unseen;       /* the CSR we made last is not in the cache yet (set by the caller) */
} tg_tenant_csr_view;

/* The tenant CSRs of (ns, cid) in the CSR informer's cache; hash (or NULL)
 * the Tenant's current request hash; tenant_uid and tenant_created say which
 * peering (of_this_peering). 0, or -1 out of memory. The fingerprint
 * is all a settled record depends on: any CSR of the Tenant's made, issued
 * or denied changes it. */
int tg_tenant_csrs(tg_signer *s, const char *ns, const char *cid, const char *hash, const char *tenant_uid,
                   time_t tenant_created, tg_tenant_csr_view *v);

#endif
