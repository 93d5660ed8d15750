/* client_h1.c - client.h over HTTP/1.1 and OpenSSL on libuv, without libcurl.
 *
 * Why a second client: libcurl and the 26 libraries only it loads (nghttp2,
 * GnuTLS, Kerberos, LDAP, ...) are about 1.1 MB of a process's resident
 * memory before it sends a byte. The webhook only lists and watches, so it
 * links this client; the signer and the CLI keep libcurl's (client_curl.c).
 *
 * How: each request has a connection of its own (a watch holds one for its
 * life; lists and live reads are rare), so there is no pool to manage.
 * TCP on uv_tcp_t, TLS through memory BIOs so OpenSSL never touches the
 * socket, the response framed by h1_response.c. The server's certificate is
 * verified by OpenSSL against the configured CA (or the system's), for the
 * server's DNS name or IP address (or tls-server-name); TLS 1.2 at least.
 *
 * Not supported, refused by tg_kube_client_new with a reason: proxy-url. No
 * HTTP/2 and no compressed bodies (neither is needed for lists and watches). */
#include "kube/client.h"
#include "kube/client_shared.h"
#include "kube/h1_response.h"
#include "errbuf.h"

#include <arpa/inet.h>
#include <h2o.h>   /* h2o_url_parse; url.h alone does not build */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_MS 10000
#define RX_SIZE 16384

typedef struct conn conn;

struct tg_kube_request {
    tg_kube_client *client;
    conn *conn;                      /* NULL between connections */
    char *method, *target;           /* target: the server's path prefix + the path */
    char *send_body;
    size_t send_len;
    tg_kube_content_type content_type;
    long timeout_ms, low_speed_ms;
    uint64_t deadline;               /* loop time, with timeout_ms >= 0 */
    char *buf;                       /* the buffered response body */
    size_t len, cap, max_body;
    tg_kube_data_cb on_data;
    tg_kube_response_cb on_done;
    void *data;
    int retried_auth;
    int tls_resumed;                 /* the last connection's handshake was a resumption */
    tg_kube_request *next, *prev;
};

struct conn {
    tg_kube_client *client;
    tg_kube_request *req;            /* NULL once detached (closing) */
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_connect_t connect;
    uv_getaddrinfo_t resolve;
    SSL *ssl;                        /* NULL for http:// */
    BIO *rbio, *wbio;                /* network -> OpenSSL, OpenSSL -> network */
    tg_h1_response resp;
    const char *timer_why;           /* what the running timer means when it fires */
    char why_buf[160];               /* a failure found while starting, told on the loop */
    const char *abort_why;           /* set by on_body when it stopped the body */
    int handshake_done, closing, pending;   /* pending: handles and requests libuv still owns */
    conn *next, *prev;
};

struct tg_kube_client {
    uv_loop_t *loop;
    tg_kube_config cfg;              /* our own deep copy */
    SSL_CTX *ssl_ctx;                /* NULL for http:// */
    SSL_SESSION *session;            /* the server's latest ticket, to resume with */
    char *host;                      /* to connect to (no brackets) */
    char *authority;                 /* Host: header */
    char *prefix;                    /* the server URL's path, without a trailing '/' */
    char *verify_name;               /* tls-server-name, else host */
    int port;
    tg_kube_token token;
    tg_kube_request *requests;
    conn *conns;
    int dispatching;                 /* inside a callback chain: defer the teardown */
    int closing;
    char rx[RX_SIZE];                /* one read at a time per loop */
    char plain[RX_SIZE];             /* its decrypted bytes */
};

/* ---------- client configuration ---------- */

static char *iovec_dup(h2o_iovec_t v)
{
    return tg_kube_memdup_nul(v.base, v.len);
}

