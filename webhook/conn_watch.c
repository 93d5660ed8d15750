/* conn_watch.c - the periodic look at every connection of a worker (conns.h
 * lists what it bounds), and the rate-limited log line of what the limits
 * refused or closed. */
#include <string.h>
#include <sys/socket.h>

#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/http2.h>

#include "common/log.h"
#include "webhook/conn_priv.h"

/* A write counts as dead once seen dead this many ticks in a row: a write
 * libuv did accept completes (or fails) within one loop turn. */
#define DEAD_WRITE_TICKS 2
/* Hostile traffic is summed up in one log line per worker at most this
 * often, never one line per connection. */
#define LIMITED_LOG_MS 10000

static const char *const limited_names[LIMITED_N] = {
    "refused_at_limit", "refused_per_peer", "evicted", "no_request", "http2_refused",
};

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
    tg_conn_count(c->owner->cfg.closed_dead);
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
    tg_conn_shutdown(c, SHUT_RD, NULL);
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

    if (begin->tv_sec == 0 || (c = tg_conn_of_req(req)) == NULL || !c->sock || c->shut || c->pending ||
        !h2o_socket_is_reading(c->sock))
        return 0;
    if (ms_between(begin, &sw->now) > (int64_t)sw->cs->cfg.timeout_ms)
        tg_conn_shutdown(c, SHUT_RDWR, sw->cs->cfg.closed_slow);
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
    if (ms_between(begin, &sw->now) > (int64_t)sw->cs->cfg.timeout_ms && (c = tg_conn_of_req(req)) != NULL &&
        c->pending == 0)
        tg_conn_shutdown(c, SHUT_RDWR, sw->cs->cfg.closed_stalled);
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

    tg_conn_shutdown(c, SHUT_RDWR, cs->cfg.closed_no_request);
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

void tg_conns_on_watch(uv_timer_t *t)
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
