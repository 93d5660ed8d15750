/* conns.c - see conns.h. */
#include "conns.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <h2o/http1.h>
#include <h2o/http2.h>
#include <h2o/socket/uv-binding.h>

#include "common/log.h"
#include "webhook/h2_frames.h"

/* How often the watch looks at every connection, and while draining. */
#define WATCH_MS 250
#define DRAIN_WATCH_MS 50
/* A write counts as dead once seen dead this many ticks in a row: a write
 * libuv did accept completes (or fails) within one loop turn. */
#define DEAD_WRITE_TICKS 2
/* Hostile traffic is summed up in one log line per worker at most this
 * often, never one line per connection. */
#define LIMITED_LOG_MS 10000
/* Evicted connections still count until h2o has closed them, on the next
 * loop turn: libuv accepts the whole backlog (up to 1,024) in one turn, each
 * newcomer evicting one. Past max_open by max(max_open, this), newcomers are
 * refused even when more could be evicted: at most twice the limit, briefly. */
#define EVICT_SLACK_MIN 64

/* What tg_conns.limited counts, and the log line's field names. */
enum { LIMITED_REFUSED, LIMITED_PEER, LIMITED_EVICTED, LIMITED_NO_REQUEST, LIMITED_H2_REFUSED, LIMITED_N };
static const char *const limited_names[LIMITED_N] = {
    "refused_at_limit", "refused_per_peer", "evicted", "no_request", "http2_refused",
};

/* A connection we accepted. h2o owns the protocol (and frees its socket when
 * it closes it); we own the TCP handle and this record. */