static int parse_server(tg_kube_client *c, char *err, size_t err_len)
{
    h2o_url_t u;
    const char *s = c->cfg.server;
    if (h2o_url_parse(s, strlen(s), &u) != 0 || u.host.len == 0)
        return tg_errf(err, err_len, "server \"%.100s\" is not a valid URL (https:// or http://)", s);
    c->port = h2o_url_get_port(&u);
    c->host = iovec_dup(u.host);
    c->authority = iovec_dup(u.authority);
    c->prefix = iovec_dup(u.path);
    c->verify_name = strdup(c->cfg.tls_server_name ? c->cfg.tls_server_name : c->host ? c->host : "");
    if (!c->host || !c->authority || !c->prefix || !c->verify_name)
        return tg_errf(err, err_len, "out of memory");
    size_t n = strlen(c->prefix);
    while (n > 0 && c->prefix[n - 1] == '/')
        c->prefix[--n] = '\0';
    if (u.scheme == &H2O_URL_SCHEME_HTTPS)
        return 0;
    c->verify_name[0] = '\0';
    return 1;   /* plain http */
}

static int ssl_errf(char *err, size_t err_len, const char *what)
{
    char e[160];
    ERR_error_string_n(ERR_get_error(), e, sizeof(e));
    ERR_clear_error();
    return tg_errf(err, err_len, "%s: %s", what, e);
}

/* Every certificate of a PEM bundle into the store. */
static int load_ca(SSL_CTX *ctx, const char *pem, size_t len, char *err, size_t err_len)
{
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    X509 *x;
    int n = 0;
    while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        X509_STORE_add_cert(store, x);
        X509_free(x);
        n++;
    }
    BIO_free(b);
    ERR_clear_error();   /* the end of the bundle reads as an error */
    return n > 0 ? 0 : tg_errf(err, err_len, "certificate-authority data holds no PEM certificate");
}

/* The client certificate (and any chain after it) and its key. */
static int load_client_cert(SSL_CTX *ctx, const tg_kube_config *cfg, char *err, size_t err_len)
{
    int rc = -1;
    BIO *b = BIO_new_mem_buf(cfg->cert, (int)cfg->cert_len);
    BIO *k = BIO_new_mem_buf(cfg->key ? cfg->key : "", cfg->key ? (int)cfg->key_len : 0);
    X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    EVP_PKEY *key = k ? PEM_read_bio_PrivateKey(k, NULL, NULL, NULL) : NULL;
    if (x == NULL || SSL_CTX_use_certificate(ctx, x) != 1) {
        ssl_errf(err, err_len, "client-certificate data");
        goto out;
    }
    X509 *chain;
    while ((chain = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
        SSL_CTX_add0_chain_cert(ctx, chain);
    ERR_clear_error();
    if (key == NULL || SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        ssl_errf(err, err_len, "client-key data");
        goto out;
    }
    rc = 0;
out:
    X509_free(x);
    EVP_PKEY_free(key);
    BIO_free(b);
    BIO_free(k);
    return rc;
}

/* The server gave a session to resume (a TLS 1.3 ticket after the handshake,
 * or the TLS 1.2 session): keep the newest, one per client. */
static int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    conn *k = SSL_get_app_data(ssl);
    if (k == NULL || !SSL_SESSION_is_resumable(session))
        return 0;               /* not ours to keep: OpenSSL frees it */
    SSL_SESSION_free(k->client->session);
    k->client->session = session;
    return 1;                   /* we hold the reference now */
}

static int setup_tls(tg_kube_client *c, char *err, size_t err_len)
{
    SSL_CTX *ctx = c->ssl_ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL)
        return ssl_errf(err, err_len, "TLS context");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* Idle watches keep no 34 KB of TLS buffers each. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    /* Every request but a watch opens a connection (live reads, lists):
     * resuming the last session spares both sides the certificate check and
     * the server its signature. One server per client, so one session. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    if (c->cfg.insecure_skip_tls_verify) {
        /* Only when the kubeconfig asked for it in so many words. */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (c->cfg.ca != NULL ? load_ca(ctx, c->cfg.ca, c->cfg.ca_len, err, err_len) != 0
                              : SSL_CTX_set_default_verify_paths(ctx) != 1)
            return c->cfg.ca ? -1 : ssl_errf(err, err_len, "system CA certificates");
    }
    if (c->cfg.cert != NULL && load_client_cert(ctx, &c->cfg, err, err_len) != 0)
        return -1;
    return 0;
}

