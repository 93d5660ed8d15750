/* test_slice_offer.c - Liqo's class lists (--ingress-classes,
 * --load-balancer-classes) and the StorageClasses an accepted slice offers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kube/json.h"
#include "signer/slice_offer.h"

static const char *text(json_object *o)
{
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void test_class_lists(void **state)
{
    static const struct {
        const char *flag, *want, *err;
    } lists[] = {
        {"nginx;default,traefik", "[{\"n\":\"nginx\",\"default\":true},{\"n\":\"traefik\"}]", NULL},
        {"metallb;default", "[{\"n\":\"metallb\",\"default\":true}]", NULL},
        {"a,,b,", "[{\"n\":\"a\"},{\"n\":\"b\"}]", NULL},          /* empty chunks skipped, as Liqo */
        {"", "[]", NULL},
        {"a;default,b;default", "[{\"n\":\"a\",\"default\":true},{\"n\":\"b\",\"default\":true}]", NULL},
        {";default", NULL, "expected a class name of 1 to 253 characters, found \";default\""},
        {"nginx;Default", NULL, "expected name or name;default, found \"nginx;Default\""},
        {"nginx;default;x", NULL, "expected name or name;default"},
        {"nginx;", NULL, "expected name or name;default"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        char err[256] = "";
        json_object *o = tg_slice_class_list_parse(lists[i].flag, "n", err, sizeof(err));
        if (lists[i].want) {
            if (!o)
                fail_msg("\"%s\": %s", lists[i].flag, err);
            assert_string_equal(text(o), lists[i].want);
        } else if (o || !strstr(err, lists[i].err)) {
            fail_msg("\"%s\": expected \"%s\", found %s", lists[i].flag, lists[i].err, o ? text(o) : err);
        }
        json_object_put(o);
    }
}

static void test_storage_classes(void **state)
{
    static const struct {
        const char *list, *real, *want;
    } rows[] = {
        {"{\"items\":[{\"metadata\":{\"name\":\"zeta\"}},{\"metadata\":{\"name\":\"alpha\",\"annotations\":"
         "{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}]}",
         NULL, "[{\"storageClassName\":\"alpha\",\"default\":true},{\"storageClassName\":\"zeta\"}]"},
        {"{\"items\":[{\"metadata\":{\"name\":\"zeta\"}},{\"metadata\":{\"name\":\"alpha\",\"annotations\":"
         "{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}]}",
         "zeta", "[{\"storageClassName\":\"alpha\"},{\"storageClassName\":\"zeta\",\"default\":true}]"},
        {"{\"items\":[{\"metadata\":{\"name\":\"a\",\"annotations\":"
         "{\"storageclass.kubernetes.io/is-default-class\":\"false\"}}},{\"metadata\":{}}]}",
         "", "[{\"storageClassName\":\"a\"}]"},
        {"{\"items\":[]}", "gone", "[]"},
        {"{}", NULL, "[]"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *list = tg_json_parse(rows[i].list, strlen(rows[i].list), NULL, 0);
        json_object *o = tg_slice_storage_classes(list, rows[i].real);
        assert_string_equal(text(o), rows[i].want);
        json_object_put(o);
        json_object_put(list);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_lists),
        cmocka_unit_test(test_storage_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
