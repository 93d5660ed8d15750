/* test_strtab.c - the pointer set against a plain array of what it should
 * hold, through growth and through takes that shift runs back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strtab.h"

#define N 5000

typedef struct item {
    int in;          /* in the table, by the model */
    char key[24];
} item;

static const char *key_of(const void *it)
{
    return ((const item *)it)->key;
}

/* Every item is found exactly when the model has it in, and a walk sees
 * each held item once. */
static void check_against_model(tg_strtab *t, item *items, size_t n)
{
    size_t held = 0, walked = 0, at = 0;
    unsigned char *seen = calloc(n, 1);
    void *it;

    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(tg_strtab_get(t, items[i].key), items[i].in ? &items[i] : NULL);
        held += items[i].in;
    }
    assert_int_equal(tg_strtab_count(t), held);
    while ((it = tg_strtab_next(t, &at)) != NULL) {
        size_t i = (size_t)((item *)it - items);
        assert_true(i < n && items[i].in && !seen[i]);
        seen[i] = 1;
        walked++;
    }
    assert_int_equal(walked, held);
    free(seen);
}

static void test_add_take_and_walk_follow_the_model(void **state)
{
    tg_strtab *t = tg_strtab_new(key_of);
    item *items = calloc(N, sizeof(*items));
    unsigned r = 12345;

    (void)state;
    assert_non_null(t);
    assert_non_null(items);
    for (size_t i = 0; i < N; i++)
        snprintf(items[i].key, sizeof(items[i].key), "liqo-tenant-%zu/x", i);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(tg_strtab_add(t, &items[i]), 0);
        items[i].in = 1;
    }
    check_against_model(t, items, N);
    /* take two in three, in a scattered order, then add half of them back */
    for (size_t k = 0; k < 3 * N; k++) {
        r = r * 1103515245u + 12345u;
        size_t i = (r >> 8) % N;
        if (items[i].in && i % 3 != 0) {
            assert_ptr_equal(tg_strtab_take(t, items[i].key), &items[i]);
            items[i].in = 0;
        } else if (!items[i].in && k % 2 == 0) {
            assert_int_equal(tg_strtab_add(t, &items[i]), 0);
            items[i].in = 1;
        }
        if (k % 997 == 0)
            check_against_model(t, items, N);
    }
    check_against_model(t, items, N);
    assert_null(tg_strtab_take(t, "liqo-tenant-none/x"));
    assert_null(tg_strtab_get(t, ""));
    tg_strtab_free(t);
    free(items);
}

/* Two tables hash the same keys to different slots: their walks differ. */
static void test_each_table_has_its_own_seed(void **state)
{
    tg_strtab *a = tg_strtab_new(key_of), *b = tg_strtab_new(key_of);
    item items[64];
    size_t at_a = 0, at_b = 0;
    int differ = 0;

    (void)state;
    for (size_t i = 0; i < 64; i++) {
        snprintf(items[i].key, sizeof(items[i].key), "rb-%zu", i);
        assert_int_equal(tg_strtab_add(a, &items[i]), 0);
        assert_int_equal(tg_strtab_add(b, &items[i]), 0);
    }
    for (size_t i = 0; i < 64; i++)
        differ |= tg_strtab_next(a, &at_a) != tg_strtab_next(b, &at_b);
    assert_true(differ);
    tg_strtab_free(a);
    tg_strtab_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_take_and_walk_follow_the_model),
        cmocka_unit_test(test_each_table_has_its_own_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
