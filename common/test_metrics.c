/* test_metrics.c - exposition text is exactly what Prometheus parses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

static void test_render_exact(void **state)
{
    tg_metrics *m = tg_metrics_new();
    const char *lab[] = {"path", "verdict"};
    const double bounds[] = {0.005, 0.1, 10};
    tg_metric_family *req = tg_metrics_counter(m, "tg_requests_total", "Requests.\nBy path \\ verdict.", 2, lab);
    tg_metric_family *inflight = tg_metrics_gauge(m, "tg_in_flight", "In flight.", 0, NULL);
    tg_metric_family *lat = tg_metrics_histogram(m, "tg_latency_seconds", "Latency.", 1, lab, 3, bounds);
    char *text;
    size_t len;

    assert_non_null(req);
    assert_non_null(inflight);
    assert_non_null(lat);
    tg_counter_add(tg_metric_series_get(req, (const char *[]){"/validate", "allowed"}), 2);
    tg_counter_add(tg_metric_series_get(req, (const char *[]){"/validate", "allowed"}), 1);
    tg_counter_add(tg_metric_series_get(req, (const char *[]){"a\"b\\c\nd", "denied"}), 1);
    tg_counter_add(tg_metric_series_get(req, (const char *[]){"/validate", "allowed"}), -5);
    tg_gauge_set(tg_metric_series_get(inflight, NULL), 3);
    tg_gauge_add(tg_metric_series_get(inflight, NULL), -1.5);
    tg_metric_series *s = tg_metric_series_get(lat, (const char *[]){"/m"});
    tg_histogram_observe(s, 0.001);
    tg_histogram_observe(s, 0.005);     /* le is inclusive */
    tg_histogram_observe(s, 0.05);
    tg_histogram_observe(s, 11);
    text = tg_metrics_render(m, &len);
    assert_non_null(text);
    assert_string_equal(text,
        "# HELP tg_requests_total Requests.\\nBy path \\\\ verdict.\n"
        "# TYPE tg_requests_total counter\n"
        "tg_requests_total{path=\"/validate\",verdict=\"allowed\"} 3\n"
        "tg_requests_total{path=\"a\\\"b\\\\c\\nd\",verdict=\"denied\"} 1\n"
        "# HELP tg_in_flight In flight.\n"
        "# TYPE tg_in_flight gauge\n"
        "tg_in_flight 1.5\n"
        "# HELP tg_latency_seconds Latency.\n"
        "# TYPE tg_latency_seconds histogram\n"
        "tg_latency_seconds_bucket{path=\"/m\",le=\"0.005\"} 2\n"
        "tg_latency_seconds_bucket{path=\"/m\",le=\"0.1\"} 3\n"
        "tg_latency_seconds_bucket{path=\"/m\",le=\"10\"} 3\n"
        "tg_latency_seconds_bucket{path=\"/m\",le=\"+Inf\"} 4\n"
        "tg_latency_seconds_sum{path=\"/m\"} 11.056\n"
        "tg_latency_seconds_count{path=\"/m\"} 4\n");
    assert_int_equal(len, strlen(text));
    assert_int_equal(tg_histogram_count(s), 4);
    free(text);
    tg_metrics_free(m);
}

