/* test_log.c - every line is one valid JSON object with the fields given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* Parse strictly as the consumers of our logs would. */
static json_object *parse_line(const char *line, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *o;

    assert_non_null(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    assert_true(len > 0 && line[len - 1] == '\n');
    o = json_tokener_parse_ex(tok, line, (int)len - 1);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    assert_non_null(o);
    return o;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return NULL;
    return json_object_get_string(v);
}

static void test_format_basic(void **state)
{
    char buf[TG_LOG_LINE_MAX];
    size_t n = tg_log_format(buf, 1795010076123LL, TG_LOG_WARN, "admission",
                             (tg_log_field[]){TG_LOG_STR("uid", "abc"), TG_LOG_INT("us", -42),
                                              TG_LOG_BOOL("ok", 1), TG_LOG_STR("none", NULL)},
                             4);
    assert_string_equal(buf, "{\"ts\":\"2026-11-18T13:54:36.123Z\",\"level\":\"warn\","
                             "\"msg\":\"admission\",\"uid\":\"abc\",\"us\":-42,\"ok\":true,"
                             "\"none\":null}\n");
    assert_int_equal(n, strlen(buf));
}

/* Integers and timestamps are formatted by hand: the edges, and a cached
 * second that must change with the clock (same thread, consecutive calls). */
static void test_numbers_and_times(void **state)
{
    static const struct {
        int64_t ts_ms;
        int64_t v;
        const char *want;
    } cases[] = {
        {0, 0, "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"level\":\"info\",\"msg\":\"m\",\"n\":0}\n"},
        {999, 7, "{\"ts\":\"1970-01-01T00:00:00.999Z\",\"level\":\"info\",\"msg\":\"m\",\"n\":7}\n"},
        {1000, -1, "{\"ts\":\"1970-01-01T00:00:01.000Z\",\"level\":\"info\",\"msg\":\"m\",\"n\":-1}\n"},
        {1795010076005LL, INT64_MAX, "{\"ts\":\"2026-11-18T13:54:36.005Z\",\"level\":\"info\",\"msg\":\"m\","
                                     "\"n\":9223372036854775807}\n"},
        {1795010077050LL, INT64_MIN, "{\"ts\":\"2026-11-18T13:54:37.050Z\",\"level\":\"info\",\"msg\":\"m\","
                                     "\"n\":-9223372036854775808}\n"},
        {1795010076999LL, 1234567890, "{\"ts\":\"2026-11-18T13:54:36.999Z\",\"level\":\"info\",\"msg\":\"m\","
                                     "\"n\":1234567890}\n"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[TG_LOG_LINE_MAX];
        size_t n = tg_log_format(buf, cases[i].ts_ms, TG_LOG_INFO, "m",
                                 (tg_log_field[]){TG_LOG_INT("n", cases[i].v)}, 1);
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, strlen(buf));
    }
}

static void test_escaping(void **state)
{
    static const struct {
        const char *in;
        const char *want;        /* the JSON literal, quotes included */
    } cases[] = {
        {"plain", "\"plain\""},
        {"q\"b\\s", "\"q\\\"b\\\\s\""},
        {"nl\nx\ty\r", "\"nl\\nx\\ty\\r\""},
        {"\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"bad\xff\xc3", "\"bad\\ufffd\\ufffd\""},          /* stray byte, cut sequence */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                /* overlong "/" */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},     /* UTF-16 surrogate */
        {"</script>", "\"</script>\""},
    };
    char buf[TG_LOG_LINE_MAX];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = tg_log_format(buf, 0, TG_LOG_INFO, "m",
                                 (tg_log_field[]){TG_LOG_STR("v", cases[i].in)}, 1);
        const char *p = strstr(buf, "\"v\":");
        char want[256];

        assert_non_null(p);
        snprintf(want, sizeof(want), "\"v\":%s}\n", cases[i].want);
        assert_string_equal(p, want);
        json_object_put(parse_line(buf, n));
    }
}

