/* tenant_rbac.c - a consumer's RoleBindings in its tenant namespace and its
 * group's ClusterRoleBinding, named and chosen as Liqo's provider does
 * (tenant_rbac.h). */
#include "signer/tenant_rbac.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"
#include "signer/cert_group_plan.h"
#include "signer/reconcile_common.h"
#include "signer/settled.h"
#include "signer/workqueue.h"

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

/* Every subject a per-certificate group of cid, and the binding says it
 * lists such groups (it may list none: every group revoked or expired). */
static int lists_cert_groups(json_object *rb, json_object *subjects, const char *cid)
{
    tg_verdict v;

    if (!tg_json_path_string(rb, "metadata", "annotations", TG_ANNOTATION_CERT_GROUPS, NULL))
        return 0;
    for (size_t i = 0; subjects && i < json_object_array_length(subjects); i++) {
        json_object *sub = json_object_array_get_idx(subjects, i);
        const char *kind = tg_json_path_string(sub, "kind", NULL), *who = tg_json_path_string(sub, "name", NULL);
        tg_verdict_init(&v);
        if (!kind || !who || strcmp(kind, "Group") != 0 || tg_cert_group_decide(who, cid, NULL, &v) != 0)
            return 0;
    }
    return 1;
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
    if (!subjects || !json_object_is_type(subjects, json_type_array))
        return 0;
    ref = tg_json_path_string(rb, "roleRef", "kind", NULL);
    if (ref && strcmp(ref, "ClusterRole") == 0 && lists_cert_groups(rb, subjects, cid))
        return 1;
    if (json_object_array_length(subjects) != 1)
        return 0;
    sub = json_object_array_get_idx(subjects, 0);
    kind = tg_json_path_string(sub, "kind", NULL);
    who = tg_json_path_string(sub, "name", NULL);
    ref = tg_json_path_string(rb, "roleRef", "kind", NULL);
    return kind && who && ref && strcmp(kind, "User") == 0 && strcmp(who, cid) == 0 && strcmp(ref, "ClusterRole") == 0;
}

/* ---------- the "known to exist" cache ---------- */

/* Bindings known to exist: "ns/name", marked in s->rb_known (settled.h)
 * when this process saw the POST succeed or answer 409. A mark lasts
 * RB_RECHECK_S, so one deleted behind our back is recreated (and a role
 * unlabelled is unbound) by a later reconcile; at 10,000 Tenants a mark
 * costs about 140 bytes, and an expired one goes instead of staying. */
#define RB_RECHECK_S 600

static int binding_known(tg_signer *s, const char *key)
{
    return s->rb_known && tg_settled_marked(s->rb_known, key, NULL, 0, tg_wq_now_ms());
}

static void binding_set_known(tg_signer *s, const char *key, int known)
{
    uint64_t now = tg_wq_now_ms();

    if (s->rb_known && known)
        tg_settled_mark(s->rb_known, key, "", now, now + RB_RECHECK_S * 1000u);
    else if (s->rb_known)
        tg_settled_forget(s->rb_known, key);
}

/* ---------- writes ---------- */

