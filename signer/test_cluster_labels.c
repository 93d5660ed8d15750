/* test_cluster_labels.c - --cluster-labels: what is taken, what is refused and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "signer/cluster_labels.h"

typedef struct labels_case {
    const char *what;
    const char *text;
    const char *want_json;   /* compact JSON of the map, or NULL: refused */
    const char *err_has;     /* with refused: a part of the message */
} labels_case;

static const labels_case cases[] = {
    {"empty", "", "{ }", NULL},
    {"one", "region=eu-west", "{ \"region\": \"eu-west\" }", NULL},
    {"two, prefixed key", "topology.kubernetes.io/zone=a1,tier=gold",
     "{ \"topology.kubernetes.io\\/zone\": \"a1\", \"tier\": \"gold\" }", NULL},
    {"empty value", "gpu=", "{ \"gpu\": \"\" }", NULL},
    {"63-character name", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=v",
     "{ \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": \"v\" }", NULL},
    {"no '='", "region", NULL, "expected key=value"},
    {"empty pair", "a=b,,c=d", NULL, "expected key=value"},
    {"trailing comma", "a=b,", NULL, "trailing"},
    {"empty key", "=v", NULL, "not a label key"},
    {"64-character name", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=v", NULL, "not a label key"},
    {"name ends with a dash", "tier-=gold", NULL, "not a label key"},
    {"space in the key", "my tier=gold", NULL, "not a label key"},
    {"upper case prefix", "Example.com/tier=gold", NULL, "not a label key"},
    {"empty prefix", "/tier=gold", NULL, "not a label key"},
    {"two slashes", "a/b/c=gold", NULL, "not a label key"},
    {"prefix label ends with a dash", "ex-.com/tier=gold", NULL, "not a label key"},
    {"value with a slash", "tier=gold/x", NULL, "not a label value"},
    {"value starts with a dot", "tier=.gold", NULL, "not a label value"},
    {"64-character value", "t=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL, "not a label value"},
    {"key given twice", "tier=gold,tier=silver", NULL, "given twice"},
    {"quote in the value", "tier=\"gold\"", NULL, "not a label value"},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const labels_case *c = &cases[i];
        char err[256] = "";
        json_object *got = tg_cluster_labels_parse(c->text, err, sizeof(err));

        if (c->want_json) {
            if (!got)
                fail_msg("%s: refused (%s)", c->what, err);
            if (strcmp(json_object_to_json_string_ext(got, JSON_C_TO_STRING_SPACED), c->want_json) != 0)
                fail_msg("%s: got %s, expected %s", c->what, json_object_to_json_string_ext(got, JSON_C_TO_STRING_SPACED),
                         c->want_json);
        } else {
            if (got)
                fail_msg("%s: taken as %s", c->what, json_object_to_json_string(got));
            if (!strstr(err, c->err_has))
                fail_msg("%s: message \"%s\" does not say \"%s\"", c->what, err, c->err_has);
        }
        json_object_put(got);
    }
}

static void test_at_most_the_limit(void **state)
{
    char text[TG_CLUSTER_LABELS_MAX * 12 + 16], err[256];
    size_t off = 0;
    json_object *got;

    (void)state;
    for (int i = 0; i <= TG_CLUSTER_LABELS_MAX; i++)
        off += (size_t)snprintf(text + off, sizeof(text) - off, "%sk%d=v", i ? "," : "", i);
    assert_null(tg_cluster_labels_parse(text, err, sizeof(err)));
    assert_non_null(strstr(err, "more than"));
    *strrchr(text, ',') = '\0';          /* exactly the limit */
    got = tg_cluster_labels_parse(text, err, sizeof(err));
    assert_non_null(got);
    assert_int_equal(json_object_object_length(got), TG_CLUSTER_LABELS_MAX);
    json_object_put(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_at_most_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
