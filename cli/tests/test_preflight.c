/* test_preflight.c - the pure half of `preflight` (preflight.h): the
 * verdict, the clock-skew thresholds, version order and comparison, the
 * token line, key-type names and the rights tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "preflight.h"

static void test_verdict(void **state)
{
    pf_tally t = { 0 };
    char buf[64];

    (void)state;
    pf_tally_add(&t, PF_PASS);
    pf_tally_add(&t, PF_WARN);
    pf_tally_add(&t, PF_SKIP);
    assert_int_equal(pf_verdict(&t, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "verdict: ready");
    pf_tally_add(&t, PF_FAIL);
    pf_tally_add(&t, PF_FAIL);
    assert_int_equal(pf_verdict(&t, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "verdict: not ready (2 failed)");
    assert_int_equal(t.pass, 1);
    assert_int_equal(t.skip, 1);
    assert_string_equal(pf_result_name(PF_SKIP), "SKIP");
    assert_string_equal(pf_result_name(PF_FAIL), "FAIL");
}

static void test_skew_thresholds(void **state)
{
    static const struct {
        long skew;
        pf_result want;
    } cases[] = {
        { 0, PF_PASS }, { 5, PF_PASS }, { -5, PF_PASS }, { 6, PF_WARN }, { -6, PF_WARN },
        { 60, PF_WARN }, { 61, PF_FAIL }, { -61, PF_FAIL }, { 100000, PF_FAIL },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (pf_skew_result(cases[i].skew, PF_SKEW_WARN_S, PF_SKEW_FAIL_S) != cases[i].want)
            fail_msg("skew %ld: expected %s", cases[i].skew, pf_result_name(cases[i].want));
}

static void test_skew_seconds(void **state)
{
    (void)state;
    /* in step: the header's truncation and a fast round trip are no skew */
    assert_int_equal(pf_skew_seconds(1000, 1000500, 1000520), 0);
    assert_int_equal(pf_skew_seconds(999, 1000900, 1000950), 0);
    /* 10 s ahead and behind, less the one-second allowance */
    assert_int_equal(pf_skew_seconds(1010, 1000000, 1000000), 9);
    assert_int_equal(pf_skew_seconds(990, 1000000, 1000000), -9);
    /* a slow round trip widens what cannot be told apart */
    assert_int_equal(pf_skew_seconds(1003, 1000000, 1004000), 0);
}

static void test_version_order(void **state)
{
    (void)state;
    assert_true(pf_version_cmp("v1", "v1beta1") > 0);
    assert_true(pf_version_cmp("v1beta2", "v1beta1") > 0);
    assert_true(pf_version_cmp("v1beta1", "v1alpha1") > 0);
    assert_true(pf_version_cmp("v2", "v1") > 0);
    assert_true(pf_version_cmp("v2alpha1", "v1beta1") < 0);
    assert_true(pf_version_cmp("v1alpha1", "foo") > 0);
    assert_int_equal(pf_version_cmp("v1beta1", "v1beta1"), 0);
    assert_true(pf_version_cmp("v1beta", "v1alpha1") < 0);   /* not a version */
}

static void served(pf_served *s, const char *v0, int c0, const char *v1, int c1)
{
    memset(s, 0, sizeof(*s));
    if (v0) {
        strcpy(s->version[s->n], v0);
        s->complete[s->n++] = c0;
    }
    if (v1) {
        strcpy(s->version[s->n], v1);
        s->complete[s->n++] = c1;
    }
}

static void test_common_version(void **state)
{
    pf_served a, b;
    char out[32];

    (void)state;
    served(&a, "v1beta1", 1, NULL, 0);
    served(&b, "v1beta1", 1, NULL, 0);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), 0);
    assert_string_equal(out, "v1beta1");
    /* the newest both serve completely */
    served(&a, "v1beta1", 1, "v1", 1);
    served(&b, "v1", 1, "v1beta1", 1);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), 0);
    assert_string_equal(out, "v1");
    /* v1 lacks a resource on one side: v1beta1 */
    served(&b, "v1", 0, "v1beta1", 1);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), 0);
    assert_string_equal(out, "v1beta1");
    /* mismatch */
    served(&a, "v1beta1", 1, NULL, 0);
    served(&b, "v1alpha1", 1, NULL, 0);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), -1);
    served(&b, "v1beta1", 0, NULL, 0);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), -1);
    served(&b, NULL, 0, NULL, 0);
    assert_int_equal(pf_common_version(&a, &b, out, sizeof(out)), -1);
}

static void test_token_line(void **state)
{
    pf_token_line t;
    char why[256];

    (void)state;
    assert_int_equal(pf_token_line_parse("kubectl tenantgate authenticate --auth-url https://127.0.0.1:8443 "
                                         "--token abcdef.0123456789abcdef0123456789abcdef --auth-ca-hash "
                                         "sha256:00ff\n", &t, why, sizeof(why)), 0);
    assert_string_equal(t.auth_url, "https://127.0.0.1:8443");
    assert_string_equal(t.token, "abcdef.0123456789abcdef0123456789abcdef");
    assert_string_equal(t.pin, "sha256:00ff");
    pf_token_line_free(&t);
    assert_null(t.buf);
    assert_int_equal(pf_token_line_parse("--auth-url https://a --token x", &t, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "--auth-ca-hash"));
    assert_int_equal(pf_token_line_parse("--auth-url http://a --token x --auth-ca-hash y", &t, why,
                                         sizeof(why)), -1);
    assert_int_equal(pf_token_line_parse("--auth-url", &t, why, sizeof(why)), -1);
    assert_int_equal(pf_token_line_parse(NULL, &t, why, sizeof(why)), -1);
}

static void test_rights_and_tags(void **state)
{
    char buf[160];
    int n = 0;

    (void)state;
    for (const pf_right *r = pf_provider_rights; r->verb; r++)
        n++;
    assert_int_equal(n, 6);
    pf_right_text(&pf_csr_rights[1], buf, sizeof(buf));
    assert_string_equal(buf, "update certificatesigningrequests/approval.certificates.k8s.io");
    pf_right_text(&pf_csr_rights[2], buf, sizeof(buf));
    assert_string_equal(buf, "approve signers.certificates.k8s.io kubernetes.io/kube-apiserver-client");
    pf_right_text(&pf_consumer_rights[0], buf, sizeof(buf));
    assert_string_equal(buf, "get secrets");
    assert_string_equal(pf_image_tag("ghcr.io/liqotech/liqo-controller-manager:v1.2.0"), "v1.2.0");
    assert_string_equal(pf_image_tag("localhost:5000/liqo"), "localhost:5000/liqo");
    assert_string_equal(pf_image_tag("liqo@sha256:ab"), "liqo@sha256:ab");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_skew_thresholds),
        cmocka_unit_test(test_skew_seconds),
        cmocka_unit_test(test_version_order),
        cmocka_unit_test(test_common_version),
        cmocka_unit_test(test_token_line),
        cmocka_unit_test(test_rights_and_tags),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
