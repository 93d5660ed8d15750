/* server.c - workers, handlers, the metrics port and graceful shutdown. */
#include "server.h"

#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <h2o.h>
#include <h2o/socket/uv-binding.h>

#include "common/file_pages.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/probe_server.h"
#include "webhook/certwatch.h"
#include "webhook/conns.h"
#include "webhook/decide.h"
#include "webhook/h1_framing.h"
#include "webhook/review.h"
#include "webhook/slice_decide.h"
#include "webhook/tls.h"

#define PATH_VALIDATE "/validate/tenants"
#define PATH_MUTATE "/mutate/tenants"
#define PATH_VALIDATE_SLICES "/validate/resourceslices"

#define DRAIN_POLL_MS 50
/* HTTP/2 requests of one connection handled at once (h2o refuses streams
 * past its fixed 100; the rest of those wait their turn). */
#define H2_MAX_CONCURRENT_REQUESTS 16
/* How often the main loop looks for a quiet moment to give freed memory back
 * to the OS (see on_trim_tick). */
#define TRIM_CHECK_MS 500
#define TRIM_ROUNDS 4

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
    atomic_int phase;
    atomic_long in_flight;         /* requests inside our handlers */
    atomic_long served;            /* admissions started, ever */
} worker;

typedef struct app_handler {
    h2o_handler_t super;
    tg_server *server;
} app_handler;

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

/* ---------- small helpers ---------- */

static uint64_t now_us(void)
{
    return uv_hrtime() / 1000;
}

static int iov_is(h2o_iovec_t v, const char *s)
{
    size_t n = strlen(s);
    return v.len == n && memcmp(v.base, s, n) == 0;
}

/* "application/json", any case, optionally followed by parameters. */
static int is_json_content_type(h2o_req_t *req)
{
    static const char want[] = "application/json";
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    h2o_iovec_t v;

    if (i < 0)
        return 0;
    v = req->headers.entries[i].value;
    if (v.len < sizeof(want) - 1 || strncasecmp(v.base, want, sizeof(want) - 1) != 0)
        return 0;
    return v.len == sizeof(want) - 1 || v.base[sizeof(want) - 1] == ';' || v.base[sizeof(want) - 1] == ' ';
}

static void send_text(h2o_req_t *req, int status, const char *reason, const char *content_type,
                      const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;     /* not chunked: plain keep-alive for HTTP/1.1 */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type,
                   strlen(content_type));
    h2o_send_inline(req, body, len);
}

static void count_request(tg_server *s, const char *path, const char *verdict, const char *reason,
                          uint64_t started_us)
{
    tg_counter_add(tg_metric_series_get(s->m_requests, (const char *[]){path, verdict, reason}), 1);
    if (started_us)
        tg_histogram_observe(tg_metric_series_get(s->m_duration, (const char *[]){path}),
                             (double)(now_us() - started_us) / 1e6);
}

/* ---------- admission ---------- */

typedef struct admission {
    tg_server *server;
    worker *w;
    h2o_req_t *req;                /* NULL once the client went away */
    const char *path;              /* PATH_VALIDATE, PATH_MUTATE or PATH_VALIDATE_SLICES (static) */
    int validate;
    uint64_t started_us;
    tg_review_request review;
    int review_ok;
    char error[256];
} admission;

/* "error" is an answer that is not a verdict (retry later): a 5xx, or 429. */
static const char *verdict_of(const tg_decision *d)
{
    if (d->response.allowed)
        return "allowed";
    return d->response.code >= 500 || d->response.code == 429 ? "error" : "denied";
}

