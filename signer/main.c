/* main.c - tenantgate-signer: flags, informers on the main loop, workers.
 *
 * The informers (list+watch) run on the main libuv loop and only turn events
 * into queue keys. Reconcilers run on worker threads, each with its own API
 * client, once every informer has synced: the first list enqueues every
 * existing object, so a restart resumes from the cluster's state. */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>
#include <openssl/crypto.h>

#include "common/flags.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/probe_server.h"
#include "kube/clusterid.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "kube/whoami.h"
#include "pki/tenant.h"
#include "signer/approve_decide.h"
#include "signer/cluster_labels.h"
#include "signer/leader.h"
#include "signer/reconcile_common.h"
#include "signer/remote_pool.h"
#include "signer/replica_plan.h"
#include "signer/replicator_watch.h"
#include "signer/signer.h"

/* Each Tenant takes a few dozen API round trips done one after another by a
 * worker, so onboarding speed scales with the workers (bench/onboard: 2 workers
 * onboarded 1,000 Tenants in 138 s, 8 in 68 s on the same 2-core machine). */
#define DEFAULT_WORKERS 8
#define MAX_WORKERS 32
#define MAX_INFORMERS 12
#define DEFAULT_SLICE_POLICY "tenantgate-resourceslice-policy"

typedef struct informer_ref {
    tg_informer *inf;
    const char *kind;             /* queue key prefix */
    struct signer_main *m;
} informer_ref;

typedef struct signer_main {
    tg_signer s;
    uv_loop_t *loop;
    tg_kube_client *client;
    tg_api_relay *relay;          /* the workers' calls, on client's connection */
    int workers_alive;            /* atomic */
    informer_ref infs[MAX_INFORMERS];
    int ninfs;
    uv_timer_t sync_timer;
    uv_timer_t trim_timer;
    uv_signal_t sigterm, sigint;
    pthread_t workers[MAX_WORKERS];
    long nworkers;
    int workers_started;
    int leader_elect;
    tg_leader *leader;
    tg_metrics *metrics;
    tg_metric_family *m_queue, *m_in_flight, *m_leader, *m_cache, *m_informer_failures, *m_heap;
    tg_probe_server *probe;
    tg_repl_watch *repl;          /* the replicator's Secrets, local objects and remote copies */
    int synced;
} signer_main;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenantgate-signer [--cluster-id ID] [options]\n"
            "\n"
            "CSR approval and signing, Tenant status, nonces, keys and Identity kubeconfigs.\n"
            "\n"
            "  --cluster-id ID            this cluster's id (default: CLUSTER_ID of the ConfigMap labelled\n"
            "                             app.kubernetes.io/name=clusterid-configmap in --namespace, as Liqo)\n"
            "  --kubeconfig FILE          API access (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
            "  --context NAME             kubeconfig context\n"
            "  --namespace NS             install namespace (default liqo)\n"
            "  --controllers LIST         comma list of keys,nonce,tenant,approver,signer,identity,noncesigner,\n"
            "                             resourceslice,renew,remoterenew,remoteresourceslice,replicator\n"
            "                             (default all)\n"
            "  --api-server-url URL       status.authParams.apiServer (default: the kubeconfig's server)\n"
            "  --ca-file FILE             status.authParams.ca (default: the kubeconfig's CA)\n"
            "  --csr-expiration-seconds N expirationSeconds of CSRs (default 604800; 0: none; min 600)\n"
            "  --signer-name NAME         kubernetes.io/kube-apiserver-client (default) | tenantgate.io/identity\n"
            "  --ca-cert FILE --ca-key FILE  own-signer CA (with --signer-name tenantgate.io/identity)\n"
            "  --max-cert-lifetime SECONDS   own-signer clamp (default 604800; min 90)\n"
"  --leader-elect             act only while holding the Lease (15 s lease, 10 s renew deadline,\n"
            "                             2 s retry); a leader that loses it exits (status 3)\n"
            "  --leader-elect-lease-name NAME  (default tenantgate-signer)\n"
            "  --leader-elect-namespace NS     (default: --namespace)\n"
            "  --allow-no-handshake       accept TolerateNoHandshake Tenants (as the webhook's switch)\n"
            "  --slice-policy-configmap NS/NAME  ResourceSlice class policy (default\n"
            "                             <namespace>/" DEFAULT_SLICE_POLICY "; \"off\": none)\n"
            "  --cluster-labels K=V,...   labels offered to consumers' virtual nodes (a slice's\n"
            "                             status.nodeLabels, as Liqo's flag of that name)\n"
"  --metrics-listen ADDR:PORT plain HTTP /healthz /readyz /metrics (default 0.0.0.0:8080; \"off\")\n"
            "  --workers N                reconcile threads, 1-32 (default 8)\n"
            "  --log-level LEVEL          debug, info, warn, error (default info)\n"
            "  -h, --help\n");
}

/* No --cluster-id: the id Liqo keeps (kube/clusterid.h), read once before
 * the loop runs anything else. NULL after logging why; the flag wins. */
static const char *discover_cluster_id(signer_main *m, char id[TG_CLUSTERID_MAX + 1])
{
    char why[512];
    long status = -1;
    tg_cluster_id_result r = tg_cluster_id_discover(m->client, m->s.namespace_, id, &status, why, sizeof(why));

    if (r == TG_CLUSTER_ID_FOUND) {
        tg_log(TG_LOG_INFO, "cluster id read from the clusterid ConfigMap", TG_LOG_STR("cluster_id", id),
               TG_LOG_STR("namespace", m->s.namespace_));
        return id;
    }
    tg_log(TG_LOG_ERROR, "no cluster id: give --cluster-id, or create the clusterid ConfigMap "
                         "(kubectl tenantgate install --cluster-id ID)",
           TG_LOG_STR("namespace", m->s.namespace_), TG_LOG_STR("error", why), TG_LOG_INT("status", status));
    return NULL;
}

