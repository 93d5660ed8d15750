/* tenant_rbac.c - a consumer's RoleBindings in its tenant namespace and its
 * group's ClusterRoleBinding, named and chosen as Liqo's provider does
 * (tenant_rbac.h). */
#include "signer/tenant_rbac.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/reconcile_common.h"

#define RBAC_API "/apis/rbac.authorization.k8s.io/v1"

/* ---------- pure: which roles, which bindings ---------- */

/* Liqo's own role grants /status on the replicated objects, whose status is
 * the provider's verdict: tenantgate's equivalent, without /status, is bound
 * in its place (LIQO.md "Rights"). Other labelled roles are bound as they are. */
static const char *bound_in_place_of(const char *labelled)
{
    return strcmp(labelled, TG_LIQO_REMOTE_CONTROLPLANE_ROLE) == 0 ? TG_CONSUMER_CLUSTERROLE : labelled;
}

static int listed(const char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

size_t tg_tenant_roles(json_object *list, const char **names, size_t max)
{
    json_object *items = tg_json_path(list, "items", NULL);
    size_t n = 0;

    for (size_t i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items) &&
                       n < max; i++) {
        json_object *cr = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(cr, "metadata", "name", NULL);
        const char *label = tg_json_path_string(cr, "metadata", "labels", TG_REMOTE_CONTROLPLANE_LABEL, NULL);
        /* the list was label-selected; checked again so a loose answer binds nothing foreign */
        if (!name || !label || strcmp(label, TG_REMOTE_CONTROLPLANE_VALUE) != 0 ||
            strlen(TG_TENANT_BINDING_PREFIX) + strlen(name) > 253)
            continue;
        name = bound_in_place_of(name);
        if (!listed(names, n, name))
            names[n++] = name;
    }
    if (n == 0 && max > 0)
        names[n++] = TG_CONSUMER_CLUSTERROLE;   /* no Liqo here: tenantgate's own role */
    return n;
}

int tg_tenant_binding_is_ours(json_object *rb, const char *cid)
{
    const char *name = tg_json_path_string(rb, "metadata", "name", NULL);
    json_object *subjects = tg_json_path(rb, "subjects", NULL), *sub;
    const char *kind, *who, *ref;
    size_t plen = strlen(TG_TENANT_LEGACY_BINDING_PREFIX);

    if (!name || !cid)
        return 0;
    if (strncmp(name, TG_TENANT_BINDING_PREFIX, strlen(TG_TENANT_BINDING_PREFIX)) != 0 &&
        !(strncmp(name, TG_TENANT_LEGACY_BINDING_PREFIX, plen) == 0 && strcmp(name + plen, cid) == 0))
        return 0;
    if (!subjects || !json_object_is_type(subjects, json_type_array) || json_object_array_length(subjects) != 1)
        return 0;
    sub = json_object_array_get_idx(subjects, 0);
    kind = tg_json_path_string(sub, "kind", NULL);
    who = tg_json_path_string(sub, "name", NULL);
    ref = tg_json_path_string(rb, "roleRef", "kind", NULL);
    return kind && who && ref && strcmp(kind, "User") == 0 && strcmp(who, cid) == 0 && strcmp(ref, "ClusterRole") == 0;
}

/* ---------- the "known to exist" cache ---------- */

/* Bindings known to exist: "ns/name" -> when this process last saw the POST
 * succeed or answer 409. Known for RB_RECHECK_S only, so one deleted behind
 * our back is recreated (and a role unlabelled is unbound) by a later reconcile. */
#define RB_RECHECK_S 600

static int binding_known(tg_signer *s, const char *key, time_t now)
{
    json_object *at = NULL;
    int known;

    pthread_mutex_lock(&s->rb_mu);
    known = s->rb_known && json_object_object_get_ex(s->rb_known, key, &at) &&
            now - (time_t)json_object_get_int64(at) < RB_RECHECK_S;
    pthread_mutex_unlock(&s->rb_mu);
    return known;
}

static void binding_set_known(tg_signer *s, const char *key, int known, time_t now)
{
    pthread_mutex_lock(&s->rb_mu);
    if (s->rb_known && known)
        json_object_object_add(s->rb_known, key, json_object_new_int64((int64_t)now));
    else if (s->rb_known)
        json_object_object_del(s->rb_known, key);
    pthread_mutex_unlock(&s->rb_mu);
}

/* ---------- writes ---------- */