static void admission_log(const admission *a, const tg_decision *d)
{
    const tg_review_request *r = &a->review;
    const char *verdict = verdict_of(d);

    /* No nonce, key, CSR, signature or token ever reaches this line: only
     * names, the verdict and its one-line reason. */
    tg_log(d->response.allowed ? TG_LOG_INFO : TG_LOG_WARN, "admission", TG_LOG_STR("path", a->path),
           TG_LOG_STR("uid", r->uid), TG_LOG_STR("tenant", r->name), TG_LOG_STR("namespace", r->namespace_),
           TG_LOG_STR("op", r->operation), TG_LOG_STR("verdict", verdict), TG_LOG_STR("reason", d->reason),
           TG_LOG_STR("message", d->response.allowed ? NULL : d->response.message),
           TG_LOG_BOOL("dry_run", r->dry_run), TG_LOG_BOOL("crypto_skipped", d->crypto_skipped),
           TG_LOG_INT("us", (int64_t)(now_us() - a->started_us)));
}

/* Answer, account and release. a->req may be gone (client closed). */
static void admission_finish(admission *a, tg_decision *d)
{
    const char *verdict = verdict_of(d);

    admission_log(a, d);
    count_request(a->server, a->path, verdict, d->reason, a->started_us);
    if (a->req) {
        size_t len = 0;
        char *body = tg_review_response_json(a->review.version, a->review.uid, &d->response, &len);
        if (body) {
            send_text(a->req, 200, "OK", "application/json", body, len);
            free(body);
        } else {
            h2o_send_error_500(a->req, "Internal Server Error", "out of memory\n", 0);
        }
    }
    atomic_fetch_sub(&a->w->in_flight, 1);
}

static void admission_free(admission *a)
{
    tg_review_request_clear(&a->review);
    free(a);
}

/* The request's pool holds a pointer to the admission; when h2o disposes the
 * request (answered, or the connection closed) it clears the back pointer. */
typedef struct admission_guard {
    admission *a;
    void *conn;                    /* tg_conns_request_pending's handle */
} admission_guard;

static void on_request_disposed(void *p)
{
    admission_guard *g = p;
    if (g->a)
        g->a->req = NULL;
    tg_conns_request_done(g->conn);
}

typedef struct live_wait {
    admission *a;
    admission_guard *guard;
} live_wait;

static void on_live_nonce(void *cbdata, const char *nonce, size_t len, int status)
{
    live_wait *lw = cbdata;
    admission *a = lw->a;
    tg_decide_opts opts = {
        .allow_no_handshake = a->server->cfg.allow_no_handshake,
        .live_nonce_done = 1,
        .live_nonce = nonce,
        .live_nonce_len = nonce ? len : 0,
        .live_nonce_state = status > 0 ? (tg_nonce_state)status : TG_NONCE_ABSENT,
    };
    tg_decision d;

    if (status < 0) {
        /* Could not ask: not a reason to deny as NonceNotFound. */
        tg_decide_error(&d, 500, "LiveReadFailed", "cannot read the nonce Secret from the API server, retry later");
        d.intercepted = 1;
    } else {
        tg_decide_validate(&a->review, a->server->cfg.lookup, &opts, &d);
    }
    if (a->req)
        lw->guard->a = NULL;       /* answering now: the guard must not touch a */
    admission_finish(a, &d);
    tg_decision_clear(&d);
    admission_free(a);
    free(lw);
}

