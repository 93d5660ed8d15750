/* conn_priv.h - one accepted connection, as conns.c (accept, limits, life
 * cycle), conn_proto.c (ALPN, the first bytes, HTTP/2 frame counting) and
 * conn_watch.c (the periodic watch) share it. Loop thread only. */
#ifndef TG_WEBHOOK_CONN_PRIV_H
#define TG_WEBHOOK_CONN_PRIV_H

#include <stdint.h>
#include <sys/time.h>
#include <uv.h>

#include <h2o.h>

#include "common/conn_slots.h"
#include "common/metrics.h"
#include "webhook/conns.h"
#include "webhook/h2_frames.h"
#include "common/peers.h"

/* What tg_conns.limited counts (conn_watch.c logs them). */
enum { LIMITED_REFUSED, LIMITED_PEER, LIMITED_EVICTED, LIMITED_NO_REQUEST, LIMITED_H2_REFUSED, LIMITED_N };

/* A connection we accepted. h2o owns the protocol (and frees its socket when
 * it closes it); we own the TCP handle and this record. */
typedef struct conn {
    uv_tcp_t tcp;                  /* first: the close callback gets &tcp */
    tg_conns *owner;
    h2o_socket_t *sock;            /* NULL once h2o disposed of it */
    h2o_linklist_t link;
    tg_slot slot;                  /* the eviction order (common/conn_slots.h): busy once served */
    struct timeval connected_at;
    uint64_t accepted_ms;
    tg_peer_key peer;
    int handshaken;
    int served;                    /* a request reached the handler */
    int shut;                      /* shutdown(2) done: h2o closes it */
    int evictable;                 /* counted in tg_conns.evictable */
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

/* Add 1 to a metric series (NULL: none). */
void tg_conn_count(tg_metric_series *s);

/* A refusal or close caused by a client: counted for the log line
 * (LIMITED_*) and in s. */
void tg_conn_limited(tg_conns *cs, int what, tg_metric_series *s);

conn *tg_conn_of_socket(h2o_socket_t *sock);
conn *tg_conn_of_req(h2o_req_t *req);

/* Make h2o see the end of the stream (and fail its writes): it then closes
 * the connection through its own path, with no state pulled from under it.
 * Counted in why (may be NULL) when done now. */
void tg_conn_shutdown(conn *c, int how, tg_metric_series *why);

/* The connection had a request, was shut or is closing: no longer one
 * another worker may count on evicting. */
void tg_conn_settle(conn *c);

/* conn_proto.c: h2o_socket_ssl_handshake's callback; hands the socket to
 * HTTP/1.1 or HTTP/2 (conns.h). */
void tg_conn_on_handshake(h2o_socket_t *sock, const char *err);

/* conn_proto.c: the uv_prepare callback putting the HTTP/2 frame counting
 * back in front of h2o's read callback (data: the tg_conns). */
void tg_conns_before_poll(uv_prepare_t *p);

/* conn_watch.c: the watch timer's callback (data: the tg_conns). */
void tg_conns_on_watch(uv_timer_t *t);

#endif
