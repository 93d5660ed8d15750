/* test_cert_group_plan.c - which per-certificate groups a revocable
 * identity's bindings list (cert_group_plan.h), as a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "kube/json.h"
#include "signer/cert_group_plan.h"

#define CID "cl01"
#define GA "tenantgate.io/cert:cl01:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define GB "tenantgate.io/cert:cl01:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define GX "tenantgate.io/cert:cl02:cccccccccccccccccccccccccccccccc"
#define NOW 1000

static void test_next(void **state)
{
    static const struct {
        const char *desc, *annotation, *current;
        int64_t current_na;
        const char *revoked;   /* record key, or NULL */
        const char *want;      /* the groups as JSON */
    } rows[] = {
        {"first certificate", NULL, GA, 2000, NULL, "{\"" GA "\":2000}"},
        {"renewal of the same request", "{\"" GA "\":2000}", GA, 3000, NULL, "{\"" GA "\":3000}"},
        {"new request: the old one kept until its NotAfter", "{\"" GA "\":2000}", GB, 3000, NULL,
         "{\"" GA "\":2000,\"" GB "\":3000}"},
        {"old one expired", "{\"" GA "\":999}", GB, 3000, NULL, "{\"" GB "\":3000}"},
        {"old one revoked", "{\"" GA "\":2000}", GB, 3000, "cl01.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "{\"" GB "\":3000}"},
        {"current one revoked: never bound again", "{\"" GA "\":2000}", GA, 3000,
         "cl01.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "{}"},
        {"another identity's group in the annotation", "{\"" GX "\":2000}", GA, 3000, NULL, "{\"" GA "\":3000}"},
        {"another identity's group as current", NULL, GX, 3000, NULL, "{}"},
        {"unreadable annotation", "not json", GA, 3000, NULL, "{\"" GA "\":3000}"},
        {"NotAfter not a number", "{\"" GA "\":\"x\"}", GB, 3000, NULL, "{\"" GB "\":3000}"},
        {"no current group", "{\"" GA "\":2000}", NULL, 0, NULL, "{\"" GA "\":2000}"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *revoked = json_object_new_object();
        json_object *want = tg_json_parse(rows[i].want, strlen(rows[i].want), NULL, 0), *got;

        if (rows[i].revoked)
            json_object_object_add(revoked, rows[i].revoked, json_object_new_string("5000"));
        got = tg_cert_groups_next(rows[i].annotation, CID, rows[i].current, rows[i].current_na, revoked, NOW);
        print_message("%-48s -> %s\n", rows[i].desc, json_object_to_json_string(got));
        assert_true(json_object_equal(got, want));
        json_object_put(got);
        json_object_put(want);
        json_object_put(revoked);
    }
}

static void test_subjects(void **state)
{
    const char *text = "{\"" GB "\":1,\"" GA "\":2}";
    json_object *groups = tg_json_parse(text, strlen(text), NULL, 0);
    json_object *subj = tg_cert_groups_subjects(groups), *other, *empty = json_object_new_array();
    const char *reversed = "[{\"kind\":\"Group\",\"name\":\"" GB "\"},{\"kind\":\"Group\",\"name\":\"" GA "\"}]";
    const char *user = "[{\"kind\":\"User\",\"name\":\"" GA "\"},{\"kind\":\"Group\",\"name\":\"" GB "\"}]";

    (void)state;
    assert_int_equal(json_object_array_length(subj), 2);
    assert_string_equal(json_object_get_string(json_object_object_get(json_object_array_get_idx(subj, 0), "name")), GA);
    assert_string_equal(json_object_get_string(json_object_object_get(json_object_array_get_idx(subj, 0), "kind")),
                        "Group");
    other = tg_json_parse(reversed, strlen(reversed), NULL, 0);
    assert_true(tg_cert_groups_same(subj, other));
    json_object_put(other);
    other = tg_json_parse(user, strlen(user), NULL, 0);
    assert_false(tg_cert_groups_same(subj, other));   /* a User subject is never one of ours */
    json_object_put(other);
    assert_false(tg_cert_groups_same(subj, empty));
    assert_false(tg_cert_groups_same(NULL, subj));
    json_object_put(empty);
    json_object_put(subj);
    json_object_put(groups);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_next), cmocka_unit_test(test_subjects)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
