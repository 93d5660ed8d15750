/* test_tenant_plan.c - the Tenant controller's certificate decision, table by
 * table: a rotated key is re-issued at once, a denial is retried with a
 * growing delay, renewal and publishing as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "signer/tenant_plan.h"

typedef struct plan_case {
    const char *what;
    tg_tenant_certs in;
    tg_tenant_action want;
    int64_t want_delay;
} plan_case;

static const plan_case cases[] = {
    {"new Tenant, no CSR", {.csr = TG_CSR_NONE}, TG_PLAN_CREATE, 0},
    {"new Tenant, CSR pending", {.csr = TG_CSR_PENDING}, TG_PLAN_WAIT, 0},
    {"new Tenant, CSR issued", {.csr = TG_CSR_ISSUED}, TG_PLAN_PUBLISH, 0},
    {"current certificate for the key", {.cur_present = 1, .cur_for_key = 1, .csr = TG_CSR_ISSUED,
                                         .csr_cert_is_cur = 1}, TG_PLAN_KEEP, 0},
    {"current certificate, no CSR seen (made by an older signer)", {.cur_present = 1, .cur_for_key = 1},
     TG_PLAN_KEEP, 0},
    {"due for renewal: the newest CSR is the one in status",
     {.cur_present = 1, .cur_for_key = 1, .cur_due = 1, .csr = TG_CSR_ISSUED, .csr_cert_is_cur = 1, .csr_cert_due = 1},
     TG_PLAN_CREATE, 0},
    {"due, renewal CSR pending", {.cur_present = 1, .cur_for_key = 1, .cur_due = 1, .csr = TG_CSR_PENDING},
     TG_PLAN_WAIT, 0},
    {"due, renewal CSR issued", {.cur_present = 1, .cur_for_key = 1, .cur_due = 1, .csr = TG_CSR_ISSUED},
     TG_PLAN_PUBLISH, 0},
    {"key rotated, no CSR for the new request", {.cur_present = 1, .csr = TG_CSR_NONE}, TG_PLAN_CREATE, 0},
    {"key rotated, new CSR pending", {.cur_present = 1, .csr = TG_CSR_PENDING}, TG_PLAN_WAIT, 0},
    {"key rotated, new CSR issued", {.cur_present = 1, .csr = TG_CSR_ISSUED}, TG_PLAN_PUBLISH, 0},
    {"key rotated back to a request whose old certificate is due",
     {.cur_present = 1, .csr = TG_CSR_ISSUED, .csr_cert_due = 1}, TG_PLAN_CREATE, 0},
    {"first denial: a fresh CSR at once", {.csr = TG_CSR_DENIED, .denied = 1}, TG_PLAN_CREATE, 0},
    {"second denial, 1 s ago", {.csr = TG_CSR_DENIED, .denied = 2, .denied_age_s = 1}, TG_PLAN_BACKOFF, 4},
    {"second denial, 5 s ago", {.csr = TG_CSR_DENIED, .denied = 2, .denied_age_s = 5}, TG_PLAN_CREATE, 0},
    {"third denial, just now", {.csr = TG_CSR_DENIED, .denied = 3}, TG_PLAN_BACKOFF, 10},
    {"fifth denial, 30 s ago", {.csr = TG_CSR_DENIED, .denied = 5, .denied_age_s = 30}, TG_PLAN_BACKOFF, 10},
    {"many denials: capped", {.csr = TG_CSR_DENIED, .denied = 40}, TG_PLAN_BACKOFF, TG_DENIED_BACKOFF_MAX_S},
    {"creation time in the future (skew) counts as now", {.csr = TG_CSR_DENIED, .denied = 2, .denied_age_s = -9},
     TG_PLAN_BACKOFF, 5},
    {"denied after a rotation: the old certificate does not block",
     {.cur_present = 1, .csr = TG_CSR_DENIED, .denied = 1}, TG_PLAN_CREATE, 0},
};

static void test_plan_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t delay = -1;
        tg_tenant_action a = tg_tenant_plan(&cases[i].in, &delay);
        if (a != cases[i].want || delay != cases[i].want_delay)
            fail_msg("%s: got %s/%lld, want %s/%lld", cases[i].what, tg_tenant_action_name(a), (long long)delay,
                     tg_tenant_action_name(cases[i].want), (long long)cases[i].want_delay);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
