/* client_curl.c - libcurl multi driven by a libuv loop, for the Kubernetes API. */
#include "kube/client.h"
#include "kube/client_shared.h"
#include "errbuf.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    tg_kube_client *client;
    struct sock_ctx *next, *prev;
} sock_ctx;

struct tg_kube_request {
    tg_kube_client *client;
    CURL *easy;
    struct curl_slist *headers;
    char *send_body;                 /* our copy of the request body */
    size_t send_len;
    char *buf;                       /* the buffered response body */
    size_t len, cap, max_body;
    tg_kube_data_cb on_data;
    tg_kube_response_cb on_done;
    void *data;
    tg_kube_content_type content_type;
    const char *abort_reason;        /* set when a callback of ours stopped the transfer */
    int retried_auth;                /* a 401 is retried once after re-reading the token */
    char curl_err[CURL_ERROR_SIZE];
    tg_kube_request *next, *prev;
};

struct tg_kube_client {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    tg_kube_config cfg;              /* our own deep copy */
    char *url_base;                  /* scheme://host:port[/prefix] as curl gets it */
    struct curl_slist *connect_to_list; /* "sni:port:host:port" for tls-server-name, or NULL */
    tg_kube_token token;             /* re-read from cfg.token_file */
    tg_kube_request *requests;
    sock_ctx *sockets;
    int open_handles;                /* uv handles not yet closed */
    int dispatching;                 /* inside check_done: defer the free */
    int closing;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void)
{
    curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* tls-server-name: ask curl for the certificate's name and route the
 * connection to the configured server with CONNECT_TO. */
static int setup_server(tg_kube_client *c, char *err, size_t err_len)
{
    if (c->cfg.tls_server_name == NULL) {
        c->url_base = strdup(c->cfg.server);
        return c->url_base ? 0 : tg_errf(err, err_len, "out of memory");
    }
    int rc = -1;
    char *host = NULL, *port = NULL, *url = NULL;
    CURLU *u = curl_url();
    if (u == NULL || curl_url_set(u, CURLUPART_URL, c->cfg.server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_HOST, c->cfg.tls_server_name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        tg_errf(err, err_len, "server \"%.100s\" with tls-server-name \"%.100s\" is not a valid URL",
             c->cfg.server, c->cfg.tls_server_name);
        goto out;
    }
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        url[--n] = '\0';
    size_t cl = strlen(host) + strlen(port) * 2 + strlen(c->cfg.tls_server_name) + 8;
    char *line = malloc(cl);
    c->url_base = strdup(url);
    if (line != NULL) {
        snprintf(line, cl, "%s:%s:%s:%s", c->cfg.tls_server_name, port, host, port);
        c->connect_to_list = curl_slist_append(NULL, line);
        free(line);
    }
    if (c->url_base == NULL || c->connect_to_list == NULL) {
        tg_errf(err, err_len, "out of memory");
        goto out;
    }
    rc = 0;
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return rc;
}

/* --- libuv <-> curl --- */

static void handle_closed(tg_kube_client *c);

static void on_poll_close(uv_handle_t *h)
{
    sock_ctx *s = h->data;
    tg_kube_client *c = s->client;
    free(s);
    handle_closed(c);
}

static void sock_close(tg_kube_client *c, sock_ctx *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->sockets = s->next;
    if (s->next)
        s->next->prev = s->prev;
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, on_poll_close);
}

static void check_done(tg_kube_client *c);

static void on_poll(uv_poll_t *h, int status, int events)
{
    sock_ctx *s = h->data;
    tg_kube_client *c = s->client;
    int flags = 0, running;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(c->multi, s->fd, flags, &running);
    check_done(c);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int action, void *userp, void *socketp)
{
    tg_kube_client *c = userp;
    sock_ctx *s = socketp;
    if (action == CURL_POLL_REMOVE) {
        if (s != NULL) {
            curl_multi_assign(c->multi, fd, NULL);
            sock_close(c, s);
        }
        return 0;
    }
    if (s == NULL) {
        if (c->closing || (s = calloc(1, sizeof(*s))) == NULL)
            return -1;
        if (uv_poll_init_socket(c->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->fd = fd;
        s->client = c;
        s->poll.data = s;
        s->next = c->sockets;
        if (c->sockets)
            c->sockets->prev = s;
        c->sockets = s;
        c->open_handles++;
        curl_multi_assign(c->multi, fd, s);
    }
    int events = 0;
    if (action & CURL_POLL_IN)
        events |= UV_READABLE;
    if (action & CURL_POLL_OUT)
        events |= UV_WRITABLE;
    uv_poll_start(&s->poll, events, on_poll);
    return 0;
}

static void on_timer(uv_timer_t *t)
{
    tg_kube_client *c = t->data;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    tg_kube_client *c = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&c->timer);
    else
        uv_timer_start(&c->timer, on_timer, (uint64_t)timeout_ms, 0);   /* 0: next loop turn */
    return 0;
}

/* --- requests --- */

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userp)
{
    tg_kube_request *r = userp;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    if (r->on_data != NULL && status >= 200 && status < 300) {
        if (r->on_data(r, ptr, n, r->data) != 0) {
            r->abort_reason = "aborted by the receiver";
            return n == 0 ? 1 : 0;   /* a short count makes curl stop */
        }
        return n;
    }
    if (tg_kube_body_append(&r->buf, &r->len, &r->cap, r->max_body, ptr, n, &r->abort_reason) != 0)
        return n == 0 ? 1 : 0;   /* a short count makes curl stop */
    return n;
}

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
    if (r->easy) {
        curl_multi_remove_handle(r->client->multi, r->easy);
        curl_easy_cleanup(r->easy);
    }
    /* The header list holds the bearer token. */
    for (struct curl_slist *h = r->headers; h; h = h->next)
        OPENSSL_cleanse(h->data, strlen(h->data));
    curl_slist_free_all(r->headers);
    free(r->send_body);
    free(r->buf);
    free(r);
}

