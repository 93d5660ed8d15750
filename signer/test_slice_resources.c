/* test_slice_resources.c - quantities, Liqo's defaults, and the class policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kube/json.h"
#include "signer/slice_resources.h"

static void test_quantities(void **state)
{
    static const struct {
        const char *q;
        long long milli;           /* -1: malformed */
    } cases[] = {
        {"4", 4000}, {"500m", 500}, {"1.5", 1500}, {"0.5", 500}, {".5", 500}, {"1Ki", 1024000},
        {"8Gi", 8589934592000LL}, {"1k", 1000000}, {"1M", 1000000000}, {"2e3", 2000000}, {"1E-3", 1},
        {"110", 110000}, {"+3", 3000}, {"-2", -2000}, {"100u", 0}, {"1n", 0}, {"0", 0},
        {"", -1}, {"four", -1}, {"1Gb", -1}, {"1.2.3", -1}, {"1e", -1}, {"e3", -1}, {"1 Gi", -1}, {"1ki", -1},
        {"1e9999", -1},
        /* found by fuzz_signer_decide: 30 digits shifted by Mi overflowed __int128 */
        {"555555555555555555500000012912Mi", -1}, {"999999999999999999999999999999Ei", -1},
        {"1.50Ki", 1536000},
    };
    __int128 ei = 0;

    /* exbi and exa are suffixes, not exponents; zeros ending the fraction do
     * not count against the overflow bound */
    assert_int_equal(tg_quantity_milli("1Ei", &ei), 0);
    assert_true(ei == ((__int128)1 << 60) * 1000);
    assert_int_equal(tg_quantity_milli("1.00000000000000000000Ei", &ei), 0);
    assert_true(ei == ((__int128)1 << 60) * 1000);
    assert_int_equal(tg_quantity_milli("2E", &ei), 0);
    assert_true(ei == (__int128)2000000000000000000LL * 1000);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        __int128 m = 0;
        int rc = tg_quantity_milli(cases[i].q, &m);
        if (cases[i].milli == -1 && cases[i].q[0] != '-') {
            if (rc == 0)
                fail_msg("%s: expected malformed", cases[i].q);
            continue;
        }
        if (rc != 0 || m != cases[i].milli)
            fail_msg("%s: expected %lld, found rc %d, %lld", cases[i].q, cases[i].milli, rc, (long long)m);
    }
}

