/* consumer_replicator.c - the consumer's CRD replicator (PROTOCOL.md 7):
 * Liqo's crd-replicator for the objects authentication needs.
 *
 * A local ResourceSlice, Renew or NamespaceMap labelled
 * liqo.io/replication=true + liqo.io/remoteID=P is copied into P's tenant
 * namespace (the annotation liqo.io/remote-tenant-namespace of the
 * ControlPlane kubeconfig Secret of P in the object's namespace), acting as
 * that kubeconfig's user (<consumer id>). The copy has the same name, the
 * local annotations, the labels rewritten as Liqo does (replica_plan.h) and
 * the local spec; afterwards only spec goes down (when it differs) and the
 * copy's status comes back into the local object through /status (when it
 * differs). Local spec is never written from the remote.
 *
 * Deletion: the finalizer crdreplicator.liqo.io/resource is on the local
 * object before its copy is created; when the object is being deleted the
 * copy is deleted, and the finalizer goes once the copy is gone (404). While
 * the provider cannot be reached or refuses, the finalizer stays and the key
 * is retried with backoff (README: how an admin forces it).
 *
 * The steps are decided by tg_repl_plan; this file reads both sides and
 * carries them out. Each step is idempotent and guarded by resourceVersion,
 * so a restart of either side resumes from what the API servers hold. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/remote_pool.h"
#include "signer/tenant_scope.h"
#include "signer/replica_plan.h"

#define WAIT_GONE_MS 1000       /* a copy being deleted: look again (its watch event usually comes first) */
#define CONFLICT_MS 60000       /* a same-name object that is not ours: look again, quietly */

/* The ControlPlane kubeconfig Secret of a provider in a namespace, copied
 * out of the informer cache. kubeconfig is secret: freed with rc_free_secret. */
typedef struct cp_secret {
    char key[320];              /* "ns/name" */
    char name[256];
    char provider[64];          /* its liqo.io/remote-cluster-id */
    char remote_ns[256];
    int deleting;               /* it has a deletionTimestamp */
    int finalizer;              /* it carries TG_REPL_SECRET_FINALIZER */
    char *kubeconfig;
    size_t kubeconfig_len;
} cp_secret;

#define MAX_SECRETS 4

typedef struct secret_look {
    const char *ns;
    const char *provider;       /* NULL: any */
    cp_secret found[MAX_SECRETS];
    int n;
    int more;                   /* more than MAX_SECRETS */
} secret_look;

static void on_secret_visit(json_object *sec, void *data)
{
    secret_look *l = data;
    const char *ns = tg_json_path_string(sec, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(sec, "metadata", "name", NULL);
    const char *rns = tg_json_path_string(sec, "metadata", "annotations", TG_ANNOTATION_REMOTE_TENANT_NS, NULL);
    const char *pid = tg_json_path_string(sec, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    cp_secret *c;

    if (!ns || !name || strcmp(ns, l->ns) != 0 || !rns || !*rns || !pid ||
        (l->provider && strcmp(pid, l->provider) != 0))
        return;
    /* Only liqo-tenant-<pid> holds P's credentials (tenant_scope.h): a
     * labelled Secret elsewhere is never used, and gets no finalizer. */
    if (tg_tenant_scope_of(ns, pid) != TG_SCOPE_OK)
        return;
    if (l->n == MAX_SECRETS) {
        l->more = 1;
        return;
    }
    c = &l->found[l->n];
    /* rc_secret_data decodes data.kubeconfig with getters only (cache.h rules). */
    if (!(c->kubeconfig = (char *)rc_secret_data(sec, "kubeconfig", &c->kubeconfig_len)))
        return;
    snprintf(c->key, sizeof(c->key), "%s/%s", ns, name);
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->provider, sizeof(c->provider), "%s", pid);
    snprintf(c->remote_ns, sizeof(c->remote_ns), "%s", rns);
    c->deleting = tg_json_path(sec, "metadata", "deletionTimestamp", NULL) != NULL;
    c->finalizer = tg_repl_has_finalizer(sec, TG_REPL_SECRET_FINALIZER);
    l->n++;
}

static void secrets_free(secret_look *l)
{
    for (int i = 0; i < l->n; i++)
        rc_free_secret(l->found[i].kubeconfig, l->found[i].kubeconfig_len);
    l->n = 0;
}

static void count(tg_signer *s, const tg_repl_kind *k, const char *action)
{
    if (s->m_replicated)
        tg_counter_add(tg_metric_series_get(s->m_replicated, (const char *[]){k->plural, action}), 1);
}

/* A merge patch of metadata.finalizers, guarded by resourceVersion. On 200
 * *obj is replaced by the patched object. */
static long patch_finalizers(tg_api *api, const char *path, json_object **obj, const char *finalizer, int add,
                             char *err, size_t err_len)
{
    json_object *patch = json_object_new_object(), *meta = json_object_new_object(), *out = NULL;
    long st;

    json_object_object_add(meta, "finalizers", tg_repl_finalizers_with(*obj, finalizer, add));
    json_object_object_add(meta, "resourceVersion",
                           rc_jstr(tg_json_path_string(*obj, "metadata", "resourceVersion", NULL)));
    json_object_object_add(patch, "metadata", meta);
    st = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, &out, err, err_len);
    json_object_put(patch);
    if (st == 200 && out) {
        json_object_put(*obj);
        *obj = out;
    } else {
        json_object_put(out);
    }
    return st;
}