static void test_truncation_keeps_json_valid(void **state)
{
    char buf[TG_LOG_LINE_MAX];
    size_t big = TG_LOG_LINE_MAX * 2;
    char *s = malloc(big + 1);

    /* Quotes expand to two bytes: the cut must not fall inside an escape. */
    for (size_t i = 0; i < big; i++)
        s[i] = (i % 3 == 0) ? '"' : (i % 3 == 1 ? 'a' : '\n');
    s[big] = '\0';
    for (size_t shift = 0; shift < 3; shift++) {
        size_t n = tg_log_format(buf, 0, TG_LOG_ERROR, s + shift,
                                 (tg_log_field[]){TG_LOG_STR("after", "x")}, 1);
        json_object *o = parse_line(buf, n);
        json_object *t;

        assert_true(n < TG_LOG_LINE_MAX);
        assert_true(json_object_object_get_ex(o, "truncated", &t));
        assert_true(json_object_get_boolean(t));
        json_object_put(o);
    }
    /* A long value in a later field: earlier fields survive. */
    memset(s, 0xe2, big);       /* invalid alone: each becomes \ufffd (6 bytes) */
    size_t n = tg_log_format(buf, 0, TG_LOG_INFO, "m",
                             (tg_log_field[]){TG_LOG_STR("uid", "u1"), TG_LOG_STR("v", s)}, 2);
    json_object *o = parse_line(buf, n);
    assert_string_equal(get_str(o, "uid"), "u1");
    json_object_put(o);
    free(s);
}

static int pipe_fds[2];

static void *writer(void *arg)
{
    char id[16];
    snprintf(id, sizeof(id), "t%ld", (long)(intptr_t)arg);
    for (int i = 0; i < 200; i++)
        tg_log(TG_LOG_INFO, "concurrent", TG_LOG_STR("thread", id), TG_LOG_INT("i", i),
               TG_LOG_STR("pad", "0123456789012345678901234567890123456789"));
    return NULL;
}

