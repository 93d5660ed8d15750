/* conns.h - one worker's TLS connections (conns.c, conn_proto.c,
 * conn_watch.c): accepted under the limits below, listed so that a drain
 * can close the idle ones, and watched for what h2o 2.2.5 leaves
 * unbounded:
 *
 *  - A write that never completes. h2o's libuv binding ignores uv_write()'s
 *    result; after a peer resets the connection libuv refuses writes, so the
 *    TLS close_notify of the closing connection waits forever and the socket,
 *    its TLS state and buffers stay (one per client that resets). The watch
 *    completes such a write with an error, and h2o closes the socket.
 *  - A connection whose first request has not reached the server within
 *    the request timeout of the accept, TLS handshake included (h2o_accept's
 *    own timer is not used: accepting here is what lets the HTTP/2 frames be
 *    counted below). Otherwise an idle connection would hold its slot for
 *    the (much longer) idle timeout.
 *  - Too many connections: one source address may hold at most a per-peer
 *    cap (peers.h), and at the server-wide limit the oldest connection that
 *    has not yet had a request is evicted for the newcomer, so a flood of
 *    idle connections never locks out a client that sends requests. Only
 *    when none can be evicted is the newcomer closed at accept.
 *  - HTTP/2 by prior knowledge: the first bytes of a connection that did not
 *    negotiate h2 by ALPN are looked at before h2o sees them. The HTTP/2
 *    preface is refused (closed) without --http2, and with it goes to the
 *    same HTTP/2 path as ALPN h2, reset counting included.
 *  - An HTTP/1.1 request that is still arriving a timeout after its first
 *    byte. h2o's own timer covers the wait for a request and its arrival
 *    together, and is set to the (longer) idle timeout.
 *  - An HTTP/2 stream that makes no progress. h2o arms its HTTP/2 idle timer
 *    only while no request is open, so a client that never sends the rest of
 *    a body (or never opens its flow-control window for the answer) holds the
 *    connection forever. The watch closes a connection once one of its
 *    streams is older than the request timeout.
 *  - HTTP/2 clients that reset streams in bursts ("rapid reset"): each reset
 *    stream frees its slot at once, so the per-connection stream limit does
 *    not bound the work. RST_STREAM frames are counted; a burst closes the
 *    connection.
 *
 * Everything here runs on the worker's loop thread except the counters,
 * which are read by the metrics port. */
#ifndef TG_WEBHOOK_CONNS_H
#define TG_WEBHOOK_CONNS_H

#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include <h2o.h>

#include "common/conn_slots.h"
#include "common/metrics.h"
#include "common/peers.h"

/* A client that resets more than this many HTTP/2 streams within
 * TG_CONNS_RESET_WINDOW_MS loses its connection. kube-apiserver resets a
 * stream only when its own webhook timeout expires. */
#define TG_CONNS_RESET_BURST 100
#define TG_CONNS_RESET_WINDOW_MS 10000

typedef struct tg_conns_config {
    h2o_accept_ctx_t *accept_ctx;  /* the worker's context, hosts and SSL_CTX */
    atomic_long *open_total;       /* connections open in all workers */
    long max_open;                 /* past it, an idle newer-than-request connection makes room */
    tg_peers *peers;               /* per-address counts and cap, shared by the workers */
    int enable_h2;                 /* HTTP/2 served (ALPN h2 or prior knowledge) */
    uint64_t timeout_ms;           /* first request (handshake included), HTTP/1.1 request arrival, HTTP/2 stream age */
    /* metrics (any may be NULL) */
    tg_metric_series *rejected;    /* closed at accept: over max_open, nothing to evict */
    tg_metric_series *rejected_peer; /* closed at accept: the address is at its cap */
    tg_metric_series *closed_stalled, *closed_slow, *closed_resets, *closed_dead;
    tg_metric_series *closed_no_request, *closed_evicted, *closed_h2_refused;
    tg_metric_series *resets;      /* RST_STREAM frames received */
    /* At the limit with nothing of its own to evict: have another worker
     * evict one of its own (workers.c). 1 when one was promised. */
    int (*evict_elsewhere)(void *data);
    void *evict_data;
} tg_conns_config;

typedef struct tg_conns {
    tg_conns_config cfg;
    uv_loop_t *loop;
    h2o_linklist_t list;           /* of the private conn records */
    tg_slots slots;                /* the same, oldest first, for eviction; the limit is open_total's */
    uv_timer_t watch;
    uv_prepare_t rewrap;           /* HTTP/2 frame counting back in front of h2o (conns.c) */
    long h2_open;                  /* HTTP/2 connections, loop thread */
    int draining;
    long open_peak;                /* most open since spare buffers were released */
    uint64_t logged_ms;            /* last "connections limited" line */
    long limited[5];               /* refusals and closes since that line (conns.c) */
    atomic_long open;              /* this worker's open connections */
    atomic_long evictable;         /* of them, not yet had a request nor shut */
    atomic_long evictions_owed;    /* promised to other workers, paid on wake */
} tg_conns;

/* From any thread: promise one eviction from this worker's connections, if
 * it has more evictable than already promised. 1 when promised; the caller
 * then wakes the worker, which pays with tg_conns_pay_evictions(). */
int tg_conns_promise_eviction(tg_conns *cs);

/* On the worker's loop: evict what was promised (fewer if those connections
 * had a request meanwhile; the total is then over the limit until one closes). */
void tg_conns_pay_evictions(tg_conns *cs);

/* On the worker's loop, before it runs. */
void tg_conns_init(tg_conns *cs, uv_loop_t *loop, const tg_conns_config *cfg);

/* The uv_listen callback: the listener's data points at the tg_conns. Does
 * the TLS handshake, then hands the socket to h2o by ALPN or, without ALPN
 * h2, by its first bytes (the HTTP/2 preface, or anything else: HTTP/1.1). */
void tg_conns_on_accept(uv_stream_t *listener, int status);

/* Drain: from now on, close every connection that waits for its next
 * request, as soon as it does (checked every few tens of ms). Requests being
 * answered finish first. */
void tg_conns_drain(tg_conns *cs);

/* Close the timers (when the worker stops). */
void tg_conns_stop(tg_conns *cs);

/* A request of this connection reached the handler: from now on it is not
 * closed for having no request, nor evicted to make room. */
void tg_conns_request_seen(h2o_req_t *req);

/* The request's connection is answering asynchronously: neither a drain nor
 * the stall watch closes it until tg_conns_request_done() with the handle
 * returned (the connection outlives its requests). */
void *tg_conns_request_pending(h2o_req_t *req);
void tg_conns_request_done(void *handle);

long tg_conns_open(tg_conns *cs);

#endif