/* The copy as it is first created. */
static json_object *remote_copy(tg_signer *s, const tg_repl_kind *k, json_object *local, const char *remote_ns)
{
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();
    json_object *ann = tg_json_path(local, "metadata", "annotations", NULL);
    json_object *spec = tg_json_path(local, "spec", NULL);

    json_object_object_add(obj, "apiVersion", rc_jstr(k->api_version));
    json_object_object_add(obj, "kind", rc_jstr(k->kind));
    json_object_object_add(meta, "name", rc_jstr(tg_json_path_string(local, "metadata", "name", NULL)));
    json_object_object_add(meta, "namespace", rc_jstr(remote_ns));
    json_object_object_add(meta, "labels",
                           tg_repl_remote_labels(tg_json_path(local, "metadata", "labels", NULL), s->cluster_id));
    if (ann)
        json_object_object_add(meta, "annotations", json_object_get(ann));
    json_object_object_add(obj, "metadata", meta);
    if (spec)
        json_object_object_add(obj, "spec", json_object_get(spec));
    return obj;
}

/* obj with member key replaced by a copy of value (removed when NULL). */
static void set_member(json_object *obj, const char *key, json_object *value)
{
    if (value)
        json_object_object_add(obj, key, json_object_get(value));
    else
        json_object_object_del(obj, key);
}

/* 401/403 from the provider: the credentials may have changed or expired;
 * the next attempt reads the Secret again and builds a fresh client. */
static void on_auth_failure(tg_signer *s, const cp_secret *sec, long st)
{
    if (st == 401 || st == 403)
        tg_remote_pool_drop(s->remote_pool, sec->key);
}

typedef struct replica {
    tg_signer *s;
    tg_api *api;                /* local */
    tg_api *rapi;               /* remote */
    const tg_repl_kind *k;
    const cp_secret *sec;
    const char *ns, *name;
    char lpath[768], rpath[768];
    json_object *local, *remote;
    char err[512];
} replica;

/* The Secret keeps our finalizer while local objects may hold copies, so
 * that deleting its namespace or Identity still deletes them. */
static int hold_secret(replica *r)
{
    json_object *sec = NULL;
    char path[768];
    long st;

    if (r->sec->finalizer)
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", r->ns, r->sec->name);
    if ((st = tg_api_get(r->api, path, &sec, r->err, sizeof(r->err))) == 200 &&
        !tg_repl_has_finalizer(sec, TG_REPL_SECRET_FINALIZER))
        st = patch_finalizers(r->api, path, &sec, TG_REPL_SECRET_FINALIZER, 1, r->err, sizeof(r->err));
    json_object_put(sec);   /* holds the kubeconfig: never logged */
    return st == 200 ? 0 : -1;
}

