/* test_secret_data.c - tg_secret_data_text on Secrets as the API server and users write them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kube/secret_data.h"

static json_object *secret(const char *data_json)
{
    return json_tokener_parse(data_json);
}

static void test_rows(void **state)
{
    static const struct {
        const char *doc, *key;
        size_t len;
        int rc;
        const char *want;
    } rows[] = {
        {"{\"data\":{\"usage\":\"cmV1c2FibGU=\"}}", "usage", 64, 0, "reusable"},
        {"{\"data\":{\"usage\":\"cmV1c2FibGU=\"}}", "usage", 9, 0, "reusable"},   /* fits with its NUL */
        {"{\"data\":{\"usage\":\"cmV1c2FibGU=\"}}", "usage", 8, -1, NULL},        /* does not */
        {"{\"data\":{\"usage\":\"cmV1c2FibGU=\"}}", "other", 64, -1, NULL},       /* absent */
        {"{\"data\":{\"usage\":\"not base64!\"}}", "usage", 64, -1, NULL},
        {"{\"data\":{\"usage\":\"YQBi\"}}", "usage", 64, -1, NULL},               /* "a\0b" */
        {"{\"data\":{\"usage\":\"\"}}", "usage", 64, 0, ""},
        {"{}", "usage", 64, -1, NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *s = secret(rows[i].doc);
        char buf[64] = "untouched";

        assert_non_null(s);
        assert_int_equal(tg_secret_data_text(s, rows[i].key, buf, rows[i].len), rows[i].rc);
        if (rows[i].want)
            assert_string_equal(buf, rows[i].want);
        json_object_put(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