/* The name the API server gives our CSRs' spec.username (kube/whoami.h),
 * asked before the loop runs anything else. An API server without
 * SelfSubjectReview (before 1.28) or one that forbids it leaves the name
 * unknown: every CSR counts then, as before, and the log says so. No answer
 * at all fails the start, as the cluster id lookup does. */
static int learn_own_name(signer_main *m, char user[TG_WHOAMI_MAX + 1])
{
    char why[512];
    long status = tg_whoami(m->client, user, why, sizeof(why));

    if (status == 200 || status == 201) {
        m->s.self_user = user;
        tg_log(TG_LOG_INFO, "own user name read; only CSRs made by it count", TG_LOG_STR("user", user));
        return 0;
    }
    if (status == 403 || status == 404) {
        tg_log(TG_LOG_WARN, "own user name unknown: CSRs with our labels made by other users are not told apart",
               TG_LOG_STR("error", why));
        return 0;
    }
    tg_log(TG_LOG_ERROR, "cannot learn the own user name", TG_LOG_STR("error", why), TG_LOG_INT("status", status));
    return 1;
}

static int parse_controllers(const char *arg, unsigned *out)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"keys", TG_CTL_KEYS}, {"nonce", TG_CTL_NONCE}, {"tenant", TG_CTL_TENANT}, {"approver", TG_CTL_APPROVER},
        {"signer", TG_CTL_SIGNER}, {"identity", TG_CTL_IDENTITY}, {"noncesigner", TG_CTL_NONCESIGNER},
        {"resourceslice", TG_CTL_RESOURCESLICE}, {"renew", TG_CTL_RENEW}, {"remoterenew", TG_CTL_REMOTE_RENEW},
        {"remoteresourceslice", TG_CTL_REMOTE_SLICE},
        {"replicator", TG_CTL_REPLICATOR},
    };
    char buf[256], *tok, *save = NULL;
    size_t i;

    if (strlen(arg) >= sizeof(buf))
        return -1;
    strcpy(buf, arg);
    *out = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strcmp(tok, names[i].name) == 0)
                break;
        if (i == sizeof(names) / sizeof(names[0]))
            return -1;
        *out |= names[i].bit;
    }
    return *out ? 0 : -1;
}

/* ---------- informer handlers: objects -> queue keys ---------- */

