/* test_unpeer_plan.c - a deleted Tenant's bindings wait for the consumer's
 * replicas, within the grace period only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "signer/unpeer_plan.h"

#define T0 ((time_t)1795931000)

typedef struct wait_case {
    const char *what;
    time_t deleted_at, now;
    size_t left;
    int64_t want;
} wait_case;

static const wait_case cases[] = {
    {"no replica left: unbind at once", T0, T0, 0, 0},
    {"a replica left, just deleted: wait", T0, T0, 1, TG_UNPEER_POLL_MS},
    {"replicas left, within the grace: wait", T0, T0 + TG_UNPEER_GRACE_S - 1, 3, TG_UNPEER_POLL_MS},
    {"a replica left at the end of the grace: unbind", T0, T0 + TG_UNPEER_GRACE_S, 1, 0},
    {"a replica left long after: unbind", T0, T0 + 86400, 1, 0},
    {"no deletion time readable: unbind", 0, T0, 1, 0},
    {"hostile deletion time before the epoch: unbind", -5, T0, 1, 0},
    {"deletion time ahead of the local clock: wait", T0 + 60, T0, 1, TG_UNPEER_POLL_MS},
};

static void test_wait_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t got = tg_unpeer_wait_ms(cases[i].deleted_at, cases[i].now, cases[i].left);
        if (got != cases[i].want)
            fail_msg("%s: got %lld, want %lld", cases[i].what, (long long)got, (long long)cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
