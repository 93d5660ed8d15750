/* probe_server.c - see probe_server.h. */
#include "common/probe_server.h"

#include "common/listen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <h2o.h>

#define PROBE_REQ_TIMEOUT_MS 10000

typedef struct probe_handler {
    h2o_handler_t super;
    tg_probe_server *p;
} probe_handler;

struct tg_probe_server {
    tg_probe_config cfg;
    h2o_globalconf_t conf;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept;
    uv_tcp_t listener;
    int listening, port, conns;
};

/* h2o's uv binding keeps its socket in the handle's data: ours go beside. */
typedef struct probe_conn {
    uv_tcp_t tcp;                  /* first: the close callback gets &tcp */
    tg_probe_server *p;
} probe_conn;

static int iov_is(h2o_iovec_t v, const char *s)
{
    size_t n = strlen(s);
    return v.len == n && memcmp(v.base, s, n) == 0;
}

static void send_text(h2o_req_t *req, int status, const char *reason, const char *content_type,
                      const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type,
                   strlen(content_type));
    h2o_send_inline(req, body, len);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    tg_probe_server *p = ((probe_handler *)self)->p;
    static const char text[] = "text/plain; charset=utf-8";

    if (!iov_is(req->method, "GET") && !iov_is(req->method, "HEAD")) {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("GET, HEAD"));
        send_text(req, 405, "Method Not Allowed", text, H2O_STRLIT("use GET\n"));
    } else if (iov_is(req->path_normalized, "/healthz")) {
        send_text(req, 200, "OK", text, H2O_STRLIT("ok\n"));
    } else if (iov_is(req->path_normalized, "/readyz")) {
        const char *why = p->cfg.not_ready ? p->cfg.not_ready(p->cfg.data) : NULL;
        char body[160];
        int n = snprintf(body, sizeof(body), "%s\n", why ? why : "ready");
        if (n < 0 || (size_t)n >= sizeof(body))
            n = (int)sizeof(body) - 1;
        send_text(req, why ? 503 : 200, why ? "Service Unavailable" : "OK", text, body, (size_t)n);
    } else if (iov_is(req->path_normalized, "/metrics") && p->cfg.metrics) {
        size_t len;
        char *body;
        if (p->cfg.before_metrics)
            p->cfg.before_metrics(p->cfg.data);
        if (!(body = tg_metrics_render(p->cfg.metrics, &len))) {
            h2o_send_error_500(req, "Internal Server Error", "out of memory\n", 0);
            return 0;
        }
        send_text(req, 200, "OK", TG_METRICS_CONTENT_TYPE, body, len);
        free(body);
    } else {
        send_text(req, 404, "Not Found", text, H2O_STRLIT("not found\n"));
    }
    return 0;
}

static void on_conn_closed(uv_handle_t *h)
{
    probe_conn *pc = (probe_conn *)h;
    pc->p->conns--;
    free(pc);
}

static void on_accept(uv_stream_t *listener, int status)
{
    tg_probe_server *p = listener->data;
    probe_conn *pc;

    if (status != 0)
        return;
    pc = h2o_mem_alloc(sizeof(*pc));
    pc->p = p;
    uv_tcp_init(listener->loop, &pc->tcp);
    if (uv_accept(listener, (uv_stream_t *)&pc->tcp) != 0) {
        uv_close((uv_handle_t *)&pc->tcp, (uv_close_cb)free);
        return;
    }
    p->conns++;
    h2o_accept(&p->accept, h2o_uv_socket_create((uv_stream_t *)&pc->tcp, on_conn_closed));
}

tg_probe_server *tg_probe_server_new(uv_loop_t *loop, const tg_probe_config *cfg, char *err, size_t err_len)
{
    tg_probe_server *p = calloc(1, sizeof(*p));
    h2o_hostconf_t *host;
    h2o_pathconf_t *path;
    probe_handler *h;
    int fd, rc;

    if (!p) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    p->cfg = *cfg;
    if ((fd = tg_listen_socket(cfg->host, cfg->port, 0, &p->port, err, err_len)) < 0) {
        free(p);
        return NULL;
    }
    h2o_config_init(&p->conf);
    p->conf.server_name = h2o_iovec_init(H2O_STRLIT("tenantgate"));
    p->conf.max_request_entity_size = 4096;   /* probes carry no body */
    p->conf.http1.req_timeout = PROBE_REQ_TIMEOUT_MS;
    host = h2o_config_register_host(&p->conf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    path = h2o_config_register_path(host, "/", 0);
    h = (probe_handler *)h2o_create_handler(path, sizeof(*h));
    h->super.on_req = on_req;
    h->p = p;
    h2o_context_init(&p->ctx, loop, &p->conf);
    p->accept.ctx = &p->ctx;
    p->accept.hosts = p->conf.hosts;
    uv_tcp_init(loop, &p->listener);
    p->listener.data = p;
    p->listening = 1;
    if ((rc = uv_tcp_open(&p->listener, fd)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&p->listener, 128, on_accept)) != 0) {
        snprintf(err, err_len, "cannot listen for probes: %s", uv_strerror(rc));
        /* start-up failure: the caller exits; the socket closes with it */
        return NULL;
    }
    return p;
}

int tg_probe_server_port(const tg_probe_server *p)
{
    return p->port;
}

int tg_probe_server_connections(const tg_probe_server *p)
{
    return p->conns;
}

void tg_probe_server_close(tg_probe_server *p)
{
    if (p->listening) {
        uv_close((uv_handle_t *)&p->listener, NULL);
        p->listening = 0;
    }
    h2o_context_request_shutdown(&p->ctx);
}

int tg_probe_server_free(tg_probe_server *p)
{
    if (!p)
        return 0;
    if (p->conns != 0)
        return -1;
    if (h2o_timeout_is_linked(&p->ctx.http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&p->ctx.http2._graceful_shutdown_timeout);
    h2o_context_dispose(&p->ctx);
    h2o_config_dispose(&p->conf);
    free(p);
    return 0;
}
