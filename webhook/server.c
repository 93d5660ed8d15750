/* server.c - the server's life cycle (server.h): set up (certificate,
 * h2o's configuration with the handlers cfg->register_routes adds, sockets,
 * workers, metrics port), run, and free. The parts are in their own files (server_priv.h). */
#include "server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <h2o.h>

#include "common/log.h"
#include "common/listen.h"
#include "webhook/server_metrics.h"
#include "webhook/server_priv.h"
#include "webhook/shutdown.h"
#include "webhook/trim.h"
#include "webhook/workers.h"

/* HTTP/2 requests of one connection handled at once (h2o refuses streams
 * past its fixed 100; the rest of those wait their turn). */
#define H2_MAX_CONCURRENT_REQUESTS 16

static void on_cert_reload(tg_certwatch *cw, int ok, const char *err)
{
    tg_server *s = cw->data;
    time_t not_after = 0;

    tg_counter_add(tg_metric_series_get(s->m_reloads, (const char *[]){ok ? "ok" : "error"}), 1);
    if (ok) {
        tg_tls_store_loaded(&s->tls, &not_after);
        tg_log(TG_LOG_INFO, "serving certificate reloaded", TG_LOG_STR("cert", s->cfg.cert_path),
               TG_LOG_INT("not_after", (int64_t)not_after));
    } else {
        tg_log(TG_LOG_ERROR, "serving certificate reload failed, keeping the loaded one",
               TG_LOG_STR("error", err));
    }
}

