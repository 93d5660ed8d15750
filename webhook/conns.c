/* conns.c - see conns.h. */
#include "conns.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <h2o/http1.h>
#include <h2o/http2.h>
#include <h2o/socket/uv-binding.h>

#include "webhook/h2_frames.h"

/* How often the watch looks at every connection, and while draining. */
#define WATCH_MS 250
#define DRAIN_WATCH_MS 50
/* A write counts as dead once seen dead this many ticks in a row: a write
 * libuv did accept completes (or fails) within one loop turn. */
#define DEAD_WRITE_TICKS 2

/* A connection we accepted. h2o owns the protocol (and frees its socket when
 * it closes it); we own the TCP handle and this record. */
typedef struct conn {
    uv_tcp_t tcp;                  /* first: the close callback gets &tcp */
    tg_conns *owner;
    h2o_socket_t *sock;            /* NULL once h2o disposed of it */
    h2o_linklist_t link;
    struct timeval connected_at;
    uint64_t accepted_ms;
    int handshaken;
    int shut;                      /* shutdown(2) done: h2o closes it */
    int dead_ticks;
    int pending;                   /* asynchronous answers in progress */
    /* HTTP/2 only */
    int h2;
    h2o_socket_cb h2o_on_read;     /* h2o's read callback, which ours wraps */
    size_t seen;                   /* input bytes already counted */
    tg_h2_frames frames;
    uint64_t resets_base;          /* frames.resets at the window's start */
    uint64_t reset_window_ms;
} conn;

static void count(tg_metric_series *s)
{
    if (s)
        tg_counter_add(s, 1);
}

static conn *conn_of_socket(h2o_socket_t *sock)
{
    return sock ? sock->on_close.data : NULL;
}

static conn *conn_of_req(h2o_req_t *req)
{
    return conn_of_socket(req->conn->callbacks->get_socket(req->conn));
}

/* Make h2o see the end of the stream (and fail its writes): it then closes
 * the connection through its own path, with no state pulled from under it. */
static void close_by_shutdown(conn *c, int how, tg_metric_series *why)
{
    uv_os_fd_t fd;

    if (c->shut || uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        return;
    if (shutdown(fd, how) == 0) {
        c->shut = 1;
        count(why);
    }
}

/* ---------- life cycle of one connection ---------- */

static void on_tcp_closed(uv_handle_t *h)
{
    conn *c = (conn *)h;
    tg_conns *cs = c->owner;

    h2o_linklist_unlink(&c->link);
    atomic_fetch_sub(&cs->open, 1);
    atomic_fetch_sub(cs->cfg.open_total, 1);
    free(c);
}

/* h2o disposed of the socket; the TCP handle closes next. */
static void on_sock_disposed(void *data)
{
    ((conn *)data)->sock = NULL;
}

/* HTTP/2: count the client's frames before h2o parses them. */
static void on_h2_read(h2o_socket_t *sock, const char *err)
{
    conn *c = conn_of_socket(sock);
    tg_conns *cs = c->owner;

    if (err == NULL && sock->input->size > c->seen) {
        uint64_t before = c->frames.resets, now = uv_now(cs->loop);
        tg_h2_frames_feed(&c->frames, (const uint8_t *)sock->input->bytes + c->seen, sock->input->size - c->seen);
        if (cs->cfg.resets && c->frames.resets > before)
            tg_counter_add(cs->cfg.resets, (double)(c->frames.resets - before));
        if (now - c->reset_window_ms > TG_CONNS_RESET_WINDOW_MS) {
            c->reset_window_ms = now;
            c->resets_base = before;
        }
        if (c->frames.resets - c->resets_base > TG_CONNS_RESET_BURST) {
            /* Not one more frame of this client reaches h2o. */
            close_by_shutdown(c, SHUT_RDWR, cs->cfg.closed_resets);
            err = h2o_socket_error_closed;
        }
    }
    c->h2o_on_read(sock, err);
    /* h2o consumed what it could parse; the rest was counted already */
    if (c->sock)
        c->seen = sock->input->size;
}

static void on_handshake(h2o_socket_t *sock, const char *err)
{
    conn *c = conn_of_socket(sock);
    h2o_accept_ctx_t *actx = c->owner->cfg.accept_ctx;
    h2o_iovec_t proto;

    if (err != NULL) {
        h2o_socket_close(sock);
        return;
    }
    c->handshaken = 1;
    proto = h2o_socket_ssl_get_selected_protocol(sock);
    if (!(proto.len == 2 && memcmp(proto.base, "h2", 2) == 0)) {
        h2o_http1_accept(actx, sock, c->connected_at);
        return;
    }
    c->h2 = 1;
    c->reset_window_ms = uv_now(c->owner->loop);
    tg_h2_frames_init(&c->frames);
    /* bytes that came with the handshake: h2o parses them inside accept */
    tg_h2_frames_feed(&c->frames, (const uint8_t *)sock->input->bytes, sock->input->size);
    h2o_http2_accept(actx, sock, c->connected_at);
    if (c->sock && c->sock->_cb.read) {
        c->h2o_on_read = c->sock->_cb.read;
        c->sock->_cb.read = on_h2_read;
        c->seen = c->sock->input->size;
    }
}

void tg_conns_on_accept(uv_stream_t *listener, int status)
{
    tg_conns *cs = listener->data;
    conn *c;

    if (status != 0)
        return;
    c = h2o_mem_alloc(sizeof(*c));
    memset(c, 0, sizeof(*c));
    uv_tcp_init(listener->loop, &c->tcp);
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, (uv_close_cb)free);
        return;
    }
    /* Over the limit: close at once, before any TLS work. */
    if (atomic_fetch_add(cs->cfg.open_total, 1) >= cs->cfg.max_open) {
        atomic_fetch_sub(cs->cfg.open_total, 1);
        count(cs->cfg.rejected);
        uv_close((uv_handle_t *)&c->tcp, (uv_close_cb)free);
        return;
    }
    atomic_fetch_add(&cs->open, 1);
    uv_tcp_nodelay(&c->tcp, 1);
    c->owner = cs;
    c->accepted_ms = uv_now(cs->loop);
    c->connected_at = *h2o_get_timestamp(cs->cfg.accept_ctx->ctx, NULL, NULL);
    h2o_linklist_insert(&cs->list, &c->link);
    c->sock = h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_tcp_closed);
    c->sock->on_close.cb = on_sock_disposed;
    c->sock->on_close.data = c;
    h2o_socket_ssl_handshake(c->sock, cs->cfg.accept_ctx->ssl_ctx, NULL, on_handshake);
}