/* ---------- connections ---------- */

static void request_finish(tg_kube_request *r, long status, const char *error);
static int conn_start(tg_kube_request *r);
static void client_maybe_free(tg_kube_client *c);

static void conn_unpend(conn *k)
{
    if (--k->pending > 0)
        return;
    tg_kube_client *c = k->client;
    if (k->prev)
        k->prev->next = k->next;
    else
        c->conns = k->next;
    if (k->next)
        k->next->prev = k->prev;
    tg_h1_response_free(&k->resp);
    free(k);
    client_maybe_free(c);
}

static void on_handle_close(uv_handle_t *h)
{
    conn_unpend(h->data);
}

static void conn_close(conn *k)
{
    if (k->closing)
        return;
    k->closing = 1;
    if (k->req) {
        k->req->conn = NULL;
        k->req = NULL;
    }
    if (k->ssl) {
        SSL_free(k->ssl);   /* and both BIOs */
        k->ssl = NULL;
    }
    uv_close((uv_handle_t *)&k->tcp, on_handle_close);
    uv_close((uv_handle_t *)&k->timer, on_handle_close);
}

/* The request ends on this connection with an error. */
static void conn_fail(conn *k, const char *why)
{
    tg_kube_request *r = k->req;
    long status = k->resp.status;
    conn_close(k);
    if (r)
        request_finish(r, status, why);
}

static void dispatch_end(tg_kube_client *c);

static void on_timer(uv_timer_t *t)
{
    conn *k = t->data;
    tg_kube_client *c = k->client;
    c->dispatching++;
    conn_fail(k, k->timer_why);
    dispatch_end(c);
}

static void arm_timer(conn *k, uint64_t ms, const char *why)
{
    k->timer_why = why;
    uv_timer_start(&k->timer, on_timer, ms > 0 ? ms : 1, 0);
}

/* A failure found before the connection got going reaches the request's
 * on_done from the loop, never from inside tg_kube_request_start. */
static void conn_fail_later(conn *k, const char *why)
{
    snprintf(k->why_buf, sizeof(k->why_buf), "%s", why);
    arm_timer(k, 0, k->why_buf);
}

/* After the connection is up: the request's own clock. */
static void arm_request_timer(conn *k)
{
    tg_kube_request *r = k->req;
    uint64_t now = uv_now(k->client->loop);
    if (r->timeout_ms >= 0)
        arm_timer(k, r->deadline > now ? r->deadline - now : 1, "request timed out");
    else
        arm_timer(k, (uint64_t)r->low_speed_ms, "no data from the server within the watch's stall limit");
}

/* A write and its bytes in one allocation; the bytes may hold the token
 * (plain http), so they are wiped once written. */
typedef struct write_req {
    uv_write_t w;
    conn *k;
    size_t n;
    char bytes[];
} write_req;

static void on_write(uv_write_t *w, int status)
{
    write_req *wr = (write_req *)w;
    conn *k = wr->k;
    OPENSSL_cleanse(wr->bytes, wr->n);
    free(wr);
    if (status < 0 && !k->closing)
        conn_fail(k, "connection lost while sending the request");
}

static write_req *write_req_new(conn *k, size_t n)
{
    write_req *wr = malloc(sizeof(*wr) + n);
    if (wr != NULL) {
        wr->k = k;
        wr->n = n;
    }
    return wr;
}

/* Hands wr to libuv (freed in on_write), or frees it. */
static int write_submit(conn *k, write_req *wr)
{
    uv_buf_t b = uv_buf_init(wr->bytes, (unsigned)wr->n);
    if (uv_write(&wr->w, (uv_stream_t *)&k->tcp, &b, 1, on_write) != 0) {
        free(wr);
        return -1;
    }
    return 0;
}