/* (Re)build the headers: the token may have changed. */
static int request_headers(tg_kube_request *r)
{
    tg_kube_client *c = r->client;
    struct curl_slist *h = NULL, *t;
    for (struct curl_slist *o = r->headers; o; o = o->next)
        OPENSSL_cleanse(o->data, strlen(o->data));
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    if ((t = curl_slist_append(h, "Accept: application/json")) == NULL)
        goto oom;
    h = t;
    if ((t = curl_slist_append(h, "Expect:")) == NULL)   /* no 100-continue round trip */
        goto oom;
    h = t;
    if (r->send_body != NULL) {
        char ct[96];
        snprintf(ct, sizeof(ct), "Content-Type: %s", tg_kube_content_type_value(r->content_type));
        if ((t = curl_slist_append(h, ct)) == NULL)
            goto oom;
        h = t;
    }
    const char *token = tg_kube_token_current(&c->token, &c->cfg);
    if (token != NULL) {
        size_t n = strlen(token) + 32;
        char *line = malloc(n);
        if (line == NULL)
            goto oom;
        snprintf(line, n, "Authorization: Bearer %s", token);
        t = curl_slist_append(h, line);
        OPENSSL_cleanse(line, n);
        free(line);
        if (t == NULL)
            goto oom;
        h = t;
    }
    r->headers = h;
    return curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, h) == CURLE_OK ? 0 : -1;
oom:
    curl_slist_free_all(h);
    return -1;
}

static void setopt_tls(tg_kube_client *c, CURL *e)
{
    if (c->cfg.insecure_skip_tls_verify) {
        /* Only when the kubeconfig asked for it in so many words. */
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (c->cfg.ca != NULL) {
        struct curl_blob ca = {.data = c->cfg.ca, .len = c->cfg.ca_len, .flags = CURL_BLOB_NOCOPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
    }
    if (c->cfg.cert != NULL) {
        struct curl_blob cert = {.data = c->cfg.cert, .len = c->cfg.cert_len, .flags = CURL_BLOB_NOCOPY};
        struct curl_blob key = {.data = c->cfg.key, .len = c->cfg.key_len, .flags = CURL_BLOB_NOCOPY};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->connect_to_list != NULL)
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, c->connect_to_list);
}

tg_kube_request *tg_kube_request_start(tg_kube_client *c, const tg_kube_request_opts *o,
                                       tg_kube_response_cb on_done, void *data, char *err, size_t err_len)
{
    if (c->closing) {
        tg_errf(err, err_len, "client is closing");
        return NULL;
    }
    if (o->path == NULL || o->path[0] != '/') {
        tg_errf(err, err_len, "request path must start with '/'");
        return NULL;
    }
    const char *method = o->method ? o->method : "GET";
    tg_kube_request *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    r->client = c;
    r->on_data = o->on_data;
    r->on_done = on_done;
    r->data = data;
    r->content_type = o->content_type;
    r->max_body = o->max_body ? o->max_body : TG_KUBE_DEFAULT_MAX_BODY;
    size_t ul = strlen(c->url_base) + strlen(o->path) + 1;
    char *url = malloc(ul);
    r->easy = curl_easy_init();
    if (url == NULL || r->easy == NULL)
        goto oom;
    snprintf(url, ul, "%s%s", c->url_base, o->path);
    if (o->body != NULL) {
        if ((r->send_body = tg_kube_memdup_nul(o->body, o->body_len)) == NULL)
            goto oom;
        r->send_len = o->body_len;
    }

    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curl_err);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    /* Requests started together (every informer's first list) wait for the
     * connection being set up and share it as HTTP/2 streams, as client-go's
     * do. Without this each opened a TLS connection of its own: four for the
     * webhook's informers, each with its TLS state, nghttp2 session and curl
     * buffers (about 90 KB of heap apiece) and a handshake for the apiserver. */
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");       /* big lists come gzipped */
    curl_easy_setopt(e, CURLOPT_USERAGENT, "tenantgate/0.1");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
    if (o->timeout_ms >= 0) {
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms ? o->timeout_ms : TG_KUBE_DEFAULT_TIMEOUT_MS);
    } else {
        /* A watch lives for minutes; it is dead when nothing (not even a
         * bookmark, about one a minute) arrived for a while. */
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s > 0 ? o->low_speed_time_s : 180L);
    }
    if (c->cfg.proxy_url != NULL)
        curl_easy_setopt(e, CURLOPT_PROXY, c->cfg.proxy_url);
    setopt_tls(c, e);

    if (strcmp(method, "GET") != 0) {
        if (strcmp(method, "POST") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
        if (r->send_body != NULL) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->send_body);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->send_len);
        } else if (strcmp(method, "POST") == 0) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        }
    }
    free(url);
    url = NULL;

    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 0);
    if (request_headers(r) != 0)
        goto oom;
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        tg_errf(err, err_len, "could not start the request");
        request_free(r);
        return NULL;
    }
    r->next = c->requests;
    if (c->requests)
        c->requests->prev = r;
    c->requests = r;
    return r;