static long delete_binding(tg_signer *s, tg_api *api, const char *ns, const char *name, char *err, size_t err_len)
{
    char path[1024], key[640];
    long r;

    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    binding_set_known(s, key, 0);
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
    long r;

    if (!ns)
        owners = NULL;
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    if (binding_known(s, key))
        return 200;
    *posted = 1;
    r = rc_post_binding(api, ns, name, cid, subject_kind, cid, role, owners ? json_object_get(owners) : NULL, err,
                        err_len);
    if (r == 409)   /* already there */
        r = owners ? adopt_binding(api, ns, name, owners, err, err_len) : 200;
    if (r == 200 || r == 201)
        binding_set_known(s, key, 1);
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

/* What a listed binding must be to be deleted (prune_listed). */
typedef int (*binding_doomed_fn)(json_object *rb, const char *name, const void *ctx);

/* The names of cid's bindings that doomed picks, copied. */
typedef struct doomed_names {
    const char *cid;
    binding_doomed_fn doomed;
    const void *ctx;
    char **v;
    size_t n, cap;
    int failed;                 /* out of memory: the list is incomplete */
} doomed_names;

/* May run under a cache's read lock: getters only, the name copied
 * (kube/cache.h). The label check is the LIST's selector, for the cache. */
static void note_if_doomed(json_object *rb, void *data)
{
    doomed_names *d = data;
    const char *name = tg_json_path_string(rb, "metadata", "name", NULL);
    const char *who = tg_json_path_string(rb, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    char **grown;

    if (d->failed || !name || !who || strcmp(who, d->cid) != 0 || !d->doomed(rb, name, d->ctx))
        return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        if ((grown = realloc(d->v, cap * sizeof(*grown))) == NULL) {
            d->failed = 1;
            return;
        }
        d->v = grown;
        d->cap = cap;
    }
    if ((d->v[d->n] = strdup(name)) == NULL)
        d->failed = 1;
    else
        d->n++;
}

static void doomed_names_clear(doomed_names *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
    d->failed = 0;
}

/* From the RoleBinding informer's cache when it can answer (synced, indexed
 * by namespace; it holds every binding, as slice_rbac.c's listed_absent
 * reads it): at 10,000 Tenants the LIST a Tenant was 292 s of the API
 * server's 671 s of CPU. A binding made while the cache lags is pruned by a
 * later check (RB_RECHECK_S). 0, or -1: the caller lists. */
static int cached_doomed(tg_signer *s, const char *ns, doomed_names *d)
{
    if (!ns || !s->rb_cache || !tg_cache_synced(s->rb_cache) || !tg_cache_indexed(s->rb_cache, TG_CACHE_BY_NAMESPACE))
        return -1;
    tg_cache_get_by_namespace(s->rb_cache, ns, note_if_doomed, d);
    return d->failed ? -1 : 0;
}

static long listed_doomed(tg_api *api, const char *ns, doomed_names *d, char *err, size_t err_len)
{
    char path[1024];
    json_object *list = NULL, *items;
    long r;

    /* label keys are [a-z0-9./-]: only the '=' needs escaping */
    if (ns)
        snprintf(path, sizeof(path), RBAC_API "/namespaces/%s/rolebindings?labelSelector=%s%%3D%s", ns,
                 TG_LABEL_REMOTE_CLUSTER_ID, d->cid);
    else
        snprintf(path, sizeof(path), RBAC_API "/clusterrolebindings?labelSelector=%s%%3D%s",
                 TG_LABEL_REMOTE_CLUSTER_ID, d->cid);
    if ((r = tg_api_get(api, path, &list, err, err_len)) == 200) {
        items = tg_json_path(list, "items", NULL);
        for (size_t i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items);
             i++)
            note_if_doomed(json_object_array_get_idx(items, i), d);
        if (d->failed) {
            snprintf(err, err_len, "out of memory listing bindings");
            r = 500;
        }
    }
    json_object_put(list);
    return r;
}

/* Delete the bindings labelled with cid (in ns; NULL: ClusterRoleBindings)
 * that doomed picks. 200 when done, else the failing call's status. */
static long prune_listed(tg_signer *s, tg_api *api, const char *ns, const char *cid, binding_doomed_fn doomed,
                         const void *ctx, char *err, size_t err_len)
{
    doomed_names d = {.cid = cid, .doomed = doomed, .ctx = ctx};
    long r = 200;

    if (cached_doomed(s, ns, &d) != 0) {
        doomed_names_clear(&d);
        r = listed_doomed(api, ns, &d, err, err_len);
    }
    for (size_t i = 0; r == 200 && i < d.n; i++) {
        if ((r = delete_binding(s, api, ns, d.v[i], err, err_len)) != 200)
            break;
        tg_log(TG_LOG_INFO, "consumer binding removed", TG_LOG_STR("namespace", ns ? ns : ""),
               TG_LOG_STR("binding", d.v[i]));
    }
    doomed_names_clear(&d);
    return r;
}

typedef struct roles_kept {
    const char *cid;
    const char **roles;
    size_t n;
} roles_kept;

static int binds_no_kept_role(json_object *rb, const char *name, const void *ctx)
{
    const roles_kept *k = ctx;

    return tg_tenant_binding_is_ours(rb, k->cid) && !wanted(name, k->roles, k->n);
}

/* Delete cid's bindings in ns that bind none of roles (n 0: all of them):
 * a role no longer labelled, the other mode's role, the old name. */
