/* test_h1_response.c - HTTP/1.1 response framing, table-driven: every row is
 * fed whole, split at every byte boundary and byte by byte, and must end the
 * same way each time (status, body, reuse, bytes left after it, or the
 * error's reason); then hostile heads and a receiver that stops the body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/h1_response.h"

typedef struct body {
    char bytes[256];
    size_t len;
    size_t stop_after;   /* return non-zero once this many bytes arrived; 0 never */
} body;

static int on_body(const char *p, size_t n, void *data)
{
    body *b = data;
    assert_true(b->len + n < sizeof(b->bytes));
    memcpy(b->bytes + b->len, p, n);
    b->len += n;
    return b->stop_after && b->len >= b->stop_after;
}

typedef struct row {
    const char *name;
    const char *wire;
    int eof;               /* the server closes after the bytes */
    tg_h1_result want;     /* after all bytes (and the close, with eof) */
    int status;
    const char *body;
    int keep_alive;
    size_t left;           /* bytes after the response (DONE only) */
    const char *why;       /* part of the error's reason (ERROR only) */
} row;

static const row rows[] = {
    {"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, TG_H1_DONE, 200, "hello", 1, 0, NULL},
    {"content-length, bytes after", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiXYZ", 0, TG_H1_DONE, 200, "hi", 1, 3,
     NULL},
    {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 0, TG_H1_DONE,
     200, "abcde", 1, 0, NULL},
    {"chunked with trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nT: v\r\n\r\n", 0,
     TG_H1_DONE, 200, "x", 1, 0, NULL},
    {"chunked, upper-case coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n", 0, TG_H1_DONE, 200,
     "", 1, 0, NULL},
    {"until close", "HTTP/1.1 200 OK\r\n\r\nstream", 1, TG_H1_DONE, 200, "stream", 0, 0, NULL},
    {"connection close", "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 0, TG_H1_DONE,
     404, "no", 0, 0, NULL},
    {"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n1", 0, TG_H1_DONE, 200, "1", 0, 0, NULL},
    {"no content", "HTTP/1.1 204 No Content\r\n\r\n", 0, TG_H1_DONE, 204, "", 1, 0, NULL},
    {"empty length", "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 0, TG_H1_DONE, 201, "", 1, 0, NULL},
    {"interim then final", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0,
     TG_H1_DONE, 200, "ok", 1, 0, NULL},
    {"same length twice", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", 0, TG_H1_DONE, 200, "a",
     1, 0, NULL},
    {"chunked wins over length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     0, TG_H1_DONE, 200, "", 1, 0, NULL},
    {"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 1, TG_H1_ERROR, 200, "abc", 1, 0,
     "middle of the response body"},
    {"truncated head", "HTTP/1.1 200 OK\r\nContent-Len", 1, TG_H1_ERROR, 0, "", 0, 0, "before a complete response head"},
    {"nothing", "", 1, TG_H1_ERROR, 0, "", 0, 0, "before a complete response head"},
    {"truncated chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 1, TG_H1_ERROR, 200, "ab", 1, 0,
     "middle of the response body"},
    {"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\na", 0, TG_H1_ERROR, 0, "",
     0, 0, "Content-Length"},
    {"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\na", 0, TG_H1_ERROR, 0, "", 0, 0, "Content-Length"},
    {"huge length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0,
     "Content-Length"},
    {"gzip coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0,
     "transfer coding"},
    {"chunked twice", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
     TG_H1_ERROR, 0, "", 0, 0, "transfer coding"},
    {"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, TG_H1_ERROR, 200, "", 1, 0,
     "malformed chunked"},
    {"status 99", "HTTP/1.1 099 Low\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0, "status out of range"},
    {"status 600", "HTTP/1.1 600 High\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0, "status out of range"},
    {"switching protocols", "HTTP/1.1 101 Switching\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0, "protocol switch"},
    {"not http", "SSH-2.0-OpenSSH\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0, "malformed response head"},
    {"folded header", "HTTP/1.1 200 OK\r\nX: a\r\n  b\r\nContent-Length: 0\r\n\r\n", 0, TG_H1_ERROR, 0, "", 0, 0,
     "folded"},
};

typedef struct outcome {
    tg_h1_result rc;
    int status, keep_alive;
    size_t left;
    const char *why;
    body b;
} outcome;

/* Feed wire in pieces of at most `piece` bytes (0: whole), then the close. */
static outcome run(const row *t, size_t split, size_t piece)
{
    outcome o = {0};
    tg_h1_response r;
    size_t n = strlen(t->wire), at = 0;
    char *copy = malloc(n + 1);
    memcpy(copy, t->wire, n + 1);
    tg_h1_response_init(&r);
    o.rc = TG_H1_MORE;
    while (at < n && o.rc == TG_H1_MORE) {
        size_t len = n - at, used;
        if (split && at < split)
            len = split - at;
        else if (piece && len > piece)
            len = piece;
        o.rc = tg_h1_response_feed(&r, copy + at, len, &used, on_body, &o.b, &o.why);
        if (used > len)
            fail_msg("%s: used %zu of %zu at %zu", t->name, used, len, at);
        if (o.rc == TG_H1_DONE)
            o.left = n - at - used;
        else if (o.rc == TG_H1_MORE)
            assert_int_equal(used, len);
        at += len;
    }
    if (o.rc == TG_H1_MORE && t->eof)
        o.rc = tg_h1_response_eof(&r, &o.why);
    o.status = r.status;
    o.keep_alive = r.keep_alive;
    tg_h1_response_free(&r);
    free(copy);
    return o;
}

static void check(const row *t, const outcome *o, const char *how)
{
    if (o->rc != t->want)
        fail_msg("%s (%s): result %d, want %d (%s)", t->name, how, o->rc, t->want, o->why ? o->why : "");
    if (o->status != t->status)
        fail_msg("%s (%s): status %d, want %d", t->name, how, o->status, t->status);
    if (o->b.len != strlen(t->body) || memcmp(o->b.bytes, t->body, o->b.len) != 0)
        fail_msg("%s (%s): body \"%.*s\", want \"%s\"", t->name, how, (int)o->b.len, o->b.bytes, t->body);
    if (t->want == TG_H1_DONE) {
        if (o->keep_alive != t->keep_alive)
            fail_msg("%s (%s): keep-alive %d, want %d", t->name, how, o->keep_alive, t->keep_alive);
        /* Split reads may leave the extra bytes in a later piece, never fewer. */
        assert_true(o->left >= t->left && (o->left == t->left || !strcmp(how, "bytes")));
    }
    if (t->want == TG_H1_ERROR && (o->why == NULL || strstr(o->why, t->why) == NULL))
        fail_msg("%s (%s): reason \"%s\", want \"%s\"", t->name, how, o->why ? o->why : "(none)", t->why);
}

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *t = &rows[i];
        outcome whole = run(t, 0, 0);
        check(t, &whole, "whole");
        for (size_t s = 1; s < strlen(t->wire); s++) {
            outcome o = run(t, s, 0);
            if (o.rc == TG_H1_DONE)
                o.left = whole.left;   /* the second piece holds them: counted as whole */
            check(t, &o, "split");
        }
        outcome bytes = run(t, 0, 1);
        if (bytes.rc == TG_H1_DONE)
            bytes.left = whole.left;
        check(t, &bytes, "bytes");
    }
}

/* A receiver that stops: ABORTED at once, and never called again. */
static void test_receiver_stops(void **state)
{
    const char *wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n";
    char copy[128];
    body b = {.stop_after = 4};
    /* The two chunks arrive in one read and decode as one piece of 8. */
    tg_h1_response r;
    const char *why;
    snprintf(copy, sizeof(copy), "%s", wire);
    tg_h1_response_init(&r);
    assert_int_equal(tg_h1_response_feed(&r, copy, strlen(copy), NULL, on_body, &b, &why), TG_H1_ABORTED);
    assert_int_equal(b.len, 8);
    tg_h1_response_free(&r);
    /* Split so the first piece holds only the first chunk. */
    b = (body){.stop_after = 4};
    snprintf(copy, sizeof(copy), "%s", wire);
    tg_h1_response_init(&r);
    size_t head = strstr(copy, "4\r\nefgh") - copy;
    assert_int_equal(tg_h1_response_feed(&r, copy, head, NULL, on_body, &b, &why), TG_H1_ABORTED);
    assert_int_equal(b.len, 4);
    tg_h1_response_free(&r);
}

/* A head that never ends is refused at 64 KiB, not buffered on. */
static void test_head_limit(void **state)
{
    tg_h1_response r;
    const char *why = NULL;
    char line[1024];
    body b = {0};
    tg_h1_result rc;
    size_t fed = 0;
    tg_h1_response_init(&r);
    snprintf(line, sizeof(line), "HTTP/1.1 200 OK\r\n");
    rc = tg_h1_response_feed(&r, line, strlen(line), NULL, on_body, &b, &why);
    while (rc == TG_H1_MORE && fed < (1u << 20)) {
        memset(line, 'a', sizeof(line));
        memcpy(line, "X-Pad: ", 7);
        line[sizeof(line) - 2] = '\r';
        line[sizeof(line) - 1] = '\n';
        rc = tg_h1_response_feed(&r, line, sizeof(line), NULL, on_body, &b, &why);
        fed += sizeof(line);
    }
    assert_int_equal(rc, TG_H1_ERROR);
    assert_true(fed <= TG_H1_HEAD_MAX);
    assert_non_null(strstr(why, "64 KiB") ? why : strstr(why, "malformed"));
    assert_true(r.head_cap <= TG_H1_HEAD_MAX * 2);
    tg_h1_response_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_receiver_stops),
        cmocka_unit_test(test_head_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