oom:
    free(url);
    tg_errf(err, err_len, "out of memory");
    request_free(r);
    return NULL;
}

void tg_kube_request_cancel(tg_kube_request *r)
{
    if (r == NULL)
        return;
    request_unlink(r);
    request_free(r);
}

/* A 401 with a token file: the token may have rotated. Retry once. */
static int retry_after_401(tg_kube_request *r)
{
    tg_kube_client *c = r->client;
    if (r->retried_auth || c->cfg.token_file == NULL)
        return 0;
    r->retried_auth = 1;
    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 1);
    curl_multi_remove_handle(c->multi, r->easy);
    r->len = 0;
    r->curl_err[0] = '\0';
    if (request_headers(r) != 0 || curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
        return 0;
    return 1;
}

static void request_finish(tg_kube_request *r, CURLcode result)
{
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    if (result == CURLE_OK && status == 401 && retry_after_401(r))
        return;

    tg_kube_response resp = {.status = status, .body = r->buf ? r->buf : "", .body_len = r->len};
    if (r->abort_reason != NULL)
        resp.error = r->abort_reason;
    else if (result != CURLE_OK)
        resp.error = r->curl_err[0] ? r->curl_err : curl_easy_strerror(result);
    request_unlink(r);
    if (r->on_done)
        r->on_done(r, &resp, r->data);
    request_free(r);
}

static void client_teardown(tg_kube_client *c);

static void check_done(tg_kube_client *c)
{
    CURLMsg *m;
    int left;
    c->dispatching++;
    while (!c->closing && (m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        tg_kube_request *r = NULL;
        CURLcode result = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        if (r != NULL)
            request_finish(r, result);
    }
    c->dispatching--;
    if (c->closing && c->dispatching == 0)
        client_teardown(c);
}

/* --- the client --- */

tg_kube_client *tg_kube_client_new(uv_loop_t *loop, const tg_kube_config *cfg, char *err, size_t err_len)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_result != CURLE_OK) {
        tg_errf(err, err_len, "libcurl initialisation failed");
        return NULL;
    }
    if (cfg == NULL || cfg->server == NULL) {
        tg_errf(err, err_len, "configuration has no server");
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
    if (setup_server(c, err, err_len) != 0 || (c->multi = curl_multi_init()) == NULL) {
        if (c->multi == NULL && c->url_base != NULL)
            tg_errf(err, err_len, "curl_multi_init failed");
        tg_kube_config_free(&c->cfg);
        free(c->url_base);
        curl_slist_free_all(c->connect_to_list);
        free(c);
        return NULL;
    }
    tg_kube_token_refresh(&c->token, &c->cfg, c->loop, 1);
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    c->open_handles = 1;
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return c;
}

static void free_client_memory(tg_kube_client *c)
{
    tg_kube_token_free(&c->token);
    tg_kube_config_free(&c->cfg);
    free(c->url_base);
    curl_slist_free_all(c->connect_to_list);
    free(c);
}

static void handle_closed(tg_kube_client *c)
{
    if (--c->open_handles == 0 && c->closing)
        free_client_memory(c);
}

static void on_timer_close(uv_handle_t *h)
{
    handle_closed(h->data);
}

static void client_teardown(tg_kube_client *c)
{
    while (c->requests) {
        tg_kube_request *r = c->requests;
        request_unlink(r);
        request_free(r);
    }
    /* Stop watching the sockets before curl closes them; curl may or may
     * not report each removal during cleanup, so close what is left after. */
    for (sock_ctx *s = c->sockets; s; s = s->next)
        uv_poll_stop(&s->poll);
    curl_multi_cleanup(c->multi);
    c->multi = NULL;
    while (c->sockets)
        sock_close(c, c->sockets);
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, on_timer_close);
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
