/* test_watch.c - the watch stream parser on a recorded stream, fed whole,
 * split at every byte boundary, byte by byte; and hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"

#define MAX_SEEN 32

typedef struct seen {
    size_t n;
    char line[MAX_SEEN][128];   /* "TYPE ns/name rv" per event */
    int stop_at;                /* stop (return 7) at this event index, -1 never */
} seen;

static int record(const tg_watch_event *ev, void *data)
{
    seen *s = data;
    const char *ns = tg_json_path_string(ev->object, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(ev->object, "metadata", "name", NULL);
    const char *rv = tg_json_path_string(ev->object, "metadata", "resourceVersion", NULL);
    assert_true(s->n < MAX_SEEN);
    snprintf(s->line[s->n], sizeof(s->line[0]), "%s %s/%s %s", tg_watch_type_name(ev->type), ns ? ns : "-",
             name ? name : "-", rv ? rv : "-");
    if (ev->type == TG_WATCH_ERROR)
        snprintf(s->line[s->n], sizeof(s->line[0]), "ERROR %d", tg_watch_status_code(ev->object));
    return (int)s->n++ == s->stop_at ? 7 : 0;
}

static const char *const expected[] = {
    "ADDED liqo-tenant-cl01/liqo-nonce 1201",
    "BOOKMARK -/- 1250",
    "MODIFIED liqo-tenant-cl01/liqo-nonce 1302",
    "ADDED liqo-tenant-cl02/liqo-nonce 1303",
    "DELETED liqo-tenant-cl01/liqo-nonce 1304",
    "ERROR 410",
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static char *stream;
static size_t stream_len;

static int load_stream(void **state)
{
    const char *src = getenv("TG_SOURCE_DIR");
    char path[1024], err[256];
    snprintf(path, sizeof(path), "%s/kube/testdata/watch-secrets.ndjson", src ? src : ".");
    if (tg_kube_read_file(path, 1 << 20, &stream, &stream_len, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int free_stream(void **state)
{
    free(stream);
    return 0;
}

static void check_all_seen(const seen *s)
{
    assert_int_equal(s->n, N_EXPECTED);
    for (size_t i = 0; i < N_EXPECTED; i++)
        assert_string_equal(s->line[i], expected[i]);
}

static void test_whole_stream(void **state)
{
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, stream, stream_len), 0);
    assert_int_equal(tg_watch_parser_finish(&p), 0);
    check_all_seen(&s);
    tg_watch_parser_free(&p);
}

/* Every split point: an event cut anywhere, even inside a UTF-8 sequence
 * or between '\r' and '\n', must come out the same. */
static void test_every_split_point(void **state)
{
    for (size_t cut = 0; cut <= stream_len; cut++) {
        seen s = {.stop_at = -1};
        tg_watch_parser p;
        tg_watch_parser_init(&p, 0, record, &s);
        assert_int_equal(tg_watch_parser_feed(&p, stream, cut), 0);
        assert_int_equal(tg_watch_parser_feed(&p, stream + cut, stream_len - cut), 0);
        assert_int_equal(tg_watch_parser_finish(&p), 0);
        check_all_seen(&s);
        tg_watch_parser_free(&p);
    }
}

static void test_byte_by_byte(void **state)
{
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    for (size_t i = 0; i < stream_len; i++)
        assert_int_equal(tg_watch_parser_feed(&p, stream + i, 1), 0);
    assert_int_equal(tg_watch_parser_finish(&p), 0);
    check_all_seen(&s);
    tg_watch_parser_free(&p);
}

/* Three pieces of varying sizes: the buffered tail plus several whole events in one read. */
static void test_three_pieces(void **state)
{
    for (size_t a = 0; a < stream_len; a += 13) {
        for (size_t b = a; b <= stream_len; b += 97) {
            seen s = {.stop_at = -1};
            tg_watch_parser p;
            tg_watch_parser_init(&p, 0, record, &s);
            assert_int_equal(tg_watch_parser_feed(&p, stream, a), 0);
            assert_int_equal(tg_watch_parser_feed(&p, stream + a, b - a), 0);
            assert_int_equal(tg_watch_parser_feed(&p, stream + b, stream_len - b), 0);
            assert_int_equal(tg_watch_parser_finish(&p), 0);
            check_all_seen(&s);
            tg_watch_parser_free(&p);
        }
    }
}

static void test_callback_stops_stream(void **state)
{
    seen s = {.stop_at = 2};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, stream, stream_len), 7);
    assert_int_equal(s.n, 3);   /* nothing after the stop */
    tg_watch_parser_free(&p);
}

static void test_last_event_without_newline(void **state)
{
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, stream, stream_len - 1), 0);   /* drop the final '\n' */
    assert_int_equal(s.n, N_EXPECTED - 1);
    assert_int_equal(tg_watch_parser_finish(&p), 0);
    check_all_seen(&s);
    tg_watch_parser_free(&p);
}

