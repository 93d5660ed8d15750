/* test_flag_table.c - the flag table: values to take(), the exit statuses,
 * and --help made from the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/flag_table.h"
#include "common/flags.h"

typedef struct got {
    const char *path;
    long n;
    int on, bool_seen;
    const char *bool_value;
} got;

enum { F_PATH, F_N, F_ON, F_BOOL };

static int take(void *ctx, int id, const char *v)
{
    got *g = ctx;

    switch (id) {
    case F_PATH: g->path = v; return 0;
    case F_N: return tg_flag_long(v, 1, 9, &g->n);
    case F_ON: g->on = 1; return 0;
    case F_BOOL: g->bool_seen = 1; g->bool_value = v; return 0;
    }
    return -1;
}

static const tg_flag rows[] = {
    {"path", TG_FLAG_REQUIRED, "FILE", F_PATH, "a file", NULL},
    {"n", TG_FLAG_REQUIRED, "N", F_N, "a number\nfrom 1 to 9", "expected 1 to 9"},
    {"on", TG_FLAG_NONE, NULL, F_ON, "switch it on", NULL},
    {"a-rather-long-boolean-flag", TG_FLAG_OPTIONAL, "true|false", F_BOOL, "bare means true", NULL},
};

static const tg_flag_program prog = {"prog", "[options]", "What it does.", rows, 4, take};

static int parse(got *g, int argc, const char **argv)
{
    memset(g, 0, sizeof(*g));
    return tg_flags_parse(&prog, argc, (char **)argv, g);
}

static void test_values_reach_take(void **state)
{
    const char *argv[] = {"prog", "--path", "/x", "--n=3", "--on", "--a-rather-long-boolean-flag", NULL};
    const char *argv2[] = {"prog", "--a-rather-long-boolean-flag=false", NULL};
    got g;

    (void)state;
    assert_int_equal(parse(&g, 6, argv), -1);
    assert_string_equal(g.path, "/x");
    assert_int_equal(g.n, 3);
    assert_int_equal(g.on, 1);
    assert_int_equal(g.bool_seen, 1);
    assert_null(g.bool_value);
    assert_int_equal(parse(&g, 2, argv2), -1);
    assert_string_equal(g.bool_value, "false");
}

static void test_exit_statuses(void **state)
{
    const char *bad[] = {"prog", "--n", "10", NULL};
    const char *unknown[] = {"prog", "--nope", NULL};
    const char *operand[] = {"prog", "stray", NULL};
    const char *missing[] = {"prog", "--path", NULL};
    got g;

    (void)state;
    assert_int_equal(parse(&g, 3, bad), 2);
    assert_int_equal(parse(&g, 2, unknown), 2);
    assert_int_equal(parse(&g, 2, operand), 2);
    assert_int_equal(parse(&g, 2, missing), 2);
}

static void test_help_from_the_rows(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    (void)state;
    assert_non_null(f);
    tg_flags_usage(&prog, f);
    fclose(f);
    assert_string_equal(text, "usage: prog [options]\n"
                              "\n"
                              "What it does.\n"
                              "\n"
                              "  --path FILE               a file\n"
                              "  --n N                     a number\n"
                              "                            from 1 to 9\n"
                              "  --on                      switch it on\n"
                              "  --a-rather-long-boolean-flag[=true|false]  bare means true\n"
                              "  -h, --help\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_reach_take),
        cmocka_unit_test(test_exit_statuses),
        cmocka_unit_test(test_help_from_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