static void on_slice_of_tenant(json_object *sl, void *data)
{
    signer_main *m = data;
    const char *ns = tg_json_path_string(sl, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(sl, "metadata", "name", NULL);
    char key[TG_WQ_KEY_MAX];

    if (ns && name) {
        snprintf(key, sizeof(key), "remoteslice/%s/%s", ns, name);
        tg_wq_add(m->s.q, key, tg_wq_now_ms());
    }
}

static void enqueue(informer_ref *r, json_object *o, int deleted)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    char key[TG_WQ_KEY_MAX];
    int is_csr = strcmp(r->kind, "csr") == 0, is_identity = strcmp(r->kind, "identity") == 0;
    int issued = is_csr && tg_json_path_string(o, "status", "certificate", NULL) != NULL;
    int denied = is_csr && !issued && rc_csr_decided(o) < 0;
    int foreign = is_csr && !tg_csr_made_by(o, r->m->s.self_user);   /* wakes no Tenant or slice */

    if (!name)
        return;
    /* A kubeconfig-<identity> Secret deleted: its Identity writes it again (consumer_identity.c). */
    if (strcmp(r->kind, "idsecret") == 0) {
        if (deleted && ns && strncmp(name, "kubeconfig-", 11) == 0 && name[11]) {
            snprintf(key, sizeof(key), "identity/%s/%s", ns, name + 11);
            tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
        }
        return;
    }
    snprintf(key, sizeof(key), "%s/%s/%s", r->kind, ns ? ns : "", name);
    /* An issued CSR leaves the approver and the own signer nothing to do. */
    if (!issued && !(is_csr && deleted) && !(is_identity && !(r->m->s.controllers & TG_CTL_IDENTITY)) &&
        !(strcmp(r->kind, "tenant") == 0 && !(r->m->s.controllers & TG_CTL_TENANT)))
        tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
    /* Any Tenant event wakes its consumer's replicated slices (Liqo's RRS). */
    if (strcmp(r->kind, "tenant") == 0 && r->m->s.slice_cache) {
        const char *cid = tg_json_path_string(o, "spec", "clusterID", NULL);
        if (!cid)
            cid = tg_json_path_string(o, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
        if (cid)
            tg_cache_get_by_index(r->m->s.slice_cache, cid, on_slice_of_tenant, r->m);
    }
    /* A slice's CSR issued or denied: wake that slice. */
    if (is_csr && !foreign && (issued || denied) && (r->m->s.controllers & TG_CTL_REMOTE_SLICE)) {
        const char *ref = tg_json_path_string(o, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
        if (ref && strlen(ref) < TG_WQ_KEY_MAX - 16) {
            snprintf(key, sizeof(key), "remoteslice/%s", ref);
            tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
        }
    }
    if (is_identity && (r->m->s.controllers & TG_CTL_RENEW)) {
        snprintf(key, sizeof(key), "renew/%s/%s", ns ? ns : "", name);
        tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
    }
    /* A Tenant's new certificate answers its consumer's Renew, named after the
     * ControlPlane Identity: controlplane-<this cluster>. */
    if (strcmp(r->kind, "tenant") == 0 && (r->m->s.controllers & TG_CTL_REMOTE_RENEW) && ns) {
        snprintf(key, sizeof(key), "remoterenew/%s/controlplane-%s", ns, r->m->s.cluster_id);
        tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
    }
    /* A CSR matters to its Tenant once it carries the certificate, is
     * denied (the Tenant needs a fresh one) or is gone: wake the Tenant then,
     * not on every approval step. */
    if (is_csr && !foreign && (issued || denied || deleted) && (r->m->s.controllers & TG_CTL_TENANT)) {
        const char *cid = tg_json_path_string(o, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
        const char *tns = tg_json_path_string(o, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);
        if (cid && tns) {
            snprintf(key, sizeof(key), "tenant/%s/%s", tns, cid);
            if (deleted)   /* what the Tenant was settled on is gone */
                tg_settled_forget(r->m->s.settled, key);
            tg_wq_add(r->m->s.q, key, tg_wq_now_ms());
        }
    }
}

/* A CSR with our labels that we did not make: the approver still decides
 * it (it matches an admitted object or is denied), but no Tenant or slice
 * counts it. Said once, when the informer first sees it. */
static void note_foreign_csr(informer_ref *r, json_object *o)
{
    const char *by = tg_json_path_string(o, "spec", "username", NULL);

    if (strcmp(r->kind, "csr") != 0 || !(r->m->s.controllers & (TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) ||
        tg_csr_made_by(o, r->m->s.self_user))
        return;
    tg_log(TG_LOG_WARN, "csr with the signer's labels made by another user: ignored by the Tenant and "
                        "ResourceSlice controllers",
           TG_LOG_STR("csr", tg_json_path_string(o, "metadata", "name", NULL)), TG_LOG_STR("username", by ? by : ""),
           TG_LOG_STR("expected", r->m->s.self_user));
    if (r->m->s.m_foreign_csrs)
        tg_counter_add(tg_metric_series_get(r->m->s.m_foreign_csrs, NULL), 1);
}

static void on_add(json_object *o, void *data)
{
    note_foreign_csr(data, o);
    enqueue(data, o, 0);
}
static void on_update(json_object *old_obj, json_object *o, void *data) { enqueue(data, o, 0); }
static void on_delete(json_object *o, void *data) { enqueue(data, o, 1); }

/* What the reconcilers read from each cache besides metadata (the handlers
 * need only metadata): the rest of each object is dropped on store, which
 * keeps the signer's memory flat in the number of Tenants. */
static const char *const keep_nothing[] = {NULL};
static const char *const keep_nonce[] = {"data.nonce", NULL};
/* The CSRs' annotations: a slice's CSR names its slice there (the handler
 * wakes the slice, remoteresourceslice finds its CSRs); the signer's CSRs
 * carry no other annotation. spec.username: who made it (tg_csr_made_by). */
static const char *const keep_csr[] = {"metadata.annotations", "spec.username", "status.certificate",
                                       "status.conditions", NULL};
/* remoteresourceslice sums the consumer's other slices from this cache
 * (maxPerTenant): class, grant, and whether Resources is Accepted (of the
 * conditions only type and status: their messages would double the size). */
static const char *const keep_remoteslice[] = {"spec.class", "status.resources", "status.conditions.type",
                                               "status.conditions.status", NULL};

static int add_informer(signer_main *m, const char *kind, const char *path, const char *selector,
                        const char *index_label, char *err, size_t err_len)
{
    informer_ref *r = &m->infs[m->ninfs];
    tg_informer_opts o = {.path = path, .label_selector = selector, .index_label = index_label};

    /* The nonce Secrets are found by label, which anyone who may create a
     * Secret can set: by name too, so that labelled Secrets of other names,
     * however many and big, are never listed (tenant_scope.h judges the rest). */
    o.field_selector = strcmp(kind, "nonce") == 0         ? "metadata.name=" TG_NONCE_SECRET
                       : strcmp(kind, "signednonce") == 0 ? "metadata.name=" TG_SIGNED_NONCE_SECRET
                                                          : NULL;
    o.keep_fields = strcmp(kind, "nonce") == 0         ? keep_nonce
                    : strcmp(kind, "csr") == 0         ? keep_csr
                    : strcmp(kind, "remoteslice") == 0 ? keep_remoteslice
                                                       : keep_nothing;
    /* One object per Tenant in each cache, read a few times per reconcile:
     * compact text (~0.5-2 KB) instead of json-c trees (~4-6 KB each). */
    o.compact = 1;

    r->kind = kind;
    r->m = m;
    o.handlers = (tg_cache_handlers){.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .data = r};
    if (!(r->inf = tg_informer_new(m->client, &o, err, err_len)))
        return -1;
    m->ninfs++;
    return tg_informer_start(r->inf, err, err_len);
}

/* ---------- workers ---------- */

static void *worker_main(void *arg)
{
    signer_main *m = arg;
    char key[TG_WQ_KEY_MAX];
    tg_api *api = tg_api_new_relayed(m->relay);

    if (!api) {
        tg_log(TG_LOG_ERROR, "worker cannot create its API client", TG_LOG_STR("error", "out of memory"));
        goto out;
    }
    while (tg_wq_get_wait(m->s.q, key)) {
        long r = tg_signer_reconcile(&m->s, api, key);
        uint64_t now = tg_wq_now_ms();
        char controller[32];
        size_t n = strcspn(key, "/");

        snprintf(controller, sizeof(controller), "%.*s", (int)(n < sizeof(controller) ? n : sizeof(controller) - 1), key);
        tg_counter_add(tg_metric_series_get(m->s.m_reconciles, (const char *[]){controller,
                           r == TG_RECONCILE_RETRY ? "error" : r > 0 ? "requeue" : "ok"}), 1);
        if (r == TG_RECONCILE_RETRY) {
            uint64_t d = tg_wq_add_rate_limited(m->s.q, key, now);
            tg_log(TG_LOG_DEBUG, "requeued with backoff", TG_LOG_STR("key", key), TG_LOG_INT("delay_ms", d));
        } else {
            tg_wq_forget(m->s.q, key);
            if (r > 0)
                tg_wq_add_after(m->s.q, key, (uint64_t)r, now);
        }
        tg_wq_done(m->s.q, key, tg_wq_now_ms());
    }
    tg_api_free(api);
out:
    __atomic_sub_fetch(&m->workers_alive, 1, __ATOMIC_SEQ_CST);
    tg_api_relay_nudge(m->relay);   /* the main loop waits for the last one */
    return NULL;
}

static void on_sync_check(uv_timer_t *t)
{
    signer_main *m = t->data;
    int i;

    for (i = 0; i < m->ninfs; i++)
        if (!tg_informer_synced(m->infs[i].inf))
            return;
    if (m->repl && !tg_repl_watch_synced(m->repl))
        return;
    m->synced = 1;
    if (m->leader_elect && !__atomic_load_n(&m->s.is_leader, __ATOMIC_SEQ_CST))
        return;
    uv_timer_stop(t);
    if (m->s.controllers & TG_CTL_KEYS) {
        char key[TG_WQ_KEY_MAX];
        snprintf(key, sizeof(key), "keys/%s/%s", m->s.namespace_, TG_KEYS_SECRET);
        tg_wq_add(m->s.q, key, tg_wq_now_ms());
    }
    m->s.is_leader = 1;
    for (i = 0; i < m->nworkers; i++) {
        __atomic_add_fetch(&m->workers_alive, 1, __ATOMIC_SEQ_CST);
        if (pthread_create(&m->workers[i], NULL, worker_main, m) == 0)
            m->workers_started++;
        else
            __atomic_sub_fetch(&m->workers_alive, 1, __ATOMIC_SEQ_CST);
    }
    tg_log(TG_LOG_INFO, "informers synced, workers started", TG_LOG_INT("workers", m->workers_started),
           TG_LOG_INT("queued", (int64_t)tg_wq_len(m->s.q)));
}

/* Reconciles free their parse trees in whatever order their API calls
 * finish, so free pages end up scattered through the heap; glibc gives them
 * back only at its top. malloc_trim returns every free page, and costs well
 * under a millisecond for this heap. */
static void on_trim(uv_timer_t *t)
{
    (void)t;
    malloc_trim(0);
}

static void on_signal(uv_signal_t *h, int signum)
{
    signer_main *m = h->data;

    tg_log(TG_LOG_INFO, "stopping", TG_LOG_INT("signal", signum));
    tg_wq_shutdown(m->s.q);
    uv_signal_stop(&m->sigterm);
    uv_signal_stop(&m->sigint);
    uv_timer_stop(&m->sync_timer);
    uv_timer_stop(&m->trim_timer);
    /* The workers read the informers' caches: free those (close_handles)
     * only once the workers have stopped. Leave uv_run now. */
    uv_stop(m->loop);
}

/* After the workers stopped: informers, client, signals and probe go. */
static void close_handles(signer_main *m)
{
    int i;

    for (i = 0; i < m->ninfs; i++)
        tg_informer_free(m->infs[i].inf);
    m->ninfs = 0;
    tg_repl_watch_free(m->repl);
    m->repl = NULL;
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    uv_close((uv_handle_t *)&m->sync_timer, NULL);
    uv_close((uv_handle_t *)&m->trim_timer, NULL);
    tg_api_relay_close(m->relay);
    m->relay = NULL;
    tg_kube_client_free(m->client);
    m->client = NULL;
    if (m->probe)
        tg_probe_server_close(m->probe);
}

static const char *not_ready(void *data)
{
    signer_main *m = data;

    return m->synced ? NULL : "informers not synced";
}

static void before_metrics(void *data)
{
    signer_main *m = data;
    int i;

    tg_gauge_set(tg_metric_series_get(m->m_queue, NULL), (double)tg_wq_len(m->s.q));
    tg_gauge_set(tg_metric_series_get(m->m_in_flight, NULL), (double)tg_wq_in_flight(m->s.q));
    tg_gauge_set(tg_metric_series_get(m->m_leader, NULL), __atomic_load_n(&m->s.is_leader, __ATOMIC_SEQ_CST) ? 1 : 0);
    for (i = 0; i < m->ninfs; i++) {
        tg_gauge_set(tg_metric_series_get(m->m_cache, (const char *[]){m->infs[i].kind}),
                     (double)tg_informer_count(m->infs[i].inf));
        tg_counter_raise(tg_metric_series_get(m->m_informer_failures, (const char *[]){m->infs[i].kind}),
                         (double)tg_informer_stats_get(m->infs[i].inf)->failures);
    }
    {
        struct mallinfo2 mi = mallinfo2();
        tg_gauge_set(tg_metric_series_get(m->m_heap, (const char *[]){"in_use"}), (double)(mi.uordblks + mi.hblkhd));
        tg_gauge_set(tg_metric_series_get(m->m_heap, (const char *[]){"free"}), (double)mi.fordblks);
    }
}

static void register_metrics(signer_main *m)
{
    static const double issue_bounds[] = {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300};
    tg_metrics *r = m->metrics;

    m->s.m_reconciles = tg_metrics_counter(r, "tenantgate_signer_reconciles_total",
                                           "Reconciles by controller and result (ok, requeue, error).", 2,
                                           (const char *[]){"controller", "result"});
    m->s.m_settled_skips = tg_metrics_counter(r, "tenantgate_signer_settled_skips_total",
                                              "Reconciles skipped: the informers showed the object as our own "
                                              "last write left it.", 1, (const char *[]){"controller"});
    m->s.m_decisions = tg_metrics_counter(r, "tenantgate_signer_csr_decisions_total",
                                          "CSR approvals and denials by reason.", 2,
                                          (const char *[]){"decision", "reason"});
    m->s.m_tenant_verdicts = tg_metrics_counter(r, "tenantgate_signer_tenant_verdicts_total",
                                                "Tenant checks by the tenant controller: accepted, or refused "
                                                "with the reason code.", 2, (const char *[]){"verdict", "reason"});
    m->s.m_issue_seconds = tg_metrics_histogram(r, "tenantgate_signer_tenant_issue_seconds",
                                                "Seconds from Tenant creation to its certificate in status.", 0,
                                                NULL, sizeof(issue_bounds) / sizeof(issue_bounds[0]),
                                                issue_bounds);
    m->s.m_cert_expiry = tg_metrics_gauge(r, "tenantgate_signer_certificate_expiry_timestamp_seconds",
                                          "NotAfter of the certificate in each Tenant's status.", 1,
                                          (const char *[]){"cluster_id"});
    m->s.m_slice_verdicts = tg_metrics_counter(r, "tenantgate_signer_resourceslice_denials_total",
                                               "ResourceSlice conditions set to Denied by the remoteresourceslice "
                                               "controller, by condition and reason.", 3,
                                               (const char *[]){"condition", "status", "reason"});
    m->s.m_nonce_skips = tg_metrics_counter(r, "tenantgate_signer_nonce_skips_total",
                                            "Nonce and signed-nonce reconciles that left a labelled Secret "
                                            "alone: not in the tenant namespace (liqo-tenant-<id> for a nonce, "
                                            "one labelled as such for a signed nonce), or not labelled for its id "
                                            "(Secrets of other names are not even listed).",
                                            1, (const char *[]){"reason"});
    m->s.m_repl_secret_skips = tg_metrics_counter(r, "tenantgate_signer_replicator_secrets_ignored_total",
                                                  "ControlPlane kubeconfig Secrets the replicator will not use: not "
                                                  "in a liqo-tenant-<id> namespace, or not labelled for that id.",
                                                  1, (const char *[]){"reason"});
    m->s.m_foreign_csrs = tg_metrics_counter(r, "tenantgate_signer_foreign_csrs_ignored_total",
                                             "CSRs labelled as the signer's (liqo.io/remote-tenant-csr) that "
                                             "someone else made (spec.username), counted when the CSR informer "
                                             "first sees each: no Tenant or ResourceSlice counts them.", 0, NULL);
    m->s.m_replicated = tg_metrics_counter(r, "tenantgate_signer_replicated_total",
                                           "The replicator's writes by kind and action: create, update_spec "
                                           "(on the provider), pull_status (local /status), delete_remote, "
                                           "remove_finalizer.", 2, (const char *[]){"kind", "action"});
    m->m_queue = tg_metrics_gauge(r, "tenantgate_signer_queue_depth", "Keys waiting in the work queue.", 0, NULL);
    m->m_in_flight = tg_metrics_gauge(r, "tenantgate_signer_queue_in_flight", "Keys being reconciled.", 0, NULL);
    m->m_leader = tg_metrics_gauge(r, "tenantgate_signer_leader", "1 while this replica acts.", 0, NULL);
    m->m_cache = tg_metrics_gauge(r, "tenantgate_signer_cache_objects", "Objects in each informer cache.", 1,
                                  (const char *[]){"informer"});
    m->m_informer_failures = tg_metrics_counter(r, "tenantgate_signer_informer_failures_total",
                                                "Lists or watches of each informer that failed and were retried "
                                                "(the log line 'informer failed' says why).",
                                                1, (const char *[]){"informer"});
    m->m_heap = tg_metrics_gauge(r, "tenantgate_signer_heap_bytes",
                                 "malloc heap: bytes in use, and free but still held (mallinfo2).", 1,
                                 (const char *[]){"state"});
}

/* 1 when the API server serves resource plural in group path gv (discovery). */
static int served(signer_main *m, const char *gv, const char *plural)
{
    tg_kube_request_opts o = {.path = gv};
    char *body = NULL, err[256], want[96];
    size_t n = 0;
    long st = tg_kube_request_sync(m->client, &o, &body, &n, err, sizeof(err));
    json_object *doc = st == 200 ? tg_json_parse(body, n, NULL, 0) : NULL;
    json_object *res = doc ? tg_json_path(doc, "resources", NULL) : NULL;
    int found = 0;

    snprintf(want, sizeof(want), "%s", plural);
    for (size_t i = 0; res && json_object_is_type(res, json_type_array) && i < json_object_array_length(res); i++) {
        const char *name = tg_json_string(json_object_array_get_idx(res, i), "name");
        if (name && strcmp(name, want) == 0)
            found = 1;
    }
    json_object_put(doc);
    free(body);
    return found;
}

/* The replicator: ResourceSlices and Renews always; NamespaceMaps only when
 * Liqo's offloading CRD is served here (read once: install it, then restart). */
static int start_replicator(signer_main *m, char *err, size_t err_len)
{
    unsigned kinds = 0;

    for (int i = 0; i < TG_REPL_KINDS; i++)
        if (i != TG_REPL_NAMESPACEMAPS || served(m, tg_repl_kinds[i].group_path, tg_repl_kinds[i].plural))
            kinds |= 1u << i;
    tg_log(TG_LOG_INFO, "replicator: kinds", TG_LOG_BOOL("namespacemaps", (kinds >> TG_REPL_NAMESPACEMAPS) & 1));
    if (!(m->s.remote_pool = tg_remote_pool_new())) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return (m->repl = tg_repl_watch_new(m->loop, m->client, &m->s, kinds, err, err_len)) ? 0 : -1;
}

static int load_file(const char *path, char **buf, size_t *len)
{
    char err[256];

    if (tg_kube_read_file(path, 1u << 20, buf, len, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot read file", TG_LOG_STR("error", err));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_CLUSTER_ID, OPT_NAMESPACE, OPT_CONTROLLERS, OPT_API_SERVER, OPT_CA_FILE,
        OPT_CSR_EXP, OPT_SIGNER_NAME, OPT_CA_CERT, OPT_CA_KEY, OPT_MAX_LIFE, OPT_ALLOW_NH, OPT_LOG_LEVEL,
        OPT_LE, OPT_LE_NAME, OPT_LE_NS, OPT_METRICS, OPT_WORKERS, OPT_SLICE_POLICY, OPT_CLUSTER_LABELS,
    };
    static const struct option opts[] = {
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"cluster-id", required_argument, NULL, OPT_CLUSTER_ID},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"controllers", required_argument, NULL, OPT_CONTROLLERS},
        {"api-server-url", required_argument, NULL, OPT_API_SERVER},
        {"ca-file", required_argument, NULL, OPT_CA_FILE},
        {"csr-expiration-seconds", required_argument, NULL, OPT_CSR_EXP},
        {"signer-name", required_argument, NULL, OPT_SIGNER_NAME},
        {"ca-cert", required_argument, NULL, OPT_CA_CERT},
        {"ca-key", required_argument, NULL, OPT_CA_KEY},
        {"max-cert-lifetime", required_argument, NULL, OPT_MAX_LIFE},
        {"allow-no-handshake", no_argument, NULL, OPT_ALLOW_NH},
        {"leader-elect", no_argument, NULL, OPT_LE},
        {"metrics-listen", required_argument, NULL, OPT_METRICS},
        {"leader-elect-lease-name", required_argument, NULL, OPT_LE_NAME},
        {"leader-elect-namespace", required_argument, NULL, OPT_LE_NS},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"slice-policy-configmap", required_argument, NULL, OPT_SLICE_POLICY},
        {"cluster-labels", required_argument, NULL, OPT_CLUSTER_LABELS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static signer_main m;
    const char *kubeconfig = NULL, *context = NULL, *ca_file = NULL, *ca_cert = NULL, *ca_key = NULL;
    const char *api_server = NULL, *lease_name = "tenantgate-signer", *lease_ns = NULL, *slice_policy = NULL;
    char slice_policy_ns[64], label_err[256];
    const char *cluster_labels = NULL;
    long max_life = 604800;          /* 7 days: issue 36 #9 */
    char metrics_host[256] = "0.0.0.0";
    int metrics_port = 8080;
    char err[512], sel[64], discovered[TG_CLUSTERID_MAX + 1];
    static char self_user[TG_WHOAMI_MAX + 1];   /* m.s.self_user points here */
    int c, i;

    m.nworkers = DEFAULT_WORKERS;

    m.s.namespace_ = "liqo";
    m.s.controllers = TG_CTL_ALL;
    m.s.signer_name = TG_SIGNER_NAME_KUBE;
    m.s.csr_expiration_s = 604800;   /* 7 days, renewed at 2/3 (issue 36 #9) */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_KUBECONFIG: kubeconfig = optarg; break;
        case OPT_CONTEXT: context = optarg; break;
        case OPT_CLUSTER_ID: m.s.cluster_id = optarg; break;
        case OPT_NAMESPACE: m.s.namespace_ = optarg; break;
        case OPT_CONTROLLERS:
            if (parse_controllers(optarg, &m.s.controllers) != 0)
                goto bad;
            break;
        case OPT_API_SERVER: api_server = optarg; break;
        case OPT_CA_FILE: ca_file = optarg; break;
        case OPT_WORKERS:
            if (tg_flag_long(optarg, 1, MAX_WORKERS, &m.nworkers) != 0)
                goto bad;
            break;
        case OPT_CSR_EXP:
            if (tg_flag_long(optarg, 0, 10L * 365 * 86400, &m.s.csr_expiration_s) != 0 ||
                (m.s.csr_expiration_s > 0 && m.s.csr_expiration_s < 600))
                goto bad;
            break;
        case OPT_SIGNER_NAME:
            if (strcmp(optarg, TG_SIGNER_NAME_KUBE) != 0 && strcmp(optarg, TG_SIGNER_NAME_OWN) != 0)
                goto bad;
            m.s.signer_name = optarg;
            break;
        case OPT_CA_CERT: ca_cert = optarg; break;
        case OPT_CA_KEY: ca_key = optarg; break;
        case OPT_MAX_LIFE:
            /* shorter certificates would be due for renewal as soon as issued
             * (NotBefore is backdated 5 min; see renewal.h) */
            if (tg_flag_long(optarg, 90, 10L * 365 * 86400, &max_life) != 0)
                goto bad;
            break;
        case OPT_ALLOW_NH: m.s.allow_no_handshake = 1; break;
        case OPT_LE: m.leader_elect = 1; break;
        case OPT_METRICS:
            if (strcmp(optarg, "off") == 0)
                metrics_port = -1;
            else if (tg_flag_listen_addr(optarg, metrics_host, sizeof(metrics_host), &metrics_port) != 0)
                goto bad;
            break;
        case OPT_LE_NAME: lease_name = optarg; break;
        case OPT_SLICE_POLICY: {
            const char *slash = strchr(optarg, '/');
            if (strcmp(optarg, "off") != 0 &&
                (!slash || slash == optarg || (size_t)(slash - optarg) >= sizeof(slice_policy_ns) || !slash[1] ||
                 strchr(slash + 1, '/') || strlen(slash + 1) > 253))
                goto bad;
            slice_policy = optarg;
            break;
        }
        case OPT_LE_NS: lease_ns = optarg; break;
        case OPT_CLUSTER_LABELS: cluster_labels = optarg; break;
        case OPT_LOG_LEVEL:
            if (tg_log_set_level_named(optarg) != 0)
                goto bad;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || (m.s.cluster_id && !tg_cluster_id_valid(m.s.cluster_id))) {
        fprintf(stderr, "tenantgate-signer: --cluster-id must be a valid cluster id\n");
        usage(stderr);
        return 2;
    }
    if (!ca_cert != !ca_key) {
        fprintf(stderr, "tenantgate-signer: --ca-cert and --ca-key go together\n");
        return 2;
    }
    if (ca_cert && strcmp(m.s.signer_name, TG_SIGNER_NAME_OWN) != 0) {
        fprintf(stderr, "tenantgate-signer: --ca-cert needs --signer-name %s\n", TG_SIGNER_NAME_OWN);
        return 2;
    }
    if (cluster_labels && *cluster_labels &&
        !(m.s.node_labels = tg_cluster_labels_parse(cluster_labels, label_err, sizeof(label_err)))) {
        fprintf(stderr, "tenantgate-signer: --cluster-labels: %s\n", label_err);
        return 2;
    }
    if (!slice_policy) {
        m.s.slice_policy_ns = m.s.namespace_;
        m.s.slice_policy_name = DEFAULT_SLICE_POLICY;
    } else if (strcmp(slice_policy, "off") != 0) {
        snprintf(slice_policy_ns, sizeof(slice_policy_ns), "%.*s", (int)(strchr(slice_policy, '/') - slice_policy),
                 slice_policy);
        m.s.slice_policy_ns = slice_policy_ns;
        m.s.slice_policy_name = strchr(slice_policy, '/') + 1;
    }
    signal(SIGPIPE, SIG_IGN);
    /* glibc gives each worker thread its own malloc arena, and each keeps
     * the peak of its responses' parse trees: one arena bounds the RSS, and
     * the workers spend their time waiting on the API server, not on malloc. */
    mallopt(M_ARENA_MAX, 1);
    pthread_mutex_init(&m.s.key_mu, NULL);
    pthread_mutex_init(&m.s.rb_mu, NULL);
    if (!(m.s.rb_known = json_object_new_object()) || !(m.s.settled = tg_settled_new()))
        return 1;

    if (tg_kube_config_load(&m.s.cfg, kubeconfig, context, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot load the kubeconfig", TG_LOG_STR("error", err));
        return 1;
    }
    if (ca_cert) {
        char *cp = NULL, *kp = NULL;
        size_t cl = 0, kl = 0;
        int r;
        if (load_file(ca_cert, &cp, &cl) != 0 || load_file(ca_key, &kp, &kl) != 0)
            return 1;
        r = tg_ca_load(&m.s.own_ca, cp, cl, kp, kl, max_life);
        OPENSSL_cleanse(kp, kl);
        free(kp);
        free(cp);
        if (r != 0) {
            tg_log(TG_LOG_ERROR, "cannot load the own-signer CA", TG_LOG_STR("file", ca_cert));
            return 1;
        }
    }
    m.s.api_server = strdup(api_server ? api_server : m.s.cfg.server);
    if (ca_file) {
        if (load_file(ca_file, &m.s.ca_pem, &m.s.ca_len) != 0)
            return 1;
    } else if (m.s.cfg.ca) {
        m.s.ca_pem = malloc(m.s.cfg.ca_len + 1);
        memcpy(m.s.ca_pem, m.s.cfg.ca, m.s.cfg.ca_len);
        m.s.ca_pem[m.s.cfg.ca_len] = '\0';
        m.s.ca_len = m.s.cfg.ca_len;
    }
    if (!(m.s.q = tg_wq_new(NULL)) || !(m.metrics = tg_metrics_new()))
        return 1;
    register_metrics(&m);

    m.loop = uv_default_loop();
    if (!(m.client = tg_kube_client_new(m.loop, &m.s.cfg, err, sizeof(err))) ||
        !(m.relay = tg_api_relay_new(m.loop, m.client))) {
        tg_log(TG_LOG_ERROR, "cannot set up the Kubernetes client", TG_LOG_STR("error", m.client ? "out of memory" : err));
        return 1;
    }
    if (!m.s.cluster_id && !(m.s.cluster_id = discover_cluster_id(&m, discovered)))
        return 1;
    if ((m.s.controllers & (TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) && learn_own_name(&m, self_user) != 0)
        return 1;
    if (((m.s.controllers & TG_CTL_NONCE) &&
         (add_informer(&m, "nonce", "/api/v1/secrets", "liqo.io/nonce=true", NULL, err, sizeof(err)) != 0 ||
          !(m.s.nonce_cache = tg_informer_cache(m.infs[m.ninfs - 1].inf)))) ||
        ((m.s.controllers & TG_CTL_REMOTE_SLICE) &&
         (add_informer(&m, "remoteslice", "/apis/authentication.liqo.io/v1beta1/resourceslices",
                       "liqo.io/replicated=true,liqo.io/originID", "liqo.io/originID", err, sizeof(err)) != 0 ||
          !(m.s.slice_cache = tg_informer_cache(m.infs[m.ninfs - 1].inf)))) ||
        ((m.s.controllers & (TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) &&
         (add_informer(&m, "tenant", "/apis/authentication.liqo.io/v1beta1/tenants", NULL, NULL, err, sizeof(err)) != 0 ||
          !(m.s.tenant_cache = tg_informer_cache(m.infs[m.ninfs - 1].inf)))) ||
        ((m.s.controllers & (TG_CTL_APPROVER | TG_CTL_SIGNER | TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) &&
         (add_informer(&m, "csr", "/apis/certificates.k8s.io/v1/certificatesigningrequests",
                       (snprintf(sel, sizeof(sel), TG_LABEL_TENANT_CSR "=true"), sel), TG_LABEL_REMOTE_CLUSTER_ID, err,
                       sizeof(err)) != 0 ||
          !(m.s.csr_cache = tg_informer_cache(m.infs[m.ninfs - 1].inf)))) ||
        ((m.s.controllers & TG_CTL_NONCESIGNER) &&
         add_informer(&m, "signednonce", "/api/v1/secrets", "liqo.io/signed-nonce=true", NULL, err, sizeof(err)) != 0) ||
        ((m.s.controllers & (TG_CTL_IDENTITY | TG_CTL_RENEW)) &&
         add_informer(&m, "identity", "/apis/authentication.liqo.io/v1beta1/identities", NULL, NULL, err, sizeof(err)) != 0) ||
        ((m.s.controllers & TG_CTL_IDENTITY) &&
         add_informer(&m, "idsecret", "/api/v1/secrets", TG_LABEL_IDENTITY_TYPE, NULL, err, sizeof(err)) != 0) ||
        ((m.s.controllers & TG_CTL_RESOURCESLICE) &&
         add_informer(&m, "rslice", "/apis/authentication.liqo.io/v1beta1/resourceslices",
                      "liqo.io/replication=true,liqo.io/remoteID", NULL, err, sizeof(err)) != 0) ||
        /* A Renew is named after its Identity: the Identity informer wakes it too (enqueue). */
        ((m.s.controllers & TG_CTL_RENEW) &&
         add_informer(&m, "renew", "/apis/authentication.liqo.io/v1beta1/renews", "liqo.io/replication=true", NULL,
                      err, sizeof(err)) != 0) ||
        /* The Tenant informer wakes a consumer's Renew too (enqueue). */
        ((m.s.controllers & TG_CTL_REMOTE_RENEW) &&
         (add_informer(&m, "remoterenew", "/apis/authentication.liqo.io/v1beta1/renews",
                       "liqo.io/replicated=true,liqo.io/originID", NULL, err, sizeof(err)) != 0 ||
          !(m.s.renew_cache = tg_informer_cache(m.infs[m.ninfs - 1].inf))))) {
        tg_log(TG_LOG_ERROR, "cannot start an informer", TG_LOG_STR("error", err));
        return 1;
    }
    if ((m.s.controllers & TG_CTL_REPLICATOR) && start_replicator(&m, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot start the replicator", TG_LOG_STR("error", err));
        return 1;
    }
    if (metrics_port >= 0) {
        tg_probe_config pc = {.host = metrics_host, .port = metrics_port, .metrics = m.metrics,
                              .not_ready = not_ready, .before_metrics = before_metrics, .data = &m};
        if (!(m.probe = tg_probe_server_new(m.loop, &pc, err, sizeof(err)))) {
            tg_log(TG_LOG_ERROR, "cannot serve probes", TG_LOG_STR("error", err));
            return 1;
        }
    }
    if (m.leader_elect &&
        !(m.leader = tg_leader_start(&m.s, lease_ns ? lease_ns : m.s.namespace_, lease_name, err, sizeof(err)))) {
        tg_log(TG_LOG_ERROR, "cannot start leader election", TG_LOG_STR("error", err));
        return 1;
    }
    uv_timer_init(m.loop, &m.sync_timer);
    m.sync_timer.data = &m;
    uv_timer_start(&m.sync_timer, on_sync_check, 0, 100);
    uv_timer_init(m.loop, &m.trim_timer);
    uv_timer_start(&m.trim_timer, on_trim, 2000, 2000);
    uv_signal_init(m.loop, &m.sigterm);
    uv_signal_init(m.loop, &m.sigint);
    m.sigterm.data = m.sigint.data = &m;
    uv_signal_start(&m.sigterm, on_signal, SIGTERM);
    uv_signal_start(&m.sigint, on_signal, SIGINT);
    tg_log(TG_LOG_INFO, "signer starting", TG_LOG_STR("cluster_id", m.s.cluster_id),
           TG_LOG_STR("namespace", m.s.namespace_), TG_LOG_STR("signer_name", m.s.signer_name),
           TG_LOG_INT("controllers", m.s.controllers), TG_LOG_BOOL("own_signer", m.s.own_ca.cert != NULL),
           TG_LOG_INT("metrics_port", m.probe ? tg_probe_server_port(m.probe) : -1));
    uv_run(m.loop, UV_RUN_DEFAULT);
    /* The workers finish the reconcile in hand, whose calls this loop
     * carries out: keep it turning until the last one has left. */
    while (__atomic_load_n(&m.workers_alive, __ATOMIC_SEQ_CST) > 0 || tg_api_relay_busy(m.relay))
        uv_run(m.loop, UV_RUN_ONCE);
    for (i = 0; i < m.workers_started; i++)
        pthread_join(m.workers[i], NULL);
    m.s.csr_cache = m.s.nonce_cache = m.s.slice_cache = NULL;
    close_handles(&m);
    tg_leader_stop(m.leader);   /* after the workers: release only once nothing acts */
    uv_run(m.loop, UV_RUN_NOWAIT);           /* finish the probe connections' closes */
    if (tg_probe_server_free(m.probe) != 0)
        return 0;   /* a scraper keeps a connection open: just exit */
    uv_run(m.loop, UV_RUN_DEFAULT);          /* informers, client and h2o handles close */
    uv_loop_close(m.loop);
    tg_wq_free(m.s.q);
    tg_metrics_free(m.metrics);
    EVP_PKEY_free(m.s.cluster_key);
    tg_ca_clear(&m.s.own_ca);
    free(m.s.api_server);
    free(m.s.ca_pem);
    tg_kube_config_free(&m.s.cfg);
    json_object_put(m.s.rb_known);
    tg_settled_free(m.s.settled);
    tg_remote_pool_free(m.s.remote_pool);
    json_object_put(m.s.node_labels);
    return 0;
bad:
    fprintf(stderr, "tenantgate-signer: bad value for an option: %s\n", optarg);
    usage(stderr);
    return 2;
}
