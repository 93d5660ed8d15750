/* test_slice_plan.c - the provider's ResourceSlice decisions over what the
 * caches show: which CSR step to take (an approved CSR not issued yet is
 * waited for, ours not yet in the cache is never made twice), and where a
 * sibling slice's grant for maxPerTenant comes from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "signer/slice_plan.h"

typedef struct csr_case {
    const char *what;
    tg_slice_csr_view in;
    tg_slice_csr_action want;
} csr_case;

static const csr_case csr_cases[] = {
    {"no CSR for the request", {.found = 0}, TG_SLICE_CSR_CREATE},
    {"no CSR in the cache, ours just made", {.found = 0, .ours_unseen = 1}, TG_SLICE_CSR_WAIT_CACHE},
    {"pending, just made", {.found = 1, .age_s = 0}, TG_SLICE_CSR_WAIT},
    {"pending, 299 s", {.found = 1, .age_s = 299}, TG_SLICE_CSR_WAIT},
    {"pending, 300 s: stale, replaced", {.found = 1, .age_s = 300}, TG_SLICE_CSR_CREATE},
    {"approved, not issued yet (5f78f10): waited for", {.found = 1, .decided = 1, .age_s = 2}, TG_SLICE_CSR_WAIT},
    {"approved, not issued, after a restart", {.found = 1, .decided = 1, .age_s = 40}, TG_SLICE_CSR_WAIT},
    {"approved, never issued, stale", {.found = 1, .decided = 1, .age_s = 301}, TG_SLICE_CSR_CREATE},
    {"issued, usable", {.found = 1, .decided = 1, .issued = 1, .usable = 1, .age_s = 5}, TG_SLICE_CSR_USE},
    {"issued long ago, still usable", {.found = 1, .decided = 1, .issued = 1, .usable = 1, .age_s = 86400},
     TG_SLICE_CSR_USE},
    {"issued, due for renewal", {.found = 1, .decided = 1, .issued = 1, .age_s = 60}, TG_SLICE_CSR_CREATE},
    {"renewal made, the old issued one still newest in the cache",
     {.found = 1, .decided = 1, .issued = 1, .age_s = 60, .ours_unseen = 1}, TG_SLICE_CSR_WAIT_CACHE},
    {"denied just now", {.found = 1, .decided = -1, .age_s = 0}, TG_SLICE_CSR_DENIED},
    {"denied 59 s ago", {.found = 1, .decided = -1, .age_s = 59}, TG_SLICE_CSR_DENIED},
    {"denied 60 s ago: a fresh one", {.found = 1, .decided = -1, .age_s = 60}, TG_SLICE_CSR_CREATE},
    {"denied long ago, the fresh one not in the cache yet", {.found = 1, .decided = -1, .age_s = 90, .ours_unseen = 1},
     TG_SLICE_CSR_WAIT_CACHE},
    {"creation time in the future (skew): pending", {.found = 1, .age_s = -30}, TG_SLICE_CSR_WAIT},
};

static void test_csr_plan_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(csr_cases) / sizeof(csr_cases[0]); i++) {
        tg_slice_csr_action a = tg_slice_csr_plan(&csr_cases[i].in);
        if (a != csr_cases[i].want)
            fail_msg("%s: got %s, want %s", csr_cases[i].what, tg_slice_csr_action_name(a),
                     tg_slice_csr_action_name(csr_cases[i].want));
    }
}

typedef struct sibling_case {
    const char *what;
    int deleting, default_class;
    tg_slice_grant_record rec;
    tg_slice_sibling_source want;
} sibling_case;

static const sibling_case sibling_cases[] = {
    {"no record: the cache", 0, 1, TG_GRANT_NONE, TG_SIBLING_CACHE},
    {"accepted a moment ago, the cache may lag: the record", 0, 1, TG_GRANT_ACCEPTED, TG_SIBLING_RECORD},
    {"denied a moment ago (the cache may still say Accepted): nothing", 0, 1, TG_GRANT_DENIED, TG_SIBLING_SKIP},
    {"a write with an unknown outcome: live", 0, 1, TG_GRANT_UNKNOWN, TG_SIBLING_LIVE},
    {"being deleted, no record", 1, 1, TG_GRANT_NONE, TG_SIBLING_SKIP},
    {"being deleted, accepted record", 1, 1, TG_GRANT_ACCEPTED, TG_SIBLING_SKIP},
    {"being deleted, unknown record: no live read needed", 1, 1, TG_GRANT_UNKNOWN, TG_SIBLING_SKIP},
    {"another class, accepted record", 0, 0, TG_GRANT_ACCEPTED, TG_SIBLING_SKIP},
    {"another class, no record", 0, 0, TG_GRANT_NONE, TG_SIBLING_SKIP},
};

static void test_sibling_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(sibling_cases) / sizeof(sibling_cases[0]); i++) {
        const sibling_case *c = &sibling_cases[i];
        tg_slice_sibling_source got = tg_slice_sibling_source_of(c->deleting, c->default_class, c->rec);
        if (got != c->want)
            fail_msg("%s: got %d, want %d", c->what, (int)got, (int)c->want);
    }
}

/* A record written after our PATCH, read back while the slice informer
 * shows some version of the slice: the back-to-back case is a cache still at
 * the version before our write. */
