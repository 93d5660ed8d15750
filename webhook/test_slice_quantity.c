/* test_slice_quantity.c - what counts as a positive quantity of a slice's
 * spec.resources (issue 36, finding 2), hostile texts included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "kube/json.h"
#include "webhook/slice_quantity.h"

static void test_classify(void **state)
{
    static const struct {
        const char *text;
        tg_quantity_class want;
    } cases[] = {
        {"4", TG_QUANTITY_POSITIVE},        {"+4", TG_QUANTITY_POSITIVE},      {"500m", TG_QUANTITY_POSITIVE},
        {"8Gi", TG_QUANTITY_POSITIVE},      {"1e-3", TG_QUANTITY_POSITIVE},    {"1E3", TG_QUANTITY_POSITIVE},
        {".5", TG_QUANTITY_POSITIVE},       {"5.", TG_QUANTITY_POSITIVE},      {"0.001", TG_QUANTITY_POSITIVE},
        {"1n", TG_QUANTITY_POSITIVE},       {"1e-9", TG_QUANTITY_POSITIVE},    {"1Ei", TG_QUANTITY_POSITIVE},
        {"2E", TG_QUANTITY_POSITIVE},       {"1e", TG_QUANTITY_MALFORMED},
        {"1000000000000000000000000000", TG_QUANTITY_OUT_OF_RANGE},
        {"99999999999999999999999999", TG_QUANTITY_POSITIVE},
        {"00000000000000000000000000001", TG_QUANTITY_POSITIVE},
        {"0", TG_QUANTITY_ZERO},            {"-0", TG_QUANTITY_ZERO},          {"+0", TG_QUANTITY_ZERO},
        {"0.000", TG_QUANTITY_ZERO},        {"0Gi", TG_QUANTITY_ZERO},         {"0e999", TG_QUANTITY_ZERO},
        {"-0.0m", TG_QUANTITY_ZERO},
        {"-8", TG_QUANTITY_NEGATIVE},       {"-1m", TG_QUANTITY_NEGATIVE},     {"-1e-3", TG_QUANTITY_NEGATIVE},
        {"-.5Ki", TG_QUANTITY_NEGATIVE},
        {"1e999", TG_QUANTITY_OUT_OF_RANGE}, {"1e27", TG_QUANTITY_OUT_OF_RANGE}, {"1e26", TG_QUANTITY_POSITIVE},
        {"1e-10", TG_QUANTITY_OUT_OF_RANGE}, {"0.1n", TG_QUANTITY_OUT_OF_RANGE}, {"1e-999", TG_QUANTITY_OUT_OF_RANGE},
        {"1e9999", TG_QUANTITY_MALFORMED},  {"1e", TG_QUANTITY_MALFORMED},     {"1e+", TG_QUANTITY_MALFORMED},
        {"1e1.5", TG_QUANTITY_MALFORMED},   {"", TG_QUANTITY_MALFORMED},       {"-", TG_QUANTITY_MALFORMED},
        {".", TG_QUANTITY_MALFORMED},       {"four", TG_QUANTITY_MALFORMED},   {"4 ", TG_QUANTITY_MALFORMED},
        {" 4", TG_QUANTITY_MALFORMED},      {"4Ki ", TG_QUANTITY_MALFORMED},   {"4KiB", TG_QUANTITY_MALFORMED},
        {"--4", TG_QUANTITY_MALFORMED},     {"+-4", TG_QUANTITY_MALFORMED},    {"4.5.6", TG_QUANTITY_MALFORMED},
        {"0x10", TG_QUANTITY_MALFORMED},    {"inf", TG_QUANTITY_MALFORMED},    {"NaN", TG_QUANTITY_MALFORMED},
        {"1111111111111111111111111111111", TG_QUANTITY_MALFORMED},      /* 31 digits */
        {"1.00000000000000000000000000000000000000000000000000000000000000000", TG_QUANTITY_MALFORMED},
        {NULL, TG_QUANTITY_MALFORMED},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_quantity_class got = tg_quantity_classify(cases[i].text);
        if (got != cases[i].want)
            fail_msg("\"%s\": got %d, want %d", cases[i].text ? cases[i].text : "(null)", (int)got,
                     (int)cases[i].want);
    }
}

static void check_json(const char *resources, int want_rc, const char *found)
{
    json_object *obj = resources ? tg_json_parse(resources, strlen(resources), NULL, 0) : NULL;
    tg_verdict v;

    tg_verdict_init(&v);
    if (resources)
        assert_non_null(obj);
    assert_int_equal(tg_slice_quantities_check(obj, &v), want_rc);
    if (want_rc) {
        assert_int_equal(v.reason, TG_MALFORMED_RESOURCE_SLICE);
        assert_int_equal(v.code, 400);
        if (!strstr(v.message, found))
            fail_msg("%s: message \"%s\" lacks \"%s\"", resources, v.message, found);
    }
    if (obj)
        json_object_put(obj);
}

/* The resources object: every member, strings and integers, nothing else. */
static void test_resources(void **state)
{
    check_json(NULL, 0, NULL);
    check_json("{}", 0, NULL);
    check_json("{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":110}", 0, NULL);
    check_json("{\"cpu\":\"4\",\"memory\":\"-8Gi\"}", -1, "spec.resources.memory: expected a positive quantity");
    check_json("{\"pods\":-110}", -1, "found a negative quantity \"-110\"");
    check_json("{\"pods\":0}", -1, "found zero \"0\"");
    check_json("{\"cpu\":1.5}", -1, "spec.resources.cpu: expected a positive quantity");
    check_json("{\"cpu\":null}", -1, "found no quantity");
    check_json("{\"cpu\":{\"a\":1}}", -1, "found no quantity");
    check_json("[\"4\"]", -1, "spec.resources: expected an object of quantities, found array");
    check_json("{\"cpu\":\"\\u001b[31m-1\"}", -1, "found no quantity");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
