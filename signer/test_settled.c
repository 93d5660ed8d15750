/* test_settled.c - a settled record saves a reconcile only for exactly the
 * version and dependency it was made at, and only until its due time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/test_heap.h"
#include "signer/settled.h"

/* Each case: a record made at t=1000 for "tenant/ns/a" at rv "10" with deps
 * "c1:0" / "c2:0", due at 5000; then one check. */
typedef struct check_case {
    const char *what;
    const char *key, *rv, *dep;
    uint64_t now;
    uint64_t left;   /* expected result */
} check_case;

static const check_case check_cases[] = {
    {"same version and first dependency", "tenant/ns/a", "10", "c1:0", 2000, 3000},
    {"same version and second dependency", "tenant/ns/a", "10", "c2:0", 4999, 1},
    {"another version (someone else wrote)", "tenant/ns/a", "11", "c1:0", 2000, 0},
    {"another dependency (the CSR was issued)", "tenant/ns/a", "10", "c1:1", 2000, 0},
    {"no dependency seen", "tenant/ns/a", "10", NULL, 2000, 0},
    {"due time reached", "tenant/ns/a", "10", "c1:0", 5000, 0},
    {"another key", "tenant/ns/b", "10", "c1:0", 2000, 0},
    {"no version seen (not in the cache)", "tenant/ns/a", NULL, "c1:0", 2000, 0},
};

static void test_check_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
        const check_case *c = &check_cases[i];
        tg_settled *t = tg_settled_new();
        uint64_t left;

        assert_non_null(t);
        assert_int_equal(tg_settled_put(t, "tenant/ns/a", "10", "c1:0", "c2:0", 1000, 5000), 0);
        left = tg_settled_check(t, c->key, c->rv, c->dep, c->now);
        if (left != c->left)
            fail_msg("%s: left %llu, expected %llu", c->what, (unsigned long long)left, (unsigned long long)c->left);
        tg_settled_free(t);
    }
}

static void test_lagging_view_catches_up(void **state)
{
    tg_settled *t = tg_settled_new();

    (void)state;
    /* settled at version 2 (our write); the informer still shows version 1 */
    assert_int_equal(tg_settled_put(t, "k", "2", "d", NULL, 0, 100), 0);
    assert_int_equal(tg_settled_check(t, "k", "1", "d", 10), 0);
    /* ... then our write's event arrives: skipped */
    assert_int_equal(tg_settled_check(t, "k", "2", "d", 20), 80);
    /* past its due time the record is dropped */
    assert_int_equal(tg_settled_check(t, "k", "2", "d", 100), 0);
    assert_int_equal(tg_settled_count(t), 0);
    tg_settled_free(t);
}

static void test_put_replaces(void **state)
{
    tg_settled *t = tg_settled_new();

    (void)state;
    assert_int_equal(tg_settled_put(t, "k", "1", "d", NULL, 0, 100), 0);
    assert_int_equal(tg_settled_put(t, "k", "2", "e", NULL, 0, 200), 0);
    assert_int_equal(tg_settled_count(t), 1);
    assert_int_equal(tg_settled_check(t, "k", "2", "e", 50), 150);
    assert_int_equal(tg_settled_check(t, "k", "1", "d", 50), 0);
    tg_settled_free(t);
}

static void test_marks(void **state)
{
    tg_settled *t = tg_settled_new();
    char v[8];

    (void)state;
    assert_int_equal(tg_settled_mark(t, "pending/ns/a", "csr-abc", 0, 60000), 0);
    assert_int_equal(tg_settled_marked(t, "pending/ns/a", v, sizeof(v), 59999), 1);
    assert_string_equal(v, "csr-abc");
    assert_int_equal(tg_settled_marked(t, "pending/ns/a", v, 4, 59999), 1);
    assert_string_equal(v, "csr");   /* truncated, still terminated */
    assert_int_equal(tg_settled_marked(t, "pending/ns/b", v, sizeof(v), 10), 0);
    /* a mark is never a settled record: it has no version to match ... */
    assert_int_equal(tg_settled_check(t, "pending/ns/a", "1", "d", 10), 0);
    /* ... nor a record a mark */
    assert_int_equal(tg_settled_put(t, "r", "1", "d", NULL, 0, 100), 0);
    assert_int_equal(tg_settled_marked(t, "r", NULL, 0, 10), 0);
    assert_int_equal(tg_settled_marked(t, "pending/ns/a", NULL, 0, 60000), 0);
    assert_int_equal(tg_settled_count(t), 1);
    assert_int_equal(tg_settled_mark(t, "x", NULL, 0, 10), 0);
    assert_int_equal(tg_settled_marked(t, "x", v, sizeof(v), 0), 1);
    assert_string_equal(v, "");
    tg_settled_forget(t, "x");
    assert_int_equal(tg_settled_marked(t, "x", NULL, 0, 0), 0);
    tg_settled_free(t);
}

