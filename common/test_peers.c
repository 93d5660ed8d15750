/* test_peers.c - the per-address connection count: cap, release, keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "common/peers.h"

static tg_peer_key v4(const char *ip)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    tg_peer_key k;
    inet_pton(AF_INET, ip, &sin.sin_addr);
    tg_peer_key_of((struct sockaddr *)&sin, &k);
    return k;
}

static tg_peer_key v6(const char *ip)
{
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    tg_peer_key k;
    inet_pton(AF_INET6, ip, &sin6.sin6_addr);
    tg_peer_key_of((struct sockaddr *)&sin6, &k);
    return k;
}

static tg_peer_key net6(const char *ip)
{
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    tg_peer_key k;
    inet_pton(AF_INET6, ip, &sin6.sin6_addr);
    tg_peer_net_key_of((struct sockaddr *)&sin6, &k);
    return k;
}

/* Issue 44 finding 8: one host holding a /64 must not get a per-peer cap per
 * address of it. The net key counts IPv6 by /64, IPv4 (mapped too) by the
 * address. */
static void test_net_key_counts_ipv6_by_its_64(void **state)
{
    tg_peers *p = tg_peers_new(2);
    tg_peer_key a = net6("2001:db8:1:2::1"), b = net6("2001:db8:1:2:ffff:eeee:dddd:cccc"),
                other = net6("2001:db8:1:3::1"), mapped = net6("::ffff:10.0.0.1"), plain = v4("10.0.0.1");
    (void)state;
    assert_int_equal(a.len, 17);
    assert_memory_equal(a.bytes, b.bytes, a.len);  /* same /64: one key */
    assert_int_equal(tg_peers_add(p, &a), 0);
    assert_int_equal(tg_peers_add(p, &b), 0);
    assert_int_equal(tg_peers_add(p, &b), -1);     /* the /64's third connection */
    assert_int_equal(tg_peers_add(p, &other), 0);  /* another /64 is not held back */
    assert_int_equal(mapped.len, plain.len);
    assert_memory_equal(mapped.bytes, plain.bytes, plain.len);
    assert_false(plain.len == v4("10.0.0.2").len &&
                 memcmp(plain.bytes, v4("10.0.0.2").bytes, plain.len) == 0); /* IPv4: each address */
    tg_peers_free(p);
}

static void test_cap_per_address(void **state)
{
    tg_peers *p = tg_peers_new(3);
    tg_peer_key a = v4("127.0.0.2"), b = v4("127.0.0.3");
    (void)state;
    for (int i = 0; i < 3; i++)
        assert_int_equal(tg_peers_add(p, &a), 0);
    assert_int_equal(tg_peers_add(p, &a), -1);     /* the fourth of one address */
    assert_int_equal(tg_peers_count(p, &a), 3);
    assert_int_equal(tg_peers_add(p, &b), 0);      /* another address is not held back */
    assert_int_equal(tg_peers_addresses(p), 2);
    tg_peers_remove(p, &a);
    assert_int_equal(tg_peers_add(p, &a), 0);      /* a slot freed is usable again */
    for (int i = 0; i < 3; i++)
        tg_peers_remove(p, &a);
    tg_peers_remove(p, &b);
    assert_int_equal(tg_peers_count(p, &a), 0);
    assert_int_equal(tg_peers_addresses(p), 0);    /* entries go with their last connection */
    tg_peers_free(p);
}

static void test_v4_mapped_is_its_v4_address(void **state)
{
    tg_peers *p = tg_peers_new(1);
    tg_peer_key mapped = v6("::ffff:10.0.0.1"), plain = v4("10.0.0.1"), other = v6("fd00::1");
    (void)state;
    assert_int_equal(mapped.len, plain.len);
    assert_int_equal(tg_peers_add(p, &plain), 0);
    assert_int_equal(tg_peers_add(p, &mapped), -1);
    assert_int_equal(tg_peers_add(p, &other), 0);
    tg_peers_free(p);                              /* frees what is still counted */
}

static void test_no_cap_and_unknown_family(void **state)
{
    tg_peers *p = tg_peers_new(0);
    tg_peer_key a = v4("127.0.0.2"), unknown;
    struct sockaddr sa = {.sa_family = AF_UNIX};
    (void)state;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tg_peers_add(p, &a), 0);
    tg_peers_free(p);
    p = tg_peers_new(1);
    tg_peer_key_of(&sa, &unknown);
    assert_int_equal(unknown.len, 0);
    assert_int_equal(tg_peers_add(p, &unknown), 0);
    assert_int_equal(tg_peers_add(p, &unknown), 0);
    tg_peers_remove(p, &unknown);
    tg_peers_free(p);
}

static void test_many_addresses(void **state)
{
    tg_peers *p = tg_peers_new(2);
    char ip[32];
    (void)state;
    for (int i = 0; i < 5000; i++) {
        tg_peer_key k;
        snprintf(ip, sizeof(ip), "10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
        k = v4(ip);
        assert_int_equal(tg_peers_add(p, &k), 0);
        assert_int_equal(tg_peers_add(p, &k), 0);
        assert_int_equal(tg_peers_add(p, &k), -1);
    }
    assert_int_equal(tg_peers_addresses(p), 5000);
    tg_peers_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap_per_address),
        cmocka_unit_test(test_v4_mapped_is_its_v4_address),
        cmocka_unit_test(test_no_cap_and_unknown_family),
        cmocka_unit_test(test_many_addresses),
        cmocka_unit_test(test_net_key_counts_ipv6_by_its_64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
