/* test_workqueue.c - dedup, in-flight exclusion, delays, per-key backoff and
 * the overall token bucket, with the clock passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "signer/workqueue.h"

static void test_dedup_and_fifo(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    char k[TG_WQ_KEY_MAX];

    assert_int_equal(tg_wq_add(q, "a", 0), 0);
    assert_int_equal(tg_wq_add(q, "b", 0), 0);
    assert_int_equal(tg_wq_add(q, "a", 0), 0);
    assert_int_equal(tg_wq_len(q), 2);
    assert_int_equal(tg_wq_get(q, 0, k), 1);
    assert_string_equal(k, "a");
    assert_int_equal(tg_wq_get(q, 0, k), 1);
    assert_string_equal(k, "b");
    assert_int_equal(tg_wq_get(q, 0, k), 0);
    assert_int_equal(tg_wq_in_flight(q), 2);
    tg_wq_done(q, "a", 0);
    tg_wq_done(q, "b", 0);
    assert_int_equal(tg_wq_in_flight(q), 0);
    assert_int_equal(tg_wq_len(q), 0);
    tg_wq_free(q);
}

static void test_in_flight_never_twice(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    char k[TG_WQ_KEY_MAX];

    tg_wq_add(q, "x", 0);
    assert_int_equal(tg_wq_get(q, 0, k), 1);
    /* re-added while a worker holds it: not handed out again ... */
    tg_wq_add(q, "x", 1);
    tg_wq_add(q, "x", 2);
    assert_int_equal(tg_wq_get(q, 3, k), 0);
    assert_int_equal(tg_wq_len(q), 0);
    /* ... but exactly once after done */
    tg_wq_done(q, "x", 4);
    assert_int_equal(tg_wq_len(q), 1);
    assert_int_equal(tg_wq_get(q, 4, k), 1);
    assert_string_equal(k, "x");
    assert_int_equal(tg_wq_get(q, 4, k), 0);
    tg_wq_done(q, "x", 5);
    assert_int_equal(tg_wq_len(q), 0);
    tg_wq_free(q);
}

static void test_add_after(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    char k[TG_WQ_KEY_MAX];

    tg_wq_add_after(q, "late", 100, 1000);
    assert_int_equal(tg_wq_len(q), 1);
    assert_int_equal(tg_wq_next_ready_in(q, 1000), 100);
    assert_int_equal(tg_wq_get(q, 1099, k), 0);
    assert_int_equal(tg_wq_get(q, 1100, k), 1);
    assert_string_equal(k, "late");
    tg_wq_done(q, "late", 1100);
    /* an earlier time wins; a plain add makes it ready at once */
    tg_wq_add_after(q, "y", 500, 0);
    tg_wq_add_after(q, "y", 50, 0);
    assert_int_equal(tg_wq_next_ready_in(q, 0), 50);
    tg_wq_add_after(q, "y", 900, 0);
    assert_int_equal(tg_wq_next_ready_in(q, 0), 50);
    tg_wq_add(q, "y", 10);
    assert_int_equal(tg_wq_next_ready_in(q, 10), 0);
    assert_int_equal(tg_wq_get(q, 10, k), 1);
    assert_int_equal(tg_wq_next_ready_in(q, 10), UINT64_MAX);
    tg_wq_free(q);
}