static void test_bad_registrations(void **state)
{
    tg_metrics *m = tg_metrics_new();
    const double unsorted[] = {1, 0.5};
    static const struct {
        const char *name;
        const char *label;
    } bad[] = {
        {"", NULL}, {"9lives", NULL}, {"has-dash", NULL}, {"ok_name", "bad-label"},
        {"ok_name", "__reserved"}, {"ok_name", "a:b"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *labels[] = {bad[i].label};
        assert_null(tg_metrics_counter(m, bad[i].name, "h", bad[i].label ? 1 : 0, labels));
    }
    assert_null(tg_metrics_histogram(m, "h1", "h", 1, (const char *[]){"le"}, 0, NULL));
    assert_null(tg_metrics_histogram(m, "h2", "h", 0, NULL, 2, unsorted));
    assert_non_null(tg_metrics_gauge(m, "ns:name_1", "h", 0, NULL));
    assert_null(tg_metrics_gauge(m, "ns:name_1", "dup", 0, NULL));
    tg_metrics_free(m);
}

static void test_special_values(void **state)
{
    tg_metrics *m = tg_metrics_new();
    tg_metric_family *g = tg_metrics_gauge(m, "g", "", 1, (const char *[]){"k"});
    char *text;

    tg_gauge_set(tg_metric_series_get(g, (const char *[]){"inf"}), INFINITY);
    tg_gauge_set(tg_metric_series_get(g, (const char *[]){"ninf"}), -INFINITY);
    tg_gauge_set(tg_metric_series_get(g, (const char *[]){"nan"}), NAN);
    tg_gauge_set(tg_metric_series_get(g, (const char *[]){"big"}), 1795010076);
    tg_gauge_set(tg_metric_series_get(g, (const char *[]){"frac"}), 0.1);
    text = tg_metrics_render(m, NULL);
    assert_non_null(strstr(text, "g{k=\"inf\"} +Inf\n"));
    assert_non_null(strstr(text, "g{k=\"ninf\"} -Inf\n"));
    assert_non_null(strstr(text, "g{k=\"nan\"} NaN\n"));
    assert_non_null(strstr(text, "g{k=\"big\"} 1795010076\n"));
    assert_non_null(strstr(text, "g{k=\"frac\"} 0.1\n"));
    assert_non_null(strstr(text, "# HELP g \n"));
    free(text);
    tg_metrics_free(m);
}

/* A histogram of the most bounds allowed counts its +Inf bucket in the
 * series (under ASan, one past the buckets would fail), and a gauge's
 * series, which has no buckets, ignores an observation. */
static void test_buckets_sized_by_family(void **state)
{
    double bounds[TG_METRICS_MAX_BUCKETS];
    tg_metrics *m = tg_metrics_new();
    tg_metric_family *h, *g;
    char *text;

    (void)state;
    for (size_t i = 0; i < TG_METRICS_MAX_BUCKETS; i++)
        bounds[i] = (double)(i + 1);
    h = tg_metrics_histogram(m, "wide", "w", 0, NULL, TG_METRICS_MAX_BUCKETS, bounds);
    g = tg_metrics_gauge(m, "level", "l", 0, NULL);
    assert_non_null(h);
    assert_non_null(g);
    tg_histogram_observe(tg_metric_series_get(h, NULL), 1000);
    tg_histogram_observe(tg_metric_series_get(h, NULL), 24);
    tg_gauge_set(tg_metric_series_get(g, NULL), 7);
    tg_histogram_observe(tg_metric_series_get(g, NULL), 1);
    text = tg_metrics_render(m, NULL);
    assert_non_null(strstr(text, "wide_bucket{le=\"24\"} 1\n"));
    assert_non_null(strstr(text, "wide_bucket{le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(text, "level 7\n"));
    free(text);
    tg_metrics_free(m);
}

static tg_metric_family *shared_counter, *shared_hist;

static void *bump(void *arg)
{
    tg_metric_series *h = tg_metric_series_get(shared_hist, NULL);
    for (int i = 0; i < 20000; i++) {
        /* half through a fresh lookup, half through the kept pointer */
        tg_counter_add(tg_metric_series_get(shared_counter, (const char *[]){i % 2 ? "a" : "b"}), 1);
        tg_histogram_observe(h, 0.5);
    }
    return NULL;
}

static void test_concurrent_updates(void **state)
{
    tg_metrics *m = tg_metrics_new();
    pthread_t th[4];

    shared_counter = tg_metrics_counter(m, "c_total", "c", 1, (const char *[]){"k"});
    shared_hist = tg_metrics_histogram(m, "h", "h", 0, NULL, 1, (const double[]){1});
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, bump, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_true(tg_metric_value(tg_metric_series_get(shared_counter, (const char *[]){"a"})) == 40000);
    assert_true(tg_metric_value(tg_metric_series_get(shared_counter, (const char *[]){"b"})) == 40000);
    assert_int_equal(tg_histogram_count(tg_metric_series_get(shared_hist, NULL)), 80000);
    assert_true(tg_metric_value(tg_metric_series_get(shared_hist, NULL)) == 40000);
    tg_metrics_free(m);
}

/* A counter mirroring a count kept elsewhere follows it up, never down. */
static void test_counter_raise(void **state)
{
    tg_metrics *m = tg_metrics_new();
    tg_metric_family *f = tg_metrics_counter(m, "tg_failures_total", "Failures.", 1, (const char *[]){"cache"});
    tg_metric_series *s = tg_metric_series_get(f, (const char *[]){"tenants"});
    const struct { double total, want; } rows[] = {
        {0, 0},      /* first read: nothing yet */
        {3, 3},      /* three failures so far */
        {3, 3},      /* read again: unchanged */
        {2, 3},      /* a lower count (never happens; ignored) */
        {7, 7},
    };

    assert_non_null(s);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tg_counter_raise(s, rows[i].total);
        assert_true(tg_metric_value(s) == rows[i].want);
    }
    tg_counter_raise(NULL, 5);   /* out of memory at series_get: no crash */
    tg_metrics_free(m);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_exact),
        cmocka_unit_test(test_counter_raise),
        cmocka_unit_test(test_bad_registrations),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_buckets_sized_by_family),
        cmocka_unit_test(test_concurrent_updates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