/* ---------- the watch ---------- */

/* h2o waits for a write callback that libuv will never call (see conns.h):
 * complete the write with an error so h2o goes on closing the socket. */
static void complete_dead_write(conn *c)
{
    h2o_socket_cb cb;

    if (!h2o_socket_is_writing(c->sock) || uv_is_writable((uv_stream_t *)&c->tcp) ||
        c->tcp.write_queue_size != 0) {
        c->dead_ticks = 0;
        return;
    }
    if (++c->dead_ticks < DEAD_WRITE_TICKS)
        return;
    c->dead_ticks = 0;
    count(c->owner->cfg.closed_dead);
    cb = c->sock->_cb.write;
    c->sock->_cb.write = NULL;
    cb(c->sock, h2o_socket_error_io);
}

/* While draining: a connection that waits for its next request (reading,
 * nothing buffered, nothing being written, no answer pending) gets its read
 * side shut; h2o sees end-of-stream and closes it. Clients (Go's net/http in
 * kube-apiserver) retry a request on a kept-alive connection the server
 * closed before answering. */
static void reap_if_idle(conn *c)
{
    if (c->shut || c->pending || !h2o_socket_is_reading(c->sock) || h2o_socket_is_writing(c->sock) ||
        c->sock->input->size != 0)
        return;
    close_by_shutdown(c, SHUT_RD, NULL);
}

static int64_t ms_between(const struct timeval *since, const struct timeval *now)
{
    return (int64_t)(now->tv_sec - since->tv_sec) * 1000 + (now->tv_usec - since->tv_usec) / 1000;
}

/* One look at every request: the time is read once per tick. */
typedef struct sweep {
    tg_conns *cs;
    struct timeval now;
} sweep;

/* An HTTP/1.1 request h2o is still reading: it has begun (h2o stamps its
 * first byte) and h2o still reads, as it stops once the request is whole. */
static int on_each_h1_request(h2o_req_t *req, void *data)
{
    sweep *sw = data;
    const struct timeval *begin = &req->timestamps.request_begin_at;
    conn *c;

    if (begin->tv_sec == 0 || (c = conn_of_req(req)) == NULL || !c->sock || c->shut || c->pending ||
        !h2o_socket_is_reading(c->sock))
        return 0;
    if (ms_between(begin, &sw->now) > (int64_t)sw->cs->cfg.timeout_ms)
        close_by_shutdown(c, SHUT_RDWR, sw->cs->cfg.closed_slow);
    return 0;
}