typedef struct grant_case {
    const char *what;
    const char *rv;               /* what our write produced (NULL: not known) */
    tg_slice_grant_record wrote;
    const char *json;
    const char *cached_rv;        /* what the cache shows */
    tg_slice_grant_record want;
    int want_spent;
    const char *want_json;
} grant_case;

static const grant_case grant_cases[] = {
    {"accepted, the cache one event behind: the record", "1042", TG_GRANT_ACCEPTED, "{\"memory\":\"8Gi\"}", "1041",
     TG_GRANT_ACCEPTED, 0, "{\"memory\":\"8Gi\"}"},
    {"accepted, the cache shows our write: spent", "1042", TG_GRANT_ACCEPTED, "{\"memory\":\"8Gi\"}", "1042",
     TG_GRANT_NONE, 1, NULL},
    {"accepted, the cache already past it (a spec edit since): still the record", "1042", TG_GRANT_ACCEPTED,
     "{\"cpu\":\"1\"}", "1050", TG_GRANT_ACCEPTED, 0, "{\"cpu\":\"1\"}"},
    {"versions compare whole: 104 is not 1042", "1042", TG_GRANT_ACCEPTED, "{\"cpu\":\"1\"}", "104",
     TG_GRANT_ACCEPTED, 0, "{\"cpu\":\"1\"}"},
    {"denied, the cache still says Accepted", "77", TG_GRANT_DENIED, NULL, "76", TG_GRANT_DENIED, 0, NULL},
    {"denied, caught up", "77", TG_GRANT_DENIED, NULL, "77", TG_GRANT_NONE, 1, NULL},
    {"a failed write: unknown, whatever the cache shows", "9", TG_GRANT_UNKNOWN, NULL, "9", TG_GRANT_UNKNOWN, 0, NULL},
    {"accepted, version not known: never spent", NULL, TG_GRANT_ACCEPTED, "{\"pods\":\"110\"}", "",
     TG_GRANT_ACCEPTED, 0, "{\"pods\":\"110\"}"},
    {"accepted without a grant: unknown", "5", TG_GRANT_ACCEPTED, NULL, "4", TG_GRANT_UNKNOWN, 0, NULL},
    {"the cache's version not known", "5", TG_GRANT_DENIED, NULL, NULL, TG_GRANT_DENIED, 0, NULL},
};

static void test_grant_record_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(grant_cases) / sizeof(grant_cases[0]); i++) {
        const grant_case *c = &grant_cases[i];
        char buf[256];
        const char *json = "unset";
        int spent = -1;
        tg_slice_grant_record got;

        assert_int_equal(tg_slice_grant_encode(buf, sizeof(buf), c->rv, c->wrote, c->json), 0);
        got = tg_slice_grant_decode(buf, sizeof(buf), c->cached_rv, &json, &spent);
        if (got != c->want || spent != c->want_spent ||
            (c->want_json ? !json || strcmp(json, c->want_json) != 0 : json != NULL))
            fail_msg("%s: got %d spent %d json %s", c->what, (int)got, spent, json ? json : "(null)");
    }
}

/* What does not fit is recorded as unknown, and what may have been cut
 * short when read back is unknown too: a live read, never a wrong sum. */
static void test_grant_record_limits(void **state)
{
    char buf[24], big[64];
    const char *json;
    int spent;

    (void)state;
    assert_int_equal(tg_slice_grant_encode(buf, sizeof(buf), "123", TG_GRANT_ACCEPTED, "{\"memory\":\"8Gi\",\"cpu\":\"1\"}"),
                     -1);
    assert_string_equal(buf, "\t?");
    assert_int_equal(tg_slice_grant_decode(buf, sizeof(buf), "123", &json, &spent), TG_GRANT_UNKNOWN);
    /* a value that fills its buffer */
    assert_int_equal(tg_slice_grant_encode(big, sizeof(big), "1", TG_GRANT_ACCEPTED, "{\"cpu\":\"1\"}"), 0);
    assert_int_equal(tg_slice_grant_decode(big, strlen(big) + 1, "0", &json, &spent), TG_GRANT_UNKNOWN);
    assert_int_equal(tg_slice_grant_decode(big, strlen(big) + 2, "0", &json, &spent), TG_GRANT_ACCEPTED);
    /* not a record */
    assert_int_equal(tg_slice_grant_decode("A{}", 64, "0", &json, &spent), TG_GRANT_UNKNOWN);
    assert_int_equal(tg_slice_grant_decode("1\tX{}", 64, "0", &json, &spent), TG_GRANT_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_plan_table),
        cmocka_unit_test(test_sibling_table),
        cmocka_unit_test(test_grant_record_table),
        cmocka_unit_test(test_grant_record_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