static void globalconf_init(h2o_globalconf_t *conf, tg_server *s)
{
    h2o_hostconf_t *host;

    h2o_config_init(conf);
    conf->server_name = h2o_iovec_init(H2O_STRLIT("tenantgate"));
    conf->max_request_entity_size = TG_WEBHOOK_MAX_BODY;
    /* h2o 2.2.5 has one HTTP/1.1 timer for the wait for a request and its
     * arrival, so it gets the idle timeout, and conns.c bounds the arrival
     * (from the request's first byte) by the request timeout. The idle
     * timeout is longer than kube-apiserver keeps an idle connection (90 s):
     * a server that closes a kept-alive connection first races the client's
     * next request on it, which then fails with EOF. Go's transport does not
     * send a POST again once written, and the API server fails the admission
     * call. */
    conf->http1.req_timeout = s->cfg.idle_timeout_ms;
    conf->http2.idle_timeout = s->cfg.idle_timeout_ms;
    conf->http2.max_concurrent_requests_per_connection = H2_MAX_CONCURRENT_REQUESTS;
    /* conns.c routes an HTTP/2 preface itself (refused without --http2):
     * h2o's HTTP/1.1 must not switch to HTTP/2 on its own. */
    conf->http1.upgrade_to_http2 = 0;
    host = h2o_config_register_host(conf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    s->cfg.register_routes(host, s);
}

tg_server *tg_server_new(uv_loop_t *main_loop, const tg_server_config *cfg, char *err, size_t err_len)
{
    tg_server *s;
    int fd, port;

    if (!cfg->register_routes) {
        snprintf(err, err_len, "no routes to serve (tg_server_config.register_routes)");
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->main_loop = main_loop;
    s->metrics = tg_metrics_new();
    if (!s->metrics)
        goto oom;
    tg_server_metrics_register(s);
    if (!(s->peers = tg_peers_new(cfg->max_connections_per_peer)))
        goto oom;
    if (tg_tls_store_init(&s->tls, cfg->cert_path, cfg->key_path) != 0)
        goto oom;
    if (tg_tls_store_reload(&s->tls, err, err_len) != 0)
        goto fail;
    if (!(s->ssl_ctx = tg_tls_server_ctx(&s->tls, cfg->enable_h2))) {
        snprintf(err, err_len, "cannot set up TLS");
        goto fail;
    }
    globalconf_init(&s->conf, s);

    s->nworkers = cfg->threads > 0 ? cfg->threads : 1;
    if (!(s->workers = calloc((size_t)s->nworkers, sizeof(worker))))
        goto oom;
    port = cfg->listen_port;
    /* SO_REUSEPORT would also let us join a port that another process of
     * this user already serves (a stale instance) and take half its
     * connections: a plain bind first proves the port is free. */
    if (port != 0) {
        int probe_port;
        if ((fd = tg_listen_socket(cfg->listen_host, port, 0, &probe_port, err, err_len)) < 0)
            goto fail;
        close(fd);
    }
    for (int i = 0; i < s->nworkers; i++) {
        /* with port 0 the first bind picks it, the others join that port */
        if ((fd = tg_listen_socket(cfg->listen_host, port, 1, &port, err, err_len)) < 0)
            goto fail;
        if (tg_worker_init(s, &s->workers[i], i, fd, err, err_len) != 0)
            goto fail;
    }
    s->port = port;

    if (cfg->metrics_port >= 0) {
        tg_probe_config pc = {.host = cfg->metrics_host, .port = cfg->metrics_port, .metrics = s->metrics,
                              .not_ready = tg_server_probe_not_ready, .before_metrics = tg_server_probe_before_metrics, .data = s};
        if (!(s->probe = tg_probe_server_new(main_loop, &pc, err, err_len)))
            goto fail;
        s->metrics_port = tg_probe_server_port(s->probe);
    }
    return s;

oom:
    snprintf(err, err_len, "out of memory");
fail:
    /* Start-up failure: the process exits; sockets close with it. */
    return NULL;
}

int tg_server_start(tg_server *s, char *err, size_t err_len)
{
    int rc;

    tg_shutdown_init(s);
    tg_trim_start(s);
    rc = tg_certwatch_start(&s->watch, s->main_loop, &s->tls, s->cfg.cert_check_ms, on_cert_reload, s);
    s->watch_started = 1;
    if (rc != 0)
        tg_log(TG_LOG_WARN, "cannot watch the certificate directory, checking periodically only",
               TG_LOG_STR("error", uv_strerror(rc)));
    for (int i = 0; i < s->nworkers; i++) {
        if (pthread_create(&s->workers[i].thread, NULL, tg_worker_main, &s->workers[i]) != 0) {
            snprintf(err, err_len, "cannot start worker %d", i);
            return -1;
        }
        s->workers[i].thread_started = 1;
    }
    tg_log(TG_LOG_INFO, "serving", TG_LOG_STR("listen", s->cfg.listen_host), TG_LOG_INT("port", s->port),
           TG_LOG_INT("metrics_port", s->probe ? s->metrics_port : -1), TG_LOG_INT("threads", s->nworkers),
           TG_LOG_BOOL("h2", s->cfg.enable_h2), TG_LOG_BOOL("allow_no_handshake", s->cfg.allow_no_handshake));
    uv_run(s->main_loop, UV_RUN_DEFAULT);
    return 0;
}

int tg_server_free(tg_server *s)
{
    int clean = 1;

    if (!s)
        return 0;
    for (int i = 0; i < s->nworkers; i++)
        if (s->workers[i].thread_started)
            pthread_join(s->workers[i].thread, NULL);
    /* After a clean drain every connection is closed and the contexts can be
     * torn down; after the grace period some are still open inside h2o, and
     * the process is about to exit anyway: leave them. */
    for (int i = 0; i < s->nworkers; i++)
        if (tg_conns_open(&s->workers[i].conns) != 0)
            clean = 0;
    if (s->probe && tg_probe_server_connections(s->probe) != 0)
        clean = 0;
    if (!clean) {
        tg_log(TG_LOG_DEBUG, "connections left open at exit",
               TG_LOG_INT("metrics", s->probe ? tg_probe_server_connections(s->probe) : 0));
        return -1;
    }
    for (int i = 0; i < s->nworkers; i++)
        tg_worker_dispose(&s->workers[i]);
    /* The main loop also carries the informers: close only what is ours
     * (stop_everything did) and let one iteration finish the closes. */
    tg_probe_server_free(s->probe);
    uv_run(s->main_loop, UV_RUN_NOWAIT);
    h2o_config_dispose(&s->conf);
    SSL_CTX_free(s->ssl_ctx);
    tg_tls_store_dispose(&s->tls);
    tg_metrics_free(s->metrics);
    tg_peers_free(s->peers);
    free(s->workers);
    free(s);
    return 0;
}

int tg_server_port(const tg_server *s)
{
    return s->port;
}

int tg_server_metrics_port(const tg_server *s)
{
    return s->probe ? s->metrics_port : -1;
}
