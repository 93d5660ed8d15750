/* server.c - tenantgate-auth's life cycle (server.h): TLS, h2o on the loop,
 * accept under the connection caps, metrics, signals and drain. */
#include "server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth/request.h"
#include "auth/server_priv.h"
#include "common/listen.h"
#include "common/log.h"

#define DRAIN_POLL_MS 50

/* An accepted connection: the TCP handle h2o's socket wraps, its source
 * network (released from the per-peer count when the handle closes) and its
 * slot under --max-connections (common/conn_slots.h). */
typedef struct conn {
    uv_tcp_t tcp;                  /* first: h2o's close callback gets its address */
    tg_auth_server *s;
    tg_peer_key key;
    tg_slot slot;
    h2o_socket_t *sock;            /* NULL once h2o disposed of it */
    int counted;
} conn;

static void on_conn_closed(uv_handle_t *h)
{
    conn *c = (conn *)h;

    if (c->counted) {
        tg_peers_remove(c->s->peers, &c->key);
        tg_slots_release(&c->s->slots, &c->slot);
    }
    free(c);
}

/* h2o is closing it: no candidate for eviction any more. */
static void on_sock_disposed(void *data)
{
    conn *c = data;

    c->sock = NULL;
    c->slot.evicted = 1;
}

/* Make room for a newcomer: shutdown(2) makes h2o see the end of the stream
 * (or fail the handshake) and close the connection through its own path,
 * with nothing pulled from under it. */
static int evict(tg_slots *ss, tg_slot *slot)
{
    conn *c = H2O_STRUCT_FROM_MEMBER(conn, slot, slot);
    tg_auth_server *s = ss->data;
    uv_os_fd_t fd;

    if (!c->sock || uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0 || shutdown(fd, SHUT_RDWR) != 0)
        return 0;
    tg_counter_add(tg_metric_series_get(s->m_conns_evicted, NULL), 1);
    return 1;
}

/* h2o disposes of a request's pool before it closes the socket, and the
 * record outlives the socket: the slot is still there when this runs. */
static void on_request_disposed(void *handle)
{
    tg_slot *slot = *(tg_slot **)handle;

    if (slot)
        tg_slot_request_end(slot);
}

void tg_auth_conn_request_begin(h2o_req_t *req)
{
    h2o_socket_t *sock = req->conn->callbacks->get_socket(req->conn);
    conn *c = sock && sock->on_close.cb == on_sock_disposed ? sock->on_close.data : NULL;
    tg_slot **handle;

    if (!c)
        return;
    handle = h2o_mem_alloc_shared(&req->pool, sizeof(*handle), on_request_disposed);
    *handle = &c->slot;
    tg_slot_request_begin(&c->slot);
}

static void reject(conn *c, const char *why)
{
    tg_counter_add(tg_metric_series_get(c->s->m_conns_rejected, (const char *[]){why}), 1);
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_accept(uv_stream_t *listener, int status)
{
    tg_auth_server *s = listener->data;
    struct sockaddr_storage ss;
    int sl = sizeof(ss);
    conn *c;

    if (status != 0 || !(c = calloc(1, sizeof(*c))))
        return;
    c->s = s;
    uv_tcp_init(s->loop, &c->tcp);
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
        return;
    }
    /* the per-peer cap counts peers as the limiter does: IPv6 by /64 */
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &sl) == 0)
        tg_peer_net_key_of((struct sockaddr *)&ss, &c->key);
    if (s->draining)
        return reject(c, "draining");
    if (tg_peers_add(s->peers, &c->key) != 0)
        return reject(c, "max_connections_per_peer");
    if (tg_slots_take(&s->slots, &c->slot) != 0) {
        tg_peers_remove(s->peers, &c->key);
        return reject(c, "max_connections");
    }
    c->counted = 1;
    tg_counter_add(tg_metric_series_get(s->m_conns_accepted, NULL), 1);
    c->sock = h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_conn_closed);
    c->sock->on_close.cb = on_sock_disposed;
    c->sock->on_close.data = c;
    h2o_accept(&s->accept_ctx, c->sock);
}

static void on_cert_reload(tg_certwatch *cw, int ok, const char *err)
{
    tg_auth_server *s = cw->data;

    tg_counter_add(tg_metric_series_get(s->m_reloads, (const char *[]){ok ? "ok" : "error"}), 1);
    if (ok)
        tg_log(TG_LOG_INFO, "serving certificate reloaded", TG_LOG_STR("cert", s->cfg.cert_path));
    else
        tg_log(TG_LOG_ERROR, "serving certificate reload failed, keeping the loaded one", TG_LOG_STR("error", err));
}

static const char *not_ready(void *data)
{
    tg_auth_server *s = data;
    size_t len;

    if (s->draining)
        return "shutting down";
    if (!s->cfg.authentication_disabled && !tg_auth_token_secret_get(s->cfg.token, &len))
        return "the peering token has not been read yet";
    return NULL;
}

