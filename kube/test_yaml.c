/* test_yaml.c - YAML documents into json-c trees, and back out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/yaml.h"

/* "v: <scalar>" must decode to the JSON value `json` (compared as trees). */
typedef struct scalar_case {
    const char *yaml;
    const char *json;
} scalar_case;

static const scalar_case scalar_cases[] = {
    { "v: ~", "{\"v\":null}" },
    { "v:", "{\"v\":null}" },
    { "v: null", "{\"v\":null}" },
    { "v: Null", "{\"v\":null}" },
    { "v: NULL", "{\"v\":null}" },
    { "v: nULL", "{\"v\":\"nULL\"}" },
    { "v: true", "{\"v\":true}" },
    { "v: False", "{\"v\":false}" },
    { "v: TRUE", "{\"v\":true}" },
    { "v: yes", "{\"v\":\"yes\"}" },                 /* YAML 1.1 only: a string in 1.2 */
    { "v: off", "{\"v\":\"off\"}" },
    { "v: 42", "{\"v\":42}" },
    { "v: -17", "{\"v\":-17}" },
    { "v: +5", "{\"v\":5}" },
    { "v: 0o17", "{\"v\":15}" },
    { "v: 0x1F", "{\"v\":31}" },
    { "v: 017", "{\"v\":17}" },                       /* decimal in 1.2, not octal */
    { "v: 18446744073709551615", "{\"v\":18446744073709551615}" },   /* uint64 max */
    { "v: -9223372036854775808", "{\"v\":-9223372036854775808}" },
    { "v: 1.5", "{\"v\":1.5}" },
    { "v: -2e3", "{\"v\":-2000.0}" },
    { "v: .5", "{\"v\":0.5}" },
    { "v: 1_000", "{\"v\":\"1_000\"}" },
    { "v: 0b101", "{\"v\":\"0b101\"}" },
    { "v: '42'", "{\"v\":\"42\"}" },
    { "v: \"true\"", "{\"v\":\"true\"}" },
    { "v: 'null'", "{\"v\":\"null\"}" },
    { "v: ''", "{\"v\":\"\"}" },
    { "v: !!str 7", "{\"v\":\"7\"}" },
    { "v: hello world", "{\"v\":\"hello world\"}" },
    { "v: 1.2.3", "{\"v\":\"1.2.3\"}" },
    { "v: \"caf\\u00e9\"", "{\"v\":\"caf\\u00e9\"}" },
    { "v: |\n  a\n  b\n", "{\"v\":\"a\\nb\\n\"}" },
    { "v: >-\n  a\n  b\n", "{\"v\":\"a b\"}" },
    { "1: x", "{\"1\":\"x\"}" },                       /* keys are always text */
    { "v: [a, 1, {b: c}]", "{\"v\":[\"a\",1,{\"b\":\"c\"}]}" },
    { "- a\n- b: 1\n  c: [ ]\n", "[\"a\",{\"b\":1,\"c\":[]}]" },
    { "---\nv: 1\n...\n", "{\"v\":1}" },
    { "# comment\nv: 1 # trailing\n", "{\"v\":1}" },
};

static void test_scalar_typing(void **state)
{
    for (size_t i = 0; i < sizeof(scalar_cases) / sizeof(scalar_cases[0]); i++) {
        const scalar_case *c = &scalar_cases[i];
        char err[256];
        json_object *got = tg_yaml_parse(c->yaml, strlen(c->yaml), err, sizeof(err));
        json_object *want = json_tokener_parse(c->json);

        if (got == NULL)
            fail_msg("yaml \"%s\": %s", c->yaml, err);
        assert_non_null(want);
        if (!json_object_equal(got, want))
            fail_msg("yaml \"%s\": got %s, want %s", c->yaml, json_object_to_json_string(got),
                     c->json);
        json_object_put(got);
        json_object_put(want);
    }
}