static long prune(tg_signer *s, tg_api *api, const char *ns, const char *cid, const char **roles, size_t n,
                  char *err, size_t err_len)
{
    roles_kept k = {cid, roles, n};

    return prune_listed(s, api, ns, cid, binds_no_kept_role, &k, err, err_len);
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

/* ---------- revocable identities: per-certificate groups ---------- */

long tg_revocation_records_read(tg_signer *s, tg_api *api, json_object **cm, json_object **data, char *err,
                                size_t err_len)
{
    char path[512];
    long r;

    *data = NULL;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/" TG_REVOKED_CONFIGMAP, s->namespace_);
    r = tg_api_get(api, path, cm, err, err_len);
    if (r == 200)
        *data = tg_json_path(*cm, "data", NULL);
    return r == 404 ? 200 : r;
}

/* The per-certificate group the Tenant's request carries into group ("":
 * none; Liqo's consumers never make one), and how long a certificate of it
 * may live: the current certificate's NotAfter when it carries the group,
 * else a bound (the certificate is not issued yet; the next reconcile
 * records the real one). */
#define UNISSUED_BOUND_S (8L * 24 * 3600)

static void tenant_group(json_object *tenant, char *group, size_t len, int64_t *not_after)
{
    const char *csr = tg_json_path_string(tenant, "spec", "csr", NULL);
    const char *crt = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    char cn[256], cert_group[TG_CERT_GROUP_MAX], err[64];
    unsigned char *pem = NULL;
    size_t n = 0;
    int64_t na = 0;

    group[0] = '\0';
    *not_after = (int64_t)time(NULL) + UNISSUED_BOUND_S;
    if (csr && (pem = tg_base64_decode(csr, strlen(csr), &n, err, sizeof(err))) != NULL &&
        tg_csr_cert_group(pem, n, group, len) != 1)
        group[0] = '\0';
    free(pem);
    pem = NULL;
    if (group[0] && crt && (pem = tg_base64_decode(crt, strlen(crt), &n, err, sizeof(err))) != NULL &&
        tg_cert_group_of_certificate((const char *)pem, n, cn, sizeof(cn), cert_group, sizeof(cert_group), &na) == 1 &&
        strcmp(cert_group, group) == 0)
        *not_after = na;
    free(pem);
}

/* The binding document of the group form: rc_binding_doc's, with the groups
 * and their NotAfter in its annotation (cert_group_plan.h). */
static json_object *group_binding(const char *ns, const char *name, const char *cid, const char *role,
                                  json_object *owners, const char *annotation, json_object *subjects)
{
    json_object *rb = rc_binding_doc(ns, name, cid, role, ns ? owners : NULL, subjects);
    json_object *ann = json_object_new_object();

    json_object_object_add(ann, TG_ANNOTATION_CERT_GROUPS, rc_jstr(annotation));
    json_object_object_add(tg_json_path(rb, "metadata", NULL), "annotations", ann);
    return rb;
}

/* Make binding name list the identity's live groups. An existing binding is
 * patched under its resourceVersion: `kubectl tenantgate revoke` removes a
 * group under the same precondition, so neither write undoes the other (a
 * conflict is retried with the records read again). */
static long bind_group_one(tg_api *api, const char *ns, const char *name, const char *cid, const char *identity,
                           const char *role, json_object *owners, const char *group, int64_t not_after,
                           json_object *revoked, char *err, size_t err_len)
{
    char path[1024];
    json_object *cur = NULL, *next, *subjects, *rb;
    const char *ann, *rv;
    long r;

    if (ns)
        snprintf(path, sizeof(path), RBAC_API "/namespaces/%s/rolebindings/%s", ns, name);
    else
        snprintf(path, sizeof(path), RBAC_API "/clusterrolebindings/%s", name);
    if ((r = tg_api_get(api, path, &cur, err, err_len)) != 200 && r != 404)
        return r;
    ann = cur ? tg_json_path_string(cur, "metadata", "annotations", TG_ANNOTATION_CERT_GROUPS, NULL) : NULL;
    next = tg_cert_groups_next(ann, identity, group, not_after, revoked, (int64_t)time(NULL));
    subjects = tg_cert_groups_subjects(next);
    if (cur && ann && strcmp(ann, json_object_to_json_string_ext(next, JSON_C_TO_STRING_PLAIN)) == 0 &&
        tg_cert_groups_same(tg_json_path(cur, "subjects", NULL), subjects)) {
        r = 200;   /* nothing to change */
        goto out;
    }
    rb = group_binding(ns, name, cid, role, owners, json_object_to_json_string_ext(next, JSON_C_TO_STRING_PLAIN),
                       subjects);
    if (cur && (rv = tg_json_path_string(cur, "metadata", "resourceVersion", NULL)) != NULL) {
        /* a merge patch with the resourceVersion read: refused (409) if changed since */
        json_object_object_add(tg_json_path(rb, "metadata", NULL), "resourceVersion", rc_jstr(rv));
        json_object_object_del(rb, "roleRef");   /* immutable */
        r = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, rb, NULL, err, err_len);
    } else {
        *strrchr(path, '/') = '\0';
        r = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, rb, NULL, err, err_len);
    }
    json_object_put(rb);
    if (r == 201)
        r = 200;
    if (r == 200)
        tg_log(TG_LOG_INFO, "consumer binding lists its certificate groups", TG_LOG_STR("namespace", ns ? ns : ""),
               TG_LOG_STR("binding", name), TG_LOG_INT("groups", (long)json_object_object_length(next)));
