/* test_slice_tenant_policy.c - a consumer's own slice policy
 * (slice_tenant_policy.h), as a table: entry, class, what the slice is
 * judged by, the siblings' sum -> verdict and a piece of the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "pki/slice_tenant_policy.h"

#define A TG_TPOL_ALLOWED
#define CLASS TG_TPOL_CLASS_NOT_ALLOWED
#define OVER TG_TPOL_EXCEEDED
#define BAD TG_TPOL_INVALID

#define DEFAULT_ONLY_CPU2 "{\"classes\":[\"default\"],\"maxPerSlice\":{\"cpu\":\"2\"}}"

static const struct row {
    const char *what, *entry, *class_, *resources, *others;
    tg_tenant_policy_verdict want;
    const char *why;            /* a piece of the message; NULL: not looked at */
} rows[] = {
    /* no entry: today's behaviour */
    {"no entry", NULL, "gpu", "{\"cpu\":\"100\"}", NULL, A, NULL},
    {"empty entry allows all", "{}", "gpu", "{\"cpu\":\"100\"}", "{\"cpu\":\"100\"}", A, NULL},
    /* the class */
    {"listed class", DEFAULT_ONLY_CPU2, "default", "{\"cpu\":\"2\"}", NULL, A, NULL},
    {"no class is default", DEFAULT_ONLY_CPU2, NULL, "{\"cpu\":\"1\"}", NULL, A, NULL},
    {"empty class is default", DEFAULT_ONLY_CPU2, "", NULL, NULL, A, NULL},
    {"class not listed", DEFAULT_ONLY_CPU2, "gpu", "{\"cpu\":\"1\"}", NULL, CLASS,
     "expected a class this consumer may use [\"default\"], found \"gpu\""},
    {"default not listed", "{\"classes\":[\"gpu\",\"fast\"]}", NULL, NULL, NULL, CLASS,
     "[\"gpu\", \"fast\"], found \"default\""},
    {"no class allowed", "{\"classes\":[]}", "default", NULL, NULL, CLASS, "[], found \"default\""},
    {"class before maxima", DEFAULT_ONLY_CPU2, "gpu", "{\"cpu\":\"4\"}", NULL, CLASS, NULL},
    /* maxPerSlice */
    {"per slice over", DEFAULT_ONLY_CPU2, "default", "{\"cpu\":\"4\"}", NULL, OVER,
     "cpu: 4 asked, at most 2 per slice for this consumer (2 over)"},
    {"per slice millis", DEFAULT_ONLY_CPU2, "default", "{\"cpu\":\"2001m\"}", NULL, OVER, "(1m over)"},
    {"per slice equal", DEFAULT_ONLY_CPU2, "default", "{\"cpu\":\"2000m\"}", NULL, A, NULL},
    {"per slice integer", "{\"maxPerSlice\":{\"pods\":10}}", "default", "{\"pods\":11}", NULL, OVER, "pods: 11"},
    {"per slice memory", "{\"maxPerSlice\":{\"memory\":\"4Gi\"}}", "x", "{\"memory\":\"8Gi\"}", NULL, OVER,
     "memory: 8Gi asked, at most 4Gi"},
    {"unnamed resource free", DEFAULT_ONLY_CPU2, "default", "{\"memory\":\"1Ti\"}", NULL, A, NULL},
    {"zero maximum", "{\"maxPerSlice\":{\"nvidia.com/gpu\":\"0\"}}", "gpu", "{\"nvidia.com/gpu\":\"1\"}", NULL,
     OVER, "nvidia.com/gpu: 1 asked, at most 0"},
    {"malformed request", DEFAULT_ONLY_CPU2, "default", "{\"cpu\":\"lots\"}", NULL, OVER, "expected a quantity"},
    /* maxPerTenant: only with the siblings' sum */
    {"per tenant unknown sum", "{\"maxPerTenant\":{\"cpu\":\"8\"}}", "default", "{\"cpu\":\"6\"}", NULL, A, NULL},
    {"per tenant within", "{\"maxPerTenant\":{\"cpu\":\"8\"}}", "default", "{\"cpu\":\"2\"}", "{\"cpu\":\"6\"}", A,
     NULL},
    {"per tenant over", "{\"maxPerTenant\":{\"cpu\":\"8\"}}", "default", "{\"cpu\":\"4\"}", "{\"cpu\":\"6\"}", OVER,
     "cpu: 4 asked with 6 already granted to this consumer, at most 8 per consumer (2 over)"},
    {"per tenant negative sum", "{\"maxPerTenant\":{\"cpu\":\"8\"}}", "default", "{\"cpu\":\"9\"}",
     "{\"cpu\":\"-4\"}", OVER, "with 0 already granted"},
    {"per tenant first slice", "{\"maxPerTenant\":{\"cpu\":\"8\"}}", "default", "{\"cpu\":\"9\"}", "{}", OVER,
     "(1 over)"},
    /* a broken entry allows nothing (fail closed) */
    {"not JSON", "{\"classes\":", "default", NULL, NULL, BAD, "found no JSON"},
    {"trailing text", "{} x", "default", NULL, NULL, BAD, "found no JSON"},
    {"not an object", "[\"default\"]", "default", NULL, NULL, BAD, "found another JSON value"},
    {"misspelt member", "{\"maxPerslice\":{\"cpu\":\"2\"}}", "default", "{\"cpu\":\"4\"}", NULL, BAD,
     "found member \"maxPerslice\""},
    {"classes not array", "{\"classes\":\"default\"}", "default", NULL, NULL, BAD, "classes is not an array"},
    {"class not string", "{\"classes\":[1]}", "default", NULL, NULL, BAD, "classes[0] is not a class name"},
    {"class empty", "{\"classes\":[\"\"]}", "default", NULL, NULL, BAD, "classes[0]"},
    {"maxima not object", "{\"maxPerSlice\":[]}", "default", NULL, NULL, BAD, "maxPerSlice is not an object"},
    {"maximum not quantity", "{\"maxPerTenant\":{\"cpu\":\"two\"}}", "default", NULL, NULL, BAD,
     "maxPerTenant.cpu is not a quantity >= 0"},
    {"maximum negative", "{\"maxPerSlice\":{\"cpu\":\"-1\"}}", "default", NULL, NULL, BAD, "maxPerSlice.cpu"},
    {"broken though unused", "{\"classes\":[\"default\"],\"maxPerTenant\":{\"cpu\":true}}", "default", NULL, NULL,
     BAD, "maxPerTenant.cpu"},
};

