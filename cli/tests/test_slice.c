/* test_slice.c - the ResourceSlice the CLI creates, quantities, and reading
 * the provider's verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "slice.h"
#include "kube/json.h"

static void test_quantities(void **state)
{
    static const struct {
        const char *q;
        int ok;
    } cases[] = {
        {"4", 1}, {"500m", 1}, {"8Gi", 1}, {"1.5", 1}, {".5", 1}, {"1.", 1}, {"+2", 1}, {"-1", 1},
        {"1e3", 1}, {"2E-2", 1}, {"110", 1}, {"20Gi", 1}, {"3k", 1}, {"1Ei", 1},
        {"", 0}, {"four", 0}, {"Gi", 0}, {"1Gb", 0}, {"1 Gi", 0}, {"1ki", 0}, {"1e", 0}, {"1.2.3", 0},
        {".", 0}, {"+", 0}, {"1mi", 0}, {"1GiB", 0}, {NULL, 0},
        {"11111111111111111111111111111111111111111111111111111111111111111", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cli_quantity_valid(cases[i].q) != cases[i].ok)
            fail_msg("%s: expected %d", cases[i].q ? cases[i].q : "(null)", cases[i].ok);
    }
}

static void test_names(void **state)
{
    static const struct {
        const char *n;
        int ok;
    } cases[] = {
        {"mypool", 1}, {"a", 1}, {"pool-1", 1}, {"a.b-c.d", 1}, {"", 0}, {"Pool", 0}, {"-a", 0}, {"a-", 0},
        {"a..b", 0}, {"a.-b", 0}, {".a", 0}, {"a_b", 0}, {"a/b", 0}, {NULL, 0},
    };
    char long_name[260];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (cli_slice_name_valid(cases[i].n) != cases[i].ok)
            fail_msg("%s: expected %d", cases[i].n ? cases[i].n : "(null)", cases[i].ok);
    memset(long_name, 'a', 253);
    long_name[253] = '\0';
    assert_true(cli_slice_name_valid(long_name));
    long_name[253] = 'a';
    long_name[254] = '\0';
    assert_false(cli_slice_name_valid(long_name));
}

static void test_object(void **state)
{
    cli_slice_request r = {.name = "mypool", .namespace_ = "liqo-tenant-p", .provider_id = "p",
                           .cpu = "4", .memory = "8Gi", .pods = "", .resources = {"nvidia.com/gpu=2"},
                           .nresources = 1};
    char err[256];
    json_object *o = cli_slice_object(&r, err, sizeof(err)), *res;

    assert_non_null(o);
    assert_string_equal(tg_json_string(o, "kind"), "ResourceSlice");
    assert_string_equal(tg_json_path_string(o, "metadata", "labels", "liqo.io/replication", NULL), "true");
    assert_string_equal(tg_json_path_string(o, "metadata", "labels", "liqo.io/remoteID", NULL), "p");
    assert_string_equal(tg_json_path_string(o, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), "p");
    assert_string_equal(tg_json_path_string(o, "metadata", "annotations", "liqo.io/create-virtual-node", NULL),
                        "true");
    assert_string_equal(tg_json_path_string(o, "spec", "class", NULL), "default");
    assert_string_equal(tg_json_path_string(o, "spec", "providerClusterID", NULL), "p");
    res = tg_json_path(o, "spec", "resources", NULL);
    assert_int_equal(json_object_object_length(res), 3);             /* empty pods skipped */
    assert_string_equal(tg_json_string(res, "nvidia.com/gpu"), "2");
    assert_null(tg_json_path(o, "spec", "consumerClusterID", NULL));  /* the signer's */
    assert_null(tg_json_path(o, "spec", "csr", NULL));
    json_object_put(o);

    r = (cli_slice_request){.name = "s", .namespace_ = "n", .provider_id = "p", .class_ = "gold",
                            .no_virtual_node = 1};
    o = cli_slice_object(&r, err, sizeof(err));
    assert_string_equal(tg_json_path_string(o, "spec", "class", NULL), "gold");
    assert_null(tg_json_path(o, "metadata", "annotations", NULL));
    assert_null(tg_json_path(o, "spec", "resources", NULL));
    json_object_put(o);

    r = (cli_slice_request){.name = "s", .namespace_ = "n", .provider_id = "p", .no_virtual_node = 1,
                            .revocable = 1};
    o = cli_slice_object(&r, err, sizeof(err));
    assert_string_equal(tg_json_path_string(o, "metadata", "annotations", CLI_SLICE_REVOCABLE_ANNOTATION, NULL),
                        "true");
    assert_null(tg_json_path(o, "metadata", "annotations", "liqo.io/create-virtual-node", NULL));
    json_object_put(o);
}

static void test_object_refuses(void **state)
{
    static const struct {
        cli_slice_request r;
        const char *found;
    } cases[] = {
        {{.cpu = "four"}, "cpu: expected a quantity"},
        {{.resources = {"gpu"}, .nresources = 1}, "NAME=QUANTITY"},
        {{.resources = {"=2"}, .nresources = 1}, "NAME=QUANTITY"},
        {{.resources = {"gpu=x"}, .nresources = 1}, "gpu: expected a quantity"},
        {{.cpu = "1", .resources = {"cpu=2"}, .nresources = 1}, "cpu asked for twice"},
        {{.resources = {"a=1", "a=2"}, .nresources = 2}, "a asked for twice"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cli_slice_request r = cases[i].r;
        char err[256] = "";
        r.name = "s";
        r.namespace_ = "n";
        r.provider_id = "p";
        assert_null(cli_slice_object(&r, err, sizeof(err)));
        if (!strstr(err, cases[i].found))
            fail_msg("case %zu: %s", i, err);
    }
}

static void test_conditions(void **state)
{
    static const struct {
        const char *status, *type;
        cli_slice_state want;
        const char *why;
    } cases[] = {
        {"{}", "Authentication", CLI_SLICE_PENDING, NULL},
        {"{\"conditions\":[]}", "Authentication", CLI_SLICE_PENDING, NULL},
        {"{\"conditions\":[{\"type\":\"Authentication\",\"status\":\"Accepted\"}]}", "Authentication",
         CLI_SLICE_ACCEPTED, NULL},
        {"{\"conditions\":[{\"type\":\"Authentication\",\"status\":\"Accepted\"}]}", "Resources", CLI_SLICE_PENDING,
         NULL},
        {"{\"conditions\":[{\"type\":\"Authentication\",\"status\":\"Accepted\"},{\"type\":\"Resources\","
         "\"status\":\"Denied\",\"reason\":\"ResourceSliceResourcesDenied\",\"message\":\"cpu: 2 over\"}]}",
         "Resources", CLI_SLICE_DENIED, "ResourceSliceResourcesDenied: cpu: 2 over"},
        {"{\"conditions\":[{\"type\":\"Authentication\",\"status\":\"Denied\"}]}", "Authentication",
         CLI_SLICE_DENIED, "Denied: no message"},
        {"{\"conditions\":{\"type\":\"Authentication\"}}", "Authentication", CLI_SLICE_PENDING, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024], why[256] = "";
        json_object *o;
        snprintf(text, sizeof(text), "{\"status\":%s}", cases[i].status);
        o = tg_json_parse(text, strlen(text), NULL, 0);
        assert_non_null(o);
        assert_int_equal(cli_slice_condition(o, cases[i].type, why, sizeof(why)), cases[i].want);
        if (cases[i].why)
            assert_string_equal(why, cases[i].why);
        json_object_put(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_object),
        cmocka_unit_test(test_object_refuses),
        cmocka_unit_test(test_conditions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