static int handle_admission(tg_server *s, worker *w, h2o_req_t *req, const char *path, uint64_t started_us)
{
    admission *a = calloc(1, sizeof(*a));
    tg_decide_opts opts = {.allow_no_handshake = s->cfg.allow_no_handshake};
    tg_decision d;

    if (!a) {
        h2o_send_error_503(req, "Service Unavailable", "out of memory\n", 0);
        return 0;
    }
    atomic_fetch_add(&w->in_flight, 1);
    atomic_fetch_add_explicit(&w->served, 1, memory_order_relaxed);
    a->server = s;
    a->w = w;
    a->req = req;
    a->path = path;
    a->validate = strcmp(path, PATH_VALIDATE) == 0;
    a->started_us = started_us;
    a->review_ok = tg_review_parse(req->entity.base ? req->entity.base : "", req->entity.len, &a->review,
                                   a->error, sizeof(a->error)) == 0;
    if (!a->review_ok) {
        /* Still HTTP 200 with an AdmissionReview: the API server shows the
         * message, and the uid is echoed when it could be read. */
        tg_decide_error(&d, 400,
                        tg_reason_name(strcmp(path, PATH_VALIDATE_SLICES) == 0 ? TG_MALFORMED_RESOURCE_SLICE
                                                                               : TG_MALFORMED_TENANT),
                        a->error);
    } else if (strcmp(path, PATH_VALIDATE_SLICES) == 0) {
        tg_decide_validate_slice(&a->review, s->cfg.lookup, &d);
    } else if (!a->validate) {
        tg_decide_mutate(&a->review, &d);
    } else {
        tg_decide_validate(&a->review, s->cfg.lookup, &opts, &d);
        if (d.need_live_nonce && s->cfg.live) {
            live_wait *lw = malloc(sizeof(*lw));
            int fetched = TG_LIVE_FETCH_FAILED;
            admission_guard *g = h2o_mem_alloc_shared(&req->pool, sizeof(*g), on_request_disposed);
            g->conn = NULL;
            if (lw) {
                g->a = a;
                g->conn = tg_conns_request_pending(req);
                lw->a = a;
                lw->guard = g;
                fetched = s->cfg.live->fetch(s->cfg.live->self, &w->loop, w->index, d.nonce_namespace,
                                             d.cluster_id, on_live_nonce, lw);
                if (fetched == 0) {
                    tg_decision_clear(&d);
                    return 0;      /* answered from on_live_nonce */
                }
                g->a = NULL;
                free(lw);
            }
            tg_decision_clear(&d);
            if (fetched == TG_LIVE_FETCH_BUSY) {
                /* Not a verdict: the nonce may exist. */
                tg_decide_error(&d, 429, "LiveReadBusy",
                                "too many namespaces' nonce Secrets are being read from the API server, "
                                "retry later");
                d.intercepted = 1;
            } else {
                /* No live read possible: decide with what the cache said. */
                opts.live_nonce_done = 1;
                tg_decide_validate(&a->review, s->cfg.lookup, &opts, &d);
            }
        }
    }
    admission_finish(a, &d);
    tg_decision_clear(&d);
    admission_free(a);
    return 0;
}

/* HTTP/1.x with a body: is its length ambiguous (h1_framing.h)? h2o has
 * dropped Content-Length and Transfer-Encoding from req->headers, but the raw
 * head is still at the start of the connection's input buffer, right before
 * the body (h2o consumes a request only after answering it). */
static int h1_framing_verdict(h2o_req_t *req)
{
    h2o_socket_t *sock;
    const char *start;

    if (req->version >= 0x200 || req->entity.base == NULL)
        return TG_H1_FRAMING_OK;
    sock = req->conn->callbacks->get_socket(req->conn);
    if (!sock || !sock->input)
        return TG_H1_FRAMING_OK;
    start = sock->input->bytes;
    if (req->entity.base < start || req->entity.base > start + sock->input->size)
        return TG_H1_FRAMING_OK;
    return tg_h1_framing_check(start, (size_t)(req->entity.base - start));
}

