/* test_reconcile_fake.c - the fake API answers as the API server does where
 * the reconcilers' tests rely on it: a taken name, a stale resourceVersion
 * and a failed uid precondition conflict, finalizers hold a deleted object,
 * subresources touch only status, lists honour a label selector, and an
 * injected failure is answered once and recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/json.h"
#include "signer/fake_api.h"

#define COLL "/api/v1/namespaces/ns/secrets"
#define OBJ COLL "/s"

typedef struct step {
    const char *method, *path;
    tg_kube_content_type ct;
    const char *body;       /* JSON text, or NULL */
    long status;            /* what the fake must answer */
} step;

typedef struct story {
    const char *what;
    const char *seed;       /* stored at OBJ first, or NULL */
    step steps[4];
    const char *field;      /* afterwards: OBJ's metadata.labels.x, "-" when OBJ is gone */
} story;

#define JSON TG_KUBE_CT_JSON
#define MERGE TG_KUBE_CT_MERGE_PATCH
#define SEED "{\"metadata\":{\"name\":\"s\",\"labels\":{\"x\":\"a\"}},\"status\":{\"p\":1}}"

static const story stories[] = {
    {"POST then the same name again", NULL,
     {{"POST", COLL, JSON, "{\"metadata\":{\"name\":\"s\",\"labels\":{\"x\":\"a\"}}}", 201},
      {"POST", COLL, JSON, "{\"metadata\":{\"name\":\"s\",\"labels\":{\"x\":\"b\"}}}", 409}}, "a"},
    {"PUT with a stale resourceVersion", SEED,
     {{"PUT", OBJ, JSON, "{\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"0\",\"labels\":{\"x\":\"b\"}}}", 409}},
     "a"},
    {"PUT with the current resourceVersion", SEED,
     {{"PUT", OBJ, JSON, "{\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"1\",\"labels\":{\"x\":\"b\"}}}", 200}},
     "b"},
    {"merge PATCH: stale, then current", SEED,
     {{"PATCH", OBJ, MERGE, "{\"metadata\":{\"resourceVersion\":\"7\",\"labels\":{\"x\":\"b\"}}}", 409},
      {"PATCH", OBJ, MERGE, "{\"metadata\":{\"labels\":{\"x\":\"c\"}}}", 200}}, "c"},
    {"a server-side apply is merged", SEED,
     {{"PATCH", OBJ, TG_KUBE_CT_APPLY, "{\"metadata\":{\"labels\":{\"x\":\"b\"}}}", 200}}, "b"},
    {"a JSON patch is not understood", SEED, {{"PATCH", OBJ, TG_KUBE_CT_JSON_PATCH, "[]", 415}}, "a"},
    {"status PATCH leaves labels", SEED,
     {{"PATCH", OBJ "/status", MERGE, "{\"metadata\":{\"labels\":{\"x\":\"b\"}},\"status\":{\"p\":2}}", 200}}, "a"},
    {"DELETE, then again", SEED, {{"DELETE", OBJ, JSON, NULL, 200}, {"DELETE", OBJ, JSON, NULL, 404}}, "-"},
    {"DELETE with another uid", SEED, {{"DELETE", OBJ, JSON, "{\"preconditions\":{\"uid\":\"other\"}}", 409}}, "a"},
    {"finalizer holds, its removal deletes", "{\"metadata\":{\"name\":\"s\",\"finalizers\":[\"f\"],\"labels\":{\"x\":\"a\"}}}",
     {{"DELETE", OBJ, JSON, NULL, 200}, {"GET", OBJ, JSON, NULL, 200},
      {"PATCH", OBJ, MERGE, "{\"metadata\":{\"finalizers\":[]}}", 200}, {"GET", OBJ, JSON, NULL, 404}}, "-"},
    {"update of nothing", NULL, {{"PUT", OBJ, JSON, "{\"metadata\":{\"name\":\"s\"}}", 404}}, "-"},
};

