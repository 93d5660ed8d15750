/* server_metrics.c - see server_metrics.h. */
#include "server_metrics.h"

#include <time.h>

long tg_server_total(tg_server *s, int in_flight)
{
    long n = 0;
    for (int i = 0; i < s->nworkers; i++)
        n += in_flight ? atomic_load(&s->workers[i].in_flight) : tg_conns_open(&s->workers[i].conns);
    return n;
}

/* Why not ready, or NULL when ready. */
static const char *not_ready_reason(tg_server *s)
{
    if (atomic_load(&s->draining))
        return "shutting down";
    if (!tg_tls_store_loaded(&s->tls, NULL))
        return "no serving certificate loaded";
    if (!s->cfg.lookup->ops->synced(s->cfg.lookup))
        return "caches not synced";
    return NULL;
}

static void refresh_gauges(tg_server *s)
{
    time_t not_after;
    const tg_lookup *lk = s->cfg.lookup;

    tg_gauge_set(tg_metric_series_get(s->m_in_flight, NULL), (double)tg_server_total(s, 1));
    tg_gauge_set(tg_metric_series_get(s->m_conns, NULL), (double)tg_server_total(s, 0));
    tg_gauge_set(tg_metric_series_get(s->m_peers, NULL), (double)tg_peers_addresses(s->peers));
    if (tg_tls_store_loaded(&s->tls, &not_after))
        tg_gauge_set(tg_metric_series_get(s->m_cert_expiry, NULL), (double)not_after);
    if (lk->ops->cache_stats) {
        tg_lookup_cache_stats c[8];
        size_t n = lk->ops->cache_stats(lk, c, sizeof(c) / sizeof(c[0]));
        for (size_t i = 0; i < n; i++) {
            tg_gauge_set(tg_metric_series_get(s->m_cache, (const char *[]){c[i].cache}), (double)c[i].objects);
            tg_counter_raise(tg_metric_series_get(s->m_informer_failures, (const char *[]){c[i].cache}),
                             (double)c[i].failures);
        }
    }
    if (s->cfg.live && s->cfg.live->stats) {
        tg_live_nonce_stats ls = {0};
        s->cfg.live->stats(s->cfg.live->self, &ls);
        tg_counter_raise(tg_metric_series_get(s->m_live_reads, NULL), (double)ls.reads);
        tg_counter_raise(tg_metric_series_get(s->m_live_resumed, NULL), (double)ls.resumed);
        tg_counter_raise(tg_metric_series_get(s->m_live_reviews, (const char *[]){"started"}), (double)ls.started);
        tg_counter_raise(tg_metric_series_get(s->m_live_reviews, (const char *[]){"queued"}), (double)ls.queued);
        tg_counter_raise(tg_metric_series_get(s->m_live_reviews, (const char *[]){"refused"}), (double)ls.refused);
    }
    tg_gauge_set(tg_metric_series_get(s->m_ready, NULL), not_ready_reason(s) ? 0 : 1);
}

/* The probe port's callbacks (common/probe_server.h), on the main loop. */
const char *tg_server_probe_not_ready(void *data)
{
    return not_ready_reason(data);
}

void tg_server_probe_before_metrics(void *data)
{
    refresh_gauges(data);
}

void tg_server_metrics_register(tg_server *s)
{
    static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                     0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
    tg_metrics *m = s->metrics;

    s->m_requests = tg_metrics_counter(m, "tenantgate_webhook_requests_total",
                                       "Admission requests by path, verdict (allowed, denied, error, rejected) "
                                       "and reason code.",
                                       3, (const char *[]){"path", "verdict", "reason"});
    s->m_duration = tg_metrics_histogram(m, "tenantgate_webhook_request_duration_seconds",
                                         "Time from handler entry to answer, by path.", 1,
                                         (const char *[]){"path"}, sizeof(buckets) / sizeof(buckets[0]),
                                         buckets);
    s->m_in_flight = tg_metrics_gauge(m, "tenantgate_webhook_in_flight_requests",
                                      "Admission requests being decided.", 0, NULL);
    s->m_cache = tg_metrics_gauge(m, "tenantgate_webhook_cache_objects", "Objects in each informer cache.", 1,
                                  (const char *[]){"cache"});
    s->m_informer_failures = tg_metrics_counter(m, "tenantgate_webhook_informer_failures_total",
                                                "Lists or watches of each informer that failed and were retried "
                                                "(the log line 'informer failed' says why).",
                                                1, (const char *[]){"cache"});
    s->m_live_reads = tg_metrics_counter(m, "tenantgate_webhook_live_reads_total",
                                         "Live reads of a nonce Secret sent to the API server (on a cache miss, "
                                         "before NonceNotFound).",
                                         0, NULL);
    s->m_live_resumed = tg_metrics_counter(m, "tenantgate_webhook_live_reads_tls_resumed_total",
                                           "Live reads whose connection resumed the API server's "
                                           "last TLS session (no certificate sent or checked again).",
                                           0, NULL);
    s->m_live_reviews = tg_metrics_counter(m, "tenantgate_webhook_live_read_reviews_total",
                                           "Reviews that needed a live read, by outcome: started (a read at once), "
                                           "queued (answered by the next read of their namespace), refused "
                                           "(LiveReadBusy: too many namespaces being read).",
                                           1, (const char *[]){"outcome"});
    s->m_cert_expiry = tg_metrics_gauge(m, "tenantgate_webhook_serving_cert_expiry_timestamp_seconds",
                                        "NotAfter of the serving certificate, Unix time.", 0, NULL);
    s->m_reloads = tg_metrics_counter(m, "tenantgate_webhook_cert_reloads_total",
                                      "Serving certificate reload attempts by result.", 1,
                                      (const char *[]){"result"});
    s->m_ready = tg_metrics_gauge(m, "tenantgate_webhook_ready", "1 when /readyz answers 200.", 0, NULL);
    s->m_conns = tg_metrics_gauge(m, "tenantgate_webhook_connections", "Open HTTPS connections.", 0, NULL);
    s->m_conns_rejected = tg_metrics_counter(m, "tenantgate_webhook_connections_rejected_total",
                                             "Connections closed at accept because --max-connections were open "
                                             "and none could be evicted (all had a request).",
                                             0, NULL);
    s->m_conns_rejected_peer = tg_metrics_counter(m, "tenantgate_webhook_connections_rejected_per_peer_total",
                                                  "Connections closed at accept because their source address "
                                                  "held --max-connections-per-peer already.",
                                                  0, NULL);
    s->m_peers = tg_metrics_gauge(m, "tenantgate_webhook_connection_peers",
                                  "Distinct source addresses with open HTTPS connections.", 0, NULL);
    s->m_conns_closed = tg_metrics_counter(m, "tenantgate_webhook_connections_closed_total",
                                           "Connections the server closed: stalled_stream (an HTTP/2 stream older "
                                           "than --request-timeout), slow_request (an HTTP/1.1 request still "
                                           "arriving --request-timeout after its first byte), stream_resets (a "
                                           "burst of HTTP/2 stream "
                                           "resets), dead_peer (a reset peer whose close h2o could not finish), "
                                           "no_request (no request --request-timeout after the accept, TLS "
                                           "handshake included), evicted (had no request yet and made room at "
                                           "--max-connections), http2_refused (an HTTP/2 preface without "
                                           "--http2).",
                                           1, (const char *[]){"reason"});
    s->m_h2_resets = tg_metrics_counter(m, "tenantgate_webhook_http2_stream_resets_total",
                                        "RST_STREAM frames received from HTTP/2 clients.", 0, NULL);
}