static int on_https_request(h2o_handler_t *self, h2o_req_t *req)
{
    tg_server *s = ((app_handler *)self)->server;
    worker *w = H2O_STRUCT_FROM_MEMBER(worker, ctx, req->conn->ctx);
    uint64_t started = now_us();
    const char *path;
    int framing;

    tg_conns_request_seen(req);
    if ((framing = h1_framing_verdict(req)) != TG_H1_FRAMING_OK) {
        /* 400, and the connection closes: what follows the body is not
         * trusted to be the next request. */
        count_request(s, "other", "rejected", "AmbiguousLength", 0);
        req->http1_is_persistent = 0;
        send_text(req, 400, "Bad Request", "text/plain; charset=utf-8", tg_h1_framing_message(framing),
                  strlen(tg_h1_framing_message(framing)));
        return 0;
    }
    if (iov_is(req->path_normalized, PATH_VALIDATE)) {
        path = PATH_VALIDATE;
    } else if (iov_is(req->path_normalized, PATH_MUTATE)) {
        path = PATH_MUTATE;
    } else if (iov_is(req->path_normalized, PATH_VALIDATE_SLICES)) {
        path = PATH_VALIDATE_SLICES;
    } else {
        /* "other": arbitrary paths must not become metric label values */
        count_request(s, "other", "rejected", "NotFound", 0);
        send_text(req, 404, "Not Found", "text/plain; charset=utf-8", H2O_STRLIT("not found\n"));
        return 0;
    }
    if (!iov_is(req->method, "POST")) {
        count_request(s, path, "rejected", "MethodNotAllowed", 0);
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("POST"));
        send_text(req, 405, "Method Not Allowed", "text/plain; charset=utf-8", H2O_STRLIT("use POST\n"));
        return 0;
    }
    if (!is_json_content_type(req)) {
        count_request(s, path, "rejected", "UnsupportedMediaType", 0);
        send_text(req, 415, "Unsupported Media Type", "text/plain; charset=utf-8",
                  H2O_STRLIT("expected Content-Type: application/json\n"));
        return 0;
    }
    /* h2o answers 413 itself above max_request_entity_size; this catches a
     * body that got through some other way. */
    if (req->entity.len > TG_WEBHOOK_MAX_BODY) {
        count_request(s, path, "rejected", "PayloadTooLarge", 0);
        send_text(req, 413, "Request Entity Too Large", "text/plain; charset=utf-8",
                  H2O_STRLIT("body over 3 MiB\n"));
        return 0;
    }
    return handle_admission(s, w, req, path, started);
}

/* ---------- metrics port ---------- */

static long total(tg_server *s, int in_flight)
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

    tg_gauge_set(tg_metric_series_get(s->m_in_flight, NULL), (double)total(s, 1));
    tg_gauge_set(tg_metric_series_get(s->m_conns, NULL), (double)total(s, 0));
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
static const char *probe_not_ready(void *data)
{
    return not_ready_reason(data);
}

static void probe_before_metrics(void *data)
{
    refresh_gauges(data);
}

/* ---------- listening ---------- */

