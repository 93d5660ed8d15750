/* test_ratelimit.c - per-source budget and failure back-off (ratelimit.h):
 * a brute-forcing address is slowed exponentially, others are not, a success
 * clears the count, and a flood of new addresses cannot evict a back-off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "auth/ratelimit.h"

static tg_peer_key key_of(const char *ip)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    tg_peer_key k;

    inet_pton(AF_INET, ip, &sa.sin_addr);
    tg_peer_key_of((struct sockaddr *)&sa, &k);
    return k;
}

static const tg_ratelimit_config cfg = {
    .rate_per_s = 1, .burst = 3, .free_failures = 2, .fail_base_ms = 1000, .fail_max_ms = 8000, .sources = 64};

static void test_bucket(void **state)
{
    tg_ratelimit *rl = tg_ratelimit_new(&cfg);
    tg_peer_key a = key_of("10.0.0.1"), b = key_of("10.0.0.2");
    uint64_t retry;

    for (int i = 0; i < 3; i++)
        assert_int_equal(tg_ratelimit_admit(rl, &a, 0, &retry), 0);
    assert_int_equal(tg_ratelimit_admit(rl, &a, 0, &retry), -1);
    assert_true(retry >= 1 && retry <= 1001);
    assert_int_equal(tg_ratelimit_admit(rl, &b, 0, &retry), 0);   /* another address is not held */
    assert_int_equal(tg_ratelimit_admit(rl, &a, 1000, &retry), 0); /* refilled */
    tg_ratelimit_free(rl);
}

static void test_failure_backoff_doubles_and_caps(void **state)
{
    tg_ratelimit_config c = cfg;
    tg_ratelimit *rl;
    tg_peer_key a = key_of("10.0.0.1");
    uint64_t retry, now = 0, waits[6];

    c.rate_per_s = 1000;
    c.burst = 1000;
    rl = tg_ratelimit_new(&c);
    /* two free failures, then 1 s, 2 s, 4 s, 8 s, 8 s */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tg_ratelimit_admit(rl, &a, now, &retry), 0);
        tg_ratelimit_failure(rl, &a, now);
    }
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tg_ratelimit_admit(rl, &a, now, &retry), 0);
        tg_ratelimit_failure(rl, &a, now);
        assert_int_equal(tg_ratelimit_admit(rl, &a, now, &retry), -1);
        waits[i] = retry;
        now += retry;
    }
    assert_int_equal(waits[0], 1000);
    assert_int_equal(waits[1], 2000);
    assert_int_equal(waits[2], 4000);
    assert_int_equal(waits[3], 8000);
    assert_int_equal(waits[4], 8000);
    /* a success clears the count: the next failure is free again */
    assert_int_equal(tg_ratelimit_admit(rl, &a, now, &retry), 0);
    tg_ratelimit_success(rl, &a);
    tg_ratelimit_failure(rl, &a, now);
    assert_int_equal(tg_ratelimit_admit(rl, &a, now, &retry), 0);
    tg_ratelimit_free(rl);
}

static void test_flood_does_not_evict_a_backoff(void **state)
{
    tg_ratelimit_config c = cfg;
    tg_ratelimit *rl;
    tg_peer_key a = key_of("192.168.1.1");
    uint64_t retry;
    char ip[32];

    c.free_failures = 0;
    c.fail_max_ms = c.fail_base_ms = 600000;
    rl = tg_ratelimit_new(&c);
    assert_int_equal(tg_ratelimit_admit(rl, &a, 0, &retry), 0);
    tg_ratelimit_failure(rl, &a, 0);
    for (int i = 0; i < 5000; i++) {
        tg_peer_key k;
        snprintf(ip, sizeof(ip), "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        k = key_of(ip);
        tg_ratelimit_admit(rl, &k, 1, &retry);
    }
    assert_int_equal(tg_ratelimit_admit(rl, &a, 2, &retry), -1);
    assert_true(retry > 500000);
    tg_ratelimit_free(rl);
}

static tg_peer_key key6(const char *ip)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
    tg_peer_key k;

    inet_pton(AF_INET6, ip, &sa.sin6_addr);
    tg_ratelimit_key_of((struct sockaddr *)&sa, &k);
    return k;
}

static void test_ipv6_counts_by_its_64(void **state)
{
    tg_ratelimit_config c = cfg;
    tg_ratelimit *rl;
    tg_peer_key a = key6("2001:db8:1:2::1"), b = key6("2001:db8:1:2:ffff:eeee:dddd:cccc"),
                other = key6("2001:db8:1:3::1");
    uint64_t retry;

    c.free_failures = 0;
    rl = tg_ratelimit_new(&c);
    assert_int_equal(tg_ratelimit_admit(rl, &a, 0, &retry), 0);
    tg_ratelimit_failure(rl, &a, 0);
    assert_int_equal(tg_ratelimit_admit(rl, &b, 0, &retry), -1);      /* same /64: same back-off */
    assert_int_equal(tg_ratelimit_admit(rl, &other, 0, &retry), 0);
    tg_ratelimit_free(rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_failure_backoff_doubles_and_caps),
        cmocka_unit_test(test_flood_does_not_evict_a_backoff),
        cmocka_unit_test(test_ipv6_counts_by_its_64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