static void test_text(void **state)
{
    char buf[64];

    tg_quantity_text(4000, buf, sizeof(buf));
    assert_string_equal(buf, "4");
    tg_quantity_text(1500, buf, sizeof(buf));
    assert_string_equal(buf, "1500m");
    tg_quantity_text(-2000, buf, sizeof(buf));
    assert_string_equal(buf, "-2");
    tg_quantity_text(0, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    tg_quantity_text((__int128)8589934592 * 1000, buf, sizeof(buf));
    assert_string_equal(buf, "8Gi");
    tg_quantity_text((__int128)536870912 * 1000, buf, sizeof(buf));
    assert_string_equal(buf, "512Mi");
    tg_quantity_text((__int128)1000 * 1000, buf, sizeof(buf));
    assert_string_equal(buf, "1000");
}

static json_object *j(const char *text)
{
    json_object *o = text ? tg_json_parse(text, strlen(text), NULL, 0) : NULL;
    if (text)
        assert_non_null(o);
    return o;
}

static void test_decisions(void **state)
{
    static const struct {
        const char *desc, *request, *policy, *others;
        const char *want;          /* granted JSON (compared as text), or NULL when denied */
        const char *why;
        const char *defaults;      /* --default-node-resources; NULL: none given */
    } cases[] = {
        {"configured defaults", NULL, NULL, NULL, "{ \"cpu\": \"2\", \"memory\": \"4Gi\", \"pods\": \"30\" }", NULL,
         "cpu=2,memory=4Gi,pods=30"},
        {"configured defaults, request overlays", "{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}", NULL, NULL,
         "{ \"cpu\": \"1\", \"memory\": \"4Gi\", \"nvidia.com/gpu\": \"1\" }", NULL, "cpu=2,memory=4Gi"},
        {"configured default over the policy", NULL, "{\"maxPerSlice\":{\"memory\":\"8Gi\"}}", NULL, NULL,
         "memory: 16Gi asked, at most 8Gi per slice (8Gi over)", "memory=16Gi"},
        {"empty flag: no defaults", "{\"cpu\":\"1\"}", NULL, NULL, "{ \"cpu\": \"1\" }", NULL, ""},
        {"Liqo's defaults", NULL, NULL, NULL,
         "{ \"cpu\": \"4\", \"memory\": \"8Gi\", \"pods\": \"110\", \"ephemeral-storage\": \"20Gi\" }", NULL, NULL},
        {"request overlays", "{\"cpu\":\"2\",\"nvidia.com/gpu\":1}", NULL, NULL,
         "{ \"cpu\": \"2\", \"memory\": \"8Gi\", \"pods\": \"110\", \"ephemeral-storage\": \"20Gi\", "
         "\"nvidia.com/gpu\": 1 }", NULL, NULL},
        {"within the policy", "{\"cpu\":\"8\"}", "{\"maxPerSlice\":{\"cpu\":\"8\"},\"maxPerTenant\":{\"cpu\":\"16\"}}",
         "{\"cpu\":\"8\"}",
         "{ \"cpu\": \"8\", \"memory\": \"8Gi\", \"pods\": \"110\", \"ephemeral-storage\": \"20Gi\" }", NULL, NULL},
        {"over per slice", "{\"cpu\":\"10\"}", "{\"maxPerSlice\":{\"cpu\":\"8\"}}", NULL, NULL,
         "cpu: 10 asked, at most 8 per slice (2 over)", NULL},
        {"a default over per slice", NULL, "{\"maxPerSlice\":{\"memory\":\"4Gi\"}}", NULL, NULL,
         "memory: 8Gi asked, at most 4Gi per slice (4Gi over)", NULL},
        {"over per tenant", "{\"cpu\":\"4\"}", "{\"maxPerTenant\":{\"cpu\":\"10\"}}", "{\"cpu\":\"7500m\"}", NULL,
         "cpu: 4 asked with 7500m already granted to this consumer, at most 10 per consumer (1500m over)", NULL},
        {"bad request quantity", "{\"cpu\":\"lots\"}", NULL, NULL, NULL, "spec.resources.cpu: expected a quantity", NULL},
        {"bad policy", NULL, "{\"maxPerSlice\":{\"cpu\":\"x\"}}", NULL, NULL, "maxPerSlice.cpu is not a quantity", NULL},
        {"negative request", "{\"cpu\":\"-8\"}", NULL, NULL, NULL,
         "spec.resources.cpu: -8 asked, expected a quantity greater than 0", NULL},
        {"zero request", "{\"memory\":\"0\"}", NULL, NULL, NULL,
         "spec.resources.memory: 0 asked, expected a quantity greater than 0", NULL},
        {"negative integer request", "{\"pods\":-1}", NULL, NULL, NULL, "spec.resources.pods: -1 asked", NULL},
        {"below a thousandth", "{\"cpu\":\"1n\"}", NULL, NULL, NULL, "spec.resources.cpu: 1n asked", NULL},
        {"negative exponent form", "{\"cpu\":\"-1e3\"}", NULL, NULL, NULL, "spec.resources.cpu: -1e3 asked", NULL},
        {"a negative sum makes no room", "{\"cpu\":\"4\"}", "{\"maxPerTenant\":{\"cpu\":\"3\"}}",
         "{\"cpu\":\"-4\"}", NULL, "cpu: 4 asked with 0 already granted to this consumer, at most 3 per consumer", NULL},
        {"unnamed resources unlimited", "{\"pods\":\"1000\"}", "{\"maxPerSlice\":{\"cpu\":\"8\"}}", NULL,
         "{ \"cpu\": \"4\", \"memory\": \"8Gi\", \"pods\": \"1000\", \"ephemeral-storage\": \"20Gi\" }", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *req = j(cases[i].request), *pol = j(cases[i].policy), *oth = j(cases[i].others), *g = NULL;
        char why[256] = "";
        json_object *defaults = cases[i].defaults ? tg_slice_defaults_parse(cases[i].defaults, why, sizeof(why)) : NULL;
        int rc;

        assert_true(!cases[i].defaults || defaults);
        rc = tg_slice_resources_decide(defaults, req, pol, oth, &g, why, sizeof(why));
        json_object_put(defaults);

        print_message("%-28s -> %s\n", cases[i].desc, rc == 0 ? json_object_to_json_string(g) : why);
        if (cases[i].want) {
            assert_int_equal(rc, 0);
            assert_string_equal(json_object_to_json_string_ext(g, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE), cases[i].want);
        } else {
            assert_int_equal(rc, -1);
            assert_null(g);
            if (!strstr(why, cases[i].why))
                fail_msg("%s: %s", cases[i].desc, why);
        }
        json_object_put(g);
        json_object_put(req);
        json_object_put(pol);
        json_object_put(oth);
    }
}

/* --default-node-resources as Liqo writes it (its ResourceMap). */
static void test_defaults_parse(void **state)
{
    static const struct {
        const char *flag, *want, *err;
    } flags[] = {
        {"cpu=4,memory=8Gi,pods=110,ephemeral-storage=20Gi",
         "{ \"cpu\": \"4\", \"memory\": \"8Gi\", \"pods\": \"110\", \"ephemeral-storage\": \"20Gi\" }", NULL},
        {"cpu=500m", "{ \"cpu\": \"500m\" }", NULL},
        {"cpu=1,cpu=2", "{ \"cpu\": \"2\" }", NULL},            /* the last wins, as in Liqo's map */
        {"nvidia.com/gpu=1", "{ \"nvidia.com/gpu\": \"1\" }", NULL},
        {"", "{ }", NULL},
        {"cpu", NULL, "expected name=quantity, found \"cpu\""},
        {"cpu=4,", NULL, "after the last \",\""},
        {",cpu=4", NULL, "expected name=quantity, found \"\""},
        {"cpu=4,,pods=1", NULL, "expected name=quantity, found \"\""},
        {"=4", NULL, "expected name=quantity, found \"=4\""},
        {"cpu=a=b", NULL, "expected name=quantity"},
        {"memory=8GB", NULL, "memory: expected a quantity greater than 0 (4, 500m, 8Gi), found \"8GB\""},
        {"cpu=0", NULL, "cpu: expected a quantity greater than 0"},
        {"cpu=-1", NULL, "cpu: expected a quantity greater than 0"},
        {"cpu=", NULL, "cpu: expected a quantity greater than 0"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char err[256] = "";
        json_object *o = tg_slice_defaults_parse(flags[i].flag, err, sizeof(err));
        if (flags[i].want) {
            if (!o)
                fail_msg("\"%s\": %s", flags[i].flag, err);
            assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE),
                                flags[i].want);
        } else if (o || !strstr(err, flags[i].err)) {
            fail_msg("\"%s\": expected \"%s\", found %s", flags[i].flag, flags[i].err, o ? "accepted" : err);
        }
        json_object_put(o);
    }
}

static void test_verdicts(void **state)
{
    static const struct {
        const char *desc, *class_;
        tg_slice_tenant_state tenant;
        const char *cur, *request, *policy, *others;
        int want;
        const char *reason;
        int class_off;             /* --default-resource-slice-class-enabled=false */
    } cases[] = {
        {"class off, default", "default", TG_SLICE_T_ACTIVE, NULL, NULL, NULL, NULL, -1,
         "DefaultResourceSliceClassDisabled", 1},
        {"class off, empty class", "", TG_SLICE_T_ACTIVE, "Accepted", NULL, NULL, NULL, -1,
         "DefaultResourceSliceClassDisabled", 1},
        {"class off, another class", "gpu", TG_SLICE_T_ACTIVE, NULL, NULL, NULL, NULL, 0, NULL, 1},
        {"class off, Drained", "default", TG_SLICE_T_DRAINED, NULL, NULL, NULL, NULL, -1, "TenantDrained", 1},
        {"class off, Cordoned, accepted stays", "default", TG_SLICE_T_CORDONED, "Accepted", NULL, NULL, NULL, 0,
         NULL, 1},
        {"default, Active", "default", TG_SLICE_T_ACTIVE, NULL, NULL, NULL, NULL, 1, NULL, 0},
        {"empty class is default", "", TG_SLICE_T_ACTIVE, NULL, NULL, NULL, NULL, 1, NULL, 0},
        {"NULL class is default", NULL, TG_SLICE_T_ACTIVE, "Denied", NULL, NULL, NULL, 1, NULL, 0},
        {"another class: untouched", "gpu", TG_SLICE_T_ACTIVE, NULL, NULL, NULL, NULL, 0, NULL, 0},
        {"another class, Drained: untouched", "gpu", TG_SLICE_T_DRAINED, NULL, NULL, NULL, NULL, 0, NULL, 0},
        {"Drained", "default", TG_SLICE_T_DRAINED, "Accepted", NULL, NULL, NULL, -1, "TenantDrained", 0},
        {"Cordoned, new slice", "default", TG_SLICE_T_CORDONED, NULL, NULL, NULL, NULL, -1, "TenantCordoned", 0},
        {"Cordoned, empty status", "default", TG_SLICE_T_CORDONED, "", NULL, NULL, NULL, -1, "TenantCordoned", 0},
        {"Cordoned, accepted stays", "default", TG_SLICE_T_CORDONED, "Accepted", NULL, NULL, NULL, 0, NULL, 0},
        {"over the policy", "default", TG_SLICE_T_ACTIVE, NULL, "{\"cpu\":\"9\"}",
         "{\"maxPerSlice\":{\"cpu\":\"8\"}}", NULL, -1, "PolicyExceeded", 0},
        {"negative quantity", "default", TG_SLICE_T_ACTIVE, NULL, "{\"cpu\":\"-8\"}", NULL, NULL, -1,
         "NonPositiveQuantity", 0},
        {"zero quantity, accepted before", "default", TG_SLICE_T_ACTIVE, "Accepted", "{\"pods\":\"0\"}",
         "{\"maxPerTenant\":{\"pods\":\"200\"}}", NULL, -1, "NonPositiveQuantity", 0},
        {"accepted, then over the tenant total", "default", TG_SLICE_T_ACTIVE, "Accepted", NULL,
         "{\"maxPerTenant\":{\"pods\":\"200\"}}", "{\"pods\":\"110\"}", -1, "PolicyExceeded", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *req = j(cases[i].request), *pol = j(cases[i].policy), *oth = j(cases[i].others), *g = NULL;
        char reason[40] = "", why[256] = "";
        tg_slice_provider prov = {.default_class_disabled = cases[i].class_off};
        int rc = tg_slice_resources_verdict(&prov, cases[i].class_, cases[i].tenant, cases[i].cur, req, pol, oth, &g,
                                            reason, sizeof(reason), why, sizeof(why));

        print_message("%-36s -> %d %s %s\n", cases[i].desc, rc, reason, why);
        assert_int_equal(rc, cases[i].want);
        assert_true((rc == 1) == (g != NULL));
        if (cases[i].reason)
            assert_string_equal(reason, cases[i].reason);
        json_object_put(g);
        json_object_put(req);
        json_object_put(pol);
        json_object_put(oth);
    }
}

static void test_sum(void **state)
{
    json_object *sum = json_object_new_object(), *a = j("{\"cpu\":\"1500m\",\"memory\":\"4Gi\"}");
    json_object *b = j("{\"cpu\":\"2\",\"pods\":110}"), *bad = j("{\"cpu\":\"x\"}");
    json_object *neg = j("{\"cpu\":\"-8\",\"pods\":-110}");

    assert_int_equal(tg_slice_resources_add(sum, a), 0);
    assert_int_equal(tg_slice_resources_add(sum, b), 0);
    assert_int_equal(tg_slice_resources_add(sum, NULL), 0);
    assert_int_equal(tg_slice_resources_add(sum, bad), -1);
    assert_string_equal(json_object_to_json_string_ext(sum, JSON_C_TO_STRING_PLAIN),
                        "{\"cpu\":\"3500m\",\"memory\":\"4Gi\",\"pods\":\"110\"}");
    /* a negative grant (an old or forged status) counts as 0: never lowers the total */
    assert_int_equal(tg_slice_resources_add(sum, neg), 0);
    assert_string_equal(json_object_to_json_string_ext(sum, JSON_C_TO_STRING_PLAIN),
                        "{\"cpu\":\"3500m\",\"memory\":\"4Gi\",\"pods\":\"110\"}");
    json_object_put(neg);
    json_object_put(sum);
    json_object_put(a);
    json_object_put(b);
    json_object_put(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_defaults_parse),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