/* A bound, listening TCP socket; SO_REUSEPORT so every worker has its own. */
static int bind_socket(const char *host, int port, int reuseport, int *bound_port, char *err, size_t err_len)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int fd, on = 1;

    memset(&ss, 0, sizeof(ss));
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss) != 0) {
        snprintf(err, err_len, "bad listen address %s", host);
        return -1;
    }
    sl = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) ||
        bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0) {
        snprintf(err, err_len, "cannot listen on %s:%d: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *bound_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* ---------- workers ---------- */

/* h2o_context_request_shutdown() leaves the HTTP/2 GOAWAY re-send timer
 * linked, and h2o_context_dispose() insists on empty timeouts. */
static void context_dispose(h2o_context_t *ctx)
{
    if (h2o_timeout_is_linked(&ctx->http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&ctx->http2._graceful_shutdown_timeout);
    h2o_context_dispose(ctx);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_wake(uv_async_t *a)
{
    worker *w = a->data;
    int phase = atomic_load(&w->phase);

    if (phase >= PHASE_DRAIN && !uv_is_closing((uv_handle_t *)&w->listener)) {
        uv_close((uv_handle_t *)&w->listener, NULL);
        /* HTTP/2: GOAWAY. HTTP/1.1: nothing in h2o 2.2, hence the drain
         * closing idle connections itself. */
        h2o_context_request_shutdown(&w->ctx);
        tg_conns_drain(&w->conns);
    }
    if (phase == PHASE_STOP) {
        const tg_live_nonce *live = w->server->cfg.live;
        if (live && live->worker_stop)
            live->worker_stop(live->self, w->index);
        uv_stop(&w->loop);
    }
}

static void on_log_flush(uv_prepare_t *p)
{
    tg_log_flush();
}

static void *worker_main(void *arg)
{
    worker *w = arg;

    /* One write(2) per loop turn instead of one per admission line. */
    tg_log_batch_begin();
    uv_run(&w->loop, UV_RUN_DEFAULT);
    tg_log_batch_end();
    return NULL;
}

static void worker_conns_init(tg_server *s, worker *w)
{
    tg_conns_config cc = {
        .accept_ctx = &w->accept_ctx,
        .open_total = &s->open_conns,
        .max_open = s->cfg.max_connections,
        .peers = s->peers,
        .enable_h2 = s->cfg.enable_h2,
        .timeout_ms = s->cfg.request_timeout_ms,
        .rejected = tg_metric_series_get(s->m_conns_rejected, NULL),
        .rejected_peer = tg_metric_series_get(s->m_conns_rejected_peer, NULL),
        .closed_no_request = tg_metric_series_get(s->m_conns_closed, (const char *[]){"no_request"}),
        .closed_evicted = tg_metric_series_get(s->m_conns_closed, (const char *[]){"evicted"}),
        .closed_h2_refused = tg_metric_series_get(s->m_conns_closed, (const char *[]){"http2_refused"}),
        .closed_stalled = tg_metric_series_get(s->m_conns_closed, (const char *[]){"stalled_stream"}),
        .closed_slow = tg_metric_series_get(s->m_conns_closed, (const char *[]){"slow_request"}),
        .closed_resets = tg_metric_series_get(s->m_conns_closed, (const char *[]){"stream_resets"}),
        .closed_dead = tg_metric_series_get(s->m_conns_closed, (const char *[]){"dead_peer"}),
        .resets = tg_metric_series_get(s->m_h2_resets, NULL),
    };
    tg_conns_init(&w->conns, &w->loop, &cc);
}

static int worker_init(tg_server *s, worker *w, int index, int fd, char *err, size_t err_len)
{
    int rc;

    w->server = s;
    w->index = index;
    uv_loop_init(&w->loop);
    w->loop.data = w;
    h2o_context_init(&w->ctx, &w->loop, &s->conf);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = s->conf.hosts;
    w->accept_ctx.ssl_ctx = s->ssl_ctx;
    worker_conns_init(s, w);
    uv_tcp_init(&w->loop, &w->listener);
    w->listener.data = &w->conns;
    if ((rc = uv_tcp_open(&w->listener, fd)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&w->listener, 1024, tg_conns_on_accept)) != 0) {
        snprintf(err, err_len, "worker %d cannot listen: %s", index, uv_strerror(rc));
        return -1;
    }
    uv_async_init(&w->loop, &w->wake, on_wake);
    w->wake.data = w;
    uv_prepare_init(&w->loop, &w->log_flush);
    uv_prepare_start(&w->log_flush, on_log_flush);
    uv_unref((uv_handle_t *)&w->log_flush);
    return 0;
}

/* ---------- shutdown ---------- */

static void set_phase(tg_server *s, int phase)
{
    for (int i = 0; i < s->nworkers; i++) {
        atomic_store(&s->workers[i].phase, phase);
        uv_async_send(&s->workers[i].wake);
    }
}

static void stop_everything(tg_server *s)
{
    if (s->stopped)
        return;
    s->stopped = 1;
    set_phase(s, PHASE_STOP);
    uv_close((uv_handle_t *)&s->drain_timer, NULL);
    uv_close((uv_handle_t *)&s->trim_timer, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    if (s->watch_started)
        tg_certwatch_stop(&s->watch, NULL);
    if (s->probe)
        tg_probe_server_close(s->probe);
    /* The main loop ends once its remaining metrics connections close; do not
     * wait for a scraper that keeps one alive. */
    uv_stop(s->main_loop);
}

static void on_drain_tick(uv_timer_t *t)
{
    tg_server *s = t->data;
    long conns = total(s, 0), in_flight = total(s, 1);

    if (conns == 0 && in_flight == 0) {
        tg_log_msg(TG_LOG_INFO, "shutdown complete");
        stop_everything(s);
    } else if (uv_now(s->main_loop) >= s->drain_deadline) {
        tg_log(TG_LOG_WARN, "grace period over, closing connections", TG_LOG_INT("connections", conns),
               TG_LOG_INT("in_flight", in_flight));
        stop_everything(s);
    }
}

/* The drain gives up a little before the grace period ends, so that closing
 * and tearing down still fit in it: a quarter of it, at most a second. */
static uint64_t drain_budget_ms(uint64_t grace_ms)
{
    uint64_t margin = grace_ms / 4 < 1000 ? grace_ms / 4 : 1000;
    return grace_ms - margin;
}

static void *exit_backstop_main(void *arg)
{
    uint64_t ms = (uint64_t)(uintptr_t)arg;
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0)
        ;
    tg_log_msg(TG_LOG_WARN, "shutdown did not finish within the grace period, exiting");
    tg_log_flush();
    _exit(0);
    return NULL;
}

/* Whatever the teardown waits for (an informer's connection, a stuck
 * handler), the process is gone before the grace period ends: kubelet's
 * SIGKILL would otherwise come first, and a caller's bound is a bound. */
static void start_exit_backstop(uint64_t grace_ms)
{
    pthread_t t;
    pthread_attr_t attr;
    uint64_t at = grace_ms > 100 ? grace_ms - 50 : grace_ms;

    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, exit_backstop_main, (void *)(uintptr_t)at) != 0)
        tg_log_msg(TG_LOG_WARN, "cannot start the shutdown backstop");
    pthread_attr_destroy(&attr);
}

void tg_server_shutdown(tg_server *s)
{
    if (atomic_exchange(&s->draining, 1))
        return;
    start_exit_backstop(s->cfg.shutdown_grace_ms);
    tg_log(TG_LOG_INFO, "shutting down", TG_LOG_INT("grace_ms", (int64_t)s->cfg.shutdown_grace_ms),
           TG_LOG_INT("connections", total(s, 0)), TG_LOG_INT("in_flight", total(s, 1)));
    set_phase(s, PHASE_DRAIN);
    s->drain_deadline = uv_now(s->main_loop) + drain_budget_ms(s->cfg.shutdown_grace_ms);
    uv_timer_start(&s->drain_timer, on_drain_tick, DRAIN_POLL_MS, DRAIN_POLL_MS);
}

/* glibc keeps freed memory in its arenas: after a burst (a thousand
 * connections, a load peak, the parsing of the initial cache lists) the RSS
 * would stay at its peak. Once the burst is over - fewer connections than at
 * the last tick, or no request for a whole tick after some - hand the free
 * pages back, a few ticks in a row: connections close (and workers release
 * their spare buffers) a little after their last request. Cheap when there is
 * nothing to trim, and never while requests keep coming at a steady number of
 * connections. */
static void on_trim_tick(uv_timer_t *t)
{
    tg_server *s = t->data;
    long conns = total(s, 0), served = 0;
    int quiet, shrinking;

    for (int i = 0; i < s->nworkers; i++)
        served += atomic_load_explicit(&s->workers[i].served, memory_order_relaxed);
    quiet = served == s->trim_served;
    shrinking = conns < s->trim_conns_last;
    if (!s->trim_synced && s->cfg.lookup->ops->synced(s->cfg.lookup)) {
        s->trim_synced = 1;
        s->trim_rounds = TRIM_ROUNDS;  /* the initial lists' parse garbage */
    }
    if (!quiet || conns != s->trim_conns_last)
        s->trim_rounds = TRIM_ROUNDS;
    s->trim_served = served;
    s->trim_conns_last = conns;
    if (s->trim_rounds > 0 && (quiet || shrinking)) {
        malloc_trim(0);
        /* start-up-only library pages (common/file_pages.h); not while
         * requests run: their code would fault back in */
        if (quiet)
            tg_file_pages_release();
        s->trim_rounds--;
    }
}

static void on_signal(uv_signal_t *sig, int signum)
{
    tg_server_shutdown(sig->data);
}

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

/* ---------- life cycle ---------- */

static void register_metrics(tg_server *s)
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

static void globalconf_init(h2o_globalconf_t *conf, tg_server *s, int (*on_req)(h2o_handler_t *, h2o_req_t *))
{
    h2o_hostconf_t *host;
    h2o_pathconf_t *path;
    app_handler *h;

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
    path = h2o_config_register_path(host, "/", 0);
    h = (app_handler *)h2o_create_handler(path, sizeof(*h));
    h->super.on_req = on_req;
    h->server = s;
}

tg_server *tg_server_new(uv_loop_t *main_loop, const tg_server_config *cfg, char *err, size_t err_len)
{
    tg_server *s = calloc(1, sizeof(*s));
    int fd, port;

    if (!s) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->main_loop = main_loop;
    s->metrics = tg_metrics_new();
    if (!s->metrics)
        goto oom;
    register_metrics(s);
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
    globalconf_init(&s->conf, s, on_https_request);

    s->nworkers = cfg->threads > 0 ? cfg->threads : 1;
    if (!(s->workers = calloc((size_t)s->nworkers, sizeof(worker))))
        goto oom;
    port = cfg->listen_port;
    /* SO_REUSEPORT would also let us join a port that another process of
     * this user already serves (a stale instance) and take half its
     * connections: a plain bind first proves the port is free. */
    if (port != 0) {
        int probe_port;
        if ((fd = bind_socket(cfg->listen_host, port, 0, &probe_port, err, err_len)) < 0)
            goto fail;
        close(fd);
    }
    for (int i = 0; i < s->nworkers; i++) {
        /* with port 0 the first bind picks it, the others join that port */
        if ((fd = bind_socket(cfg->listen_host, port, 1, &port, err, err_len)) < 0)
            goto fail;
        if (worker_init(s, &s->workers[i], i, fd, err, err_len) != 0)
            goto fail;
    }
    s->port = port;

    if (cfg->metrics_port >= 0) {
        tg_probe_config pc = {.host = cfg->metrics_host, .port = cfg->metrics_port, .metrics = s->metrics,
                              .not_ready = probe_not_ready, .before_metrics = probe_before_metrics, .data = s};
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

    uv_timer_init(s->main_loop, &s->drain_timer);
    s->drain_timer.data = s;
    uv_timer_init(s->main_loop, &s->trim_timer);
    s->trim_timer.data = s;
    uv_timer_start(&s->trim_timer, on_trim_tick, TRIM_CHECK_MS, TRIM_CHECK_MS);
    uv_unref((uv_handle_t *)&s->trim_timer);
    uv_signal_init(s->main_loop, &s->sigterm);
    uv_signal_init(s->main_loop, &s->sigint);
    s->sigterm.data = s->sigint.data = s;
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    rc = tg_certwatch_start(&s->watch, s->main_loop, &s->tls, s->cfg.cert_check_ms, on_cert_reload, s);
    s->watch_started = 1;
    if (rc != 0)
        tg_log(TG_LOG_WARN, "cannot watch the certificate directory, checking periodically only",
               TG_LOG_STR("error", uv_strerror(rc)));
    for (int i = 0; i < s->nworkers; i++) {
        if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0) {
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
    /* h2o closes its own timers in dispose; the rest of a worker loop is ours.
     * The watch is closed first: dispose frees the context's timestamp and
     * then runs the loop once, where a due watch tick would run against the
     * disposed context (it read the freed timestamp while it did so on every
     * tick: a double free). */
    for (int i = 0; i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        tg_conns_stop(&w->conns);
        context_dispose(&w->ctx);
        uv_walk(&w->loop, close_walk, NULL);
        uv_run(&w->loop, UV_RUN_DEFAULT);
        uv_loop_close(&w->loop);
    }
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