static long delete_binding(tg_signer *s, tg_api *api, const char *ns, const char *name, char *err, size_t err_len)
{
    char path[1024], key[640];
    long r;

    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    binding_set_known(s, key, 0, time(NULL));
    if (ns)
        snprintf(path, sizeof(path), RBAC_API "/namespaces/%s/rolebindings/%s", ns, name);
    else
        snprintf(path, sizeof(path), RBAC_API "/clusterrolebindings/%s", name);
    r = tg_api_call(api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, err, err_len);
    return r == 404 ? 200 : r;
}

/* [{Tenant}] for metadata.ownerReferences, or NULL without a uid. */
static json_object *tenant_owners(json_object *tenant)
{
    const char *name = tg_json_path_string(tenant, "metadata", "name", NULL);
    const char *uid = tg_json_path_string(tenant, "metadata", "uid", NULL);
    json_object *ref, *list;

    if (!name || !uid)
        return NULL;
    ref = json_object_new_object();
    json_object_object_add(ref, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(ref, "kind", rc_jstr("Tenant"));
    json_object_object_add(ref, "name", rc_jstr(name));
    json_object_object_add(ref, "uid", rc_jstr(uid));
    list = json_object_new_array();
    json_object_array_add(list, ref);
    return list;
}

/* A binding already there (made by Liqo, or for an earlier Tenant): owned by
 * this Tenant from now on. */
static long adopt_binding(tg_api *api, const char *ns, const char *name, json_object *owners, char *err,
                          size_t err_len)
{
    json_object *patch = json_object_new_object(), *meta = json_object_new_object();
    char path[1024];
    long r;

    json_object_object_add(meta, "ownerReferences", json_object_get(owners));
    json_object_object_add(patch, "metadata", meta);
    snprintf(path, sizeof(path), RBAC_API "/namespaces/%s/rolebindings/%s", ns, name);
    r = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    json_object_put(patch);
    return r;
}

/* POST the binding unless recently known to exist; *posted set when it did.
 * ns NULL: a ClusterRoleBinding (a cluster-scoped object has no namespaced
 * owner: the finalizers remove it). */
static long post_binding(tg_signer *s, tg_api *api, const char *ns, const char *name, const char *cid,
                         const char *subject_kind, const char *role, json_object *owners, int *posted, char *err,
                         size_t err_len)
{
    char key[640];
    time_t now = time(NULL);
    long r;

    if (!ns)
        owners = NULL;
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    if (binding_known(s, key, now))
        return 200;
    *posted = 1;
    r = rc_post_binding(api, ns, name, cid, subject_kind, cid, role, owners ? json_object_get(owners) : NULL, err,
                        err_len);
    if (r == 409)   /* already there */
        r = owners ? adopt_binding(api, ns, name, owners, err, err_len) : 200;
    if (r == 200 || r == 201)
        binding_set_known(s, key, 1, now);
    return r == 201 ? 200 : r;
}

static int wanted(const char *name, const char **roles, size_t n)
{
    size_t plen = strlen(TG_TENANT_BINDING_PREFIX);

    for (size_t i = 0; i < n; i++)
        if (strncmp(name, TG_TENANT_BINDING_PREFIX, plen) == 0 && strcmp(name + plen, roles[i]) == 0)
            return 1;
    return 0;
}

/* Delete cid's bindings in ns that bind none of roles (n 0: all of them):
 * a role no longer labelled, the other mode's role, the old name. */
static long prune(tg_signer *s, tg_api *api, const char *ns, const char *cid, const char **roles, size_t n,
                  char *err, size_t err_len)
{
    char path[1024];
    json_object *list = NULL, *items;
    long r;

    /* label keys are [a-z0-9./-]: only the '=' needs escaping */
    snprintf(path, sizeof(path), RBAC_API "/namespaces/%s/rolebindings?labelSelector=%s%%3D%s", ns,
             TG_LABEL_REMOTE_CLUSTER_ID, cid);
    if ((r = tg_api_get(api, path, &list, err, err_len)) != 200) {
        json_object_put(list);
        return r;
    }
    items = tg_json_path(list, "items", NULL);
    for (size_t i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items);
         i++) {
        json_object *rb = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(rb, "metadata", "name", NULL);
        if (!tg_tenant_binding_is_ours(rb, cid) || wanted(name, roles, n))
            continue;
        if ((r = delete_binding(s, api, ns, name, err, err_len)) != 200)
            break;
        tg_log(TG_LOG_INFO, "consumer binding removed", TG_LOG_STR("namespace", ns), TG_LOG_STR("rolebinding", name));
    }
    json_object_put(list);
    return r;
}

/* The labelled ClusterRoles' list is remembered this long (a settled mark,
 * names and the label only): a burst of Tenants lists them once, not twice
 * a Tenant; an operator's additions count within it. */
