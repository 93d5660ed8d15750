/* binding_index.h - the RoleBindings and ClusterRoleBindings by the User and
 * Group names they bind, for the approver's NameBound check (PROTOCOL.md 3
 * "Names a certificate carries"): a name is not approved while a binding
 * tenantgate did not make for that identity names it.
 *
 * The two informers' caches hold each binding's metadata, its subjects'
 * kind and name and its roleRef's kind and name (what tg_binding_owner_of
 * reads: Liqo's offload binding is told by its ClusterRole); this
 * index maps a subject name to the keys of the bindings that named it when
 * last seen ("ns/name" for a RoleBinding, "name" for a ClusterRoleBinding).
 * Keys are added on every add/update and removed on delete; one left behind
 * by an update that dropped the subject is harmless: a lookup reads the
 * binding from its cache and classifies it there, at decision time. */
#ifndef TG_SIGNER_BINDING_INDEX_H
#define TG_SIGNER_BINDING_INDEX_H

#include <stddef.h>

#include <json-c/json.h>

#include "kube/cache.h"

typedef struct tg_binding_index tg_binding_index;

tg_binding_index *tg_binding_index_new(void);
void tg_binding_index_free(tg_binding_index *x);

/* Binding b (as its cache stores it) was added or updated (deleted 0) or
 * deleted (deleted 1). Any thread. */
void tg_binding_index_note(tg_binding_index *x, json_object *b, int deleted);

/* Every binding in cache c through tg_binding_index_note (tests, replays). */
void tg_binding_index_fill(tg_binding_index *x, tg_cache *c);

/* 1 when a binding in rb (RoleBindings) or crb (ClusterRoleBindings) names
 * name as a User or Group and is not the Tenant flow's for it
 * (tg_binding_owner_of), with where set to "RoleBinding ns/name" or
 * "ClusterRoleBinding name"; 0 when none. */
int tg_binding_index_foreign(tg_binding_index *x, tg_cache *rb, tg_cache *crb, const char *name, char *where,
                             size_t where_len);

#endif
