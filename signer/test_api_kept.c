/* test_api_kept.c - the own-write layer of signer/api.h against the fake
 * API server: a write's answer read back at its version without a GET, a
 * subresource write forgetting the object's copy, a 409 on a kept copy told
 * apart from a real conflict, settled versions and CSRs made but unseen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/json.h"
#include "signer/fake_api.h"

#define COLL "/api/v1/namespaces/ns/configmaps"
#define OBJ COLL "/c"
#define KEEP_MS 60000

typedef struct world {
    tg_api *api;
    tg_settled *kept;
    char rv[64];   /* the version our POST made */
} world;

static int setup(void **state)
{
    static world w;
    static const char text[] = "{\"metadata\":{\"name\":\"c\"},\"data\":{\"k\":\"v\"}}";
    json_object *body = tg_json_parse(text, strlen(text), NULL, 0), *out = NULL;
    char err[256];

    memset(&w, 0, sizeof(w));
    w.api = fake_api_new();
    w.kept = tg_settled_new();
    assert_int_equal(tg_api_write(w.api, w.kept, "POST", COLL, TG_KUBE_CT_JSON, body, KEEP_MS, &out, err, sizeof(err)), 201);
    snprintf(w.rv, sizeof(w.rv), "%s", tg_json_path_string(out, "metadata", "resourceVersion", NULL));
    json_object_put(out);
    json_object_put(body);
    *state = &w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;

    tg_settled_free(w->kept);
    fake_api_free(w->api);
    return 0;
}

static long get_at(world *w, const char *rv, json_object **out)
{
    char err[256];

    return tg_api_get_at(w->api, w->kept, OBJ, rv, 0, out, err, sizeof(err));
}

/* The POST's answer is kept under collection/name: read at its version
 * without a GET; at another version (or none) the API server is asked. */
static void test_answer_read_back(void **state)
{
    world *w = *state;
    json_object *o = NULL;

    assert_int_equal(get_at(w, w->rv, &o), 200);
    assert_int_equal(fake_api_ngets(w->api), 0);
    assert_string_equal(tg_json_path_string(o, "data", "k", NULL), "v");
    json_object_put(o);
    assert_int_equal(get_at(w, "other", &o), 200);
    json_object_put(o);
    assert_int_equal(get_at(w, "", &o), 200);
    json_object_put(o);
    assert_int_equal(fake_api_ngets(w->api), 2);
}

/* A write to the object's /status moves it past the kept version. */
static void test_subresource_write_forgets(void **state)
{
    world *w = *state;
    static const char text[] = "{\"status\":{\"x\":1}}";
    json_object *patch = tg_json_parse(text, strlen(text), NULL, 0), *o = NULL;
    char err[256];

    assert_int_equal(tg_api_write(w->api, w->kept, "PATCH", OBJ "/status", TG_KUBE_CT_MERGE_PATCH, patch, 0, NULL,
                                  err, sizeof(err)), 200);
    json_object_put(patch);
    assert_int_equal(get_at(w, w->rv, &o), 200);
    assert_int_equal(fake_api_ngets(w->api), 1);
    json_object_put(o);
}

/* The object changed behind our kept copy: a PUT of the copy is
 * TG_API_STALE; the same PUT of a body read otherwise is a plain 409. */
static void test_conflict_on_kept_copy(void **state)
{
    world *w = *state;
    json_object *kept = NULL, *live;
    char err[256], text[256];

    fake_api_put(w->api, OBJ, "{\"metadata\":{\"name\":\"c\"},\"data\":{\"k\":\"w\"}}");   /* someone else's write */
    assert_int_equal(get_at(w, w->rv, &kept), 200);
    assert_int_equal(fake_api_ngets(w->api), 0);
    assert_int_equal(tg_api_write(w->api, w->kept, "PUT", OBJ, TG_KUBE_CT_JSON, kept, 0, NULL, err, sizeof(err)),
                     TG_API_STALE);
    snprintf(text, sizeof(text), "%s", json_object_to_json_string_ext(kept, JSON_C_TO_STRING_PLAIN));
    live = tg_json_parse(text, strlen(text), NULL, 0);
    assert_int_equal(tg_api_write(w->api, w->kept, "PUT", OBJ, TG_KUBE_CT_JSON, live, 0, NULL, err, sizeof(err)), 409);
    json_object_put(live);
    json_object_put(kept);
}

static void test_settled_version(void **state)
{
    world *w = *state;

    tg_api_settle(w->kept, "k/ns/c", "5", "a", "b", KEEP_MS);
    assert_true(tg_api_settled(w->kept, "k/ns/c", "5", "a") > 0);
    assert_true(tg_api_settled(w->kept, "k/ns/c", "5", "b") > 0);
    assert_int_equal(tg_api_settled(w->kept, "k/ns/c", "5", "c"), 0);
    assert_int_equal(tg_api_settled(w->kept, "k/ns/c", "6", "a"), 0);
    tg_api_settle(w->kept, "k/ns/d", "5", "a", NULL, 0);   /* nothing to wait for: not recorded */
    assert_int_equal(tg_api_settled(w->kept, "k/ns/d", "5", "a"), 0);
}

/* A CSR we made is unseen until the informer's newest is it, then forgotten. */
static void test_made_until_seen(void **state)
{
    world *w = *state;

    tg_api_note_made(w->kept, "made/ns/c", "csr-2", KEEP_MS);
    assert_int_equal(tg_api_made_unseen(w->kept, "made/ns/c", ""), 1);
    assert_int_equal(tg_api_made_unseen(w->kept, "made/ns/c", "csr-1"), 1);
    assert_int_equal(tg_api_made_unseen(w->kept, "made/ns/c", "csr-2"), 0);
    assert_int_equal(tg_api_made_unseen(w->kept, "made/ns/c", "csr-1"), 0);   /* forgotten once seen */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_answer_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subresource_write_forgets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_on_kept_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settled_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_made_until_seen, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
