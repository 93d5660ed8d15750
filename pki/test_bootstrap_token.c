/* test_bootstrap_token.c - token form, parsing of hostile text, hashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "pki/bootstrap_token.h"

static void test_generated_tokens_parse_back_and_differ(void **state)
{
    tg_btoken a, b, back;
    char text[TG_BTOKEN_LEN + 1], why[160];

    (void)state;
    assert_int_equal(tg_btoken_generate(&a), 0);
    assert_int_equal(tg_btoken_generate(&b), 0);
    tg_btoken_format(&a, text);
    assert_int_equal(strlen(text), TG_BTOKEN_LEN);
    assert_int_equal(tg_btoken_parse(text, strlen(text), &back, why, sizeof(why)), 0);
    assert_string_equal(back.id, a.id);
    assert_string_equal(back.secret, a.secret);
    assert_true(tg_btoken_id_valid(a.id, strlen(a.id)));
    assert_string_not_equal(a.secret, b.secret);
}

static void test_malformed_tokens_are_refused_without_echo(void **state)
{
    static const char *bad[] = {
        "", "abcdef", "abcdef.", "abcdef.0123456789abcdef0123456789abcde",      /* 31 */
        "abcdef.0123456789abcdef0123456789abcdef0",                              /* 33 */
        "ABCDEF.0123456789abcdef0123456789abcdef", "abcdef-0123456789abcdef0123456789abcdef",
        "abcde.f0123456789abcdef0123456789abcdef", "abcdef.0123456789abcdef0123456789abcde\n",
        "abcdef.0123456789abcdef0123456789abcd%f",
    };
    tg_btoken t;
    char why[160];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        assert_int_equal(tg_btoken_parse(bad[i], strlen(bad[i]), &t, why, sizeof(why)), -1);
        assert_non_null(strstr(why, "ID.SECRET"));
        if (strlen(bad[i]) > 8)
            assert_null(strstr(why, bad[i] + 7));
    }
    /* an embedded NUL: the length given is what counts */
    assert_int_equal(tg_btoken_parse("abcdef.0123456789abcdef\0" "123456789abcdef", TG_BTOKEN_LEN, &t, why,
                                     sizeof(why)), -1);
    assert_int_equal(tg_btoken_parse(NULL, 0, &t, why, sizeof(why)), -1);
}

static void test_secret_matches_only_its_hash(void **state)
{
    char hex[TG_BTOKEN_HASH_HEX_LEN + 1];
    const char *secret = "0123456789abcdef0123456789abcdef";

    (void)state;
    tg_btoken_hash_hex(secret, hex);
    /* sha256("0123456789abcdef0123456789abcdef"), from `printf %s ... | sha256sum` */
    assert_string_equal(hex, "3eb1bd439947eb762998e566ccc2e099c791118b2f40579cc4f7da2b5061b7f9");
    assert_true(tg_btoken_secret_matches(hex, secret));
    assert_false(tg_btoken_secret_matches(hex, "0123456789abcdef0123456789abcdee"));
    assert_false(tg_btoken_secret_matches("", secret));
    assert_false(tg_btoken_secret_matches(NULL, secret));
    hex[10] = hex[10] == 'a' ? 'b' : 'a';
    assert_false(tg_btoken_secret_matches(hex, secret));
    assert_false(tg_btoken_id_valid("abc", 3));
    assert_false(tg_btoken_id_valid("abcDef", 6));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_tokens_parse_back_and_differ),
        cmocka_unit_test(test_malformed_tokens_are_refused_without_echo),
        cmocka_unit_test(test_secret_matches_only_its_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
