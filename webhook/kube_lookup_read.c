/* kube_lookup_read.c - lookup.h's readers over the informer caches of
 * kube_lookup.c (any thread; visitors copy, never keep). */
#include "kube_lookup_internal.h"

#include <stdio.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/name_owner.h"
#include "pki/slice.h"
#include "webhook/kube_ns_digest.h"
#include "webhook/nonce_secret.h"

/* The hex digits that end a slice's user name (pki/slice.h). */
#define SLICE_USER_HASH 12

static int kl_synced(const tg_lookup *lk)
{
    tg_kube_lookup *kl = lk->data;
    return tg_informer_synced(kl->namespaces) && tg_informer_synced(kl->tenants) &&
           tg_informer_synced(kl->nonces) && tg_informer_synced(kl->local_slices) &&
           tg_informer_synced(kl->replicated_slices) && tg_informer_synced(kl->claims) &&
           (!kl->slice_policy || tg_informer_synced(kl->slice_policy));
}

static int kl_namespace_label(const tg_lookup *lk, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                              int *ns_exists)
{
    tg_kube_lookup *kl = lk->data;

    return tg_ns_digest_label(tg_informer_cache(kl->namespaces), ns, key, value, ns_exists);
}

/* The duplicate checks are index lookups (one hash probe each), so that an
 * admission costs the same with 5,000 cached Tenants as with 5. */
static size_t kl_tenants_in_namespace(const tg_lookup *lk, const char *ns)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_namespace(tg_informer_cache(kl->tenants), ns, NULL, NULL);
}

static int kl_tenant_name_exists(const tg_lookup *lk, const char *name)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_name(tg_informer_cache(kl->tenants), name, NULL, NULL) > 0;
}

typedef struct nonce_visit {
    const char *ns;
    const char *cluster_id;
    char *nonce;
    size_t *len;
    tg_nonce_state state;
    int digested;
} nonce_visit;

static void visit_nonce(json_object *obj, void *data)
{
    nonce_visit *nv = data;

    nv->state = tg_nonce_secret_read(obj, nv->ns, nv->cluster_id, nv->nonce, nv->len);
}

/* The key is (namespace, liqo-nonce): tg_nonce_secret_read's first test. */
static void visit_nonce_digest(const void *digest, void *data)
{
    nonce_visit *nv = data;

    if (!digest)
        return;
    nv->digested = 1;
    nv->state = tg_nonce_digest_read(digest, nv->cluster_id, nv->nonce, nv->len);
}

/* By (namespace, name) only: the informer lists every Secret labelled
 * liqo.io/nonce=true, but one outside the Tenant's namespace never counts. */
static int kl_nonce_secret(const tg_lookup *lk, const char *ns, const char *cluster_id, char nonce[TG_LOOKUP_NONCE_MAX],
                           size_t *len)
{
    tg_kube_lookup *kl = lk->data;
    tg_cache *c = tg_informer_cache(kl->nonces);
    nonce_visit nv = {.ns = ns, .cluster_id = cluster_id, .nonce = nonce, .len = len, .state = TG_NONCE_ABSENT};

    if (tg_cache_get_digest(c, ns, TG_NONCE_SECRET_NAME, visit_nonce_digest, &nv) && !nv.digested)
        tg_cache_get(c, ns, TG_NONCE_SECRET_NAME, visit_nonce, &nv);
    return nv.state;
}

typedef struct tenant_visit {
    const char *cluster_id;
    tg_lookup_tenant *out;
    int found;
} tenant_visit;

/* Copies what a slice decision needs out of the first Tenant of the cluster. */
static void visit_tenant(json_object *obj, void *data)
{
    tenant_visit *tv = data;
    const char *id = tg_json_path_string(obj, "spec", "clusterID", NULL);
    const char *cond = tg_json_path_string(obj, "spec", "tenantCondition", NULL);
    const char *policy = tg_json_path_string(obj, "spec", "authzPolicy", NULL);
    const char *key = tg_json_path_string(obj, "spec", "publicKey", NULL);
    char err[64];

    if (tv->found || !id || strcmp(id, tv->cluster_id) != 0)
        return;
    tv->found = 1;
    tv->out->drained = cond && strcmp(cond, "Drained") == 0;
    tv->out->no_handshake = policy && strcmp(policy, "TolerateNoHandshake") == 0;
    if (key && key[0])
        tv->out->public_key = tg_base64_decode(key, strlen(key), &tv->out->public_key_len, err, sizeof(err));
}