static void before_metrics(void *data)
{
    tg_auth_server *s = data;
    size_t len;

    tg_gauge_set(tg_metric_series_get(s->m_conns, NULL), (double)s->slots.open);
    tg_gauge_set(tg_metric_series_get(s->m_token, NULL),
                 s->cfg.token && tg_auth_token_secret_get(s->cfg.token, &len) ? 1 : 0);
    tg_gauge_set(tg_metric_series_get(s->m_disabled, NULL), s->cfg.authentication_disabled);
}

static int metrics_register(tg_auth_server *s)
{
    static const double bounds[] = {0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30};

    s->metrics = tg_metrics_new();
    if (!s->metrics)
        return -1;
    s->m_requests = tg_metrics_counter(s->metrics, "tenantgate_auth_requests_total",
                                       "Requests by path, HTTP status and reason (docs/auth.md).", 3,
                                       (const char *[]){"path", "code", "reason"});
    s->m_duration = tg_metrics_histogram(s->metrics, "tenantgate_auth_request_duration_seconds",
                                         "Time to answer, issuance included.", 1, (const char *[]){"path"},
                                         sizeof(bounds) / sizeof(bounds[0]), bounds);
    s->m_conns_rejected = tg_metrics_counter(s->metrics, "tenantgate_auth_connections_rejected_total",
                                             "Connections closed at accept, by limit.", 1, (const char *[]){"why"});
    s->m_conns_accepted = tg_metrics_counter(s->metrics, "tenantgate_auth_connections_accepted_total",
                                             "Connections accepted (also those h2o refused before a handler "
                                             "saw a request).", 0, NULL);
    s->m_conns_evicted = tg_metrics_counter(s->metrics, "tenantgate_auth_connections_evicted_total",
                                            "Idle connections closed to make room for a newcomer at "
                                            "--max-connections.", 0, NULL);
    s->m_origin_tokens = tg_metrics_counter(s->metrics, "tenantgate_auth_origin_tokens_stored_total",
                                            "Consumers' own tokens (originClusterToken) kept after an issuance, "
                                            "by result.", 1, (const char *[]){"result"});
    s->m_conns = tg_metrics_gauge(s->metrics, "tenantgate_auth_connections", "Open HTTPS connections.", 0, NULL);
    s->m_token = tg_metrics_gauge(s->metrics, "tenantgate_auth_token_loaded", "1 once the token Secret was read.",
                                  0, NULL);
    s->m_disabled = tg_metrics_gauge(s->metrics, "tenantgate_auth_authentication_disabled",
                                     "1 when --authentication=off: any token is accepted.", 0, NULL);
    s->m_reloads = tg_metrics_counter(s->metrics, "tenantgate_auth_certificate_reloads_total",
                                      "Serving certificate reloads by result.", 1, (const char *[]){"result"});
    return s->m_requests && s->m_duration && s->m_conns_rejected && s->m_conns_accepted && s->m_conns_evicted && s->m_origin_tokens && s->m_conns &&
                   s->m_token && s->m_disabled && s->m_reloads
               ? 0
               : -1;
}