static void test_threads_never_interleave(void **state)
{
    pthread_t th[4];
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lines = 0;

    /* A temp file instead of a pipe: nobody has to drain it concurrently. */
    f = tmpfile();
    assert_non_null(f);
    tg_log_set_fd(fileno(f));
    for (long i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tg_log_set_fd(2);
    rewind(f);
    while ((n = getline(&line, &cap, f)) > 0) {
        json_object *o = parse_line(line, (size_t)n);
        assert_string_equal(get_str(o, "msg"), "concurrent");
        json_object_put(o);
        lines++;
    }
    assert_int_equal(lines, 800);
    free(line);
    fclose(f);
    (void)pipe_fds;
}

static off_t file_size(FILE *f)
{
    struct stat st;
    assert_int_equal(fstat(fileno(f), &st), 0);
    return st.st_size;
}

/* Batched lines reach the fd only on flush, when the batch would pass
 * PIPE_BUF (whole lines only), or at once for an error; batch_end flushes. */
static void test_batching(void **state)
{
    FILE *f = tmpfile();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lines = 0, flushed_early = 0;
    off_t last = 0;

    (void)state;
    assert_non_null(f);
    tg_log_set_fd(fileno(f));
    tg_log_batch_begin();
    tg_log(TG_LOG_INFO, "one", TG_LOG_INT("i", 1));
    tg_log(TG_LOG_WARN, "two", TG_LOG_INT("i", 2));
    assert_int_equal(file_size(f), 0);
    tg_log_flush();
    tg_log_sync();                                /* written by the writer thread */
    assert_true(file_size(f) > 0);
    last = file_size(f);
    tg_log(TG_LOG_ERROR, "three", TG_LOG_INT("i", 3));
    assert_true(file_size(f) > last);             /* errors are not held back */
    last = file_size(f);
    for (int i = 0; i < 100; i++) {
        tg_log(TG_LOG_INFO, "many", TG_LOG_INT("i", i),
               TG_LOG_STR("pad", "0123456789012345678901234567890123456789"));
        tg_log_sync();
        if (file_size(f) != last) {
            flushed_early = 1;
            assert_true(file_size(f) - last <= PIPE_BUF);
            last = file_size(f);
        }
    }
    assert_true(flushed_early);                   /* 100 lines pass PIPE_BUF */
    tg_log_batch_end();
    tg_log(TG_LOG_INFO, "unbatched");
    tg_log_set_fd(2);
    rewind(f);
    while ((n = getline(&line, &cap, f)) > 0) {
        json_object *o = parse_line(line, (size_t)n);
        json_object_put(o);
        lines++;
    }
    assert_int_equal(lines, 104);
    free(line);
    fclose(f);
}

/* The event loop's flush never waits on the log's reader: with a pipe that
 * nobody reads yet, 100 KB of batched lines (more than the pipe holds) are
 * handed over without blocking, then arrive whole and in order. */
static void test_flush_does_not_wait_for_the_reader(void **state)
{
    int fds[2];
    const int n = 800;
    char *all = malloc(1 << 20), *p, *nl;
    size_t got = 0;
    int seen = 0;

    (void)state;
    assert_non_null(all);
    assert_int_equal(pipe(fds), 0);
    tg_log_set_fd(fds[1]);
    tg_log_batch_begin();
    for (int i = 0; i < n; i++) {
        tg_log(TG_LOG_INFO, "queued", TG_LOG_INT("i", i),
               TG_LOG_STR("pad", "0123456789012345678901234567890123456789012345678901234567890123456789"));
        if (i % 3 == 2)
            tg_log_flush();
    }
    tg_log_flush();
    /* Only now does anyone read. */
    while (seen < n) {
        ssize_t r = read(fds[0], all + got, (1 << 20) - 1 - got);
        assert_true(r > 0);
        got += (size_t)r;
        all[got] = '\0';
        seen = 0;
        for (p = all; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
            seen++;
    }
    tg_log_batch_end();
    tg_log_set_fd(2);
    seen = 0;
    for (p = all; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        json_object *o = parse_line(p, (size_t)(nl - p + 1)), *v;
        assert_true(json_object_object_get_ex(o, "i", &v));
        assert_int_equal(json_object_get_int(v), seen);
        json_object_put(o);
        seen++;
    }
    assert_int_equal(seen, n);
    close(fds[0]);
    close(fds[1]);
    free(all);
}

/* Resident anonymous memory, counted from the page tables (smaps_rollup):
 * the RssAnon of /proc/self/status is a per-CPU estimate that can lag by
 * more than the ring's size. */
static long anon_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");

    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Anonymous: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* A steady trickle of lines, each written before the next comes (what an
 * idle or lightly loaded server logs), reuses the queue's first pages: 300
 * KB of such lines, more than the 256 KiB ring, leave it almost untouched,
 * where a ring that walks on would have made all of it resident for good.
 * This test must run before any other writes through the queue. */
static void test_trickle_keeps_the_queue_small(void **state)
{
    char pad[601];
    long before, after;
    int fd = open("/dev/null", O_WRONLY);

    (void)state;
    assert_true(fd >= 0);
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    tg_log_set_fd(fd);
    tg_log_batch_begin();           /* as the event loop logs: through the queue */
    tg_log(TG_LOG_INFO, "warm-up");
    tg_log_flush();
    tg_log_sync();
    before = anon_kib();
    for (int i = 0; i < 500; i++) {
        tg_log(TG_LOG_INFO, "trickle", TG_LOG_INT("i", i), TG_LOG_STR("pad", pad));
        tg_log_flush();
        tg_log_sync();
    }
    after = anon_kib();
    tg_log_batch_end();
    tg_log_set_fd(2);
    close(fd);
    assert_true(before > 0);
    /* 64 ring pages would be +256 KiB; allow a few pages of other growth. */
    if (after - before >= 64)
        fail_msg("Anonymous memory grew by %ld KiB over 300 KB of trickled lines", after - before);
}

static void test_levels(void **state)
{
    tg_log_level l;

    assert_int_equal(tg_log_level_parse("warn", &l), 0);
    assert_int_equal(l, TG_LOG_WARN);
    assert_int_equal(tg_log_level_parse("loud", &l), -1);
    tg_log_set_level(TG_LOG_WARN);
    assert_false(tg_log_enabled(TG_LOG_INFO));
    assert_true(tg_log_enabled(TG_LOG_ERROR));
    /* by name (--log-level): an unknown name leaves the level as it was */
    assert_int_equal(tg_log_set_level_named("debug"), 0);
    assert_true(tg_log_enabled(TG_LOG_DEBUG));
    assert_int_equal(tg_log_set_level_named("DEBUGGING"), -1);
    assert_true(tg_log_enabled(TG_LOG_DEBUG));
    assert_int_equal(tg_log_set_level_named("error"), 0);
    assert_false(tg_log_enabled(TG_LOG_WARN));
    tg_log_set_level(TG_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trickle_keeps_the_queue_small), /* first: a fresh queue */
        cmocka_unit_test(test_format_basic),
        cmocka_unit_test(test_numbers_and_times),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_truncation_keeps_json_valid),
        cmocka_unit_test(test_threads_never_interleave),
        cmocka_unit_test(test_batching),
        cmocka_unit_test(test_flush_does_not_wait_for_the_reader),
        cmocka_unit_test(test_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
