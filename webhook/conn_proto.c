/* conn_proto.c - after the TLS handshake: HTTP/1.1 or HTTP/2, by ALPN or by
 * the first bytes, and the count of HTTP/2 resets in front of h2o (conns.h
 * says why). */
#include <string.h>
#include <sys/socket.h>

#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/http2.h>

#include "webhook/conn_priv.h"

/* HTTP/2: count the client's frames before h2o parses them. */
static void on_h2_read(h2o_socket_t *sock, const char *err)
{
    conn *c = tg_conn_of_socket(sock);
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
            tg_conn_shutdown(c, SHUT_RDWR, cs->cfg.closed_resets);
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
    tg_conn_limited(c->owner, LIMITED_H2_REFUSED, c->owner->cfg.closed_h2_refused);
    h2o_socket_close(sock);
    return 1;
}

static void on_first_bytes(h2o_socket_t *sock, const char *err)
{
    conn *c = tg_conn_of_socket(sock);

    if (err != NULL) {
        h2o_socket_close(sock);
        return;
    }
    sniff(c, sock);
}

void tg_conn_on_handshake(h2o_socket_t *sock, const char *err)
{
    conn *c = tg_conn_of_socket(sock);
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

/* h2o's HTTP/2 stops reading while 16 requests of a connection are being
 * answered, and starts again, with its own read callback, when one is done
 * (from a write's completion, outside ours). Before the loop next waits for
 * input, put the frame counting back in front of it: no read reaches h2o
 * uncounted, so the counting never loses its place in the frame stream. */
void tg_conns_before_poll(uv_prepare_t *p)
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
