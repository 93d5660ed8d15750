/* test_client_h1.c - the HTTP/1.1 client against a TLS server on loopback
 * (a thread with a throwaway certificate): what it sends, a streamed chunked
 * body, the server's name checked as an IP address or as tls-server-name, an
 * untrusted server refused, the TLS session resumed on the next connection
 * but never past another server's certificate, a 401 retried once with the
 * re-read token, and the body size limit. The contract every client shares
 * is in test_client.c; the real API server is in e2e. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/client.h"

#define MAX_CONNS 4

/* A certificate for 127.0.0.1 and api.test, self-signed, as PEM. */
typedef struct pair {
    EVP_PKEY *key;
    X509 *cert;
    char pem[4096];
} pair;

static void mint(pair *p)
{
    X509V3_CTX v3;
    p->key = EVP_EC_gen("P-256");
    p->cert = X509_new();
    assert_non_null(p->key);
    ASN1_INTEGER_set(X509_get_serialNumber(p->cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(p->cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(p->cert), 86400);
    X509_set_pubkey(p->cert, p->key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(p->cert), "CN", MBSTRING_ASC,
                               (const unsigned char *)"test-apiserver", -1, -1, 0);
    X509_set_issuer_name(p->cert, X509_get_subject_name(p->cert));
    X509V3_set_ctx(&v3, p->cert, p->cert, NULL, NULL, 0);
    X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:api.test");
    assert_non_null(san);
    X509_add_ext(p->cert, san, -1);
    X509_EXTENSION_free(san);
    assert_true(X509_sign(p->cert, p->key, EVP_sha256()) > 0);
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, p->cert);
    int n = BIO_read(b, p->pem, sizeof(p->pem) - 1);
    assert_true(n > 0);
    p->pem[n] = '\0';
    BIO_free(b);
}

static void pair_free(pair *p)
{
    EVP_PKEY_free(p->key);
    X509_free(p->cert);
}

/* The server: answers each connection in turn with the next canned
 * response and keeps what each request's head was. */
typedef struct server {
    int fd, port, nconns;
    SSL_CTX *ctx;
    SSL_CTX *later_ctx;                   /* if set, serves every connection after the first */
    int resumed[MAX_CONNS];               /* the handshake resumed the client's session */
    const char *responses[MAX_CONNS];
    char heads[MAX_CONNS][2048];
    const char *token_file, *rotate_to;   /* rewritten after the first request */
    pthread_t thread;
} server;

static void read_head(SSL *ssl, char *head, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        int r = SSL_read(ssl, head + n, 1);
        if (r <= 0)
            break;
        n++;
        head[n] = '\0';
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[n] = '\0';
}

static void *serve(void *arg)
{
    server *s = arg;
    for (int i = 0; i < s->nconns; i++) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            break;
        SSL *ssl = SSL_new(i > 0 && s->later_ctx ? s->later_ctx : s->ctx);
        SSL_set_fd(ssl, c);
        if (SSL_accept(ssl) == 1) {
            s->resumed[i] = SSL_session_reused(ssl);
            read_head(ssl, s->heads[i], sizeof(s->heads[i]));
            if (i == 0 && s->rotate_to) {
                FILE *f = fopen(s->token_file, "w");
                fputs(s->rotate_to, f);
                fclose(f);
            }
            SSL_write(ssl, s->responses[i], (int)strlen(s->responses[i]));
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(c);
    }
    return NULL;
}

static void server_start(server *s, const pair *p, int nconns)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->fd, 8), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    s->nconns = nconns;
    s->ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(s->ctx, p->cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(s->ctx, p->key), 1);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s)
{
    shutdown(s->fd, SHUT_RDWR);   /* ends an accept() nobody came to */
    pthread_join(s->thread, NULL);
    close(s->fd);
    SSL_CTX_free(s->ctx);
    SSL_CTX_free(s->later_ctx);
}

typedef struct result {
    int calls, tls_resumed;
    long status;
    char error[256];
    char body[256];
    size_t body_len;
    int pieces;
} result;

static void on_done(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    result *r = data;
    r->calls++;
    r->status = resp->status;
    r->tls_resumed = resp->tls_resumed;
    snprintf(r->error, sizeof(r->error), "%s", resp->error ? resp->error : "");
    if (resp->body_len) {
        snprintf(r->body, sizeof(r->body), "%.*s", (int)resp->body_len, resp->body);
        r->body_len = resp->body_len;
    }
}

static int on_data(tg_kube_request *req, const char *bytes, size_t n, void *data)
{
    result *r = data;
    assert_true(r->body_len + n < sizeof(r->body));
    memcpy(r->body + r->body_len, bytes, n);
    r->body_len += n;
    r->pieces++;
    return 0;
}

