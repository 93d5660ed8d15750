/* server_priv.h - the state of tenantgate-webhook's HTTP side, shared by
 * the files of its core (server.h is the interface): server.c (life
 * cycle), server_metrics.c (the metrics port), workers.c, shutdown.c,
 * trim.c and handler_api.c, which gives the handlers (routes.c,
 * admission.c) what they may use of it. Not for use outside them. */
#ifndef TG_WEBHOOK_SERVER_PRIV_H
#define TG_WEBHOOK_SERVER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include <h2o.h>

#include "common/metrics.h"
#include "common/probe_server.h"
#include "common/certwatch.h"
#include "webhook/conns.h"
#include "webhook/log_budget.h"
#include "common/peers.h"
#include "webhook/server.h"
#include "common/tls.h"

/* Log lines a worker writes a second for reviews that do not parse. */
#define MALFORMED_LOG_PER_S 10

enum worker_phase { PHASE_RUN = 0, PHASE_DRAIN, PHASE_STOP };

typedef struct worker {
    tg_server *server;
    int index;
    pthread_t thread;
    int thread_started;
    uv_loop_t loop;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    uv_tcp_t listener;
    uv_async_t wake;               /* phase changes from the main thread */
    uv_prepare_t log_flush;        /* writes the turn's batched log lines before blocking */
    tg_conns conns;                /* accepted connections (loop thread) */
    tg_log_budget malformed_log;   /* lines for reviews that do not parse (admission.c) */
    atomic_int phase;
    atomic_long in_flight;         /* requests inside our handlers */
    atomic_long served;            /* admissions started, ever */
} worker;

struct tg_server {
    tg_server_config cfg;
    uv_loop_t *main_loop;
    h2o_globalconf_t conf;         /* HTTPS, shared read-only by the workers */
    tg_probe_server *probe;        /* /healthz /readyz /metrics; NULL when off */
    SSL_CTX *ssl_ctx;
    tg_tls_store tls;
    tg_certwatch watch;
    int watch_started;
    uv_signal_t sigterm, sigint;
    uv_timer_t drain_timer;
    uint64_t drain_deadline;
    uv_timer_t trim_timer;
    long trim_served;              /* requests seen at the last tick */
    long trim_conns_last;          /* connections at the last tick */
    int trim_rounds;               /* trims still to do once things are quiet */
    int trim_synced;               /* trimmed after the first cache sync */
    atomic_int draining;
    int stopped;
    worker *workers;
    int nworkers;
    int port, metrics_port;
    atomic_long open_conns;        /* in all workers, against cfg.max_connections */
    tg_peers *peers;               /* per source address, against cfg.max_connections_per_peer */
    /* telemetry */
    tg_metrics *metrics;
    tg_metric_family *m_requests, *m_duration, *m_in_flight, *m_cache, *m_informer_failures, *m_live_reads, *m_live_resumed, *m_live_reviews,
        *m_cert_expiry, *m_reloads,
        *m_ready, *m_conns, *m_conns_rejected, *m_conns_rejected_peer, *m_conns_closed, *m_h2_resets, *m_peers;
};

static inline uint64_t now_us(void)
{
    return uv_hrtime() / 1000;
}

#endif