static int write_bytes(conn *k, const char *p, size_t n)
{
    write_req *wr = write_req_new(k, n);
    if (wr == NULL)
        return -1;
    memcpy(wr->bytes, p, n);
    return write_submit(k, wr);
}

/* What OpenSSL wrote to its network BIO goes to the socket. */
static int flush_tls(conn *k)
{
    size_t n;
    while (k->ssl && (n = BIO_ctrl_pending(k->wbio)) > 0) {
        write_req *wr = write_req_new(k, n);
        if (wr == NULL)
            return -1;
        BIO_read(k->wbio, wr->bytes, (int)n);
        if (write_submit(k, wr) != 0)
            return -1;
    }
    return 0;
}

/* A token is one header value: printable ASCII, no spaces or line breaks. */
static int token_ok(const char *t)
{
    for (; *t; t++)
        if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f)
            return 0;
    return 1;
}

/* The request's head, with the current token; wiped after sending. NULL:
 * out of memory, or a token that cannot be sent (*why). */
static char *request_head(conn *k, size_t *len, const char **why)
{
    tg_kube_request *r = k->req;
    tg_kube_client *c = k->client;
    const char *token = tg_kube_token_current(&c->token, &c->cfg);
    char ct[128] = "";
    *why = "out of memory";
    if (token != NULL && !token_ok(token)) {
        *why = "the bearer token holds characters a header cannot carry";
        return NULL;
    }
    int has_body = r->send_body != NULL || strcmp(r->method, "GET") != 0;
    if (has_body)
        snprintf(ct, sizeof(ct), "Content-Type: %s\r\nContent-Length: %zu\r\n",
                 tg_kube_content_type_value(r->content_type), r->send_len);
    size_t n = strlen(r->method) + strlen(r->target) + strlen(c->authority) + sizeof(ct) +
               (token ? strlen(token) : 0) + 160;
    char *h = malloc(n);
    if (h == NULL)
        return NULL;
    int w = snprintf(h, n,
                     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tenantgate/0.1\r\nAccept: application/json\r\n"
                     "Connection: close\r\n%s%s%s%s\r\n",
                     r->method, r->target, c->authority, ct, token ? "Authorization: Bearer " : "",
                     token ? token : "", token ? "\r\n" : "");
    *len = (size_t)w;
    return h;
}

/* 0, or -1 with *why. */
static int send_request(conn *k, const char **why)
{
    size_t n;
    char *head = request_head(k, &n, why);
    tg_kube_request *r = k->req;
    int rc = -1;
    if (head == NULL)
        return -1;
    *why = "cannot send the request";
    if (k->ssl) {
        rc = (SSL_write(k->ssl, head, (int)n) == (int)n &&
              (r->send_len == 0 || SSL_write(k->ssl, r->send_body, (int)r->send_len) == (int)r->send_len))
                 ? flush_tls(k) : -1;
    } else {
        rc = write_bytes(k, head, n) == 0 && (r->send_len == 0 || write_bytes(k, r->send_body, r->send_len) == 0)
                 ? 0 : -1;
    }
    OPENSSL_cleanse(head, n);
    free(head);
    return rc;
}

/* The connection is ready for the request (TLS handshake done, or plain
 * TCP connected): the request's own clock, then its bytes. 0, or -1 once
 * the request has failed. */
static int conn_ready(conn *k)
{
    const char *why;
    k->handshake_done = 1;
    if (k->req != NULL && k->ssl != NULL)
        k->req->tls_resumed = SSL_session_reused(k->ssl);
    arm_request_timer(k);
    if (send_request(k, &why) == 0)
        return 0;
    conn_fail(k, why);
    return -1;
}

/* ---------- the response ---------- */

