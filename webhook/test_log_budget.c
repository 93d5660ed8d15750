/* test_log_budget.c - lines per window, what is held back, and its report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "webhook/log_budget.h"

static void test_a_window_allows_n_lines(void **state)
{
    tg_log_budget b;
    uint64_t report = 99;
    (void)state;
    tg_log_budget_init(&b, 1000, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tg_log_budget_take(&b, 5000 + (uint64_t)i, &report), 1);
        assert_int_equal(report, 0);
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tg_log_budget_take(&b, 5500, &report), 0);   /* a flood: held back */
    assert_int_equal(report, 0);
    /* the next window reports the 1,000 once, and allows lines again */
    assert_int_equal(tg_log_budget_take(&b, 6000, &report), 1);
    assert_int_equal(report, 1000);
    assert_int_equal(tg_log_budget_take(&b, 6001, &report), 1);
    assert_int_equal(report, 0);
}

static void test_nothing_held_nothing_reported(void **state)
{
    tg_log_budget b;
    uint64_t report = 99;
    (void)state;
    tg_log_budget_init(&b, 1000, 1);
    assert_int_equal(tg_log_budget_take(&b, 10000, &report), 1);
    assert_int_equal(tg_log_budget_take(&b, 20000, &report), 1);
    assert_int_equal(report, 0);
    assert_int_equal(tg_log_budget_take(&b, 20001, NULL), 0);
    /* a clock that went back starts a window too */
    assert_int_equal(tg_log_budget_take(&b, 15000, &report), 1);
    assert_int_equal(report, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_window_allows_n_lines),
        cmocka_unit_test(test_nothing_held_nothing_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