static void test_truncated_stream(void **state)
{
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, stream, stream_len - 20), 0);
    assert_int_equal(tg_watch_parser_finish(&p), -1);
    assert_non_null(strstr(p.err, "ended inside an event"));
    tg_watch_parser_free(&p);
}

static void test_blank_and_crlf_lines(void **state)
{
    const char in[] = "\n  \r\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}\r\n\n";
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, in, sizeof(in) - 1), 0);
    assert_int_equal(tg_watch_parser_finish(&p), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.line[0], "ADDED -/a 5");
    tg_watch_parser_free(&p);
}

/* A line over the cap is refused whether it arrives in one read or many,
 * and without buffering more than the cap. */
static void test_long_line_capped(void **state)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"%0200d\"}}}\n", 0);
    for (int pieces = 1; pieces <= 3; pieces++) {
        seen s = {.stop_at = -1};
        tg_watch_parser p;
        tg_watch_parser_init(&p, 100, record, &s);
        int rc = 0;
        size_t step = (size_t)n / (size_t)pieces + 1;
        for (size_t off = 0; off < (size_t)n && rc == 0; off += step)
            rc = tg_watch_parser_feed(&p, line + off, off + step > (size_t)n ? (size_t)n - off : step);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(p.err, "longer than 100 bytes"));
        assert_true(p.cap <= 100);
        assert_int_equal(s.n, 0);
        tg_watch_parser_free(&p);
    }
}

/* One big event in pieces is fine, and its buffer is not kept afterwards. */
static void test_big_event_buffer_released(void **state)
{
    size_t pad = 200000;
    char *big = malloc(pad + 256);
    assert_non_null(big);
    int head = snprintf(big, 256, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\",\"resourceVersion\":\"9\"},\"data\":\"");
    memset(big + head, 'A', pad);
    size_t n = (size_t)head + pad;
    n += (size_t)sprintf(big + n, "\"}}\n");
    seen s = {.stop_at = -1};
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, record, &s);
    assert_int_equal(tg_watch_parser_feed(&p, big, n / 3), 0);
    assert_int_equal(tg_watch_parser_feed(&p, big + n / 3, n - n / 3), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.line[0], "ADDED -/big 9");
    assert_int_equal(p.cap, 0);
    tg_watch_parser_free(&p);
    free(big);
}

static void test_bad_lines(void **state)
{
    static const struct {
        const char *line, *why;
    } cases[] = {
        {"not json\n", "not JSON"},
        {"{\"type\":\"ADDED\",\"object\":{}\n", "not JSON"},                /* truncated */
        {"[1,2]\n", "no string \"type\""},
        {"{\"object\":{}}\n", "no string \"type\""},
        {"{\"type\":7,\"object\":{}}\n", "no string \"type\""},
        {"{\"type\":\"added\",\"object\":{}}\n", "unknown type"},          /* case-sensitive */
        {"{\"type\":\"SYNC\",\"object\":{}}\n", "unknown type"},
        {"{\"type\":\"ADDED\"}\n", "no \"object\""},
        {"{\"type\":\"ADDED\",\"object\":\"x\"}\n", "no \"object\""},
        {"{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}\n", "not JSON"},   /* duplicate key */
        {"{\"type\":\"ADDED\",\"object\":{\"a\":\"\xff\"}}\n", "not JSON"},          /* bad UTF-8 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        seen s = {.stop_at = -1};
        tg_watch_parser p;
        tg_watch_parser_init(&p, 0, record, &s);
        assert_int_equal(tg_watch_parser_feed(&p, cases[i].line, strlen(cases[i].line)), -1);
        if (strstr(p.err, cases[i].why) == NULL)
            fail_msg("case %zu: error \"%s\" does not say \"%s\"", i, p.err, cases[i].why);
        assert_int_equal(s.n, 0);
        tg_watch_parser_free(&p);
    }
}

static void test_status_code(void **state)
{
    json_object *st = tg_json_parse("{\"code\":410}", 12, NULL, 0);
    assert_int_equal(tg_watch_status_code(st), 410);
    json_object_put(st);
    st = tg_json_parse("{\"code\":\"410\"}", 14, NULL, 0);
    assert_int_equal(tg_watch_status_code(st), 0);
    json_object_put(st);
    assert_int_equal(tg_watch_status_code(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_stream),
        cmocka_unit_test(test_every_split_point),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_three_pieces),
        cmocka_unit_test(test_callback_stops_stream),
        cmocka_unit_test(test_last_event_without_newline),
        cmocka_unit_test(test_truncated_stream),
        cmocka_unit_test(test_blank_and_crlf_lines),
        cmocka_unit_test(test_long_line_capped),
        cmocka_unit_test(test_big_event_buffer_released),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_status_code),
    };
    return cmocka_run_group_tests(tests, load_stream, free_stream);
}
