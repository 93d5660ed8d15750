/* test_binding_index.c - the subject -> bindings index of the approver's
 * NameBound check: what it finds, what it forgets, and what it costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/test_heap.h"
#include "kube/cache.h"
#include "kube/json.h"
#include "signer/binding_index.h"

#define SUBJECTS 1000


/* A RoleBinding ns/name binding User user to ClusterRole edit, or the
 * ClusterRoleBinding name when ns is NULL: made by nobody tenantgate knows. */
static json_object *binding(const char *ns, const char *name, const char *user)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\"%s%s%s,\"resourceVersion\":\"1\"},"
             "\"subjects\":[{\"kind\":\"User\",\"name\":\"%s\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"edit\"}}",
             name, ns ? ",\"namespace\":\"" : "", ns ? ns : "", ns ? "\"" : "", user);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

static void put(tg_cache *c, json_object *o)
{
    tg_watch_event ev = {TG_WATCH_ADDED, o};
    char err[200];
    assert_int_equal(tg_cache_apply(c, &ev, NULL, err, sizeof(err)), TG_CACHE_OK);
}

/* Found by either binding while either names the subject; forgotten when
 * both went; a key noted twice is one key. */
static void test_finds_and_forgets(void **state)
{
    tg_binding_index *x = tg_binding_index_new();
    tg_cache *rb = tg_cache_new(NULL), *crb = tg_cache_new(NULL);
    json_object *a = binding("ns1", "rb1", "cl1"), *b = binding(NULL, "crb1", "cl1");
    char where[200] = "";
    (void)state;

    assert_non_null(x);
    put(rb, a);
    put(crb, b);
    tg_binding_index_note(x, a, 0);
    tg_binding_index_note(x, a, 0);
    tg_binding_index_note(x, b, 0);
    assert_int_equal(tg_binding_index_foreign(x, rb, crb, "cl1", where, sizeof(where)), 1);
    assert_string_equal(where, "RoleBinding ns1/rb1");
    assert_int_equal(tg_binding_index_foreign(x, rb, crb, "cl2", where, sizeof(where)), 0);
    tg_binding_index_note(x, a, 1);
    assert_int_equal(tg_binding_index_foreign(x, rb, crb, "cl1", where, sizeof(where)), 1);
    assert_string_equal(where, "ClusterRoleBinding crb1");
    tg_binding_index_note(x, b, 1);
    assert_int_equal(tg_binding_index_foreign(x, rb, crb, "cl1", where, sizeof(where)), 0);
    tg_binding_index_note(x, a, 0);   /* back: found again */
    assert_int_equal(tg_binding_index_foreign(x, rb, crb, "cl1", where, sizeof(where)), 1);
    json_object_put(a);
    json_object_put(b);
    tg_binding_index_free(x);
    tg_cache_free(rb);
    tg_cache_free(crb);
}

/* Issue 47 (10,000 consumers in 40 MB): every Tenant's RoleBinding and
 * ClusterRoleBinding name its cluster id. As json-c's {subject: {key:
 * null}} that cost about 1,000 bytes a subject (an object with a 16-slot hash
 * table, a copy of each key); the index must stay under a third of it. */
static void test_bytes_per_subject(void **state)
{
    tg_binding_index *x = tg_binding_index_new();
    json_object *bs[2 * SUBJECTS];
    char ns[64], name[64], user[64];
    (void)state;

    for (int i = 0; i < SUBJECTS; i++) {
        snprintf(ns, sizeof(ns), "liqo-tenant-cluster-%05d", i);
        snprintf(name, sizeof(name), "liqo-tenant-cluster-%05d-remote", i);
        snprintf(user, sizeof(user), "cluster-%05d", i);
        bs[2 * i] = binding(ns, name, user);
        bs[2 * i + 1] = binding(NULL, name, user);
    }
    size_t before = tg_test_heap_in_use();
    for (int i = 0; i < 2 * SUBJECTS; i++)
        tg_binding_index_note(x, bs[i], 0);
    size_t per = (tg_test_heap_in_use() - before) / SUBJECTS;
    printf("[ index    ] %d subjects, 2 bindings each: %zu bytes a subject\n", SUBJECTS, per);
    if (per > 300)
        fail_msg("the binding index holds %zu bytes a subject, over 300", per);
    for (int i = 0; i < 2 * SUBJECTS; i++)
        json_object_put(bs[i]);
    tg_binding_index_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_and_forgets),
        cmocka_unit_test(test_bytes_per_subject),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