static int on_body(const char *bytes, size_t n, void *data)
{
    conn *k = data;
    tg_kube_request *r = k->req;
    tg_kube_client *c = k->client;
    if (r->on_data != NULL && k->resp.status >= 200 && k->resp.status < 300) {
        int stop = r->on_data(r, bytes, n, r->data);
        if (stop || c->closing) {
            k->abort_why = "aborted by the receiver";
            return 1;
        }
        return 0;
    }
    return tg_kube_body_append(&r->buf, &r->len, &r->cap, r->max_body, bytes, n, &k->abort_why) != 0;
}

/* A 401 with a token file: the token may have rotated. Retry once, on a new
 * connection. */
static int retry_after_401(conn *k)
{
    tg_kube_request *r = k->req;
    tg_kube_client *c = k->client;
    if (r->retried_auth || c->cfg.token_file == NULL)
        return 0;
    r->retried_auth = 1;
    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 1);
    r->len = 0;
    conn_close(k);
    if (conn_start(r) != 0)
        request_finish(r, 401, "out of memory");
    return 1;
}

static void conn_complete(conn *k)
{
    tg_kube_request *r = k->req;
    long status = k->resp.status;
    /* The whole response came: the connection ends well, though no
     * close_notify is sent. Without this SSL_free would take the session for
     * a broken one and mark it not resumable (as it does, rightly, after a
     * failure or a cut response). */
    if (k->ssl != NULL)
        SSL_set_shutdown(k->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    if (status == 401 && retry_after_401(k))
        return;
    conn_close(k);
    request_finish(r, status, NULL);
}

/* Bytes of the response. Returns non-zero when the request ended (the
 * connection is then closing). */
static int conn_take(conn *k, char *bytes, size_t n)
{
    const char *why;
    if (k->req && k->req->timeout_ms < 0 && k->resp.status != 0)
        arm_request_timer(k);   /* a watch is alive while bytes come */
    tg_h1_result rc = tg_h1_response_feed(&k->resp, bytes, n, NULL, on_body, k, &why);
    if (k->closing)
        return 1;
    switch (rc) {
    case TG_H1_MORE:
        return 0;
    case TG_H1_DONE:
        conn_complete(k);
        return 1;
    case TG_H1_ABORTED:
        conn_fail(k, k->abort_why);
        return 1;
    default:
        conn_fail(k, why);
        return 1;
    }
}

static void conn_eof(conn *k)
{
    const char *why;
    if (tg_h1_response_eof(&k->resp, &why) == TG_H1_DONE)
        conn_complete(k);
    else
        conn_fail(k, why);
}

static void tls_failed(conn *k, const char *when)
{
    char msg[256];
    long v = SSL_get_verify_result(k->ssl);
    if (!k->handshake_done && v != X509_V_OK) {
        snprintf(msg, sizeof(msg), "TLS: the server's certificate was not accepted for \"%.64s\": %s",
                 k->client->verify_name, X509_verify_cert_error_string(v));
    } else {
        char e[160];
        ERR_error_string_n(ERR_peek_last_error(), e, sizeof(e));
        snprintf(msg, sizeof(msg), "TLS %s failed: %s", when, e);
    }
    ERR_clear_error();
    conn_fail(k, msg);
}

/* Drive OpenSSL after bytes arrived (or the connection opened). */
static void tls_pump(conn *k)
{
    tg_kube_client *c = k->client;
    if (!k->handshake_done) {
        int rc = SSL_do_handshake(k->ssl);
        if (rc != 1) {
            int e = SSL_get_error(k->ssl, rc);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                tls_failed(k, "handshake");
            else if (flush_tls(k) != 0)
                conn_fail(k, "cannot send to the server");
            return;
        }
        if (conn_ready(k) != 0)
            return;
    }
    for (;;) {
        int n = SSL_read(k->ssl, c->plain, sizeof(c->plain));
        if (n <= 0) {
            int e = SSL_get_error(k->ssl, n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                break;
            if (e == SSL_ERROR_ZERO_RETURN)
                conn_eof(k);
            else
                tls_failed(k, "read");
            return;
        }
        if (conn_take(k, c->plain, (size_t)n))
            return;
    }
    if (flush_tls(k) != 0)
        conn_fail(k, "cannot send to the server");
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn *k = h->data;
    *buf = uv_buf_init(k->client->rx, sizeof(k->client->rx));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn *k = s->data;
    tg_kube_client *c = k->client;
    if (nread == 0 || k->closing)
        return;
    c->dispatching++;
    if (nread < 0) {
        if (nread != UV_EOF)
            conn_fail(k, "connection to the server lost");
        else if (k->ssl && !k->handshake_done)
            conn_fail(k, "server closed the connection during the TLS handshake");
        else
            conn_eof(k);   /* a close without close_notify ends a close-framed body too */
    } else if (k->ssl) {
        if (BIO_write(k->rbio, buf->base, (int)nread) != (int)nread)
            conn_fail(k, "out of memory reading from the server");
        else
            tls_pump(k);
    } else {
        conn_take(k, buf->base, (size_t)nread);
    }
    dispatch_end(c);
}

/* The socket exists now: its options, then its bytes. */
static int start_reading(conn *k)
{
    uv_tcp_nodelay(&k->tcp, 1);
    uv_tcp_keepalive(&k->tcp, 1, 30);   /* a dead peer under a quiet watch */
    return uv_read_start((uv_stream_t *)&k->tcp, on_alloc, on_read);
}

static int start_tls(conn *k)
{
    tg_kube_client *c = k->client;
    const char *name = c->verify_name;
    unsigned char ip[16];
    int is_ip = inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1;
    if ((k->ssl = SSL_new(c->ssl_ctx)) == NULL || (k->rbio = BIO_new(BIO_s_mem())) == NULL ||
        (k->wbio = BIO_new(BIO_s_mem())) == NULL) {
        BIO_free(k->rbio);
        return -1;
    }
    BIO_set_mem_eof_return(k->rbio, -1);   /* empty means "wait", not "closed" */
    SSL_set_bio(k->ssl, k->rbio, k->wbio);
    SSL_set_connect_state(k->ssl);
    SSL_set_app_data(k->ssl, k);
    /* A ticket the server no longer takes costs nothing: it answers with a
     * full handshake, certificate checked as always. */
    if (c->session != NULL && SSL_SESSION_is_resumable(c->session))
        (void)SSL_set_session(k->ssl, c->session);   /* else a full handshake */
    if (is_ip) {
        /* Names the certificate must carry as an IP address SAN. */
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(k->ssl), name) != 1)
            return -1;
    } else {
        SSL_set_hostflags(k->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set1_host(k->ssl, name) != 1 || SSL_set_tlsext_host_name(k->ssl, name) != 1)
            return -1;
    }
    return 0;
}