static void test_stories(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(stories) / sizeof(stories[0]); i++) {
        const story *t = &stories[i];
        tg_api *a = fake_api_new();
        json_object *obj;
        const char *x;

        if (t->seed)
            fake_api_put(a, OBJ, t->seed);
        for (const step *s = t->steps; s < t->steps + 4 && s->method; s++) {
            json_object *body = s->body ? tg_json_parse(s->body, strlen(s->body), NULL, 0) : NULL, *out = NULL;
            char err[256] = "";
            long st = tg_api_call(a, s->method, s->path, s->ct, body, &out, err, sizeof(err));
            if (st != s->status)
                fail_msg("%s: %s %s answered %ld, want %ld (%s)", t->what, s->method, s->path, st, s->status, err);
            json_object_put(out);
            json_object_put(body);
        }
        obj = fake_api_object(a, OBJ);
        x = obj ? tg_json_path_string(obj, "metadata", "labels", "x", NULL) : "-";
        if (!x || strcmp(x, t->field) != 0)
            fail_msg("%s: label x is %s, want %s", t->what, x ? x : "(none)", t->field);
        fake_api_free(a);
    }
}

static void test_status_subresource(void **state)
{
    tg_api *a = fake_api_new();
    json_object *patch = json_object_new_object(), *st = json_object_new_object(), *out = NULL;
    char err[128];

    (void)state;
    fake_api_put(a, OBJ, SEED);
    json_object_object_add(st, "q", json_object_new_int(3));
    json_object_object_add(patch, "status", st);
    assert_int_equal(tg_api_call(a, "PATCH", OBJ "/status", MERGE, patch, &out, err, sizeof(err)), 200);
    assert_int_equal(json_object_get_int(tg_json_path(fake_api_object(a, OBJ), "status", "p", NULL)), 1);
    assert_int_equal(json_object_get_int(tg_json_path(fake_api_object(a, OBJ), "status", "q", NULL)), 3);
    /* the object itself never writes status */
    json_object_object_add(st, "q", json_object_new_int(4));
    json_object_put(out);
    assert_int_equal(tg_api_call(a, "PATCH", OBJ, MERGE, patch, &out, err, sizeof(err)), 200);
    assert_int_equal(json_object_get_int(tg_json_path(fake_api_object(a, OBJ), "status", "q", NULL)), 3);
    json_object_put(out);
    json_object_put(patch);
    fake_api_free(a);
}

static void test_list_and_faults(void **state)
{
    tg_api *a = fake_api_new();
    json_object *out = NULL;
    char err[128];

    (void)state;
    fake_api_put(a, COLL "/a", "{\"metadata\":{\"name\":\"a\",\"labels\":{\"k/x\":\"1\"}}}");
    fake_api_put(a, COLL "/b", "{\"metadata\":{\"name\":\"b\",\"labels\":{\"k/x\":\"2\"}}}");
    fake_api_put(a, COLL "/b/status", "{}");   /* not a member of the list */
    assert_int_equal(tg_api_get(a, COLL "?labelSelector=k%2Fx%3D2", &out, err, sizeof(err)), 200);
    assert_int_equal(json_object_array_length(tg_json_path(out, "items", NULL)), 1);
    json_object_put(out);
    assert_int_equal(tg_api_get(a, COLL, &out, err, sizeof(err)), 200);
    assert_int_equal(json_object_array_length(tg_json_path(out, "items", NULL)), 2);
    json_object_put(out);
    fake_api_fail(a, "DELETE", COLL "/a", -1, 1);
    assert_int_equal(tg_api_call(a, "DELETE", COLL "/a", JSON, NULL, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "transport"));
    assert_int_equal(tg_api_call(a, "DELETE", COLL "/a", JSON, NULL, NULL, err, sizeof(err)), 200);
    assert_int_equal(json_object_array_length(fake_api_writes(a)), 2);
    assert_int_equal(fake_api_ngets(a), 2);
    fake_api_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stories),
        cmocka_unit_test(test_status_subresource),
        cmocka_unit_test(test_list_and_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