/* Carry out one plan; RETRY, OK, or a requeue delay. */
static long run_steps(replica *r, unsigned steps)
{
    json_object *body;
    char path[800];
    long st;

    if ((steps & TG_REPL_CONFLICT) && !r->local)
        return TG_RECONCILE_OK;     /* another provider's copy in a shared namespace: not ours */
    if (steps & TG_REPL_CONFLICT) {
        snprintf(r->err, sizeof(r->err), "%s/%s exists on the provider but is not this cluster's copy "
                 "(labels %s, %s): left alone", r->sec->remote_ns, r->name, TG_LABEL_REPLICATED, TG_LABEL_ORIGIN_ID);
        tg_log(TG_LOG_WARN, "replicator: name taken on the provider", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name), TG_LOG_STR("error", r->err));
        if (r->local)
            tg_api_event(r->api, r->local, "Warning", "ReplicationConflict", r->err);
        return CONFLICT_MS;
    }
    if ((steps & (TG_REPL_ADD_FINALIZER | TG_REPL_CREATE)) && hold_secret(r) != 0)
        return TG_RECONCILE_RETRY;
    if (steps & TG_REPL_ADD_FINALIZER) {
        if ((st = patch_finalizers(r->api, r->lpath, &r->local, TG_REPL_FINALIZER, 1, r->err, sizeof(r->err))) != 200)
            return TG_RECONCILE_RETRY;
    }
    if (steps & TG_REPL_CREATE) {
        body = remote_copy(r->s, r->k, r->local, r->sec->remote_ns);
        snprintf(path, sizeof(path), "%s/namespaces/%s/%s", r->k->group_path, r->sec->remote_ns, r->k->plural);
        st = tg_api_call(r->rapi, "POST", path, TG_KUBE_CT_JSON, body, NULL, r->err, sizeof(r->err));
        json_object_put(body);
        if (st != 201) {
            on_auth_failure(r->s, r->sec, st);
            tg_api_event(r->api, r->local, "Warning", "ReplicationFailed", r->err);
            return TG_RECONCILE_RETRY;
        }
        count(r->s, r->k, "create");
        tg_log(TG_LOG_INFO, "replicator: copy created on the provider", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name),
               TG_LOG_STR("remote_namespace", r->sec->remote_ns));
        return TG_RECONCILE_OK;      /* its watch event brings the status back */
    }
    if (steps & TG_REPL_UPDATE_SPEC) {
        set_member(r->remote, "spec", tg_json_path(r->local, "spec", NULL));
        st = tg_api_call(r->rapi, "PUT", r->rpath, TG_KUBE_CT_JSON, r->remote, NULL, r->err, sizeof(r->err));
        if (st != 200) {
            on_auth_failure(r->s, r->sec, st);
            return TG_RECONCILE_RETRY;
        }
        count(r->s, r->k, "update_spec");
        tg_log(TG_LOG_INFO, "replicator: spec sent to the provider", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name));
    }
    if (steps & TG_REPL_PULL_STATUS) {
        set_member(r->local, "status", tg_json_path(r->remote, "status", NULL));
        snprintf(path, sizeof(path), "%s/status", r->lpath);
        if (tg_api_call(r->api, "PUT", path, TG_KUBE_CT_JSON, r->local, NULL, r->err, sizeof(r->err)) != 200)
            return TG_RECONCILE_RETRY;
        count(r->s, r->k, "pull_status");
        tg_log(TG_LOG_INFO, "replicator: status taken from the provider", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name));
    }
    if (steps & TG_REPL_DELETE_REMOTE) {
        /* Preconditions: only the copy we looked at, never one created since. */
        json_object *opts = json_object_new_object(), *pre = json_object_new_object();
        json_object_object_add(pre, "uid", rc_jstr(tg_json_path_string(r->remote, "metadata", "uid", NULL)));
        json_object_object_add(opts, "preconditions", pre);
        st = tg_api_call(r->rapi, "DELETE", r->rpath, TG_KUBE_CT_JSON, opts, NULL, r->err, sizeof(r->err));
        json_object_put(opts);
        if (st != 200 && st != 202 && st != 404) {
            on_auth_failure(r->s, r->sec, st);
            return TG_RECONCILE_RETRY;
        }
        count(r->s, r->k, "delete_remote");
        tg_log(TG_LOG_INFO, "replicator: copy deleted on the provider", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name), TG_LOG_BOOL("local_exists", r->local != NULL));
    }
    if (steps & TG_REPL_WAIT_GONE)
        return WAIT_GONE_MS;
    if (steps & TG_REPL_REMOVE_FINALIZER) {
        if ((st = patch_finalizers(r->api, r->lpath, &r->local, TG_REPL_FINALIZER, 0, r->err, sizeof(r->err))) != 200 &&
            st != 404)
            return TG_RECONCILE_RETRY;
        count(r->s, r->k, "remove_finalizer");
        tg_log(TG_LOG_INFO, "replicator: copy gone, finalizer removed", TG_LOG_STR("kind", r->k->kind),
               TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name));
    }
    return TG_RECONCILE_OK;
}