/* A failed connect (status from libuv): told now, from a callback, or
 * later, from inside tg_kube_request_start. */
static void connect_failed(conn *k, int status, int later)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "cannot connect to %.64s:%d: %s", k->client->host, k->client->port,
             uv_strerror(status));
    if (later)
        conn_fail_later(k, msg);
    else
        conn_fail(k, msg);
}

static void on_connect(uv_connect_t *req, int status)
{
    conn *k = req->data;
    tg_kube_client *c = k->client;
    if (k->closing)
        return;
    c->dispatching++;
    if (status < 0) {
        connect_failed(k, status, 0);
    } else if (start_reading(k) != 0) {
        conn_fail(k, "cannot read from the connection");
    } else if (c->ssl_ctx == NULL) {
        conn_ready(k);
    } else if (start_tls(k) != 0) {
        tls_failed(k, "set-up");
    } else {
        tls_pump(k);
    }
    dispatch_end(c);
}

static void connect_to(conn *k, const struct sockaddr *sa)
{
    k->connect.data = k;
    int rc = uv_tcp_connect(&k->connect, &k->tcp, sa, on_connect);
    if (rc != 0)
        connect_failed(k, rc, 1);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    conn *k = req->data;
    tg_kube_client *c = k->client;
    c->dispatching++;
    if (!k->closing) {
        if (status < 0 || res == NULL) {
            char msg[160];
            snprintf(msg, sizeof(msg), "cannot resolve %.64s: %s", c->host, uv_strerror(status));
            conn_fail(k, msg);
        } else {
            if (res->ai_family == AF_INET6)
                ((struct sockaddr_in6 *)res->ai_addr)->sin6_port = htons((uint16_t)c->port);
            else
                ((struct sockaddr_in *)res->ai_addr)->sin_port = htons((uint16_t)c->port);
            connect_to(k, res->ai_addr);
        }
    }
    uv_freeaddrinfo(res);
    conn_unpend(k);
    dispatch_end(c);
}