static void h2o_setup(tg_auth_server *s)
{
    h2o_hostconf_t *host;

    h2o_config_init(&s->conf);
    s->conf.server_name = h2o_iovec_init(H2O_STRLIT("tenantgate-auth"));
    /* h2o answers 413 itself above this, unseen by the handler; between
     * TG_AUTH_MAX_BODY and it the handler does, so that most oversized
     * attempts are logged and counted like any other */
    s->conf.max_request_entity_size = 4 * TG_AUTH_MAX_BODY;
    /* one bound for the wait for a request and its arrival, and the handshake:
     * a slow client holds a slot at most this long */
    s->conf.http1.req_timeout = s->cfg.request_timeout_ms;
    s->conf.handshake_timeout = s->cfg.request_timeout_ms;
    s->conf.http1.upgrade_to_http2 = 0;
    host = h2o_config_register_host(&s->conf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    tg_auth_routes_register(host, s);
    h2o_context_init(&s->ctx, s->loop, &s->conf);
    s->accept_ctx.ctx = &s->ctx;
    s->accept_ctx.hosts = s->conf.hosts;
    s->accept_ctx.ssl_ctx = s->ssl_ctx;
}

static int listen_on(tg_auth_server *s, char *err, size_t err_len)
{
    int fd = tg_listen_socket(s->cfg.listen_host, s->cfg.listen_port, 0, &s->port, err, err_len);

    if (fd < 0)
        return -1;
    uv_tcp_init(s->loop, &s->listener);
    s->listener.data = s;
    if (uv_tcp_open(&s->listener, fd) != 0) {
        snprintf(err, err_len, "cannot use the listening socket");
        return -1;
    }
    return 0;
}

tg_auth_server *tg_auth_server_new(uv_loop_t *loop, const tg_auth_server_config *cfg, char *err, size_t err_len)
{
    tg_auth_server *s = calloc(1, sizeof(*s));

    if (!s) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->loop = loop;
    tg_slots_init(&s->slots, cfg->max_connections, evict, s);
    if (metrics_register(s) != 0 || !(s->peers = tg_peers_new(cfg->max_connections_per_peer)) ||
        !(s->limits = tg_ratelimit_new(&cfg->limits)) ||
        tg_tls_store_init(&s->tls, cfg->cert_path, cfg->key_path) != 0) {
        snprintf(err, err_len, "out of memory");
        return NULL;                /* start-up failure: the process exits */
    }
    if (tg_tls_store_reload(&s->tls, err, err_len) != 0)
        return NULL;
    if (!(s->ssl_ctx = tg_tls_server_ctx(&s->tls, 0))) {
        snprintf(err, err_len, "cannot set up TLS");
        return NULL;
    }
    h2o_setup(s);
    if (listen_on(s, err, err_len) != 0)
        return NULL;
    if (cfg->metrics_port >= 0) {
        tg_probe_config pc = {.host = cfg->metrics_host, .port = cfg->metrics_port, .metrics = s->metrics,
                              .not_ready = not_ready, .before_metrics = before_metrics, .data = s};
        if (!(s->probe = tg_probe_server_new(loop, &pc, err, err_len)))
            return NULL;
    }
    return s;
}

static void stop_loop(tg_auth_server *s)
{
    uv_timer_stop(&s->drain);
    tg_log_msg(TG_LOG_INFO, "shutdown complete");
    tg_log_flush();
    uv_stop(s->loop);
}

/* Issuances finish (the consumer gets its certificate) within the grace. */
static void on_drain_tick(uv_timer_t *t)
{
    tg_auth_server *s = t->data;

    if (s->in_flight == 0 || uv_now(s->loop) >= s->drain_deadline)
        stop_loop(s);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    tg_auth_server *s = sig->data;

    if (s->draining)
        return;
    s->draining = 1;
    tg_log(TG_LOG_INFO, "shutting down", TG_LOG_INT("in_flight", s->in_flight));
    uv_close((uv_handle_t *)&s->listener, NULL);
    s->drain_deadline = uv_now(s->loop) + s->cfg.shutdown_grace_ms;
    uv_timer_start(&s->drain, on_drain_tick, 0, DRAIN_POLL_MS);
}

int tg_auth_server_start(tg_auth_server *s, char *err, size_t err_len)
{
    int rc;

    uv_timer_init(s->loop, &s->drain);
    s->drain.data = s;
    uv_signal_init(s->loop, &s->sigterm);
    uv_signal_init(s->loop, &s->sigint);
    s->sigterm.data = s->sigint.data = s;
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    rc = tg_certwatch_start(&s->watch, s->loop, &s->tls, s->cfg.cert_check_ms, on_cert_reload, s);
    if (rc != 0)
        tg_log(TG_LOG_WARN, "cannot watch the certificate directory, checking periodically only",
               TG_LOG_STR("error", uv_strerror(rc)));
    if ((rc = uv_listen((uv_stream_t *)&s->listener, 1024, on_accept)) != 0) {
        snprintf(err, err_len, "cannot listen: %s", uv_strerror(rc));
        return -1;
    }
    if (s->cfg.authentication_disabled)
        tg_log_msg(TG_LOG_WARN, "authentication is DISABLED (--authentication=off): any cluster that reaches this "
                                "port gets an identity");
    tg_log(TG_LOG_INFO, "serving", TG_LOG_STR("listen", s->cfg.listen_host), TG_LOG_INT("port", s->port),
           TG_LOG_INT("metrics_port", s->probe ? tg_probe_server_port(s->probe) : -1),
           TG_LOG_STR("cluster_id", s->cfg.cluster_id), TG_LOG_BOOL("authentication", !s->cfg.authentication_disabled));
    uv_run(s->loop, UV_RUN_DEFAULT);
    return 0;
}

int tg_auth_server_port(const tg_auth_server *s)
{
    return s->port;
}

int tg_auth_server_close(tg_auth_server *s)
{
    if (s->slots.open != 0 || s->in_flight != 0 || (s->probe && tg_probe_server_connections(s->probe) != 0))
        return -1;
    uv_close((uv_handle_t *)&s->drain, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    if (!uv_is_closing((uv_handle_t *)&s->listener))
        uv_close((uv_handle_t *)&s->listener, NULL);
    tg_certwatch_stop(&s->watch, NULL);
    if (s->probe)
        tg_probe_server_close(s->probe);
    h2o_context_dispose(&s->ctx);
    return 0;
}

void tg_auth_server_free(tg_auth_server *s)
{
    tg_probe_server_free(s->probe);
    h2o_config_dispose(&s->conf);
    SSL_CTX_free(s->ssl_ctx);
    tg_tls_store_dispose(&s->tls);
    tg_metrics_free(s->metrics);
    tg_peers_free(s->peers);
    tg_ratelimit_free(s->limits);
    free(s);
}
