/* kube_lookup.c - the informers behind kube_lookup.h: what each caches and
 * keeps, started and stopped. The readers are kube_lookup_read.c, the live
 * nonce read kube_live_read.c. */
#include "kube_lookup_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "pki/name_owner.h"
#include "kube/clusterid.h"
#include "webhook/kube_ns_digest.h"
#include "webhook/nonce_secret.h"

#define NAMESPACES_PATH "/api/v1/namespaces"
#define TENANTS_PATH "/apis/authentication.liqo.io/v1beta1/tenants"
#define SECRETS_PATH "/api/v1/secrets"
#define SLICES_PATH "/apis/authentication.liqo.io/v1beta1/resourceslices"
/* Local slices only: the duplicate-name rule is about them (slice_decide.h). */
#define LOCAL_SLICE_SELECTOR "liqo.io/replication=true"
/* Replicated slices: their users must not be a consumer's (lookup.h). */
#define REPLICATED_SLICE_SELECTOR "liqo.io/replicated=true"
#define NONCE_SELECTOR TG_LABEL_NONCE "=true"
/* Only a namespace's liqo-nonce can be a nonce (nonce_secret.h), and a label
 * is something anyone who may create a Secret can set: by name too, so that
 * Secrets labelled elsewhere - up to 1 MiB each, in any number - are never
 * listed into this process. One per namespace can still come (informer.c
 * shrinks a list page that grows too big). */
#define NONCE_FIELDS "metadata.name=" TG_NONCE_SECRET_NAME

static void *nonce_digest_of(json_object *obj)
{
    return tg_nonce_digest_new(obj);
}

/* It holds a nonce: wiped before it goes. */
static void nonce_digest_free(void *d)
{
    tg_nonce_digest_free(d);
}

/* What the lookups read, and nothing else is kept (metadata, minus
 * managedFields, always is): a Namespace's and a Tenant's metadata, a nonce
 * Secret's data.nonce. managedFields alone is most of a small object's tree. */
static const char *const keep_metadata[] = {NULL};
static const char *const keep_nonce[] = {"data." TG_NONCE_DATA_KEY, NULL};
/* A replicated ResourceSlice is checked against its consumer's Tenant
 * (tenant_for_cluster): these fields of it, and nothing else. */
static const char *const keep_tenant[] = {"spec.clusterID", "spec.tenantCondition", "spec.authzPolicy",
                                          "spec.publicKey", NULL};
/* A replicated slice's user is <name>-<hash of its consumer> (slice_user_exists). */
static const char *const keep_replicated_slice[] = {"spec.consumerClusterID", NULL};
/* Whose a name is (name_claim). */
static const char *const keep_claim[] = {"spec.name", "spec.path", "spec.holder", NULL};

/* Every cache stores its objects as compact JSON text (cache.h): a json-c
 * tree costs about 700 bytes per JSON object (each carries a 16-slot hash
 * table), 2-3 KB per cached Namespace or Secret, and the text a tenth of
 * that. A read of the text is a parse (~57,000 instructions for a small
 * object), so what an admission reads of Namespaces and nonce Secrets is
 * kept beside them as a digest, made once when they are stored, and their
 * text is not kept at all (tg_cache_keep_digest_only: about 350 bytes less
 * per object); the duplicate checks are index counts. No parse on the
 * admission path. */
static tg_informer *start_informer(tg_kube_lookup *kl, const char *path, const char *selector,
                                   const char *field, unsigned index_metadata, const char *const *keep,
                                   void *(*digest)(json_object *), void (*digest_free)(void *), char *err,
                                   size_t err_len)
{
    tg_informer_opts opts = {.path = path, .label_selector = selector, .field_selector = field,
                             .index_metadata = index_metadata, .keep_fields = keep, .compact = 1};
    tg_informer *inf = tg_informer_new(kl->client, &opts, err, err_len);

    if (inf && digest && (tg_cache_set_digest(tg_informer_cache(inf), digest, digest_free) != 0 ||
                          tg_cache_keep_digest_only(tg_informer_cache(inf)) != 0)) {
        snprintf(err, err_len, "out of memory");
        tg_informer_free(inf);
        return NULL;
    }
    if (inf && tg_informer_start(inf, err, err_len) != 0) {
        tg_informer_free(inf);
        return NULL;
    }
    return inf;
}