/* One request to the server with this configuration; the loop runs until
 * the client is gone. */
static result request(server *s, tg_kube_config *cfg, const char *prefix, tg_kube_request_opts o)
{
    uv_loop_t loop;
    char url[128], err[256];
    result r = {0};
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", s->port, prefix);
    cfg->server = url;
    uv_loop_init(&loop);
    tg_kube_client *c = tg_kube_client_new(&loop, cfg, err, sizeof(err));
    if (c == NULL)
        fail_msg("%s", err);
    assert_non_null(tg_kube_request_start(c, &o, on_done, &r, err, sizeof(err)));
    while (r.calls == 0)
        uv_run(&loop, UV_RUN_ONCE);
    tg_kube_client_free(c);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(r.calls, 1);
    return r;
}

/* n requests one after the other on one client, as the webhook's live reads
 * are: each on a connection of its own. */
static void requests_in_turn(server *s, tg_kube_config *cfg, int n, result *out)
{
    uv_loop_t loop;
    char url[128], err[256];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", s->port);
    cfg->server = url;
    uv_loop_init(&loop);
    tg_kube_client *c = tg_kube_client_new(&loop, cfg, err, sizeof(err));
    if (c == NULL)
        fail_msg("%s", err);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        assert_non_null(tg_kube_request_start(c, &(tg_kube_request_opts){.path = "/version"}, on_done, &out[i],
                                              err, sizeof(err)));
        while (out[i].calls == 0)
            uv_run(&loop, UV_RUN_ONCE);
    }
    tg_kube_client_free(c);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

#define CHUNKED_OK "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"

static void test_streams_chunked_body(void **state)
{
    pair p;
    server s = {.responses = {CHUNKED_OK}};
    mint(&p);
    server_start(&s, &p, 1);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem), .token = (char *)"t0ken"};
    result r = request(&s, &cfg, "/prefix/",
                       (tg_kube_request_opts){.path = "/api/v1/secrets?watch=true", .timeout_ms = -1,
                                              .on_data = on_data});
    server_stop(&s);
    assert_string_equal(r.error, "");
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, 11);
    assert_memory_equal(r.body, "hello world", 11);
    /* What went over the wire: the server's path prefix, the token, JSON. */
    assert_non_null(strstr(s.heads[0], "GET /prefix/api/v1/secrets?watch=true HTTP/1.1\r\n"));
    assert_non_null(strstr(s.heads[0], "\r\nAuthorization: Bearer t0ken\r\n"));
    assert_non_null(strstr(s.heads[0], "\r\nAccept: application/json\r\n"));
    pair_free(&p);
}

static void test_server_name_checked(void **state)
{
    static const struct {
        const char *tls_server_name;   /* NULL: the URL's 127.0.0.1, an IP SAN */
        const char *want_error;        /* "" when accepted */
    } rows[] = {
        {NULL, ""},
        {"api.test", ""},
        {"other.test", "not accepted for \"other.test\""},
        {"10.0.0.1", "not accepted for \"10.0.0.1\""},
    };
    pair p;
    mint(&p);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        server s = {.responses = {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}};
        server_start(&s, &p, 1);
        tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem),
                              .tls_server_name = (char *)rows[i].tls_server_name};
        result r = request(&s, &cfg, "", (tg_kube_request_opts){.path = "/version"});
        server_stop(&s);
        if (rows[i].want_error[0] == '\0') {
            assert_string_equal(r.error, "");
            assert_int_equal(r.status, 200);
            assert_string_equal(r.body, "ok");
        } else if (strstr(r.error, rows[i].want_error) == NULL) {
            fail_msg("tls-server-name %s: error \"%s\", want \"%s\"", rows[i].tls_server_name, r.error,
                     rows[i].want_error);
        }
    }
    pair_free(&p);
}

static void test_untrusted_server_refused(void **state)
{
    pair served, other;
    server s = {.responses = {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}};
    mint(&served);
    mint(&other);
    server_start(&s, &served, 1);
    tg_kube_config cfg = {.ca = other.pem, .ca_len = strlen(other.pem)};
    result r = request(&s, &cfg, "", (tg_kube_request_opts){.path = "/version"});
    server_stop(&s);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "certificate was not accepted"));
    assert_int_equal(s.heads[0][0], '\0');   /* not a byte of the request was sent */
    pair_free(&served);
    pair_free(&other);
}

#define OK_2 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

/* The second and later connections resume the session the server gave on
 * the first: no certificate to check, no signature for the server to make. */
