/* tenant_rbac.h - a consumer's rights on the provider, as Liqo's provider
 * grants them (PROTOCOL.md 6, LIQO.md "Rights"): in the tenant namespace one
 * RoleBinding liqo-binding-<role> of User <consumer> per ClusterRole labelled
 * app.kubernetes.io/name=remote-controlplane (tenantgate-remote-consumer in
 * place of Liqo's liqo-remote-controlplane, and when none is labelled), and the cluster-wide
 * ClusterRoleBinding of Group <consumer> to Liqo's virtual-kubelet role. */
#ifndef TG_SIGNER_TENANT_RBAC_H
#define TG_SIGNER_TENANT_RBAC_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "signer/api.h"
#include "signer/signer.h"

#define TG_REMOTE_CONTROLPLANE_LABEL "app.kubernetes.io/name"
#define TG_REMOTE_CONTROLPLANE_VALUE "remote-controlplane"
/* Liqo's name of a tenant namespace's RoleBinding: this prefix and the role. */
#define TG_TENANT_BINDING_PREFIX "liqo-binding-"
/* The name tenantgate used before it followed Liqo's (removed when seen). */
#define TG_TENANT_LEGACY_BINDING_PREFIX "liqo-tenant-"
#define TG_TENANT_MAX_ROLES 32
/* Liqo's own remote-controlplane role: bound as TG_CONSUMER_CLUSTERROLE (no /status). */
#define TG_LIQO_REMOTE_CONTROLPLANE_ROLE "liqo-remote-controlplane"

/* The ClusterRole names to bind from a ClusterRole list (items[].metadata.name
 * of the labelled ones, in list order, those whose binding name fits, each
 * once; TG_LIQO_REMOTE_CONTROLPLANE_ROLE replaced by TG_CONSUMER_CLUSTERROLE),
 * or TG_CONSUMER_CLUSTERROLE when none. Returns how many (<= max); names point
 * into list. Pure. */
size_t tg_tenant_roles(json_object *list, const char **names, size_t max);

/* 1 when RoleBinding rb (in the tenant namespace of cid) is one the Tenant
 * controller makes: named liqo-binding-* or liqo-tenant-<cid>, one subject,
 * User <cid>, a ClusterRole. Only such bindings are ever pruned. Pure. */
int tg_tenant_binding_is_ours(json_object *rb, const char *cid);

/* present: bind cid's roles (and prune the bindings of roles no longer
 * labelled); else remove every binding the controller made for cid. The
 * RoleBindings are owned by tenant (NULL: none), as Liqo's are: whichever
 * side finalizes the Tenant (docs/LIQO.md, Switching modes), the garbage
 * collector removes them with it. Returns the HTTP status of the failing
 * call, 200 when all is done, or -1. */
long tg_tenant_bind(tg_signer *s, tg_api *api, const char *ns, const char *cid, json_object *tenant, int present,
                    char *err, size_t err_len);

/* The revocation records, read live: *cm the ConfigMap TG_REVOKED_CONFIGMAP
 * of the signer's namespace (caller puts; NULL when there is none), *data
 * its data (NULL: no records). 200 (none is 200 too), else the GET's status
 * or -1 with err. */
long tg_revocation_records_read(tg_signer *s, tg_api *api, json_object **cm, json_object **data, char *err,
                                size_t err_len);

/* ClusterRoleBinding name (to role, labelled with the consumer's id cid)
 * lists identity's live per-certificate groups, group among them unless
 * revoked (the records are read first; cert_group_plan.h), patched under
 * the resourceVersion read, as for the tenant namespace's RoleBindings. For
 * a revocable slice certificate (docs/revocation.md "Slices"). 200 when
 * done, else the failing call's HTTP status or -1 with err. */
long tg_cert_group_bind(tg_signer *s, tg_api *api, const char *name, const char *cid, const char *identity,
                        const char *role, const char *group, int64_t not_after, char *err, size_t err_len);

#endif