/* The provider refuses the ControlPlane user while the object and the
 * kubeconfig Secret are both on their way out: the peering is being undone
 * (unauthenticate, or the tenant namespace deleted) and the provider has
 * already dropped the Tenant's rights, so no retry can ever delete the copy.
 * Holding the finalizer would only keep the namespace from going. */
static int credentials_withdrawn(const replica *r)
{
    return r->sec->deleting && (!r->local || tg_json_path(r->local, "metadata", "deletionTimestamp", NULL));
}

/* Take our finalizer off without deleting the copy; a copy the provider
 * still holds is the provider's to remove, with the rest of the tenant. */
static long let_go(replica *r, long code)
{
    long st;

    on_auth_failure(r->s, r->sec, code);
    if (!r->local || !tg_repl_has_finalizer(r->local, TG_REPL_FINALIZER))
        return TG_RECONCILE_OK;
    tg_api_event(r->api, r->local, "Warning", "ReplicaLeftOnProvider",
                 "the provider refuses this cluster's ControlPlane credentials while they are being deleted: "
                 "a copy left there is the provider's to remove");
    if ((st = patch_finalizers(r->api, r->lpath, &r->local, TG_REPL_FINALIZER, 0, r->err, sizeof(r->err))) != 200 &&
        st != 404)
        return TG_RECONCILE_RETRY;
    count(r->s, r->k, "remove_finalizer");
    tg_log(TG_LOG_WARN, "replicator: provider refuses withdrawn credentials, finalizer removed without the copy",
           TG_LOG_STR("kind", r->k->kind), TG_LOG_STR("namespace", r->ns), TG_LOG_STR("name", r->name),
           TG_LOG_STR("remote_namespace", r->sec->remote_ns));
    return TG_RECONCILE_OK;
}

