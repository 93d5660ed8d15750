/* test_nonce.c - the provider's challenge text. */
#include "test_helpers.h"

#include "pki/nonce.h"

static void test_generate(void **state)
{
    char a[TG_NONCE_TEXT_LEN + 1], b[TG_NONCE_TEXT_LEN + 1];
    size_t raw_len;
    unsigned char *raw;

    memset(a, 'x', sizeof(a));
    assert_int_equal(tg_nonce_generate(a), 0);
    assert_int_equal(tg_nonce_generate(b), 0);
    assert_int_equal(strlen(a), TG_NONCE_TEXT_LEN);
    assert_string_equal(a + 86, "==");
    assert_true(tg_nonce_text_valid(a, strlen(a)));
    assert_string_not_equal(a, b);   /* 512 bits of CSPRNG output never repeat */
    raw = th_b64_decode(a, &raw_len);
    assert_non_null(raw);
    assert_int_equal(raw_len, TG_NONCE_RAW_LEN);
    free(raw);
}

static void test_text_valid(void **state)
{
    static const char seed[] =
        "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";
    char buf[128];
    static const struct {
        const char *desc;
        int at;         /* index to overwrite, -1 for none */
        char with;
        int len_delta;  /* length change */
        int valid;
    } cases[] = {
        {"seed nonce", -1, 0, 0, 1},
        {"one short", -1, 0, -1, 0},
        {"one long", -1, 0, +1, 0},
        {"url-safe char", 10, '-', 0, 0},
        {"space inside", 10, ' ', 0, 0},
        {"newline inside", 40, '\n', 0, 0},
        {"no padding", 87, 'A', 0, 0},
        {"padding early", 20, '=', 0, 0},
        {"NUL inside", 5, '\0', 0, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(seed);
        memcpy(buf, seed, len + 1);
        if (cases[i].at >= 0)
            buf[cases[i].at] = cases[i].with;
        if (cases[i].len_delta > 0) {
            memmove(buf + 1, buf, len + 1);
            buf[0] = 'A';
        }
        len = (size_t)((long)len + cases[i].len_delta);
        print_message("%s\n", cases[i].desc);
        assert_int_equal(tg_nonce_text_valid(buf, len), cases[i].valid);
    }
    assert_int_equal(tg_nonce_text_valid(NULL, 88), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_text_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
