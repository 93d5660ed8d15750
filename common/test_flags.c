/* test_flags.c - the values both services' flags take, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/flags.h"

static void test_listen_addr_table(void **state)
{
    static const struct {
        const char *arg;
        int rc;
        const char *host;
        int port;
    } cases[] = {
        {"127.0.0.1:8443", 0, "127.0.0.1", 8443},
        {"0.0.0.0:0", 0, "0.0.0.0", 0},
        {":8080", 0, "0.0.0.0", 8080},
        {"localhost:65535", 0, "localhost", 65535},
        {"[::1]:443", 0, "::1", 443},
        {"[fe80::1%eth0]:9", 0, "fe80::1%eth0", 9},
        {"127.0.0.1", -1, NULL, 0},           /* no port */
        {"127.0.0.1:", -1, NULL, 0},
        {"127.0.0.1:65536", -1, NULL, 0},
        {"127.0.0.1:-1", -1, NULL, 0},
        {"127.0.0.1:80x", -1, NULL, 0},
        {"127.0.0.1: 80", -1, NULL, 0},
        {"::1:443", -1, NULL, 0},             /* IPv6 needs brackets */
        {"[::1]443", -1, NULL, 0},
        {"[]:443", -1, NULL, 0},
        {"[::1:443", -1, NULL, 0},
        {"", -1, NULL, 0},
        {"averyveryverylonghostnamethatdoesnotfit:1", -1, NULL, 0},   /* > 32 bytes of host */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char host[32] = "untouched";
        int port = -7;
        int rc = tg_flag_listen_addr(cases[i].arg, host, sizeof(host), &port);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d, expected %d", cases[i].arg, rc, cases[i].rc);
        if (rc == 0) {
            assert_string_equal(host, cases[i].host);
            assert_int_equal(port, cases[i].port);
        } else {
            assert_int_equal(port, -7);
        }
    }
}

/* "off" turns a listener off; anything else is an address as above. */
static void test_listen_addr_or_off(void **state)
{
    char host[32] = "untouched";
    int port = 7;

    (void)state;
    assert_int_equal(tg_flag_listen_addr_or_off("off", host, sizeof(host), &port), 0);
    assert_int_equal(port, -1);
    assert_string_equal(host, "untouched");
    assert_int_equal(tg_flag_listen_addr_or_off(":9090", host, sizeof(host), &port), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(port, 9090);
    assert_int_equal(tg_flag_listen_addr_or_off("OFF", host, sizeof(host), &port), -1);
}

static void test_long_table(void **state)
{
    static const struct {
        const char *arg;
        long min, max;
        int rc;
        long want;
    } cases[] = {
        {"8", 1, 32, 0, 8},
        {"1", 1, 32, 0, 1},
        {"32", 1, 32, 0, 32},
        {"0", 1, 32, -1, 0},
        {"33", 1, 32, -1, 0},
        {"-5", -10, 10, 0, -5},
        {"", 0, 10, -1, 0},
        {"7s", 0, 10, -1, 0},
        {" 7", 0, 10, -1, 0},                 /* strtol would skip the blank */
        {"+7", 0, 10, -1, 0},
        {"99999999999999999999999", 0, 10, -1, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long v = -12345;
        int rc = tg_flag_long(cases[i].arg, cases[i].min, cases[i].max, &v);
        if (rc != cases[i].rc)
            fail_msg("'%s' in [%ld, %ld]: rc %d, expected %d", cases[i].arg, cases[i].min, cases[i].max, rc,
                     cases[i].rc);
        assert_int_equal(v, rc == 0 ? cases[i].want : -12345);
    }
}

static void test_seconds_table(void **state)
{
    static const struct {
        const char *arg;
        uint64_t min, max;
        int rc;
        uint64_t want;
    } cases[] = {
        {"10", 0, 3600000, 0, 10000},
        {"10s", 0, 3600000, 0, 10000},
        {"0", 0, 3600000, 0, 0},
        {"0.25", 0, 3600000, 0, 250},
        {"1.5s", 0, 3600000, 0, 1500},
        {"0.0019", 0, 3600000, 0, 1},         /* finer than a millisecond: dropped */
        {"3600", 0, 3600000, 0, 3600000},
        {"3601", 0, 3600000, -1, 0},
        {"0.05", 100, 3600000, -1, 0},        /* under the minimum */
        {"0.1", 100, 3600000, 0, 100},
        {"", 0, 3600000, -1, 0},
        {"s", 0, 3600000, -1, 0},
        {"1.", 0, 3600000, -1, 0},
        {".5", 0, 3600000, -1, 0},
        {"-1", 0, 3600000, -1, 0},
        {"+1", 0, 3600000, -1, 0},
        {" 1", 0, 3600000, -1, 0},
        {"1 ", 0, 3600000, -1, 0},
        {"1e3", 0, 3600000, -1, 0},           /* strtod would take these */
        {"0x10", 0, 3600000, -1, 0},
        {"inf", 0, 3600000, -1, 0},
        {"nan", 0, 3600000, -1, 0},
        {"10ms", 0, 3600000, -1, 0},
        {"99999999999999999999999", 0, UINT64_MAX, -1, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 12345;
        int rc = tg_flag_seconds(cases[i].arg, cases[i].min, cases[i].max, &v);
        if (rc != cases[i].rc)
            fail_msg("'%s': rc %d, expected %d", cases[i].arg, rc, cases[i].rc);
        assert_int_equal(v, rc == 0 ? cases[i].want : 12345);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_addr_table),
        cmocka_unit_test(test_listen_addr_or_off),
        cmocka_unit_test(test_long_table),
        cmocka_unit_test(test_seconds_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
