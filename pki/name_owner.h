/* name_owner.h - one owner for every name a certificate carries (user CN or
 * group O): the pure rules behind NameReserved, NameBound and NameOwned
 * (docs/PROTOCOL.md "Names"). No I/O: callers read bindings, Tenants and
 * claims and ask here what they mean.
 *
 * A name is issued on one path only: the Tenant flow (the signer, also for
 * the v1 one-string peering, which makes a Tenant), a ResourceSlice (its
 * user), or tenantgate-auth's v0.10 token (/identity/certificate). The
 * claim object (a cluster-scoped NameClaim) records which path and holder
 * own it; bindings are classified so that only the ones tenantgate made for
 * that same identity count as its own. */
#ifndef TG_PKI_NAME_OWNER_H
#define TG_PKI_NAME_OWNER_H

#include <stddef.h>

#include <json-c/json.h>

typedef enum tg_name_path {
    TG_NAME_PATH_TENANT = 0,       /* a Tenant (signer, or /v1/tenant) */
    TG_NAME_PATH_SLICE,            /* a ResourceSlice's user */
    TG_NAME_PATH_TOKEN,            /* tenantgate-auth /identity/certificate */
    TG_NAME_PATH_COUNT
} tg_name_path;

/* "tenant", "slice", "token"; NULL for an unknown path. */
const char *tg_name_path_string(tg_name_path p);

/* The path named s, or TG_NAME_PATH_COUNT. */
tg_name_path tg_name_path_parse(const char *s);

/* Liqo's `liqoctl generate peering-user` names its users this way. */
#define TG_NAME_LIQO_PEER_USER_PREFIX "liqo-peer-user-"

/* 1 when name is in a reserved form, with why set ("expected ..."): empty,
 * "system:" in any case, Liqo's peering-user form, the provider's own id
 * (provider_id NULL: not checked), the per-certificate group form
 * (pki/cert_group.h: it is checked on its own rules where a certificate may
 * carry it). The forms no path of tenantgate issues as a name. */
int tg_name_reserved(const char *name, const char *provider_id, char *why, size_t why_len);

/* The NameClaim object name of name: "n-" + 64 hex of SHA-256(name) (a
 * name may be up to 253+ characters and hold ':' or '@'). */
#define TG_NAME_CLAIM_OBJECT_MAX (2 + 64 + 1)
void tg_name_claim_object(const char *name, char out[TG_NAME_CLAIM_OBJECT_MAX]);

#define TG_NAME_CLAIM_API_VERSION "tenantgate.io/v1alpha1"
#define TG_NAME_CLAIMS_PATH "/apis/tenantgate.io/v1alpha1/nameclaims"

/* The NameClaim of name for path and holder, owned by Namespace ns (uid
 * ns_uid; NULL: no owner). NULL when out of memory. */
json_object *tg_name_claim_doc(const char *name, tg_name_path path, const char *holder, const char *ns,
                               const char *ns_uid);

/* 1 when claim (as read back) is name's and held by path and holder: the
 * claim is ours. 0 otherwise, with owner set to "<path> <holder>" of the
 * claim there ("unreadable" when it has no such fields). */
int tg_name_claim_is(json_object *claim, const char *name, tg_name_path path, const char *holder, char *owner,
                     size_t owner_len);

/* Whose a binding naming a name is. */
typedef enum tg_binding_owner {
    TG_BINDING_NONE = 0,           /* does not name it as User or Group */
    TG_BINDING_FOREIGN,            /* names it; not made by tenantgate for it */
    TG_BINDING_TENANT,             /* the Tenant flow's (signer's or Liqo's own) */
    TG_BINDING_TOKEN,              /* tenantgate-auth's RoleBinding for it */
} tg_binding_owner;

/* The RoleBinding tenantgate-auth makes in liqo-tenant-<id>. */
#define TG_NAME_AUTH_ROLEBINDING "tenantgate-auth-identity"

/* Classify RoleBinding or ClusterRoleBinding b (as the API returns it; a
 * RoleBinding has metadata.namespace) for name. Bindings that grant more
 * than Liqo's offload rights count only in liqo-tenant-<name> or at cluster
 * scope: a namespace owner can make a binding of any name and label in its
 * own namespace. Tenant flow: RoleBinding liqo-binding-* (or legacy
 * liqo-tenant-<name>) with the one subject User <name> and a ClusterRole, or
 * ClusterRoleBinding liqo-binding-liqo-virtual-kubelet-remote-clusterwide-<name>
 * with the one subject Group <name>, or Liqo's offload RoleBinding: in a
 * namespace that is not a tenant namespace, named liqo-tenant-<name>, labelled
 * app.kubernetes.io/managed-by=liqo and liqo.io/remote-cluster-id=<name>,
 * the one subject Group <name> and the ClusterRole liqo-virtual-kubelet-remote
 * (counting a copy of it as Liqo's never makes a name issuable to another
 * owner: name_owner.c). Token: RoleBinding tenantgate-auth-identity with the
 * one subject User <name>. */
tg_binding_owner tg_binding_owner_of(json_object *b, const char *name);

/* 1 when b names name as a User or Group subject. */
int tg_binding_names(json_object *b, const char *name);

/* Split a ResourceSlice user "<slice>-<12 hex>": the slice name into out
 * (>= strlen(user) bytes). 0, or -1 when user does not have that form. */
int tg_name_slice_user_split(const char *user, char *out, size_t out_len);

#endif
