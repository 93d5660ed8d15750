/* test_json.c - strict JSON parsing: what must be refused and what must not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

typedef struct parse_case {
    const char *name;
    const char *text;
    size_t len;             /* 0: strlen(text) */
    int ok;
    const char *err_has;    /* substring of the error when !ok */
} parse_case;

static const parse_case parse_cases[] = {
    { "object", "{\"a\":1}", 0, 1, NULL },
    { "surrounding whitespace", " \n{\"a\":[1,2,{}]}\r\n ", 0, 1, NULL },
    { "top-level number", "42", 0, 1, NULL },
    { "top-level string", "\"x\"", 0, 1, NULL },
    { "escaped control char", "{\"a\":\"x\\ty\"}", 0, 1, NULL },
    { "unicode escape", "{\"a\":\"\\u00e9\"}", 0, 1, NULL },
    { "valid utf-8", "{\"a\":\"\xc3\xa9\"}", 0, 1, NULL },
    { "invalid utf-8", "{\"a\":\"\xff\"}", 0, 0, "utf-8" },
    { "overlong utf-8", "{\"a\":\"\xc0\xaf\"}", 0, 0, "utf-8" },
    { "overlong 3-byte utf-8", "{\"a\":\"\xe0\x80\xaf\"}", 0, 0, "utf-8" },
    { "utf-16 surrogate in utf-8", "{\"a\":\"\xed\xa0\x80\"}", 0, 0, "utf-8" },
    { "beyond U+10FFFF", "{\"a\":\"\xf4\x90\x80\x80\"}", 0, 0, "utf-8" },
    { "truncated utf-8", "{\"a\":\"\xe2\x82\"}", 0, 0, "utf-8" },
    { "4-byte utf-8", "{\"\xf0\x9f\x98\x80\":\"\xe2\x82\xac\"}", 0, 1, NULL },
    { "trailing garbage", "{\"a\":1} x", 0, 0, "offset 8" },
    { "two documents", "{\"a\":1}{\"b\":2}", 0, 0, "offset 7" },
    { "embedded NUL after document", "{\"a\":1}\0zz", 10, 0, "offset" },
    { "truncated", "{\"a\":[1,2", 0, 0, "offset" },
    { "empty", "", 0, 0, "empty document" },
    { "only spaces", " \n ", 0, 0, "empty document" },
    { "lone minus", "-", 0, 0, "offset" },
    { "null document", "null", 0, 0, "null" },
    { "single quotes", "{'a':1}", 0, 0, "offset 1" },
    { "trailing comma", "{\"a\":1,}", 0, 0, "offset" },
    { "comment", "{\"a\":1 /* c */}", 0, 0, "offset" },
    { "bare word", "{\"a\":yes}", 0, 0, "offset" },
    { "NaN", "{\"a\":NaN}", 0, 0, "offset" },
    { "leading zero", "{\"a\":01}", 0, 0, "offset" },
    { "double zero", "[00]", 0, 0, "offset 1" },
    { "negative leading zero", "[-01]", 0, 0, "offset 1" },
    { "dot without digits", "[1.]", 0, 0, "offset 1" },
    { "Infinity", "[Infinity]", 0, 0, "offset 1" },
    { "minus Infinity", "{\"a\":-Infinity}", 0, 0, "offset 5" },
    { "numbers", "[0,-0,1.5,-2e10,3E+2,4e-1,12345678901234567890]", 0, 1, NULL },
    { "literals", "[true,false,null]", 0, 1, NULL },
    { "duplicate key", "{\"a\":1,\"a\":2}", 0, 0, "duplicate key \"a\"" },
    { "duplicate key by escape", "{\"a\":1,\"\\u0061\":2}", 0, 0, "duplicate key \"a\"" },
    { "nested duplicate key", "{\"s\":{\"x\":1,\"y\":[{\"k\":1,\"k\":1}]}}", 0, 0, "duplicate" },
    { "same key in sibling objects", "{\"a\":{\"k\":1},\"b\":{\"k\":2},\"k\":[\"k\",\"k\"]}", 0, 1,
      NULL },
    { "key-like strings in arrays", "[\"a\",\"a\"]", 0, 1, NULL },
    { "brace inside string", "{\"a\":\"{\\\"a\\\":1,\",\"b\":\"}\"}", 0, 1, NULL },
    { "raw tab in string", "{\"a\":\"x\ty\"}", 0, 0, "control character 0x09" },
    { "raw newline in key", "{\"a\nb\":1}", 0, 0, "control character 0x0a" },
    { "exponent without digits", "[1e]", 0, 0, "offset" },
    { "signed exponent without digits", "[1E+]", 0, 0, "offset" },
    { "fraction then exponent", "[-0.25e-07]", 0, 1, NULL },
    { "duplicate key, both escaped", "{\"\\u0062\":1,\"\\u0062\":2}", 0, 0, "duplicate key \"b\"" },
    { "escaped key differs", "{\"a\":1,\"\\u0062\":2}", 0, 1, NULL },
    { "duplicate key after a nested object", "{\"a\":{\"b\":1},\"a\":2}", 0, 0, "duplicate key \"a\"" },
};

/* Many keys: the duplicate check grows past its first table and stays
 * exact - distinct keys pass, one repeat anywhere is refused, and the same
 * keys in sibling objects are not duplicates. */