static void test_session_resumed(void **state)
{
    pair p;
    result r[3];
    server s = {.responses = {OK_2, OK_2, OK_2}};
    mint(&p);
    server_start(&s, &p, 3);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem)};
    requests_in_turn(&s, &cfg, 3, r);
    server_stop(&s);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(r[i].error, "");
        assert_int_equal(r[i].status, 200);
        assert_string_equal(r[i].body, "ok");
    }
    assert_int_equal(s.resumed[0], 0);
    assert_int_equal(s.resumed[1], 1);
    assert_int_equal(s.resumed[2], 1);
    /* ...and each answer says so, as the server saw it. */
    assert_int_equal(r[0].tls_resumed, 0);
    assert_int_equal(r[1].tls_resumed, 1);
    assert_int_equal(r[2].tls_resumed, 1);
    pair_free(&p);
}

/* A server that cannot resume the session (another server at the same
 * address: other ticket keys) gets a full handshake, and its certificate is
 * checked as on the first connection: resumption lets nobody else through. */
static void test_resumption_checks_a_new_server(void **state)
{
    pair p, impostor;
    result r[2];
    server s = {.responses = {OK_2, OK_2}};
    mint(&p);
    mint(&impostor);
    s.later_ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(s.later_ctx, impostor.cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(s.later_ctx, impostor.key), 1);
    server_start(&s, &p, 2);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem)};
    requests_in_turn(&s, &cfg, 2, r);
    server_stop(&s);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].status, 0);
    assert_non_null(strstr(r[1].error, "certificate was not accepted"));
    assert_int_equal(s.heads[1][0], '\0');   /* not a byte of the request was sent */
    pair_free(&p);
    pair_free(&impostor);
}

static void test_401_retried_with_new_token(void **state)
{
    char path[] = "/tmp/tg-test-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "old-token", 9), 9);
    close(fd);
    pair p;
    mint(&p);
    server s = {.responses = {"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",
                              "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
                .token_file = path, .rotate_to = "new-token"};
    server_start(&s, &p, 2);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem), .token_file = path};
    result r = request(&s, &cfg, "", (tg_kube_request_opts){.path = "/version"});
    server_stop(&s);
    unlink(path);
    assert_string_equal(r.error, "");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(s.heads[0], "Bearer old-token\r\n"));
    assert_non_null(strstr(s.heads[1], "Bearer new-token\r\n"));
    pair_free(&p);
}

static void test_body_limit(void **state)
{
    pair p;
    mint(&p);
    server s = {.responses = {"HTTP/1.1 500 Oops\r\nContent-Length: 40\r\n\r\n0123456789012345678901234567890123456789"}};
    server_start(&s, &p, 1);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem)};
    result r = request(&s, &cfg, "", (tg_kube_request_opts){.path = "/version", .max_body = 16});
    server_stop(&s);
    assert_int_equal(r.status, 500);
    assert_non_null(strstr(r.error, "over the size limit"));
    pair_free(&p);
}

/* A token that would end its header line is never sent. */
static void test_token_with_a_line_break_not_sent(void **state)
{
    pair p;
    mint(&p);
    server s = {.responses = {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}};
    server_start(&s, &p, 1);
    tg_kube_config cfg = {.ca = p.pem, .ca_len = strlen(p.pem), .token = (char *)"t0ken\r\nX-Injected: 1"};
    result r = request(&s, &cfg, "", (tg_kube_request_opts){.path = "/version"});
    server_stop(&s);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "bearer token holds characters"));
    assert_null(strstr(s.heads[0], "X-Injected"));
    pair_free(&p);
}

static void test_refused_configurations(void **state)
{
    uv_loop_t loop;
    char err[256];
    uv_loop_init(&loop);
    tg_kube_config proxied = {.server = (char *)"https://127.0.0.1:6443", .proxy_url = (char *)"http://proxy:3128"};
    assert_null(tg_kube_client_new(&loop, &proxied, err, sizeof(err)));
    assert_non_null(strstr(err, "proxy-url is not supported"));
    tg_kube_config bad_ca = {.server = (char *)"https://127.0.0.1:6443", .ca = (char *)"not pem", .ca_len = 7};
    assert_null(tg_kube_client_new(&loop, &bad_ca, err, sizeof(err)));
    assert_non_null(strstr(err, "no PEM certificate"));
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams_chunked_body),
        cmocka_unit_test(test_server_name_checked),
        cmocka_unit_test(test_untrusted_server_refused),
        cmocka_unit_test(test_session_resumed),
        cmocka_unit_test(test_resumption_checks_a_new_server),
        cmocka_unit_test(test_401_retried_with_new_token),
        cmocka_unit_test(test_body_limit),
        cmocka_unit_test(test_token_with_a_line_break_not_sent),
        cmocka_unit_test(test_refused_configurations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
