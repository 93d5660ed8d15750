/* name_check.h - one owner per name, tenantgate-auth's side (docs/auth.md
 * "Names"): before anything is written for a cluster id, the chain asks
 *   1. is the id in a reserved form?                          NameReserved
 *   2. does a RoleBinding or ClusterRoleBinding that tenantgate did not make
 *      for this identity name it (User or Group)?             NameBound
 *      one that another path made for it (the Tenant flow's,
 *      or tenantgate-auth's /identity/certificate)?          NameOwned
 *   3. token path only: a Tenant for this id?                 NameOwned
 *   4. is it a ResourceSlice's user (<slice>-<12 hex>)?        NameOwned
 *   5. a NameClaim of another path or holder?                 NameOwned
 * Then tg_auth_name_claim_start claims it (create: of two racing paths, one
 * wins). Reads only; the claim is the one write. */
#ifndef TG_AUTH_NAME_CHECK_H
#define TG_AUTH_NAME_CHECK_H

#include <stddef.h>

#include "auth/reason.h"
#include "kube/client.h"
#include "pki/name_owner.h"

/* The outcome: ok 1, or reason and why ("expected ...") set. */
typedef struct tg_auth_name_result {
    int ok;
    tg_auth_reason reason;
    char why[512];
} tg_auth_name_result;

typedef void (*tg_auth_name_done)(const tg_auth_name_result *res, void *data);

/* Check name (a cluster id) for path (TG_NAME_PATH_TOKEN or _TENANT),
 * holder name itself. provider_id: this cluster's id (reserved). done is
 * called once, later, on the loop; -1 when it could not start. */
int tg_auth_name_check_start(tg_kube_client *c, const char *name, tg_name_path path, const char *provider_id,
                             tg_auth_name_done done, void *data);

/* Claim name for path and holder name: the NameClaim is owned by Namespace
 * liqo-tenant-<name> (which must exist), so it goes with it. Ours when
 * created, or when the one there has this path and holder; NameOwned
 * otherwise. Fails closed (IssuanceFailed) when the claim cannot be read or
 * made, e.g. without the NameClaim CRD. */
int tg_auth_name_claim_start(tg_kube_client *c, const char *name, tg_name_path path, tg_auth_name_done done,
                             void *data);

#endif