/* A mark's whole text, however long, as a copy of its own size: the kept
 * copy of an object is read this way. */
static void test_marked_text(void **state)
{
    tg_settled *t = tg_settled_new();
    char big[40000], *text;

    (void)state;
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(tg_settled_mark(t, "/apis/x/ns/a", big, 0, 30000), 0);
    assert_non_null(text = tg_settled_marked_text(t, "/apis/x/ns/a", 29999));
    assert_string_equal(text, big);
    free(text);
    assert_null(tg_settled_marked_text(t, "/apis/x/ns/b", 10));
    assert_int_equal(tg_settled_put(t, "r", "1", "d", NULL, 0, 100), 0);
    assert_null(tg_settled_marked_text(t, "r", 10));   /* a record is not a mark */
    assert_null(tg_settled_marked_text(t, "/apis/x/ns/a", 30000));   /* due: gone */
    assert_int_equal(tg_settled_count(t), 1);
    tg_settled_free(t);
}

static void test_expired_records_are_swept(void **state)
{
    tg_settled *t = tg_settled_new();
    char key[32];
    int i;

    (void)state;
    /* 2,000 objects settled once and never looked at again (deleted, say):
     * later puts sweep them, so the table does not keep the history */
    for (i = 0; i < 2000; i++) {
        snprintf(key, sizeof(key), "tenant/ns/%d", i);
        assert_int_equal(tg_settled_put(t, key, "1", "d", NULL, 0, 100), 0);
    }
    for (i = 0; i < 1024; i++) {
        snprintf(key, sizeof(key), "later/%d", i % 4);
        assert_int_equal(tg_settled_put(t, key, "1", "d", NULL, 1000, 5000), 0);
    }
    assert_true(tg_settled_count(t) <= 4 + 512);
    assert_int_equal(tg_settled_check(t, "later/3", "1", "d", 1000), 4000);
    tg_settled_free(t);
}

static void test_bad_arguments(void **state)
{
    tg_settled *t = tg_settled_new();

    (void)state;
    assert_int_equal(tg_settled_put(t, NULL, "1", "d", NULL, 0, 10), -1);
    assert_int_equal(tg_settled_put(t, "k", NULL, "d", NULL, 0, 10), -1);
    assert_int_equal(tg_settled_put(t, "k", "1", NULL, NULL, 0, 10), -1);
    assert_int_equal(tg_settled_check(t, NULL, "1", "d", 0), 0);
    assert_int_equal(tg_settled_count(t), 0);
    tg_settled_forget(t, NULL);
    tg_settled_free(t);
    tg_settled_free(NULL);
}

/* Issue 47: the table holds records for every object of a burst (a
 * Tenant's settle record, its pending CSR mark, ...): bound what one costs
 * beside its texts. glibc, 40,000 records of a 40-byte key, a version and a
 * 24-byte dependency: 209 bytes with json-c's linkhash and three strdups,
 * 141 with one allocation each in chains. */
#define RECS 40000
#define REC_MAX 180
static void test_bytes_per_record(void **state)
{
    char key[64], dep[32];
    size_t before, after;
    tg_settled *t;

    (void)state;
    before = tg_test_heap_in_use();
    t = tg_settled_new();
    for (int i = 0; i < RECS; i++) {
        snprintf(key, sizeof(key), "tenant/liqo-tenant-cl%05d/cl%05d", i, i);
        snprintf(dep, sizeof(dep), "liqo-identity-%05d:1:0", i);
        assert_int_equal(tg_settled_put(t, key, "123456", dep, NULL, 0, 60000), 0);
    }
    after = tg_test_heap_in_use();
    printf("[ settled  ] bytes per record: %zu\n", (after - before) / RECS);
    assert_int_equal(tg_settled_count(t), RECS);
    assert_int_equal(tg_settled_check(t, "tenant/liqo-tenant-cl00042/cl00042", "123456", "liqo-identity-00042:1:0", 1),
                     59999);
    if ((after - before) / RECS > REC_MAX)
        fail_msg("a settled record costs %zu bytes, over %d", (after - before) / RECS, REC_MAX);
    tg_settled_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_table),
        cmocka_unit_test(test_lagging_view_catches_up),
        cmocka_unit_test(test_put_replaces),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_marked_text),
        cmocka_unit_test(test_expired_records_are_swept),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_bytes_per_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
