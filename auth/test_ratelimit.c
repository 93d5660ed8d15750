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

#include <sodium.h>

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

/* The set index the limiter used before it was keyed: FNV-1a of the key
 * bytes. Anyone could compute it, and so choose addresses that share a
 * victim's set. */
static size_t old_fnv_set(const tg_peer_key *key, size_t nsets)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < key->len; i++)
        h = (h ^ key->bytes[i]) * 16777619u;
    return h & (nsets - 1);
}

/* Issue 44 finding 9: eight addresses chosen to fall into the victim's set
 * fail a few times each; with an unkeyed hash the set is then all back-offs
 * and the victim's first request is refused. With the keyed hash the
 * attacker cannot aim: the victim is admitted. */
static void test_chosen_addresses_cannot_fill_a_victims_set(void **state)
{
    tg_ratelimit_config c = cfg;
    tg_ratelimit *rl;
    tg_peer_key victim = key_of("203.0.113.7"), attackers[TG_RL_WAYS];
    size_t nsets = 1024, want, found = 0; /* c.sources 4096: 4096 / 8 + 1 rounded up */
    uint64_t retry;
    char ip[32];

    c.sources = 4096;
    c.free_failures = 0;
    c.fail_base_ms = c.fail_max_ms = 600000;
    want = old_fnv_set(&victim, nsets);
    for (uint32_t i = 0; found < TG_RL_WAYS && i < (1u << 24); i++) {
        snprintf(ip, sizeof(ip), "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        attackers[found] = key_of(ip);
        if (old_fnv_set(&attackers[found], nsets) == want)
            found++;
    }
    assert_int_equal(found, TG_RL_WAYS);
    /* whatever the random key: the victim is refused only if all eight land in
     * its set, about one chance in 1024^8 */
    for (int round = 0; round < 20; round++) {
        rl = tg_ratelimit_new(&c);
        assert_non_null(rl);
        for (int i = 0; i < TG_RL_WAYS; i++) {
            tg_ratelimit_admit(rl, &attackers[i], 0, &retry);
            tg_ratelimit_failure(rl, &attackers[i], 0);
        }
        assert_int_equal(tg_ratelimit_admit(rl, &victim, 1, &retry), 0);
        tg_ratelimit_free(rl);
    }
}

static tg_peer_key key6(const char *ip)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
    tg_peer_key k;

    inet_pton(AF_INET6, ip, &sa.sin6_addr);
    tg_peer_net_key_of((struct sockaddr *)&sa, &k);
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
        cmocka_unit_test(test_chosen_addresses_cannot_fill_a_victims_set),
    };
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