static json_object *parse(const char *text)
{
    return text ? json_tokener_parse(text) : NULL;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        json_object *res = parse(r->resources), *others = parse(r->others);
        char why[400] = "";
        tg_tenant_policy_verdict v = tg_tenant_policy_check(r->entry, r->class_, res, others, why, sizeof(why));

        if (v != r->want || (r->why && !strstr(why, r->why)))
            fail_msg("row \"%s\": verdict %d (want %d), why \"%s\" (want \"%s\")", r->what, v, r->want, why,
                     r->why ? r->why : "");
        json_object_put(res);
        json_object_put(others);
    }
}

static void test_names(void **state)
{
    char key[16];

    (void)state;
    assert_string_equal(tg_tenant_policy_reason(CLASS), "ClassNotAllowed");
    assert_string_equal(tg_tenant_policy_reason(OVER), "TenantPolicyExceeded");
    assert_string_equal(tg_tenant_policy_reason(BAD), "TenantPolicyInvalid");
    assert_string_equal(tg_tenant_policy_reason(A), "");
    assert_int_equal(tg_tenant_policy_key("cl01", key, sizeof(key)), 0);
    assert_string_equal(key, "tenant.cl01");
    assert_int_equal(tg_tenant_policy_key("a-much-longer-id", key, sizeof(key)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
