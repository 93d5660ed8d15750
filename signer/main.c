/* main.c - tenantgate-signer: informers on the main loop, workers.
 *
 * The informers (list+watch) run on the main libuv loop and only turn events
 * into queue keys, through the controllers' descriptors (controller.h,
 * events.h). Reconcilers run on worker threads, each with its own API client,
 * once every informer has synced: every cached object is then replayed
 * through the handlers, so a restart resumes from the cluster's state. Flags
 * and configuration: config.c. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "common/log.h"
#include "common/metrics.h"
#include "common/probe_server.h"
#include "kube/clusterid.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/whoami.h"
#include "signer/binding_index.h"
#include "signer/cert_facts.h"
#include "signer/config.h"
#include "signer/controller.h"
#include "signer/events.h"
#include "signer/leader.h"
#include "signer/reconcile_common.h"
#include "signer/remote_pool.h"
#include "signer/replica_plan.h"
#include "signer/replicator_watch.h"
#include "signer/signer.h"

typedef struct signer_main {
    tg_signer signer;
    tg_signer_flags flags;
    uv_loop_t *loop;
    tg_kube_client *client;
    tg_api_relay *relay;          /* the workers' calls, on client's connection */
    int workers_alive;            /* atomic */
    tg_informer *informers[TG_INF_COUNT];   /* NULL: not wanted by any enabled controller */
    tg_events *events;            /* the informers' one handler */
    uv_timer_t sync_timer;
    uv_timer_t trim_timer;
    uv_signal_t sigterm, sigint;
    pthread_t workers[TG_SIGNER_MAX_WORKERS];
    int workers_started;
    tg_leader *leader;
    tg_metrics *metrics;
    tg_metric_family *m_queue, *m_in_flight, *m_leader, *m_cache, *m_informer_failures, *m_heap, *m_out_of_scope;
    tg_probe_server *probe;
    tg_repl_watch *repl;          /* the replicator's Secrets, local objects and remote copies */
    int synced;
} signer_main;

/* No --cluster-id: the id Liqo keeps (kube/clusterid.h), read once before
 * the loop runs anything else. NULL after logging why; the flag wins. */