static void test_per_key_backoff(void **state)
{
    /* huge bucket so only the per-key backoff counts */
    tg_wq_opts o = {.qps = 1e9, .burst = 1e9};
    tg_workqueue *q = tg_wq_new(&o);
    static const uint64_t want[] = {5, 10, 20, 40, 80, 160, 320, 640, 1280};
    char k[TG_WQ_KEY_MAX];
    uint64_t now = 0;
    size_t i;

    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(tg_wq_add_rate_limited(q, "k", now), want[i]);
        assert_int_equal(tg_wq_get(q, now + want[i] - 1, k), 0);
        assert_int_equal(tg_wq_get(q, now + want[i], k), 1);
        now += want[i];
        tg_wq_done(q, "k", now);
    }
    assert_int_equal(tg_wq_failures(q, "k"), 9);
    /* another key has its own count */
    assert_int_equal(tg_wq_add_rate_limited(q, "other", now), 5);
    /* capped at 1000 s */
    for (i = 0; i < 40; i++)
        tg_wq_add_rate_limited(q, "k", now);
    assert_int_equal(tg_wq_add_rate_limited(q, "k", now), 1000u * 1000u);
    tg_wq_forget(q, "k");
    assert_int_equal(tg_wq_failures(q, "k"), 0);
    tg_wq_free(q);
}

static void test_token_bucket(void **state)
{
    tg_wq_opts o = {.base_delay_ms = 1, .qps = 10, .burst = 3};
    tg_workqueue *q = tg_wq_new(&o);
    char key[16];
    int i;

    /* the burst passes with only the per-key delay ... */
    for (i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "b%d", i);
        assert_int_equal(tg_wq_add_rate_limited(q, key, 0), 1);
    }
    /* ... then one token per 100 ms, each waiter reserving the next */
    assert_int_equal(tg_wq_add_rate_limited(q, "b3", 0), 100);
    assert_int_equal(tg_wq_add_rate_limited(q, "b4", 0), 200);
    /* time refills: at 1 s the debt is paid and tokens are back */
    assert_int_equal(tg_wq_add_rate_limited(q, "b5", 1000), 1);
    tg_wq_free(q);
}

static void test_bad_keys(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    char big[TG_WQ_KEY_MAX + 10];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(tg_wq_add(q, "", 0), -1);
    assert_int_equal(tg_wq_add(q, NULL, 0), -1);
    assert_int_equal(tg_wq_add(q, big, 0), -1);
    assert_int_equal(tg_wq_len(q), 0);
    tg_wq_done(q, "never-added", 0);   /* harmless */
    assert_int_equal(tg_wq_in_flight(q), 0);
    tg_wq_free(q);
}

static void *waiter(void *arg)
{
    static char k[TG_WQ_KEY_MAX];
    int r = tg_wq_get_wait(arg, k);

    return r ? k : NULL;
}

/* Many delayed keys, added in scrambled order: each comes out once, when its
 * time has come, earliest first and ties in the order they were added; an
 * earlier re-add moves a key up, a later one does not, and an add for now
 * takes it out of the waiting keys at once. */
static void test_delayed_keys_come_out_by_time(void **state)
{
    enum { N = 5000 };
    static unsigned char seen[N];
    tg_workqueue *q = tg_wq_new(NULL);
    char k[TG_WQ_KEY_MAX];
    uint64_t last_at = 0, now;
    int last_i = -1, got = 0;

    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof(k), "k/%d", i);
        /* delays 1..997 ms, many ties */
        assert_int_equal(tg_wq_add_after(q, k, 1 + (uint64_t)(i * 7919) % 997, 0), 0);
    }
    tg_wq_add_after(q, "k/0", 5000, 0);      /* later: stays at 1 ms */
    tg_wq_add_after(q, "k/1", 0 + 1, 0);     /* earlier (was 7920 % 997 + 1) */
    tg_wq_add(q, "k/2", 0);                  /* now */
    assert_int_equal(tg_wq_len(q), N);
    assert_int_equal(tg_wq_get(q, 0, k), 1);
    assert_string_equal(k, "k/2");
    tg_wq_done(q, k, 0);
    seen[2] = 1;
    got = 1;
    assert_int_equal(tg_wq_next_ready_in(q, 0), 1);
    for (now = 1; got < N; now++) {
        while (tg_wq_get(q, now, k)) {
            int i = atoi(k + 2);
            uint64_t at = i == 1 ? 1 : 1 + (uint64_t)(i * 7919) % 997;
            assert_false(seen[i]);
            seen[i] = 1;
            got++;
            assert_true(at <= now);
            int order = i == 1 ? N : i;          /* k/1 was added again, last */
            assert_true(at > last_at || (at == last_at && order > last_i));
            last_at = at;
            last_i = order;
            tg_wq_done(q, k, now);
        }
        assert_true(now < 2000);
    }
    assert_int_equal(tg_wq_len(q), 0);
    assert_int_equal(tg_wq_next_ready_in(q, now), UINT64_MAX);
    tg_wq_free(q);
}