static char *many_keys(size_t n, int repeat_first, int siblings)
{
    size_t cap = n * 32 + 64, len = 0;
    char *s = malloc(cap);

    assert_non_null(s);
    len += (size_t)snprintf(s + len, cap - len, siblings ? "[" : "{");
    for (size_t i = 0; i < n; i++) {
        if (siblings)
            len += (size_t)snprintf(s + len, cap - len, "%s{\"k\":%zu,\"v\":1}", i ? "," : "", i);
        else
            len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
    }
    if (repeat_first)
        len += (size_t)snprintf(s + len, cap - len, ",\"k0\":0");
    snprintf(s + len, cap - len, siblings ? "]" : "}");
    return s;
}

static void test_many_keys(void **state)
{
    static const struct {
        size_t n;
        int repeat_first, siblings, ok;
    } cases[] = {
        {5000, 0, 0, 1},
        {5000, 1, 0, 0},
        {3000, 0, 1, 1},
        {100, 1, 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        char *text = many_keys(cases[i].n, cases[i].repeat_first, cases[i].siblings);
        json_object *obj = tg_json_parse(text, strlen(text), err, sizeof(err));

        if (cases[i].ok) {
            assert_non_null(obj);
        } else {
            assert_null(obj);
            assert_non_null(strstr(err, "duplicate key \"k0\""));
        }
        json_object_put(obj);
        free(text);
    }
}

static void test_parse_table(void **state)
{
    for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
        const parse_case *c = &parse_cases[i];
        char err[256] = "";
        size_t len = c->len ? c->len : strlen(c->text);
        json_object *obj = tg_json_parse(c->text, len, err, sizeof(err));

        if (c->ok != (obj != NULL))
            fail_msg("case \"%s\": expected %s, got %s (%s)", c->name,
                     c->ok ? "success" : "an error", obj ? "success" : "an error", err);
        if (!c->ok && strstr(err, c->err_has) == NULL)
            fail_msg("case \"%s\": error \"%s\" does not mention \"%s\"", c->name, err,
                     c->err_has);
        json_object_put(obj);
    }
}

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 1);

    for (int i = 0; i < depth; i++) {
        s[i] = '[';
        s[depth * 2 - 1 - i] = ']';
    }
    s[depth * 2] = '\0';
    return s;
}

static void test_depth_limit(void **state)
{
    char err[256];
    char *ok = nested(TG_DOC_MAX_DEPTH - 1);
    char *deep = nested(TG_DOC_MAX_DEPTH + 1);
    char *very_deep = nested(100000);
    json_object *obj;

    obj = tg_json_parse(ok, strlen(ok), err, sizeof(err));
    assert_non_null(obj);
    json_object_put(obj);
    assert_null(tg_json_parse(deep, strlen(deep), err, sizeof(err)));
    assert_non_null(strstr(err, "nesting"));
    assert_null(tg_json_parse(very_deep, strlen(very_deep), err, sizeof(err)));
    free(ok);
    free(deep);
    free(very_deep);
}

static void test_size_limit(void **state)
{
    char err[256];
    size_t len = TG_DOC_MAX_BYTES + 1;
    char *big = malloc(len);

    memset(big, ' ', len);
    big[0] = '"';
    big[len - 1] = '"';
    assert_null(tg_json_parse(big, len, err, sizeof(err)));
    assert_non_null(strstr(err, "limit"));
    free(big);
}

static void test_keys_are_case_sensitive(void **state)
{
    const char *text = "{\"Spec\":{\"csr\":\"a\"},\"spec\":{\"CSR\":\"b\",\"csr\":\"c\"}}";
    json_object *obj = tg_json_parse(text, strlen(text), NULL, 0);

    assert_non_null(obj);
    assert_string_equal(tg_json_path_string(obj, "spec", "csr", NULL), "c");
    assert_string_equal(tg_json_path_string(obj, "Spec", "csr", NULL), "a");
    assert_string_equal(tg_json_path_string(obj, "spec", "CSR", NULL), "b");
    assert_null(tg_json_path(obj, "SPEC", NULL));
    json_object_put(obj);
}

static void test_lookups(void **state)
{
    const char *text = "{\"a\":{\"b\":{\"c\":\"deep\"},\"n\":1,\"z\":\"x\\u0000y\",\"nul\":null},"
                       "\"s\":\"top\"}";
    json_object *obj = tg_json_parse(text, strlen(text), NULL, 0);

    assert_non_null(obj);
    assert_string_equal(tg_json_string(obj, "s"), "top");
    assert_null(tg_json_string(obj, "a"));                  /* an object, not a string */
    assert_null(tg_json_string(obj, "missing"));
    assert_ptr_equal(tg_json_path(obj, NULL), obj);
    assert_non_null(tg_json_path(obj, "a", "b", NULL));
    assert_string_equal(tg_json_path_string(obj, "a", "b", "c", NULL), "deep");
    assert_null(tg_json_path(obj, "a", "b", "c", "d", NULL));   /* through a string */
    assert_null(tg_json_path(obj, "a", "x", "c", NULL));
    assert_null(tg_json_path_string(obj, "a", "n", NULL));      /* a number */
    assert_null(tg_json_path_string(obj, "a", "z", NULL));      /* embedded NUL */
    assert_null(tg_json_path_string(obj, "a", "nul", NULL));
    assert_null(tg_json_string(NULL, "a"));
    json_object_put(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_keys_are_case_sensitive),
        cmocka_unit_test(test_lookups),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