/* Read the copy behind one Secret and take the steps. */
static long replicate_one(replica *r)
{
    tg_remote_client rc;
    tg_repl_state st = {0};
    long ret, code;

    if (tg_remote_pool_take(r->s->remote_pool, r->sec->key, r->sec->kubeconfig, r->sec->kubeconfig_len, &rc, r->err,
                            sizeof(r->err)) != 0)
        return TG_RECONCILE_RETRY;
    r->rapi = rc.api;
    snprintf(r->rpath, sizeof(r->rpath), "%s/namespaces/%s/%s/%s", r->k->group_path, r->sec->remote_ns, r->k->plural,
             r->name);
    code = tg_api_get(r->rapi, r->rpath, &r->remote, r->err, sizeof(r->err));
    if ((code == 401 || code == 403) && credentials_withdrawn(r)) {
        ret = let_go(r, code);
        goto out;
    }
    if (code != 200 && code != 404) {
        on_auth_failure(r->s, r->sec, code);
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    if (r->local) {
        st.local = 1;
        st.deleting = tg_json_path(r->local, "metadata", "deletionTimestamp", NULL) != NULL;
        st.finalizer = tg_repl_has_finalizer(r->local, TG_REPL_FINALIZER);
        /* No new copies through a Secret on its way out. */
        st.ready = tg_repl_ready(r->k, r->local) && !r->sec->deleting;
    }
    if (r->remote) {
        st.remote = 1;
        st.remote_ours = tg_repl_is_our_copy(r->remote, r->s->cluster_id, r->sec->provider);
        st.remote_deleting = tg_json_path(r->remote, "metadata", "deletionTimestamp", NULL) != NULL;
        st.spec_differs = tg_repl_differ(tg_json_path(r->local, "spec", NULL), tg_json_path(r->remote, "spec", NULL));
        st.status_differs =
            tg_repl_differ(tg_json_path(r->local, "status", NULL), tg_json_path(r->remote, "status", NULL));
    }
    ret = run_steps(r, tg_repl_plan(&st));
out:
    r->rapi = NULL;
    tg_remote_pool_give(r->s->remote_pool, &rc);
    json_object_put(r->remote);
    r->remote = NULL;
    return ret;
}

static long later(long a, long b)
{
    if (a == TG_RECONCILE_RETRY || b == TG_RECONCILE_RETRY)
        return TG_RECONCILE_RETRY;
    return a > b ? a : b;
}

typedef struct holders {
    const char *ns, *provider;
    int n;
} holders;

static void on_holder_visit(json_object *o, void *data)
{
    holders *h = data;
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *rid = tg_json_path_string(o, "metadata", "labels", TG_LABEL_REMOTE_ID, NULL);

    if (ns && rid && strcmp(ns, h->ns) == 0 && strcmp(rid, h->provider) == 0 &&
        tg_repl_has_finalizer(o, TG_REPL_FINALIZER))
        h->n++;
}

/* A ControlPlane Secret being deleted: its finalizer goes once no local
 * object of its namespace and provider holds a copy. */
static long reconcile_secret(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[768], err[512] = "";
    json_object *sec = NULL;
    holders h = {.ns = ns};
    long st, ret = TG_RECONCILE_OK;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    if (!tg_json_path(sec, "metadata", "deletionTimestamp", NULL) ||
        !tg_repl_has_finalizer(sec, TG_REPL_SECRET_FINALIZER) ||
        !(h.provider = tg_json_path_string(sec, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL)))
        goto out;
    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (s->repl_caches[i])
            tg_cache_foreach(s->repl_caches[i], on_holder_visit, &h);
    if (h.n > 0) {
        ret = WAIT_GONE_MS * 2;             /* their copies are being deleted */
        goto out;
    }
    if ((st = patch_finalizers(api, path, &sec, TG_REPL_SECRET_FINALIZER, 0, err, sizeof(err))) != 200 && st != 404) {
        ret = TG_RECONCILE_RETRY;
        tg_log(TG_LOG_WARN, "replicator: cannot release the kubeconfig Secret", TG_LOG_STR("namespace", ns),
               TG_LOG_STR("secret", name), TG_LOG_STR("error", err));
        goto out;
    }
    tg_log(TG_LOG_INFO, "replicator: no copies left, kubeconfig Secret released", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("secret", name));
out:
    json_object_put(sec);
    return ret;
}

long tg_reconcile_replica(tg_signer *s, tg_api *api, const char *code, const char *ns, const char *name)
{
    replica r = {.s = s, .api = api, .ns = ns, .name = name};
    secret_look look = {.ns = ns};
    const char *provider = NULL;
    long st, ret = TG_RECONCILE_OK;

    if (!s->cp_secret_cache || !s->remote_pool)
        return TG_RECONCILE_OK;
    if (strcmp(code, "replsec") == 0)
        return reconcile_secret(s, api, ns, name);
    if (!(r.k = tg_repl_kind_of(code)))
        return TG_RECONCILE_OK;
    snprintf(r.lpath, sizeof(r.lpath), "%s/namespaces/%s/%s/%s", r.k->group_path, ns, r.k->plural, name);
    if ((st = tg_api_get(api, r.lpath, &r.local, r.err, sizeof(r.err))) != 200 && st != 404) {
        ret = TG_RECONCILE_RETRY;
        goto out;
    }
    if (r.local) {
        /* Not (or no longer) meant for replication: the copy, if any, stays
         * as it is, as Liqo's informers would no longer see the object. */
        if (!tg_repl_is_local(r.local, NULL))
            goto out;
        provider = tg_json_path_string(r.local, "metadata", "labels", TG_LABEL_REMOTE_ID, NULL);
        look.provider = provider;
        tg_cache_get_by_index(s->cp_secret_cache, provider, on_secret_visit, &look);
    } else {
        /* Gone here (its finalizer removed by hand, or deleted while no
         * replicator ran): any copy behind a Secret of this namespace goes. */
        tg_cache_foreach(s->cp_secret_cache, on_secret_visit, &look);
    }
    if (r.local && look.n != 1) {
        int held = tg_json_path(r.local, "metadata", "deletionTimestamp", NULL) &&
                   tg_repl_has_finalizer(r.local, TG_REPL_FINALIZER);
        snprintf(r.err, sizeof(r.err), "%s ControlPlane kubeconfig Secret for %s in %s (labels %s=ControlPlane, "
                 "%s=%s, annotation %s)", look.n ? "more than one" : "no", provider, ns, TG_LABEL_IDENTITY_TYPE,
                 TG_LABEL_REMOTE_CLUSTER_ID, provider, TG_ANNOTATION_REMOTE_TENANT_NS);
        /* Without credentials the copy cannot be removed: the finalizer
         * stays until the Secret is back (or an admin removes it). */
        ret = held || look.n > 1 ? TG_RECONCILE_RETRY : TG_RECONCILE_OK;
        if (!held && look.n == 0)
            tg_log(TG_LOG_DEBUG, "replicator: nothing to replicate with yet", TG_LOG_STR("namespace", ns),
                   TG_LOG_STR("name", name), TG_LOG_STR("why", r.err));
        goto out;
    }
    for (int i = 0; i < look.n; i++) {
        r.sec = &look.found[i];
        ret = later(ret, replicate_one(&r));
    }
out:
    if (ret == TG_RECONCILE_RETRY)
        tg_log(TG_LOG_WARN, "replicator: reconcile failed", TG_LOG_STR("kind", r.k ? r.k->kind : code),
               TG_LOG_STR("namespace", ns), TG_LOG_STR("name", name), TG_LOG_STR("error", r.err));
    secrets_free(&look);
    json_object_put(r.local);
    return ret;
}

/* ---------- descriptor ---------- */

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    return tg_reconcile_replica(s, api, kind, ns, name);
}

/* Its informers are its own (replicator_watch.c): local objects by kind, and
 * a watch per provider on the remote copies. */
const tg_controller_desc tg_ctl_replicator = {
    .name = "replicator", .key_prefix = "repl", .prefix_family = 1, .bit = TG_CTL_REPLICATOR, .side = "consumer",
    /* its own watches (replicator_watch.c) ask events.h with this rule */
    .scope = {.where = TG_WHERE_TENANT_NS, .peer = TG_PEER_REPLICATED,
              .acts_on = "ControlPlane kubeconfig Secrets, ResourceSlices, Renews and NamespaceMaps whose "
                         "liqo.io/remote-cluster-id and liqo.io/remoteID labels, when set, name <id>, in a "
                         "tenant namespace of <id> named liqo-tenant-<id>",
              .writes = "copies on the provider named by the Secret; status and finalizers of the local objects"},
    .reconcile = reconcile_key,
};