/* Every HTTP/2 stream h2o holds. h2o 2.2.5 stamps no time on HTTP/2
 * requests, so the first sweep that sees a stream stamps it. */
static int on_each_h2_stream(h2o_req_t *req, void *data)
{
    sweep *sw = data;
    struct timeval *begin = &req->timestamps.request_begin_at;
    conn *c;

    if (req->input.method.len == 0)
        return 0;                  /* headers not parsed yet, or a priority-only stream */
    if (begin->tv_sec == 0) {
        *begin = sw->now;
        return 0;
    }
    if (ms_between(begin, &sw->now) > (int64_t)sw->cs->cfg.timeout_ms && (c = conn_of_req(req)) != NULL &&
        c->pending == 0)
        close_by_shutdown(c, SHUT_RDWR, sw->cs->cfg.closed_stalled);
    return 0;
}

/* h2o keeps up to 16 freed socket buffers (8 KB each) per thread for reuse,
 * for ever. Once a burst of connections is over (half of them gone), give
 * them back so the main loop's malloc_trim can return the pages. Thread-local:
 * only this worker's loop thread can empty its own list. */
static void release_spare_buffers(tg_conns *cs)
{
    long open = atomic_load(&cs->open);
    h2o_mem_recycle_t *spare = &h2o_socket_buffer_prototype.allocator;

    if (open > cs->open_peak)
        cs->open_peak = open;
    if (open > cs->open_peak / 2 || spare->cnt == 0)
        return;
    while (spare->cnt > 0)
        free(h2o_mem_alloc_recycle(spare, 1));
    cs->open_peak = open;
}

static void on_watch(uv_timer_t *t)
{
    tg_conns *cs = t->data;
    h2o_context_t *ctx = cs->cfg.accept_ctx->ctx;
    uint64_t now = uv_now(cs->loop);
    h2o_linklist_t *node;
    int h1 = !h2o_linklist_is_empty(&ctx->http1._conns), h2 = !h2o_linklist_is_empty(&ctx->http2._conns);
    sweep sw = {.cs = cs};

    release_spare_buffers(cs);
    /* Only with connections to sweep: h2o's timestamp formats the time once a
     * second, and on an idle webhook that code would be paged back in after
     * tg_file_pages_release() every time. */
    if (h1 || h2)
        sw.now = *h2o_get_timestamp(ctx, NULL, NULL);
    if (h1)
        ctx->globalconf->http1.callbacks.foreach_request(ctx, on_each_h1_request, &sw);
    if (h2)
        ctx->globalconf->http2.callbacks.foreach_request(ctx, on_each_h2_stream, &sw);
    for (node = cs->list.next; node != &cs->list; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        if (!c->sock)
            continue;              /* closing */
        complete_dead_write(c);
        if (!c->sock)
            continue;
        if (!c->handshaken && now - c->accepted_ms > cs->cfg.timeout_ms)
            close_by_shutdown(c, SHUT_RDWR, NULL);
        else if (cs->draining)
            reap_if_idle(c);
    }
}

/* ---------- the module ---------- */

void tg_conns_init(tg_conns *cs, uv_loop_t *loop, const tg_conns_config *cfg)
{
    memset(cs, 0, sizeof(*cs));
    cs->cfg = *cfg;
    cs->loop = loop;
    h2o_linklist_init_anchor(&cs->list);
    uv_timer_init(loop, &cs->watch);
    cs->watch.data = cs;
    uv_timer_start(&cs->watch, on_watch, WATCH_MS, WATCH_MS);
    uv_unref((uv_handle_t *)&cs->watch);
}

void tg_conns_drain(tg_conns *cs)
{
    cs->draining = 1;
    uv_timer_start(&cs->watch, on_watch, 0, DRAIN_WATCH_MS);
}

void tg_conns_stop(tg_conns *cs)
{
    if (!uv_is_closing((uv_handle_t *)&cs->watch))
        uv_close((uv_handle_t *)&cs->watch, NULL);
}

void *tg_conns_request_pending(h2o_req_t *req)
{
    conn *c = conn_of_req(req);
    if (c)
        c->pending++;
    return c;
}

void tg_conns_request_done(void *handle)
{
    conn *c = handle;
    if (c)
        c->pending--;
}

long tg_conns_open(tg_conns *cs)
{
    return atomic_load(&cs->open);
}