/* A new connection for r. Failures reach r's on_done later, on the loop;
 * -1 only when there is no memory for the connection. */
static int conn_start(tg_kube_request *r)
{
    tg_kube_client *c = r->client;
    conn *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return -1;
    k->client = c;
    k->req = r;
    r->conn = k;
    tg_h1_response_init(&k->resp);
    uv_tcp_init(c->loop, &k->tcp);
    uv_timer_init(c->loop, &k->timer);
    k->tcp.data = k->timer.data = k;
    k->pending = 2;
    k->next = c->conns;
    if (c->conns)
        c->conns->prev = k;
    c->conns = k;
    uint64_t connect_ms = CONNECT_TIMEOUT_MS;
    if (r->timeout_ms >= 0 && (uint64_t)r->timeout_ms < connect_ms)
        connect_ms = (uint64_t)r->timeout_ms;
    arm_timer(k, connect_ms, "connecting to the server timed out");

    struct sockaddr_storage sa;
    if (uv_ip4_addr(c->host, c->port, (struct sockaddr_in *)&sa) == 0 ||
        uv_ip6_addr(c->host, c->port, (struct sockaddr_in6 *)&sa) == 0) {
        connect_to(k, (struct sockaddr *)&sa);
        return 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    k->resolve.data = k;
    if (uv_getaddrinfo(c->loop, &k->resolve, on_resolved, c->host, NULL, &hints) == 0)
        k->pending++;
    else
        conn_fail_later(k, "cannot start resolving the server's name");
    return 0;
}

/* ---------- requests ---------- */

static void request_unlink(tg_kube_request *r)
{
    tg_kube_client *c = r->client;
    if (r->prev)
        r->prev->next = r->next;
    else if (c->requests == r)
        c->requests = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
}

static void request_free(tg_kube_request *r)
{
    if (r->conn)
        conn_close(r->conn);
    free(r->method);
    free(r->target);
    free(r->send_body);
    free(r->buf);
    free(r);
}

static void request_finish(tg_kube_request *r, long status, const char *error)
{
    tg_kube_response resp = {.status = status, .body = r->buf ? r->buf : "", .body_len = r->len,
                             .error = error, .tls_resumed = r->tls_resumed};
    request_unlink(r);
    if (r->on_done)
        r->on_done(r, &resp, r->data);
    request_free(r);
}

/* Characters a request target may carry (no spaces, controls or non-ASCII). */
static int target_ok(const char *p)
{
    for (; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return 0;
    return 1;
}

static int method_ok(const char *m)
{
    return strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 ||
           strcmp(m, "PATCH") == 0 || strcmp(m, "DELETE") == 0;
}

tg_kube_request *tg_kube_request_start(tg_kube_client *c, const tg_kube_request_opts *o,
                                       tg_kube_response_cb on_done, void *data, char *err, size_t err_len)
{
    const char *method = o->method ? o->method : "GET";
    if (c->closing) {
        tg_errf(err, err_len, "client is closing");
        return NULL;
    }
    if (o->path == NULL || o->path[0] != '/' || !target_ok(o->path)) {
        tg_errf(err, err_len, "request path must start with '/' and hold only URL characters");
        return NULL;
    }
    if (!method_ok(method)) {
        tg_errf(err, err_len, "method \"%.16s\" is not one the API client sends", method);
        return NULL;
    }
    tg_kube_request *r = calloc(1, sizeof(*r));
    size_t tl = strlen(c->prefix) + strlen(o->path) + 1;
    if (r == NULL || (r->target = malloc(tl)) == NULL || (r->method = strdup(method)) == NULL ||
        (o->body != NULL && (r->send_body = tg_kube_memdup_nul(o->body, o->body_len)) == NULL)) {
        if (r)
            request_free(r);
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    snprintf(r->target, tl, "%s%s", c->prefix, o->path);
    r->client = c;
    r->send_len = o->body ? o->body_len : 0;
    r->content_type = o->content_type;
    r->on_data = o->on_data;
    r->on_done = on_done;
    r->data = data;
    r->max_body = o->max_body ? o->max_body : TG_KUBE_DEFAULT_MAX_BODY;
    r->timeout_ms = o->timeout_ms == 0 ? TG_KUBE_DEFAULT_TIMEOUT_MS : o->timeout_ms;
    r->low_speed_ms = (o->low_speed_time_s > 0 ? o->low_speed_time_s : 180L) * 1000L;
    if (r->timeout_ms >= 0)
        r->deadline = uv_now(c->loop) + (uint64_t)r->timeout_ms;
    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 0);
    r->next = c->requests;
    if (c->requests)
        c->requests->prev = r;
    c->requests = r;
    /* Nothing calls back from here: every outcome of the connection comes
     * through the loop (a refused uv_tcp_connect included). */
    if (conn_start(r) != 0) {
        request_unlink(r);
        request_free(r);
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    return r;
}

void tg_kube_request_cancel(tg_kube_request *r)
{
    if (r == NULL)
        return;
    request_unlink(r);
    request_free(r);
}

/* ---------- the client ---------- */

static void free_client_memory(tg_kube_client *c)
{
    tg_kube_token_free(&c->token);
    tg_kube_config_free(&c->cfg);
    SSL_SESSION_free(c->session);
    SSL_CTX_free(c->ssl_ctx);
    free(c->host);
    free(c->authority);
    free(c->prefix);
    free(c->verify_name);
    free(c);
}

static void client_maybe_free(tg_kube_client *c)
{
    if (c->closing && c->conns == NULL && c->dispatching == 0)
        free_client_memory(c);
}

static void client_teardown(tg_kube_client *c)
{
    while (c->requests) {
        tg_kube_request *r = c->requests;
        request_unlink(r);
        request_free(r);
    }
    for (conn *k = c->conns; k; k = k->next) {
        conn_close(k);
        if (k->pending > 2)
            uv_cancel((uv_req_t *)&k->resolve);
    }
    client_maybe_free(c);
}

static void dispatch_end(tg_kube_client *c)
{
    if (--c->dispatching == 0 && c->closing)
        client_teardown(c);
}

tg_kube_client *tg_kube_client_new(uv_loop_t *loop, const tg_kube_config *cfg, char *err, size_t err_len)
{
    if (cfg == NULL || cfg->server == NULL) {
        tg_errf(err, err_len, "configuration has no server");
        return NULL;
    }
    if (cfg->proxy_url != NULL) {
        tg_errf(err, err_len, "proxy-url is not supported by this API client (HTTP/1.1, no proxy)");
        return NULL;
    }
    tg_kube_client *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    c->loop = loop;
    if (tg_kube_config_copy(&c->cfg, cfg) != 0) {
        free(c);
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    int scheme = parse_server(c, err, err_len);
    if (scheme < 0 || (scheme == 0 && setup_tls(c, err, err_len) != 0)) {
        free_client_memory(c);
        return NULL;
    }
    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 1);
    return c;
}

void tg_kube_client_free(tg_kube_client *c)
{
    if (c == NULL || c->closing)
        return;
    c->closing = 1;
    if (c->dispatching == 0)
        client_teardown(c);
}

uv_loop_t *tg_kube_client_loop(tg_kube_client *c)
{
    return c->loop;
}

const char *tg_kube_client_namespace(tg_kube_client *c)
{
    return c->cfg.namespace;
}
