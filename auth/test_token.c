/* test_token.c - the peering token (token.h): fresh tokens have the shape of
 * Liqo's and differ; the comparison matches only the very token. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include <sodium.h>

#include "auth/token.h"

static int setup(void **state)
{
    return sodium_init() < 0 ? -1 : 0;
}

static void test_new_tokens(void **state)
{
    char a[TG_AUTH_TOKEN_LEN + 1], b[TG_AUTH_TOKEN_LEN + 1];

    tg_auth_token_new(a);
    tg_auth_token_new(b);
    assert_int_equal(strlen(a), TG_AUTH_TOKEN_LEN);
    assert_true(tg_auth_token_well_formed(a, strlen(a)));
    assert_string_not_equal(a, b);
    assert_false(tg_auth_token_well_formed(a, 127));
    a[5] = 'g';
    assert_false(tg_auth_token_well_formed(a, TG_AUTH_TOKEN_LEN));
}

static void test_equal(void **state)
{
    char t[TG_AUTH_TOKEN_LEN + 1], u[TG_AUTH_TOKEN_LEN + 1];

    tg_auth_token_new(t);
    memcpy(u, t, sizeof(t));
    assert_true(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN, u, TG_AUTH_TOKEN_LEN));
    u[TG_AUTH_TOKEN_LEN - 1] ^= 1;                      /* last character */
    assert_false(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN, u, TG_AUTH_TOKEN_LEN));
    u[TG_AUTH_TOKEN_LEN - 1] ^= 1;
    u[0] ^= 1;                                          /* first character */
    assert_false(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN, u, TG_AUTH_TOKEN_LEN));
    /* prefixes and extensions are not the token */
    assert_false(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN, t, TG_AUTH_TOKEN_LEN - 1));
    assert_false(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN - 1, t, TG_AUTH_TOKEN_LEN));
    assert_false(tg_auth_token_equal(t, TG_AUTH_TOKEN_LEN, "", 0));
    /* an empty expected token never opens the door */
    assert_false(tg_auth_token_equal("", 0, "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_new_tokens), cmocka_unit_test(test_equal)};
    return cmocka_run_group_tests(tests, setup, NULL);
}