static void test_special_floats(void **state)
{
    const char *text = "a: .inf\nb: -.Inf\nc: .NaN\n";
    json_object *obj = tg_yaml_parse(text, strlen(text), NULL, 0);
    json_object *v;

    assert_non_null(obj);
    assert_true(json_object_object_get_ex(obj, "a", &v));
    assert_true(isinf(json_object_get_double(v)) && json_object_get_double(v) > 0);
    assert_true(json_object_object_get_ex(obj, "b", &v));
    assert_true(isinf(json_object_get_double(v)) && json_object_get_double(v) < 0);
    assert_true(json_object_object_get_ex(obj, "c", &v));
    assert_true(isnan(json_object_get_double(v)));
    json_object_put(obj);
}

typedef struct reject_case {
    const char *name;
    const char *yaml;
    size_t len;              /* 0: strlen */
    const char *err_has;
} reject_case;

static const reject_case reject_cases[] = {
    { "alias", "a: &x [1, 2]\nb: *x\n", 0, "anchors and aliases" },
    { "anchor alone", "a: &x 1\n", 0, "line 1:4: anchors and aliases" },
    { "billion laughs",
      "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\n", 0, "anchors" },
    { "merge key", "a: 1\n<<: {b: 2}\n", 0, "line 2:1: merge keys" },
    { "duplicate key", "a: 1\nb: 2\na: 3\n", 0, "line 3:1: duplicate key \"a\"" },
    { "duplicate key quoted", "a: 1\n'a': 2\n", 0, "duplicate key" },
    { "complex key", "? [a]\n: 1\n", 0, "scalar mapping keys" },
    { "two documents", "a: 1\n---\nb: 2\n", 0, "one document" },
    { "empty", "", 0, "no YAML document" },
    { "comment only", "# nothing\n", 0, "no YAML document" },
    { "null document", "~\n", 0, "null" },
    { "binary tag", "a: !!binary aGk=\n", 0, "tag" },
    { "custom tag", "a: !foo x\n", 0, "tag" },
    { "invalid utf-8", "a: \xff\n", 0, "byte offset 3: invalid leading UTF-8" },
    { "utf-16 BOM", "\xff\xfe" "a\0:\0 \0" "1\0", 8, "byte offset 0" },
    { "bad indentation", "a:\n  b: 1\n c: 2\n", 0, "line 3" },
    { "unclosed flow", "a: [1, 2\n", 0, "line" },
    { "tab indentation", "a:\n\tb: 1\n", 0, "line 2" },
    { "NUL in text", "a: b\0c\n", 7, "byte offset 4" },
    { "NUL in key", "\"a\\0b\": 1\n", 0, "NUL" },
};

static void test_rejects(void **state)
{
    for (size_t i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++) {
        const reject_case *c = &reject_cases[i];
        char err[256] = "";
        size_t len = c->len ? c->len : strlen(c->yaml);
        json_object *obj = tg_yaml_parse(c->yaml, len, err, sizeof(err));

        if (obj != NULL)
            fail_msg("case \"%s\": accepted as %s", c->name, json_object_to_json_string(obj));
        if (strstr(err, c->err_has) == NULL)
            fail_msg("case \"%s\": error \"%s\" does not mention \"%s\"", c->name, err,
                     c->err_has);
    }
}