static const char *discover_cluster_id(signer_main *m, char id[TG_CLUSTERID_MAX + 1])
{
    char why[512];
    long status = -1;
    tg_cluster_id_result r = tg_cluster_id_discover(m->client, m->signer.namespace_, id, &status, why, sizeof(why));

    if (r == TG_CLUSTER_ID_FOUND) {
        tg_log(TG_LOG_INFO, "cluster id read from the clusterid ConfigMap", TG_LOG_STR("cluster_id", id),
               TG_LOG_STR("namespace", m->signer.namespace_));
        return id;
    }
    tg_log(TG_LOG_ERROR, "no cluster id: give --cluster-id, or create the clusterid ConfigMap "
                         "(kubectl tenantgate install --cluster-id ID)",
           TG_LOG_STR("namespace", m->signer.namespace_), TG_LOG_STR("error", why), TG_LOG_INT("status", status));
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
        m->signer.self_user = user;
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
    while (tg_wq_get_wait(m->signer.q, key)) {
        long r = tg_signer_reconcile(&m->signer, api, key);
        uint64_t now = tg_wq_now_ms();
        char controller[32];
        size_t n = strcspn(key, "/");

        snprintf(controller, sizeof(controller), "%.*s", (int)(n < sizeof(controller) ? n : sizeof(controller) - 1), key);
        tg_counter_add(tg_metric_series_get(m->signer.m_reconciles, (const char *[]){controller,
                           r == TG_RECONCILE_RETRY ? "error" : r > 0 ? "requeue" : "ok"}), 1);
        if (r == TG_RECONCILE_RETRY) {
            uint64_t d = tg_wq_add_rate_limited(m->signer.q, key, now);
            tg_log(TG_LOG_DEBUG, "requeued with backoff", TG_LOG_STR("key", key), TG_LOG_INT("delay_ms", d));
        } else {
            tg_wq_forget(m->signer.q, key);
            if (r > 0)
                tg_wq_add_after(m->signer.q, key, (uint64_t)r, now);
        }
        tg_wq_done(m->signer.q, key, tg_wq_now_ms());
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

    for (i = 0; i < TG_INF_COUNT; i++)
        if (m->informers[i] && !tg_informer_synced(m->informers[i]))
            return;
    if (m->repl && !tg_repl_watch_synced(m->repl))
        return;
    m->synced = 1;
    if (m->flags.leader_elect && !__atomic_load_n(&m->signer.is_leader, __ATOMIC_SEQ_CST))
        return;
    uv_timer_stop(t);
    tg_events_replay(m->events);
    m->signer.is_leader = 1;
    for (i = 0; i < m->flags.workers; i++) {
        __atomic_add_fetch(&m->workers_alive, 1, __ATOMIC_SEQ_CST);
        if (pthread_create(&m->workers[i], NULL, worker_main, m) == 0)
            m->workers_started++;
        else
            __atomic_sub_fetch(&m->workers_alive, 1, __ATOMIC_SEQ_CST);
    }
    tg_log(TG_LOG_INFO, "informers synced, workers started", TG_LOG_INT("workers", m->workers_started),
           TG_LOG_INT("queued", (int64_t)tg_wq_len(m->signer.q)));
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
    tg_wq_shutdown(m->signer.q);
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

    for (i = 0; i < TG_INF_COUNT; i++) {
        tg_informer_free(m->informers[i]);
        m->informers[i] = NULL;
    }
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

    tg_gauge_set(tg_metric_series_get(m->m_queue, NULL), (double)tg_wq_len(m->signer.q));
    tg_gauge_set(tg_metric_series_get(m->m_in_flight, NULL), (double)tg_wq_in_flight(m->signer.q));
    tg_gauge_set(tg_metric_series_get(m->m_leader, NULL), __atomic_load_n(&m->signer.is_leader, __ATOMIC_SEQ_CST) ? 1 : 0);
    for (i = 0; i < TG_INF_COUNT; i++) {
        const char *name = tg_informer_descs[i].name;
        if (!m->informers[i])
            continue;
        tg_gauge_set(tg_metric_series_get(m->m_cache, (const char *[]){name}),
                     (double)tg_informer_count(m->informers[i]));
        tg_counter_raise(tg_metric_series_get(m->m_informer_failures, (const char *[]){name}),
                         (double)tg_informer_stats_get(m->informers[i])->failures);
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

    m->signer.m_reconciles = tg_metrics_counter(r, "tenantgate_signer_reconciles_total",
                                           "Reconciles by controller and result (ok, requeue, error).", 2,
                                           (const char *[]){"controller", "result"});
    m->signer.m_settled_skips = tg_metrics_counter(r, "tenantgate_signer_settled_skips_total",
                                              "Reconciles skipped: the informers showed the object as our own "
                                              "last write left it.", 1, (const char *[]){"controller"});
    m->signer.m_decisions = tg_metrics_counter(r, "tenantgate_signer_csr_decisions_total",
                                          "CSR approvals and denials by reason.", 2,
                                          (const char *[]){"decision", "reason"});
    m->signer.m_tenant_verdicts = tg_metrics_counter(r, "tenantgate_signer_tenant_verdicts_total",
                                                "Tenant checks by the tenant controller: accepted, or refused "
                                                "with the reason code.", 2, (const char *[]){"verdict", "reason"});
    m->signer.m_issue_seconds = tg_metrics_histogram(r, "tenantgate_signer_tenant_issue_seconds",
                                                "Seconds from Tenant creation to its certificate in status.", 0,
                                                NULL, sizeof(issue_bounds) / sizeof(issue_bounds[0]),
                                                issue_bounds);
    m->signer.m_cert_expiry = tg_metrics_gauge(r, "tenantgate_signer_certificate_expiry_timestamp_seconds",
                                          "NotAfter of the certificate in each Tenant's status.", 1,
                                          (const char *[]){"cluster_id"});
    m->signer.m_slice_verdicts = tg_metrics_counter(r, "tenantgate_signer_resourceslice_denials_total",
                                               "ResourceSlice conditions set to Denied by the remoteresourceslice "
                                               "controller, by condition and reason.", 3,
                                               (const char *[]){"condition", "status", "reason"});
    m->signer.m_nonce_skips = tg_metrics_counter(r, "tenantgate_signer_nonce_skips_total",
                                            "Nonce and signed-nonce reconciles that left a labelled Secret "
                                            "alone: not in the tenant namespace (liqo-tenant-<id> for a nonce, "
                                            "one labelled as such for a signed nonce), or not labelled for its id "
                                            "(Secrets of other names are not even listed).",
                                            1, (const char *[]){"reason"});
    m->signer.m_foreign_csrs = tg_metrics_counter(r, "tenantgate_signer_foreign_csrs_ignored_total",
                                             "CSRs labelled as the signer's (liqo.io/remote-tenant-csr) that "
                                             "someone else made (spec.username), counted when the CSR informer "
                                             "first sees each: no Tenant or ResourceSlice counts them.", 0, NULL);
    m->signer.m_replicated = tg_metrics_counter(r, "tenantgate_signer_replicated_total",
                                           "The replicator's writes by kind and action: create, update_spec "
                                           "(on the provider), pull_status (local /status), delete_remote, "
                                           "remove_finalizer.", 2, (const char *[]){"kind", "action"});
    m->signer.m_renewal_overdue = tg_metrics_gauge(r, "tenantgate_signer_renewal_overdue",
                                                   "1 while the certificate in use of a consumer's Identity "
                                                   "(namespace/name) is past its renewal time plus the grace "
                                                   "(--renewal-grace-percent) without a renewed one, else 0.", 1,
                                                   (const char *[]){"identity"});
    m->signer.m_trial_failures = tg_metrics_counter(r, "tenantgate_signer_renewal_trial_failures_total",
                                                    "Renewed kubeconfigs not written because their trial "
                                                    "(a SelfSubjectReview on the provider) failed, by reason.", 1,
                                                    (const char *[]){"reason"});
    m->m_out_of_scope = tg_metrics_counter(r, "tenantgate_signer_out_of_scope_total",
                                           "Objects (and wake-up keys) dropped before any reconcile because they "
                                           "are outside the controller's scope (docs/signer.md), once per object.",
                                           1, (const char *[]){"controller"});
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
    if (!(m->signer.remote_pool = tg_remote_pool_new())) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return (m->repl = tg_repl_watch_new(m->loop, m->client, &m->signer, m->events, kinds, err, err_len)) ? 0 : -1;
}


/* The informers the enabled controllers want (informers.c), each once, with
 * the one handler (events.h); their caches go where the reconcilers read them. */
static int start_informers(signer_main *m, char *err, size_t err_len)
{
    for (int id = 0; id < TG_INF_COUNT; id++) {
        const tg_informer_desc *d = &tg_informer_descs[id];
        tg_informer_opts o = {.path = d->path, .label_selector = d->label_selector,
                              .field_selector = d->field_selector, .index_label = d->index_label,
                              .index_metadata = d->index_metadata, .keep_fields = d->keep_fields,
                              .keep_metadata = d->keep_metadata, .shrink_path = d->shrink_path,
                              .shrink = d->shrink,
                              /* one object per Tenant in each cache, read a few times per
                               * reconcile: compact text instead of json-c trees */
                              .compact = 1, .handlers = tg_events_handlers(m->events, (tg_informer_id)id)};
        tg_cache *cache;
        char path[300], field[300];

        if (!tg_events_wanted(&m->signer, (tg_informer_id)id))
            continue;
        if (id == TG_INF_SLICE_POLICY) {   /* the one ConfigMap the flag names, if any */
            if (!m->signer.slice_policy_ns || !m->signer.slice_policy_name)
                continue;
            snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", m->signer.slice_policy_ns);
            snprintf(field, sizeof(field), "metadata.name=%s", m->signer.slice_policy_name);
            o.path = path;
            o.field_selector = field;
        }
        if (!(m->informers[id] = tg_informer_new(m->client, &o, err, err_len)))
            return -1;
        cache = tg_informer_cache(m->informers[id]);
        tg_events_set_cache(m->events, (tg_informer_id)id, cache);
        if (d->cache_offset)
            *(tg_cache **)((char *)&m->signer + d->cache_offset) = cache;
        if (tg_informer_start(m->informers[id], err, err_len) != 0)
            return -1;
    }
    return 0;
}

/* State the reconcilers share, before anything runs. */
static int init_shared_state(signer_main *m)
{
    pthread_mutex_init(&m->signer.key_mu, NULL);
    if (!(m->signer.rb_known = tg_settled_new()) || !(m->signer.settled = tg_settled_new()) ||
        !(m->signer.binding_index = tg_binding_index_new()) || !(m->signer.cert_memo = tg_cert_memo_new()) ||
        !(m->signer.q = tg_wq_new(NULL)) || !(m->metrics = tg_metrics_new()) ||
        !(m->signer.trial_pool = tg_remote_pool_new()))
        return -1;
    register_metrics(m);
    return (m->events = tg_events_new(&m->signer, m->m_out_of_scope)) ? 0 : -1;
}

static int connect_api(signer_main *m)
{
    char err[512];

    m->loop = uv_default_loop();
    if (!(m->client = tg_kube_client_new(m->loop, &m->signer.cfg, err, sizeof(err))) ||
        !(m->relay = tg_api_relay_new(m->loop, m->client))) {
        tg_log(TG_LOG_ERROR, "cannot set up the Kubernetes client",
               TG_LOG_STR("error", m->client ? "out of memory" : err));
        return -1;
    }
    return 0;
}

/* Informers, the replicator, probes and leader election. 0, or -1 after logging why. */
static int start_parts(signer_main *m)
{
    char err[512];

    if (start_informers(m, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot start an informer", TG_LOG_STR("error", err));
        return -1;
    }
    if ((m->signer.controllers & tg_ctl_replicator.bit) && start_replicator(m, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot start the replicator", TG_LOG_STR("error", err));
        return -1;
    }
    if (m->flags.metrics_port >= 0) {
        tg_probe_config pc = {.host = m->flags.metrics_host, .port = m->flags.metrics_port, .metrics = m->metrics,
                              .not_ready = not_ready, .before_metrics = before_metrics, .data = m};
        if (!(m->probe = tg_probe_server_new(m->loop, &pc, err, sizeof(err)))) {
            tg_log(TG_LOG_ERROR, "cannot serve probes", TG_LOG_STR("error", err));
            return -1;
        }
    }
    if (m->flags.leader_elect &&
        !(m->leader = tg_leader_start(&m->signer, m->flags.lease_ns ? m->flags.lease_ns : m->signer.namespace_,
                                      m->flags.lease_name, err, sizeof(err)))) {
        tg_log(TG_LOG_ERROR, "cannot start leader election", TG_LOG_STR("error", err));
        return -1;
    }
    return 0;
}

static void start_timers_and_signals(signer_main *m)
{
    uv_timer_init(m->loop, &m->sync_timer);
    m->sync_timer.data = m;
    uv_timer_start(&m->sync_timer, on_sync_check, 0, 100);
    uv_timer_init(m->loop, &m->trim_timer);
    uv_timer_start(&m->trim_timer, on_trim, 2000, 2000);
    uv_signal_init(m->loop, &m->sigterm);
    uv_signal_init(m->loop, &m->sigint);
    m->sigterm.data = m->sigint.data = m;
    uv_signal_start(&m->sigterm, on_signal, SIGTERM);
    uv_signal_start(&m->sigint, on_signal, SIGINT);
}

/* After uv_run returned: the workers finish the reconcile in hand, whose
 * calls this loop carries out, then everything is released. */
static void shut_down(signer_main *m)
{
    tg_signer *s = &m->signer;

    while (__atomic_load_n(&m->workers_alive, __ATOMIC_SEQ_CST) > 0 || tg_api_relay_busy(m->relay))
        uv_run(m->loop, UV_RUN_ONCE);
    for (int i = 0; i < m->workers_started; i++)
        pthread_join(m->workers[i], NULL);
    s->ns_cache = s->csr_cache = s->nonce_cache = s->slice_cache = s->tenant_cache = s->renew_cache = NULL;
    close_handles(m);
    tg_leader_stop(m->leader);   /* after the workers: release only once nothing acts */
    uv_run(m->loop, UV_RUN_NOWAIT);          /* finish the probe connections' closes */
    if (tg_probe_server_free(m->probe) != 0)
        exit(0);   /* a scraper keeps a connection open: just exit */
    uv_run(m->loop, UV_RUN_DEFAULT);         /* informers, client and h2o handles close */
    uv_loop_close(m->loop);
    tg_events_free(m->events);
    tg_wq_free(s->q);
    tg_metrics_free(m->metrics);
    EVP_PKEY_free(s->cluster_key);
    tg_ca_clear(&s->own_ca);
    free(s->api_server);
    free(s->ca_pem);
    tg_kube_config_free(&s->cfg);
    tg_settled_free(s->rb_known);
    tg_binding_index_free(s->binding_index);
    tg_settled_free(s->settled);
    tg_cert_memo_free(s->cert_memo);
    tg_remote_pool_free(s->remote_pool);
    tg_remote_pool_free(s->trial_pool);
    json_object_put(s->node_labels);
    json_object_put(s->slice_provider.defaults);
    json_object_put(s->slice_offer.ingress_classes);
    json_object_put(s->slice_offer.load_balancer_classes);
}

int main(int argc, char **argv)
{
    static signer_main m;
    static char self_user[TG_WHOAMI_MAX + 1];   /* m.signer.self_user points here */
    static char discovered_id[TG_CLUSTERID_MAX + 1];
    int status;

    if ((status = tg_signer_flags_parse(argc, argv, &m.signer, &m.flags)) >= 0)
        return status;
    signal(SIGPIPE, SIG_IGN);
    /* glibc gives each worker thread its own malloc arena, and each keeps
     * the peak of its responses' parse trees: one arena bounds the RSS, and
     * the workers spend their time waiting on the API server, not on malloc. */
    mallopt(M_ARENA_MAX, 1);
    if (init_shared_state(&m) != 0 || tg_signer_config_load(&m.signer, &m.flags) != 0 || connect_api(&m) != 0)
        return 1;
    if (!m.signer.cluster_id && !(m.signer.cluster_id = discover_cluster_id(&m, discovered_id)))
        return 1;
    if ((m.signer.controllers & (TG_CTL_TENANT | TG_CTL_REMOTE_SLICE)) && learn_own_name(&m, self_user) != 0)
        return 1;
    if (start_parts(&m) != 0)
        return 1;
    start_timers_and_signals(&m);
    tg_log(TG_LOG_INFO, "signer starting", TG_LOG_STR("cluster_id", m.signer.cluster_id),
           TG_LOG_STR("namespace", m.signer.namespace_), TG_LOG_STR("signer_name", m.signer.signer_name),
           TG_LOG_INT("controllers", m.signer.controllers), TG_LOG_BOOL("own_signer", m.signer.own_ca.cert != NULL),
           TG_LOG_INT("metrics_port", m.probe ? tg_probe_server_port(m.probe) : -1));
    uv_run(m.loop, UV_RUN_DEFAULT);
    shut_down(&m);
    return 0;
}