tg_kube_lookup *tg_kube_lookup_new(uv_loop_t *loop, const char *kubeconfig, int workers, char *err,
                                   size_t err_len)
{
    tg_kube_lookup *kl = calloc(1, sizeof(*kl));

    if (!kl || !(kl->live = tg_kube_live_new(&kl->config, workers))) {
        snprintf(err, err_len, "out of memory");
        free(kl);
        return NULL;
    }
    kl->loop = loop;
    if (tg_kube_config_load(&kl->config, kubeconfig, NULL, err, err_len) != 0)
        goto fail;
    if (!(kl->client = tg_kube_client_new(loop, &kl->config, err, err_len)))
        goto fail;
    /* Namespaces and nonce Secrets are read by key; Tenants by namespace and
     * by name too (duplicates), slices by name. */
    if (!(kl->namespaces = start_informer(kl, NAMESPACES_PATH, TG_LABEL_TENANT_NAMESPACE "=true", NULL, 0,
                                          keep_metadata, tg_ns_digest_new, free, err, err_len)) ||
        !(kl->tenants = start_informer(kl, TENANTS_PATH, NULL, NULL, TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME,
                                       keep_tenant, NULL, NULL, err, err_len)) ||
        !(kl->nonces = start_informer(kl, SECRETS_PATH, NONCE_SELECTOR, NONCE_FIELDS, 0, keep_nonce,
                                      nonce_digest_of, nonce_digest_free, err, err_len)) ||
        !(kl->local_slices = start_informer(kl, SLICES_PATH, LOCAL_SLICE_SELECTOR, NULL, TG_CACHE_BY_NAME,
                                            keep_metadata, NULL, NULL, err, err_len)) ||
        !(kl->replicated_slices = start_informer(kl, SLICES_PATH, REPLICATED_SLICE_SELECTOR, NULL, TG_CACHE_BY_NAME,
                                                 keep_replicated_slice, NULL, NULL, err, err_len)) ||
        !(kl->claims = start_informer(kl, TG_NAME_CLAIMS_PATH, NULL, NULL, 0, keep_claim, NULL, NULL, err,
                                      err_len)))
        goto fail;
    kl->lookup.ops = &tg_kube_lookup_ops;
    kl->lookup.data = kl;
    tg_log(TG_LOG_INFO, "watching the cluster", TG_LOG_STR("context", kl->config.context));
    return kl;

fail:
    tg_kube_lookup_free(kl);
    return NULL;
}

const tg_lookup *tg_kube_lookup_get(tg_kube_lookup *kl)
{
    return &kl->lookup;
}

const tg_live_nonce *tg_kube_lookup_live(tg_kube_lookup *kl)
{
    return tg_kube_live_get(kl->live);
}

int tg_kube_lookup_cluster_id(tg_kube_lookup *kl, const char *ns, char *id, size_t id_len, char *why,
                              size_t why_len)
{
    char found[TG_CLUSTERID_MAX + 1];
    long status = -1;

    if (tg_cluster_id_discover(kl->client, ns, found, &status, why, why_len) != TG_CLUSTER_ID_FOUND)
        return -1;
    snprintf(id, id_len, "%s", found);
    return 0;
}

void tg_kube_lookup_free(tg_kube_lookup *kl)
{
    if (!kl)
        return;
    if (kl->namespaces)
        tg_informer_free(kl->namespaces);
    if (kl->tenants)
        tg_informer_free(kl->tenants);
    if (kl->nonces)
        tg_informer_free(kl->nonces);
    if (kl->local_slices)
        tg_informer_free(kl->local_slices);
    if (kl->replicated_slices)
        tg_informer_free(kl->replicated_slices);
    if (kl->claims)
        tg_informer_free(kl->claims);
    if (kl->slice_policy)
        tg_informer_free(kl->slice_policy);
    if (kl->client)
        tg_kube_client_free(kl->client);
    uv_run(kl->loop, UV_RUN_DEFAULT);
    tg_kube_config_free(&kl->config);
    tg_kube_live_free(kl->live);
    free(kl);
}
