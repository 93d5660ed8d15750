/* test_client.c - the client's life cycle without an API server: argument
 * checks, a refused connection, a server that never answers (timeouts),
 * cancelling, and freeing the client with requests in flight (ASan checks
 * that everything is released). The real API server is in e2e. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/client.h"

typedef struct result {
    int calls;
    long status;
    char error[256];
} result;

static void on_done(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    result *r = data;
    r->calls++;
    r->status = resp->status;
    snprintf(r->error, sizeof(r->error), "%s", resp->error ? resp->error : "");
}

static void on_done_unexpected(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    fail_msg("a cancelled request's callback ran");
}

/* A TCP socket that listens and never accepts: connections hang. */
static int silent_server(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static tg_kube_client *client_for(uv_loop_t *loop, const char *server)
{
    tg_kube_config cfg = {.server = (char *)server, .token = (char *)"t0ken"};
    char err[256];
    tg_kube_client *c = tg_kube_client_new(loop, &cfg, err, sizeof(err));
    if (c == NULL)
        fail_msg("%s", err);
    return c;
}

static void close_loop(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);   /* every handle was closed */
}

static void test_bad_arguments(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[256];
    tg_kube_config none = {0};
    assert_null(tg_kube_client_new(&loop, &none, err, sizeof(err)));
    assert_non_null(strstr(err, "no server"));
    tg_kube_config bad_sni = {.server = (char *)"https://[::1", .tls_server_name = (char *)"x"};
    assert_null(tg_kube_client_new(&loop, &bad_sni, err, sizeof(err)));
    assert_non_null(strstr(err, "not a valid URL"));

    tg_kube_client *c = client_for(&loop, "http://127.0.0.1:1");
    tg_kube_request_opts o = {.path = "api/v1"};
    assert_null(tg_kube_request_start(c, &o, on_done, NULL, err, sizeof(err)));
    assert_non_null(strstr(err, "must start with '/'"));
    o.path = NULL;
    assert_null(tg_kube_request_start(c, &o, on_done, NULL, err, sizeof(err)));
    tg_kube_client_free(c);
    close_loop(&loop);
}

static void test_connection_refused(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg_kube_client *c = client_for(&loop, "http://127.0.0.1:1");
    result r = {0};
    char err[256];
    tg_kube_request_opts o = {.method = "POST", .path = "/api/v1/namespaces", .body = "{}", .body_len = 2};
    assert_non_null(tg_kube_request_start(c, &o, on_done, &r, err, sizeof(err)));
    assert_int_equal(r.calls, 0);   /* never from inside start() */
    while (r.calls == 0)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "onnect"));
    /* The synchronous form reports the same. */
    char *body;
    assert_int_equal(tg_kube_request_sync(c, &o, &body, NULL, err, sizeof(err)), -1);
    assert_null(body);
    assert_non_null(strstr(err, "onnect"));
    tg_kube_client_free(c);
    close_loop(&loop);
}

static void test_timeout_and_cancel(void **state)
{
    int port;
    int fd = silent_server(&port);
    char server[64], err[256];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", port);
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg_kube_client *c = client_for(&loop, server);

    result r = {0};
    tg_kube_request_opts o = {.path = "/api", .timeout_ms = 300};
    assert_non_null(tg_kube_request_start(c, &o, on_done, &r, err, sizeof(err)));
    tg_kube_request_opts never = {.path = "/api"};
    tg_kube_request *cancelled = tg_kube_request_start(c, &never, on_done_unexpected, NULL, err, sizeof(err));
    assert_non_null(cancelled);
    uint64_t t0 = uv_now(&loop);
    while (r.calls == 0)
        uv_run(&loop, UV_RUN_ONCE);
    uint64_t took = uv_now(&loop) - t0;
    assert_true(took >= 250 && took < 5000);
    assert_non_null(strstr(r.error, "imed out"));
    tg_kube_request_cancel(cancelled);

    /* In flight when the client goes: no callback, nothing leaked. */
    tg_kube_request_opts watch = {.path = "/api/v1/secrets?watch=1", .timeout_ms = -1};
    assert_non_null(tg_kube_request_start(c, &watch, on_done_unexpected, NULL, err, sizeof(err)));
    assert_non_null(tg_kube_request_start(c, &never, on_done_unexpected, NULL, err, sizeof(err)));
    for (int i = 0; i < 5; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    tg_kube_client_free(c);
    close_loop(&loop);
    close(fd);
}

/* Freeing the client from inside a callback is allowed. */
static void on_done_free_client(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    tg_kube_client_free(data);
}

static void test_free_from_callback(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg_kube_client *c = client_for(&loop, "http://127.0.0.1:1");
    char err[256];
    tg_kube_request_opts o = {.path = "/api"};
    assert_non_null(tg_kube_request_start(c, &o, on_done_free_client, c, err, sizeof(err)));
    assert_non_null(tg_kube_request_start(c, &o, on_done_free_client, c, err, sizeof(err)));
    close_loop(&loop);
}

static void test_escape(void **state)
{
    char *e = tg_kube_escape("liqo.io/nonce=true,x in (a b)");
    assert_string_equal(e, "liqo.io%2Fnonce%3Dtrue%2Cx%20in%20%28a%20b%29");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_timeout_and_cancel),
        cmocka_unit_test(test_free_from_callback),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
