/* test_conn_slots.c - the connection limit with eviction: the oldest idle
 * connection makes room, a busy one never does, evicted ones count until
 * released, and past the slack nothing more is taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/conn_slots.h"

#define N 8

static tg_slot *order[600];
static int nevicted;

static tg_slot *refuses;            /* this one cannot be closed */

static int on_evict(tg_slots *ss, tg_slot *s)
{
    (void)ss;
    if (s == refuses)
        return 0;
    order[nevicted++] = s;
    return 1;
}

static void test_oldest_idle_makes_room(void **state)
{
    tg_slots ss;
    tg_slot s[N + 3] = {0};
    (void)state;
    nevicted = 0;
    tg_slots_init(&ss, N, on_evict, NULL);
    for (int i = 0; i < N; i++)
        assert_int_equal(tg_slots_take(&ss, &s[i]), 0);
    assert_int_equal(nevicted, 0);
    tg_slot_request_begin(&s[0]);              /* the oldest is being answered */
    assert_int_equal(tg_slots_take(&ss, &s[N]), 0);
    assert_int_equal(nevicted, 1);
    assert_ptr_equal(order[0], &s[1]);         /* so the next oldest goes */
    assert_int_equal(ss.open, N + 1);          /* until it is released */
    tg_slots_release(&ss, &s[1]);
    tg_slot_request_end(&s[0]);                /* answered: idle again, and the oldest */
    assert_int_equal(tg_slots_take(&ss, &s[N + 1]), 0);
    assert_ptr_equal(order[1], &s[0]);
    assert_int_equal(ss.evicted_total, 2);
}

static void test_all_busy_refuses(void **state)
{
    tg_slots ss;
    tg_slot s[N + 1] = {0};
    (void)state;
    nevicted = 0;
    tg_slots_init(&ss, N, on_evict, NULL);
    for (int i = 0; i < N; i++) {
        assert_int_equal(tg_slots_take(&ss, &s[i]), 0);
        tg_slot_request_begin(&s[i]);
    }
    assert_int_equal(tg_slots_take(&ss, &s[N]), -1);
    assert_int_equal(nevicted, 0);
    assert_int_equal(ss.open, N);
    tg_slots_release(&ss, &s[3]);              /* one closed: room again */
    assert_int_equal(tg_slots_take(&ss, &s[N]), 0);
}

static void test_slack_bounds_the_evicted_not_yet_closed(void **state)
{
    static tg_slot s[4 + 256 + 1];
    tg_slots ss;
    (void)state;
    nevicted = 0;
    tg_slots_init(&ss, 4, on_evict, NULL);
    for (int i = 0; i < 4 + 256; i++)
        assert_int_equal(tg_slots_take(&ss, &s[i]), 0);
    assert_int_equal(nevicted, 256);
    /* none of the evicted has closed yet: the limit plus 256, no more */
    assert_int_equal(tg_slots_take(&ss, &s[4 + 256]), -1);
    for (int i = 0; i < nevicted; i++)
        tg_slots_release(&ss, order[i]);
    assert_int_equal(ss.open, 4);
}

/* One that cannot be closed is passed over, for good. */
static void test_unclosable_is_passed_over(void **state)
{
    tg_slots ss;
    tg_slot s[4] = {0};
    (void)state;
    nevicted = 0;
    tg_slots_init(&ss, 2, on_evict, NULL);
    assert_int_equal(tg_slots_take(&ss, &s[0]), 0);
    assert_int_equal(tg_slots_take(&ss, &s[1]), 0);
    refuses = &s[0];
    assert_int_equal(tg_slots_take(&ss, &s[2]), 0);
    assert_ptr_equal(order[0], &s[1]);
    assert_int_equal(ss.evicted_total, 1);
    refuses = NULL;
    assert_true(s[0].evicted);                 /* not tried again */
    assert_int_equal(tg_slots_evict_oldest(&ss), 1);
    assert_ptr_equal(order[1], &s[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_idle_makes_room),
        cmocka_unit_test(test_all_busy_refuses),
        cmocka_unit_test(test_slack_bounds_the_evicted_not_yet_closed),
        cmocka_unit_test(test_unclosable_is_passed_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