typedef struct conn {
    uv_tcp_t tcp;                  /* first: the close callback gets &tcp */
    tg_conns *owner;
    h2o_socket_t *sock;            /* NULL once h2o disposed of it */
    h2o_linklist_t link;
    struct timeval connected_at;
    uint64_t accepted_ms;
    tg_peer_key peer;
    int handshaken;
    int served;                    /* a request reached the handler */
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

static void limited(tg_conns *cs, int what, tg_metric_series *s)
{
    cs->limited[what]++;
    count(s);
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
    tg_peers_remove(cs->cfg.peers, &c->peer);
    if (c->h2)
        cs->h2_open--;
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

/* Hand the socket to h2o's HTTP/2, counting the client's frames from its
 * first byte (the preface included). */
static void start_h2(conn *c, h2o_socket_t *sock)
{
    c->h2 = 1;
    c->owner->h2_open++;
    c->reset_window_ms = uv_now(c->owner->loop);
    tg_h2_frames_init(&c->frames);
    /* bytes already read: h2o parses them inside accept */
    tg_h2_frames_feed(&c->frames, (const uint8_t *)sock->input->bytes, sock->input->size);
    h2o_http2_accept(c->owner->cfg.accept_ctx, sock, c->connected_at);
    if (c->sock && c->sock->_cb.read) {
        c->h2o_on_read = c->sock->_cb.read;
        c->sock->_cb.read = on_h2_read;
        c->seen = c->sock->input->size;
    }
}

static const char h2_preface[TG_H2_PREFACE_LEN] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* The first bytes of a connection without ALPN h2: the HTTP/2 preface goes to
 * HTTP/2 (or is refused without --http2), anything else to HTTP/1.1. h2o
 * 2.2.5's HTTP/1.1 would switch to HTTP/2 on the preface by itself, past our
 * reset counting and whatever --http2 says (its upgrade is turned off in the
 * globalconf as well). Returns 1 once decided. */
static int sniff(conn *c, h2o_socket_t *sock)
{
    size_t n = sock->input->size < TG_H2_PREFACE_LEN ? sock->input->size : TG_H2_PREFACE_LEN;

    if (n == 0)
        return 0;
    if (memcmp(sock->input->bytes, h2_preface, n) != 0) {
        h2o_http1_accept(c->owner->cfg.accept_ctx, sock, c->connected_at);
        return 1;
    }
    if (n < TG_H2_PREFACE_LEN)
        return 0;                  /* so far a prefix of the preface */
    if (c->owner->cfg.enable_h2) {
        start_h2(c, sock);
        return 1;
    }
    limited(c->owner, LIMITED_H2_REFUSED, c->owner->cfg.closed_h2_refused);
    h2o_socket_close(sock);
    return 1;
}

static void on_first_bytes(h2o_socket_t *sock, const char *err)
{
    conn *c = conn_of_socket(sock);

    if (err != NULL) {
        h2o_socket_close(sock);
        return;
    }
    sniff(c, sock);
}

static void on_handshake(h2o_socket_t *sock, const char *err)
{
    conn *c = conn_of_socket(sock);
    h2o_iovec_t proto;

    if (err != NULL) {
        h2o_socket_close(sock);
        return;
    }
    c->handshaken = 1;
    proto = h2o_socket_ssl_get_selected_protocol(sock);
    if (proto.len == 2 && memcmp(proto.base, "h2", 2) == 0)
        start_h2(c, sock);
    else if (!sniff(c, sock))
        h2o_socket_read_start(sock, on_first_bytes);
}

/* At the limit: close the oldest connection that has not had a request yet
 * (handshaking, or waiting for its first bytes) so the newcomer gets its
 * slot. Clients that send requests keep theirs. 1 when one was evicted. */
static int evict_one(tg_conns *cs)
{
    for (h2o_linklist_t *node = cs->list.next; node != &cs->list; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        if (c->sock && !c->shut && !c->served && !c->pending) {
            close_by_shutdown(c, SHUT_RDWR, NULL);
            if (c->shut) {
                limited(cs, LIMITED_EVICTED, cs->cfg.closed_evicted);
                return 1;
            }
        }
    }
    return 0;
}

/* Room for one more connection from key: under the per-address cap, and
 * under the limit or by evicting. 0 and counted, or -1. */
static int take_slot(tg_conns *cs, const tg_peer_key *key)
{
    long open, slack;

    if (tg_peers_add(cs->cfg.peers, key) != 0) {
        limited(cs, LIMITED_PEER, cs->cfg.rejected_peer);
        return -1;
    }
    slack = cs->cfg.max_open > EVICT_SLACK_MIN ? cs->cfg.max_open : EVICT_SLACK_MIN;
    open = atomic_fetch_add(cs->cfg.open_total, 1);
    if (open < cs->cfg.max_open || (open < cs->cfg.max_open + slack && evict_one(cs)))
        return 0;
    atomic_fetch_sub(cs->cfg.open_total, 1);
    tg_peers_remove(cs->cfg.peers, key);
    limited(cs, LIMITED_REFUSED, cs->cfg.rejected);
    return -1;
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
    {
        struct sockaddr_storage ss;
        int len = sizeof(ss);
        if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0)
            tg_peer_key_of((struct sockaddr *)&ss, &c->peer);
    }
    /* No room: close at once, before any TLS work. */
    if (take_slot(cs, &c->peer) != 0) {
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

/* No request within the timeout of the accept: handshake not finished, or
 * nothing (or no whole request) sent since. A request still arriving is
 * counted as slow_request when h2o has stamped its first byte. */
static void close_no_request(conn *c)
{
    tg_conns *cs = c->owner;
    int was = c->shut;

    close_by_shutdown(c, SHUT_RDWR, cs->cfg.closed_no_request);
    if (!was && c->shut)
        cs->limited[LIMITED_NO_REQUEST]++;
}

/* One line per LIMITED_LOG_MS at most, with what was refused or closed
 * since the last one: a flood shows in the log without a line per
 * connection. */
static void log_limited(tg_conns *cs, uint64_t now)
{
    long sum = 0;

    if (now - cs->logged_ms < LIMITED_LOG_MS)
        return;
    for (int i = 0; i < LIMITED_N; i++)
        sum += cs->limited[i];
    if (sum == 0)
        return;
    tg_log(TG_LOG_WARN, "connections limited", TG_LOG_INT(limited_names[0], cs->limited[0]),
           TG_LOG_INT(limited_names[1], cs->limited[1]), TG_LOG_INT(limited_names[2], cs->limited[2]),
           TG_LOG_INT(limited_names[3], cs->limited[3]), TG_LOG_INT(limited_names[4], cs->limited[4]),
           TG_LOG_INT("open", atomic_load(&cs->open)), TG_LOG_INT("seconds", (now - cs->logged_ms) / 1000));
    memset(cs->limited, 0, sizeof(cs->limited));
    cs->logged_ms = now;
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
    log_limited(cs, now);
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
        if (!c->served && !c->pending && now - c->accepted_ms > cs->cfg.timeout_ms)
            close_no_request(c);
        else if (cs->draining)
            reap_if_idle(c);
    }
}

/* h2o's HTTP/2 stops reading while 16 requests of a connection are being
 * answered, and starts again, with its own read callback, when one is done
 * (from a write's completion, outside ours). Before the loop next waits for
 * input, put the frame counting back in front of it: no read reaches h2o
 * uncounted, so the counting never loses its place in the frame stream. */
static void on_before_poll(uv_prepare_t *p)
{
    tg_conns *cs = p->data;

    if (cs->h2_open == 0)
        return;
    for (h2o_linklist_t *node = cs->list.next; node != &cs->list; node = node->next) {
        conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, node);
        if (c->h2 && c->sock && c->sock->_cb.read && c->sock->_cb.read != on_h2_read) {
            c->h2o_on_read = c->sock->_cb.read;
            c->sock->_cb.read = on_h2_read;
            c->seen = c->sock->input->size;    /* what is left was counted */
        }
    }
}

/* ---------- the module ---------- */

void tg_conns_init(tg_conns *cs, uv_loop_t *loop, const tg_conns_config *cfg)
{
    memset(cs, 0, sizeof(*cs));
    cs->cfg = *cfg;
    cs->loop = loop;
    cs->logged_ms = uv_now(loop);
    h2o_linklist_init_anchor(&cs->list);
    uv_timer_init(loop, &cs->watch);
    cs->watch.data = cs;
    uv_timer_start(&cs->watch, on_watch, WATCH_MS, WATCH_MS);
    uv_unref((uv_handle_t *)&cs->watch);
    uv_prepare_init(loop, &cs->rewrap);
    cs->rewrap.data = cs;
    uv_prepare_start(&cs->rewrap, on_before_poll);
    uv_unref((uv_handle_t *)&cs->rewrap);
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
    if (!uv_is_closing((uv_handle_t *)&cs->rewrap))
        uv_close((uv_handle_t *)&cs->rewrap, NULL);
}

void tg_conns_request_seen(h2o_req_t *req)
{
    conn *c = conn_of_req(req);
    if (c)
        c->served = 1;
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