#define ROLES_MEMO_MS 2000
#define ROLES_MEMO_KEY "tenant-roles"
#define ROLES_MEMO_MAX 16384

/* What tg_tenant_roles reads of a list: each item's name and label. */
static json_object *slim_roles(json_object *list)
{
    json_object *items = tg_json_path(list, "items", NULL), *out = json_object_new_object();
    json_object *slim = json_object_new_array();

    for (size_t i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items);
         i++) {
        json_object *cr = json_object_array_get_idx(items, i), *item = json_object_new_object();
        json_object *meta = json_object_new_object(), *labels = json_object_new_object();
        const char *name = tg_json_path_string(cr, "metadata", "name", NULL);
        const char *label = tg_json_path_string(cr, "metadata", "labels", TG_REMOTE_CONTROLPLANE_LABEL, NULL);

        if (name)
            json_object_object_add(meta, "name", json_object_new_string(name));
        if (label)
            json_object_object_add(labels, TG_REMOTE_CONTROLPLANE_LABEL, json_object_new_string(label));
        json_object_object_add(meta, "labels", labels);
        json_object_object_add(item, "metadata", meta);
        json_object_array_add(slim, item);
    }
    json_object_object_add(out, "items", slim);
    return out;
}

/* The labelled ClusterRoles: remembered (ROLES_MEMO_MS), else listed now. */
static long list_roles(tg_signer *s, tg_api *api, json_object **list, char *err, size_t err_len)
{
    char *memo = s->settled ? malloc(ROLES_MEMO_MAX) : NULL;
    json_object *full = NULL;
    const char *text;
    uint64_t now = tg_wq_now_ms();
    long r;

    *list = NULL;
    if (memo && tg_settled_marked(s->settled, ROLES_MEMO_KEY, memo, ROLES_MEMO_MAX, now) &&
        strlen(memo) < ROLES_MEMO_MAX - 1 && (*list = tg_json_parse(memo, strlen(memo), NULL, 0))) {
        free(memo);
        return 200;
    }
    free(memo);
    r = tg_api_get(api, RBAC_API "/clusterroles?labelSelector=" TG_REMOTE_CONTROLPLANE_LABEL
                   "%3D" TG_REMOTE_CONTROLPLANE_VALUE, &full, err, err_len);
    if (r != 200) {
        json_object_put(full);
        return r;
    }
    *list = slim_roles(full);
    json_object_put(full);
    text = json_object_to_json_string_ext(*list, JSON_C_TO_STRING_PLAIN);
    if (s->settled && strlen(text) < ROLES_MEMO_MAX - 1)
        tg_settled_mark(s->settled, ROLES_MEMO_KEY, text, now, now + ROLES_MEMO_MS);
    return 200;
}

static long bind_roles(tg_signer *s, tg_api *api, const char *ns, const char *cid, json_object *owners, char *err,
                       size_t err_len)
{
    json_object *list = NULL;
    const char *roles[TG_TENANT_MAX_ROLES];
    char name[320];
    size_t n;
    int posted = 0;
    long r;

    if ((r = list_roles(s, api, &list, err, err_len)) != 200) {
        json_object_put(list);
        return r;
    }
    n = tg_tenant_roles(list, roles, TG_TENANT_MAX_ROLES);
    for (size_t i = 0; i < n && r == 200; i++) {
        snprintf(name, sizeof(name), TG_TENANT_BINDING_PREFIX "%s", roles[i]);
        r = post_binding(s, api, ns, name, cid, "User", roles[i], owners, &posted, err, err_len);
    }
    /* pruning needs a list: only when something was (re)checked, at most every RB_RECHECK_S */
    if (r == 200 && posted)
        r = prune(s, api, ns, cid, roles, n, err, err_len);
    json_object_put(list);
    return r;
}

long tg_tenant_bind(tg_signer *s, tg_api *api, const char *ns, const char *cid, json_object *tenant, int present,
                    char *err, size_t err_len)
{
    json_object *owners = present && tenant ? tenant_owners(tenant) : NULL;
    char name[320];
    int posted = 0;
    long r;

    r = present ? bind_roles(s, api, ns, cid, owners, err, err_len) : prune(s, api, ns, cid, NULL, 0, err, err_len);
    json_object_put(owners);
    if (r != 200)
        return r;
    snprintf(name, sizeof(name), TG_CLUSTERWIDE_BINDING_PREFIX "%s", cid);
    if (!present)
        return delete_binding(s, api, NULL, name, err, err_len);
    return post_binding(s, api, NULL, name, cid, "Group", TG_CLUSTERWIDE_CLUSTERROLE, NULL, &posted, err, err_len);
}