static void test_limits(void **state)
{
    char err[256];
    size_t depth = TG_DOC_MAX_DEPTH + 1, n = 0;
    char *deep = malloc(depth * 2 + 8);
    char *many, *big;
    size_t len;
    json_object *obj;

    /* [[[...]]] one level too deep, then exactly at the limit */
    for (size_t i = 0; i < depth; i++)
        deep[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[n++] = ']';
    assert_null(tg_yaml_parse(deep, n, err, sizeof(err)));
    assert_non_null(strstr(err, "nesting"));
    obj = tg_yaml_parse(deep + 1, n - 2, err, sizeof(err));
    assert_non_null(obj);
    json_object_put(obj);
    free(deep);

    /* too many nodes: "[0,0,0,...]" */
    len = (TG_YAML_MAX_NODES + 10) * 2 + 2;
    many = malloc(len);
    many[0] = '[';
    for (size_t i = 1; i + 1 < len; i += 2) {
        many[i] = '0';
        many[i + 1] = ',';
    }
    many[len - 1] = ']';
    assert_null(tg_yaml_parse(many, len, err, sizeof(err)));
    assert_non_null(strstr(err, "nodes"));
    free(many);

    big = malloc(TG_DOC_MAX_BYTES + 1);
    memset(big, 'a', TG_DOC_MAX_BYTES + 1);
    assert_null(tg_yaml_parse(big, TG_DOC_MAX_BYTES + 1, err, sizeof(err)));
    assert_non_null(strstr(err, "limit"));
    free(big);
}

static void test_doc_parse_dispatch(void **state)
{
    char err[256];
    const char *json_dup = "  \n{\"a\":1,\"a\":2}";
    const char *yaml = "a: 1\n";
    const char *json_like_yaml = "a: {\"b\": [1]}\n";
    json_object *obj;

    /* JSON goes to the strict JSON parser: its error names a byte offset */
    assert_null(tg_doc_parse(json_dup, strlen(json_dup), err, sizeof(err)));
    assert_non_null(strstr(err, "byte offset"));
    assert_null(tg_doc_parse("[1] x", 5, err, sizeof(err)));
    obj = tg_doc_parse(yaml, strlen(yaml), err, sizeof(err));
    assert_non_null(obj);
    json_object_put(obj);
    obj = tg_doc_parse(json_like_yaml, strlen(json_like_yaml), err, sizeof(err));
    assert_non_null(obj);
    assert_int_equal(json_object_get_type(json_object_object_get(obj, "a")), json_type_object);
    json_object_put(obj);
}

/* emit -> parse gives back the same tree, for values chosen to trip a naive
 * emitter: strings that look like other types, special characters, nesting. */
static void test_emit_round_trip(void **state)
{
    const char *json =
        "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Tenant\","
        "\"s\":[\"true\",\"yes\",\"no\",\"on\",\"null\",\"~\",\"\",\"42\",\"0x1F\",\"1.5\","
        "\".inf\",\"- a\",\"a: b\",\"#x\",\"x #y\",\"line1\\nline2\",\" lead\",\"trail \","
        "\"tab\\tin\",\"quote'\\\"\",\"caf\\u00e9\",\"nul\\u0000byte\",\"[x]\",\"{y}\",\"*z\","
        "\"&a\",\"!t\",\"%p\",\"@q\",\"`r\",\"|\",\">\",\"?\",\"-\",\"<<\"],"
        "\"n\":[0,-1,9007199254740993,18446744073709551615,-9223372036854775808,1.5,"
        "-2.5e-300,1e400,true,false,null],"
        "\"empty\":{\"a\":[],\"o\":{}},\"nested\":[[1,[2]],{\"k\":{\"k\":[{\"k\":1}]}}],"
        "\"long\":\"" "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
        "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\","
        "\"weird key: #\":1,\"true\":2,\"1\":3,\"<<\":4}";
    char err[256];
    json_object *in = tg_json_parse(json, strlen(json), err, sizeof(err));
    json_object *back;
    size_t len = 0;
    char *yaml;

    if (in == NULL)
        fail_msg("fixture: %s", err);
    yaml = tg_yaml_emit(in, &len);
    assert_non_null(yaml);
    assert_int_equal(strlen(yaml), len);
    /* kubectl style: block mappings, no document markers, long lines kept */
    {
        const char *head = "apiVersion: authentication.liqo.io/v1beta1\nkind: Tenant\n";

        assert_memory_equal(yaml, head, strlen(head));
    }
    assert_null(strstr(yaml, "---"));
    assert_non_null(strstr(yaml, "\nlong: QUFBQUFB"));
    assert_non_null(strstr(yaml, "\n- 'true'\n"));
    assert_non_null(strstr(yaml, "\n- |-\n  line1\n  line2\n"));   /* literal block */
    assert_non_null(strstr(yaml, "\n'<<': 4\n"));   /* a plain << key would be a merge key */
    back = tg_yaml_parse(yaml, len, err, sizeof(err));
    if (back == NULL)
        fail_msg("re-parse: %s\n%s", err, yaml);
    if (!json_object_equal(in, back))
        fail_msg("round trip differs:\n%s\n%s", json_object_to_json_string(in),
                 json_object_to_json_string(back));
    free(yaml);
    json_object_put(in);
    json_object_put(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_typing),
        cmocka_unit_test(test_special_floats),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_doc_parse_dispatch),
        cmocka_unit_test(test_emit_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