static int kl_tenant_for_cluster(const tg_lookup *lk, const char *ns, const char *cluster_id, tg_lookup_tenant *out)
{
    tg_kube_lookup *kl = lk->data;
    tenant_visit tv = {.cluster_id = cluster_id, .out = out};

    memset(out, 0, sizeof(*out));
    /* Tenants are named after their consumer (Liqo and our CLI): a direct
     * hit first, then the namespace's others for a Tenant someone named
     * otherwise. */
    tg_cache_get(tg_informer_cache(kl->tenants), ns, cluster_id, visit_tenant, &tv);
    if (!tv.found)
        tg_cache_get_by_namespace(tg_informer_cache(kl->tenants), ns, visit_tenant, &tv);
    return tv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

typedef struct cluster_id_visit {
    const char *cluster_id;
    int found;
} cluster_id_visit;

static void visit_cluster_id(json_object *obj, void *data)
{
    cluster_id_visit *cv = data;
    const char *id = tg_json_path_string(obj, "spec", "clusterID", NULL);

    cv->found |= id && strcmp(id, cv->cluster_id) == 0;
}

/* One index probe: a Tenant is named after its cluster id (Liqo, our CLI,
 * and the webhook's NameMismatch on CREATE), so the Tenant of cluster_id is
 * the one called cluster_id; its spec.clusterID is compared all the same. */
static int kl_tenant_cluster_id_exists(const tg_lookup *lk, const char *cluster_id)
{
    tg_kube_lookup *kl = lk->data;
    cluster_id_visit cv = {.cluster_id = cluster_id};

    tg_cache_get_by_name(tg_informer_cache(kl->tenants), cluster_id, visit_cluster_id, &cv);
    return cv.found;
}

typedef struct slice_user_visit {
    const char *user;
    char *where;
    int found;
} slice_user_visit;

static void visit_slice_user(json_object *obj, void *data)
{
    slice_user_visit *sv = data;
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *consumer = tg_json_path_string(obj, "spec", "consumerClusterID", NULL);
    char user[TG_SLICE_USER_MAX];

    if (sv->found || !name || !consumer || tg_slice_user_name(name, consumer, user, sizeof(user)) != 0 ||
        strcmp(user, sv->user) != 0)
        return;
    sv->found = 1;
    snprintf(sv->where, TG_LOOKUP_WHERE_MAX, "%.63s/%.253s", ns ? ns : "", name);
}

/* A slice's user is <name>-<12 hex>: the slices called <name> are one index
 * probe away, and each says whose it is. */
static int kl_slice_user_exists(const tg_lookup *lk, const char *user, char where[TG_LOOKUP_WHERE_MAX])
{
    tg_kube_lookup *kl = lk->data;
    slice_user_visit sv = {.user = user, .where = where};
    size_t n = strlen(user);
    char name[TG_SLICE_USER_MAX];

    if (n < 2 + SLICE_USER_HASH || n >= sizeof(name) || user[n - SLICE_USER_HASH - 1] != '-')
        return 0;
    memcpy(name, user, n - SLICE_USER_HASH - 1);
    name[n - SLICE_USER_HASH - 1] = '\0';
    tg_cache_get_by_name(tg_informer_cache(kl->replicated_slices), name, visit_slice_user, &sv);
    return sv.found;
}

typedef struct claim_visit {
    const char *name;
    char *path, *holder;
    int found;
} claim_visit;

static void visit_claim(json_object *obj, void *data)
{
    claim_visit *cv = data;
    const char *name = tg_json_path_string(obj, "spec", "name", NULL);
    const char *path = tg_json_path_string(obj, "spec", "path", NULL);
    const char *holder = tg_json_path_string(obj, "spec", "holder", NULL);

    /* the object name is a digest of spec.name: compared all the same */
    if (!name || strcmp(name, cv->name) != 0)
        return;
    cv->found = 1;
    snprintf(cv->path, 16, "%s", path ? path : "");
    snprintf(cv->holder, TG_LOOKUP_WHERE_MAX, "%s", holder ? holder : "");
}

static int kl_name_claim(const tg_lookup *lk, const char *name, char path[16], char holder[TG_LOOKUP_WHERE_MAX])
{
    tg_kube_lookup *kl = lk->data;
    char obj[TG_NAME_CLAIM_OBJECT_MAX];
    claim_visit cv = {.name = name, .path = path, .holder = holder};

    tg_name_claim_object(name, obj);
    tg_cache_get(tg_informer_cache(kl->claims), NULL, obj, visit_claim, &cv);
    return cv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

static int kl_local_slice_name_exists(const tg_lookup *lk, const char *name)
{
    tg_kube_lookup *kl = lk->data;

    return tg_cache_get_by_name(tg_informer_cache(kl->local_slices), name, NULL, NULL) > 0;
}

static size_t kl_cache_stats(const tg_lookup *lk, tg_lookup_cache_stats *out, size_t cap)
{
    tg_kube_lookup *kl = lk->data;
    const struct { const char *cache; tg_informer *inf; } caches[] = {
        {"namespaces", kl->namespaces},
        {"tenants", kl->tenants},
        {"nonce_secrets", kl->nonces},
        {"local_slices", kl->local_slices},
        {"replicated_slices", kl->replicated_slices},
        {"name_claims", kl->claims},
        {"slice_policy", kl->slice_policy},
    };
    size_t n;

    for (n = 0; n < cap && n < sizeof(caches) / sizeof(caches[0]) && caches[n].inf; n++)
        out[n] = (tg_lookup_cache_stats){.cache = caches[n].cache,
                                         .objects = tg_informer_count(caches[n].inf),
                                         .failures = tg_informer_stats_get(caches[n].inf)->failures};
    return n;
}

const tg_lookup_ops tg_kube_lookup_ops = {
    .synced = kl_synced,
    .namespace_label = kl_namespace_label,
    .tenants_in_namespace = kl_tenants_in_namespace,
    .tenant_name_exists = kl_tenant_name_exists,
    .nonce_secret = kl_nonce_secret,
    .tenant_for_cluster = kl_tenant_for_cluster,
    .local_slice_name_exists = kl_local_slice_name_exists,
    .tenant_cluster_id_exists = kl_tenant_cluster_id_exists,
    .slice_user_exists = kl_slice_user_exists,
    .name_claim = kl_name_claim,
    .slice_tenant_policy = tg_kube_slice_tenant_policy,
    .cache_stats = kl_cache_stats,
};

