/* test_lease.c - the leader election state machine, times passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "signer/lease.h"

static void test_free_lease_is_acquired(void **state)
{
    tg_elector e;

    tg_elector_init(&e, "a-1", 0, 0, 0);
    assert_int_equal(e.lease_ms, 15000);
    assert_int_equal(e.renew_deadline_ms, 10000);
    assert_int_equal(e.retry_ms, 2000);
    assert_int_equal(tg_elector_decide(&e, 0), TG_LEASE_ACQUIRE);   /* nothing observed: create */
    tg_elector_observe(&e, "", "5", 0);
    assert_int_equal(tg_elector_decide(&e, 0), TG_LEASE_ACQUIRE);
    assert_false(tg_elector_is_leader(&e, 0));
    assert_int_equal(tg_elector_written(&e, 1, "6", 10), 0);
    assert_true(tg_elector_is_leader(&e, 10));
    tg_elector_observe(&e, "a-1", "6", 2000);
    assert_int_equal(tg_elector_decide(&e, 2000), TG_LEASE_RENEW);
}

static void test_live_lease_of_another_waits_until_it_expires(void **state)
{
    tg_elector e;

    tg_elector_init(&e, "b-2", 0, 0, 0);
    tg_elector_observe(&e, "a-1", "10", 1000);
    assert_int_equal(tg_elector_decide(&e, 1000), TG_LEASE_WAIT);
    /* the holder renews: a new RV restarts our clock */
    tg_elector_observe(&e, "a-1", "11", 9000);
    assert_int_equal(tg_elector_decide(&e, 16000), TG_LEASE_WAIT);
    /* the same record seen again does not */
    tg_elector_observe(&e, "a-1", "11", 20000);
    assert_int_equal(tg_elector_decide(&e, 23999), TG_LEASE_WAIT);
    assert_int_equal(tg_elector_decide(&e, 24000), TG_LEASE_ACQUIRE);
    /* our write lost the race (409): still not leader */
    assert_int_equal(tg_elector_written(&e, 0, NULL, 24000), 0);
    assert_false(tg_elector_is_leader(&e, 24000));
}

static void test_leader_that_cannot_renew_steps_down_before_expiry(void **state)
{
    tg_elector e;

    tg_elector_init(&e, "a-1", 0, 0, 0);
    tg_elector_observe(&e, "", "1", 0);
    tg_elector_written(&e, 1, "2", 0);
    /* renewals fail from now on */
    assert_int_equal(tg_elector_written(&e, 0, NULL, 2000), 0);
    assert_true(tg_elector_is_leader(&e, 10000));
    assert_int_equal(tg_elector_tick(&e, 10000), 0);
    assert_false(tg_elector_is_leader(&e, 10001));
    assert_int_equal(tg_elector_written(&e, 0, NULL, 10001), 1);   /* lost, reported once */
    assert_int_equal(tg_elector_tick(&e, 12000), 0);
    /* it stops acting at 10 s, the others may take over at 15 s: no overlap */
    assert_true(e.renew_deadline_ms < e.lease_ms);
}

static void test_other_holder_after_we_lost_it(void **state)
{
    tg_elector e;

    tg_elector_init(&e, "a-1", 0, 0, 0);
    tg_elector_written(&e, 1, "2", 0);
    tg_elector_observe(&e, "b-2", "3", 3000);
    assert_int_equal(tg_elector_decide(&e, 3000), TG_LEASE_WAIT);
    assert_false(tg_elector_is_leader(&e, 3000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_lease_is_acquired),
        cmocka_unit_test(test_live_lease_of_another_waits_until_it_expires),
        cmocka_unit_test(test_leader_that_cannot_renew_steps_down_before_expiry),
        cmocka_unit_test(test_other_holder_after_we_lost_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