out:
    json_object_put(subjects);
    json_object_put(next);
    json_object_put(cur);
    return r;
}

/* A revocable identity: every RoleBinding lists Group subjects, one per
 * live certificate group, and never the bare user (its rights would outlive
 * a revocation). The ClusterRoleBinding of Group <consumer> is not the
 * ControlPlane certificate's (it carries O=liqo.io): it is the slice
 * certificates' and stays as it is. */
static long bind_groups(tg_signer *s, tg_api *api, const char *ns, const char *cid, json_object *owners,
                        const char *group, int64_t not_after, char *err, size_t err_len)
{
    json_object *list = NULL, *cm = NULL, *revoked;
    const char *roles[TG_TENANT_MAX_ROLES];
    char name[320];
    size_t n;
    long r;

    if ((r = tg_revocation_records_read(s, api, &cm, &revoked, err, err_len)) != 200 ||
        (r = list_roles(s, api, &list, err, err_len)) != 200)
        goto out;
    n = tg_tenant_roles(list, roles, TG_TENANT_MAX_ROLES);
    for (size_t i = 0; i < n && r == 200; i++) {
        snprintf(name, sizeof(name), TG_TENANT_BINDING_PREFIX "%s", roles[i]);
        r = bind_group_one(api, ns, name, cid, cid, roles[i], owners, group, not_after, revoked, err, err_len);
    }
    if (r == 200)
        r = prune(s, api, ns, cid, roles, n, err, err_len);
out:
    json_object_put(list);
    json_object_put(cm);
    return r;
}

long tg_cert_group_bind(tg_signer *s, tg_api *api, const char *name, const char *cid, const char *identity,
                        const char *role, const char *group, int64_t not_after, char *err, size_t err_len)
{
    json_object *cm = NULL, *revoked;
    long r;

    if ((r = tg_revocation_records_read(s, api, &cm, &revoked, err, err_len)) == 200)
        r = bind_group_one(api, NULL, name, cid, identity, role, NULL, group, not_after, revoked, err, err_len);
    json_object_put(cm);
    return r;
}

/* A ClusterRoleBinding of a revocable slice certificate (tg_cert_group_bind):
 * named with the prefix, carrying the certificate-groups annotation, not
 * the Tenant's own (ctx). */
static int is_slice_group_binding(json_object *rb, const char *name, const void *own)
{
    return strncmp(name, TG_CLUSTERWIDE_BINDING_PREFIX, strlen(TG_CLUSTERWIDE_BINDING_PREFIX)) == 0 &&
           strcmp(name, own) != 0 &&
           tg_json_path_string(rb, "metadata", "annotations", TG_ANNOTATION_CERT_GROUPS, NULL) != NULL;
}

long tg_tenant_bind(tg_signer *s, tg_api *api, const char *ns, const char *cid, json_object *tenant, int present,
                    char *err, size_t err_len)
{
    json_object *owners = present && tenant ? tenant_owners(tenant) : NULL;
    char name[320], group[TG_CERT_GROUP_MAX];
    int64_t not_after = 0;
    int posted = 0;
    long r;

    group[0] = '\0';
    if (present && tenant)
        tenant_group(tenant, group, sizeof(group), &not_after);

    if (group[0])
        r = bind_groups(s, api, ns, cid, owners, group, not_after, err, err_len);
    else
        r = present ? bind_roles(s, api, ns, cid, owners, err, err_len) : prune(s, api, ns, cid, NULL, 0, err, err_len);
    json_object_put(owners);
    if (r != 200)
        return r;
    snprintf(name, sizeof(name), TG_CLUSTERWIDE_BINDING_PREFIX "%s", cid);
    if (!present) {
        /* the slices' group bindings are cluster-scoped: the Tenant cannot own them */
        if ((r = delete_binding(s, api, NULL, name, err, err_len)) != 200)
            return r;
        return prune_listed(s, api, NULL, cid, is_slice_group_binding, name, err, err_len);
    }
    return post_binding(s, api, NULL, name, cid, "Group", TG_CLUSTERWIDE_CLUSTERROLE, NULL, &posted, err, err_len);
}