/* Work that finishes what was started goes before new work, without starving it. */
static void test_first_line(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    char k[TG_WQ_KEY_MAX], want[16];
    int i, n_first = 0, n_new = 0;

    tg_wq_add(q, "new-1", 0);
    tg_wq_add(q, "new-2", 0);
    tg_wq_add_first(q, "csr-1", 0);
    tg_wq_add_first(q, "new-2", 0);       /* queued in the other line: moves up */
    assert_int_equal(tg_wq_len(q), 3);
    const char *order[] = {"csr-1", "new-2", "new-1"};
    for (i = 0; i < 3; i++) {
        assert_int_equal(tg_wq_get(q, 0, k), 1);
        assert_string_equal(k, order[i]);
    }
    /* re-added first while in flight: first once done */
    tg_wq_add(q, "new-3", 1);
    tg_wq_add_first(q, "new-1", 1);
    tg_wq_done(q, "new-1", 2);
    assert_int_equal(tg_wq_get(q, 2, k), 1);
    assert_string_equal(k, "new-1");
    assert_int_equal(tg_wq_get(q, 2, k), 1);
    assert_string_equal(k, "new-3");
    const char *held[] = {"csr-1", "new-2", "new-1", "new-3"};
    for (i = 0; i < 4; i++)
        tg_wq_done(q, held[i], 3);
    assert_int_equal(tg_wq_len(q), 0);

    /* 20 first and 2 new: one new key after each TG_WQ_FIRST_RUN first ones */
    tg_wq_add(q, "n0", 4);
    tg_wq_add(q, "n1", 4);
    for (i = 0; i < 20; i++) {
        snprintf(want, sizeof(want), "f%d", i);
        tg_wq_add_first(q, want, 4);
    }
    for (i = 0; i < 22; i++) {
        assert_int_equal(tg_wq_get(q, 5, k), 1);
        if (i == TG_WQ_FIRST_RUN || i == 2 * TG_WQ_FIRST_RUN + 1) {
            snprintf(want, sizeof(want), "n%d", n_new++);
        } else {
            snprintf(want, sizeof(want), "f%d", n_first++);
        }
        assert_string_equal(k, want);
    }
    tg_wq_free(q);
}

static void test_get_wait_and_shutdown(void **state)
{
    tg_workqueue *q = tg_wq_new(NULL);
    pthread_t t;
    void *res;

    assert_int_equal(pthread_create(&t, NULL, waiter, q), 0);
    tg_wq_add_after(q, "soon", 20, tg_wq_now_ms());
    assert_int_equal(pthread_join(t, &res), 0);
    assert_non_null(res);
    assert_string_equal(res, "soon");

    assert_int_equal(pthread_create(&t, NULL, waiter, q), 0);
    tg_wq_shutdown(q);
    assert_int_equal(pthread_join(t, &res), 0);
    assert_null(res);
    assert_int_equal(tg_wq_add(q, "after-shutdown", 0), -1);
    tg_wq_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup_and_fifo),
        cmocka_unit_test(test_in_flight_never_twice),
        cmocka_unit_test(test_add_after),
        cmocka_unit_test(test_per_key_backoff),
        cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_delayed_keys_come_out_by_time),
        cmocka_unit_test(test_first_line),
        cmocka_unit_test(test_get_wait_and_shutdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
