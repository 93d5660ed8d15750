/* name_claim.h - one owner per name, the approver's side (PROTOCOL.md 3
 * "Names a certificate carries"): before a Tenant's or a slice's CSR is
 * approved, the user name it carries is claimed for its path (a create of
 * its NameClaim: of two racing paths, one wins), and a slice's group (its
 * consumer's id) must be the Tenant flow's. Blocking calls on a worker. */
#ifndef TG_SIGNER_NAME_CLAIM_H
#define TG_SIGNER_NAME_CLAIM_H

#include <stddef.h>

#include "pki/name_owner.h"
#include "signer/api.h"
#include "signer/approve_decide.h"

/* Claim name for path and holder (owned by Namespace ns, which must exist,
 * of uid ns_uid as the namespace informer shows it, or NULL: read live).
 * d is turned into a denial NameReserved (a reserved form; provider_id may
 * be NULL) or NameOwned (another path or holder has it). 0, or -1 with err
 * when the API failed (nothing decided: retry); without the NameClaim CRD
 * that is every time (fail closed). */
int tg_name_claim_for(tg_api *api, const char *name, tg_name_path path, const char *holder, const char *ns,
                      const char *ns_uid, const char *provider_id, tg_approve_decision *d, char *err, size_t err_len);

/* Whether name's claim is another path's or holder's, in two steps, for a
 * caller that keeps the read: the claim read live (the HTTP status; *claim
 * on 200), and the judgement - d denied NameOwned when the claim is for
 * another path or holder than (path, holder); nothing for NULL (none). */
long tg_name_claim_read(tg_api *api, const char *name, json_object **claim, char *err, size_t err_len);
void tg_name_claim_judge(json_object *claim, const char *name, tg_name_path path, const char *holder,
                         tg_approve_decision *d);

#endif
