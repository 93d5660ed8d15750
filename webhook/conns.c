/* conns.c - see conns.h: accepting under the limits, and each connection's
 * life cycle. The protocol hand-over is in conn_proto.c, the watch in
 * conn_watch.c. */
#include "conns.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <h2o/socket/uv-binding.h>

#include "webhook/conn_priv.h"

/* How often the watch looks at every connection. */
#define WATCH_MS 250
#define DRAIN_WATCH_MS 50

void tg_conn_count(tg_metric_series *s)
{
    if (s)
        tg_counter_add(s, 1);
}

void tg_conn_limited(tg_conns *cs, int what, tg_metric_series *s)
{
    cs->limited[what]++;
    tg_conn_count(s);
}

conn *tg_conn_of_socket(h2o_socket_t *sock)
{
    return sock ? sock->on_close.data : NULL;
}

conn *tg_conn_of_req(h2o_req_t *req)
{
    return tg_conn_of_socket(req->conn->callbacks->get_socket(req->conn));
}

void tg_conn_shutdown(conn *c, int how, tg_metric_series *why)
{
    uv_os_fd_t fd;

    if (c->shut || uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        return;
    if (shutdown(fd, how) == 0) {
        c->shut = 1;
        c->slot.evicted = 1;       /* closing: no candidate for eviction */
        tg_conn_settle(c);
        tg_conn_count(why);
    }
}

void tg_conn_settle(conn *c)
{
    if (c->evictable) {
        c->evictable = 0;
        atomic_fetch_sub(&c->owner->evictable, 1);
    }
}

/* ---------- life cycle of one connection ---------- */

static void on_tcp_closed(uv_handle_t *h)
{
    conn *c = (conn *)h;
    tg_conns *cs = c->owner;

    tg_conn_settle(c);
    h2o_linklist_unlink(&c->link);
    tg_slots_release(&cs->slots, &c->slot);
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
    conn *c = data;

    tg_conn_settle(c);
    c->sock = NULL;
    c->slot.evicted = 1;
}

/* At the limit, common/conn_slots.c picks the oldest connection that has
 * not had a request yet (handshaking, or waiting for its first bytes) and
 * this closes it, so the newcomer gets its slot. Clients that send requests
 * keep theirs. 1 when it was closed. */
static int evict_conn(tg_slots *ss, tg_slot *slot)
{
    conn *c = H2O_STRUCT_FROM_MEMBER(conn, slot, slot);
    tg_conns *cs = ss->data;

    tg_conn_shutdown(c, SHUT_RDWR, NULL);
    if (!c->shut)
        return 0;
    tg_conn_limited(cs, LIMITED_EVICTED, cs->cfg.closed_evicted);
    return 1;
}

static int evict_one(tg_conns *cs)
{
    return tg_slots_evict_oldest(&cs->slots);
}

/* Room for one more connection from key: under the per-address cap, and
 * under the limit or by evicting. 0 and counted, or -1. */
static int take_slot(tg_conns *cs, const tg_peer_key *key)
{
    long open, slack;

    if (tg_peers_add(cs->cfg.peers, key) != 0) {
        tg_conn_limited(cs, LIMITED_PEER, cs->cfg.rejected_peer);
        return -1;
    }
    slack = tg_slots_slack(cs->cfg.max_open);
    open = atomic_fetch_add(cs->cfg.open_total, 1);
    if (open < cs->cfg.max_open)
        return 0;
    /* Workers share the limit but each evicts only its own connections: one
     * holding none idle asks another, whose connection closes a turn later. */
    if (open < cs->cfg.max_open + slack &&
        (evict_one(cs) || (cs->cfg.evict_elsewhere && cs->cfg.evict_elsewhere(cs->cfg.evict_data))))
        return 0;
    atomic_fetch_sub(cs->cfg.open_total, 1);
    tg_peers_remove(cs->cfg.peers, key);
    tg_conn_limited(cs, LIMITED_REFUSED, cs->cfg.rejected);
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
    c->evictable = 1;
    atomic_fetch_add(&cs->evictable, 1);
    c->accepted_ms = uv_now(cs->loop);
    c->connected_at = *h2o_get_timestamp(cs->cfg.accept_ctx->ctx, NULL, NULL);
    h2o_linklist_insert(&cs->list, &c->link);
    tg_slots_add(&cs->slots, &c->slot);
    c->sock = h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_tcp_closed);
    c->sock->on_close.cb = on_sock_disposed;
    c->sock->on_close.data = c;
    h2o_socket_ssl_handshake(c->sock, cs->cfg.accept_ctx->ssl_ctx, NULL, tg_conn_on_handshake);
}

/* ---------- the module ---------- */

void tg_conns_init(tg_conns *cs, uv_loop_t *loop, const tg_conns_config *cfg)
{
    memset(cs, 0, sizeof(*cs));
    cs->cfg = *cfg;
    cs->loop = loop;
    cs->logged_ms = uv_now(loop);
    h2o_linklist_init_anchor(&cs->list);
    tg_slots_init(&cs->slots, cfg->max_open, evict_conn, cs);
    uv_timer_init(loop, &cs->watch);
    cs->watch.data = cs;
    uv_timer_start(&cs->watch, tg_conns_on_watch, WATCH_MS, WATCH_MS);
    uv_unref((uv_handle_t *)&cs->watch);
    uv_prepare_init(loop, &cs->rewrap);
    cs->rewrap.data = cs;
    uv_prepare_start(&cs->rewrap, tg_conns_before_poll);
    uv_unref((uv_handle_t *)&cs->rewrap);
}

void tg_conns_drain(tg_conns *cs)
{
    cs->draining = 1;
    uv_timer_start(&cs->watch, tg_conns_on_watch, 0, DRAIN_WATCH_MS);
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
    conn *c = tg_conn_of_req(req);
    if (c && !c->served) {
        c->served = 1;
        tg_slot_request_begin(&c->slot);   /* never ended: a served connection is kept */
        tg_conn_settle(c);
    }
}

void *tg_conns_request_pending(h2o_req_t *req)
{
    conn *c = tg_conn_of_req(req);
    if (c) {
        c->pending++;
        tg_slot_request_begin(&c->slot);
        tg_conn_settle(c);
    }
    return c;
}

int tg_conns_promise_eviction(tg_conns *cs)
{
    long owed = atomic_load(&cs->evictions_owed);

    while (atomic_load(&cs->evictable) > owed)
        if (atomic_compare_exchange_weak(&cs->evictions_owed, &owed, owed + 1))
            return 1;
    return 0;
}

void tg_conns_pay_evictions(tg_conns *cs)
{
    long owed = atomic_exchange(&cs->evictions_owed, 0);

    while (owed-- > 0 && evict_one(cs))
        ;
}

void tg_conns_request_done(void *handle)
{
    conn *c = handle;
    if (c) {
        c->pending--;
        tg_slot_request_end(&c->slot);
    }
}

long tg_conns_open(tg_conns *cs)
{
    return atomic_load(&cs->open);
}
