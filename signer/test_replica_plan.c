/* test_replica_plan.c - the replicator's pure decisions, table by table:
 * the copy's labels as Liqo writes them, spec/status comparison, finalizer
 * lists, and the steps of a reconcile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/json.h"
#include "signer/replica_plan.h"

static json_object *parse(const char *s)
{
    json_object *o = tg_json_parse(s, strlen(s), NULL, 0);

    assert_non_null(o);
    return o;
}

static void test_remote_labels(void **state)
{
    static const struct {
        const char *what, *local, *want;
    } cases[] = {
        {"forge's labels", "{\"liqo.io/replication\":\"true\",\"liqo.io/remoteID\":\"p1\","
                           "\"liqo.io/remote-cluster-id\":\"p1\"}",
         "{\"liqo.io/replication\":\"false\",\"liqo.io/remoteID\":\"p1\",\"liqo.io/remote-cluster-id\":\"c1\","
         "\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"c1\"}"},
        {"ownership dropped, others kept", "{\"liqo.io/replication\":\"true\",\"liqo.io/remoteID\":\"p1\","
                                           "\"liqo.io/ownership\":\"shared\",\"app\":\"x\"}",
         "{\"liqo.io/replication\":\"false\",\"liqo.io/remoteID\":\"p1\",\"app\":\"x\","
         "\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"c1\",\"liqo.io/remote-cluster-id\":\"c1\"}"},
        {"a forged originID is overwritten", "{\"liqo.io/originID\":\"evil\",\"liqo.io/replicated\":\"false\"}",
         "{\"liqo.io/originID\":\"c1\",\"liqo.io/replicated\":\"true\",\"liqo.io/replication\":\"false\","
         "\"liqo.io/remote-cluster-id\":\"c1\"}"},
        {"no labels", NULL,
         "{\"liqo.io/replication\":\"false\",\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"c1\","
         "\"liqo.io/remote-cluster-id\":\"c1\"}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *local = cases[i].local ? parse(cases[i].local) : NULL, *want = parse(cases[i].want);
        json_object *got = tg_repl_remote_labels(local, "c1");
        if (!json_object_equal(got, want))
            fail_msg("%s: got %s", cases[i].what, json_object_to_json_string(got));
        json_object_put(got);
        json_object_put(want);
        json_object_put(local);
    }
}

static void test_differ(void **state)
{
    static const struct {
        const char *what, *a, *b;
        int want;
    } cases[] = {
        {"same spec, other member order", "{\"class\":\"default\",\"csr\":\"QQ==\"}",
         "{\"csr\":\"QQ==\",\"class\":\"default\"}", 0},
        {"a field changed", "{\"resources\":{\"cpu\":\"2\"}}", "{\"resources\":{\"cpu\":\"3\"}}", 1},
        {"a field removed", "{\"class\":\"default\",\"csr\":\"QQ==\"}", "{\"class\":\"default\"}", 1},
        {"status only on one side", "{\"conditions\":[]}", NULL, 1},
        {"both missing", NULL, NULL, 0},
        {"condition order matters (a list)",
         "{\"conditions\":[{\"type\":\"Authentication\"},{\"type\":\"Resources\"}]}",
         "{\"conditions\":[{\"type\":\"Resources\"},{\"type\":\"Authentication\"}]}", 1},
        {"number vs string", "{\"pods\":10}", "{\"pods\":\"10\"}", 1},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *a = cases[i].a ? parse(cases[i].a) : NULL, *b = cases[i].b ? parse(cases[i].b) : NULL;
        if (tg_repl_differ(a, b) != cases[i].want || tg_repl_differ(b, a) != cases[i].want)
            fail_msg("%s", cases[i].what);
        json_object_put(a);
        json_object_put(b);
    }
}

static void test_selectors(void **state)
{
    json_object *local = parse("{\"metadata\":{\"labels\":{\"liqo.io/replication\":\"true\","
                               "\"liqo.io/remoteID\":\"p1\"}}}");
    json_object *copy = parse("{\"metadata\":{\"labels\":{\"liqo.io/replicated\":\"true\","
                              "\"liqo.io/originID\":\"c1\",\"liqo.io/remoteID\":\"p1\"}}}");
    json_object *other = parse("{\"metadata\":{\"labels\":{\"liqo.io/replicated\":\"true\","
                               "\"liqo.io/originID\":\"c2\",\"liqo.io/remoteID\":\"p1\"}}}");
    json_object *off = parse("{\"metadata\":{\"labels\":{\"liqo.io/replication\":\"false\","
                             "\"liqo.io/remoteID\":\"p1\"}}}");

    (void)state;
    assert_true(tg_repl_is_local(local, "p1"));
    assert_true(tg_repl_is_local(local, NULL));
    assert_false(tg_repl_is_local(local, "p2"));
    assert_false(tg_repl_is_local(off, NULL));
    assert_false(tg_repl_is_local(copy, NULL));
    assert_true(tg_repl_is_our_copy(copy, "c1", "p1"));
    assert_false(tg_repl_is_our_copy(copy, "c1", "p2"));   /* another provider's copy in a shared namespace */
    assert_false(tg_repl_is_our_copy(other, "c1", "p1"));
    assert_false(tg_repl_is_our_copy(local, "c1", "p1"));
    json_object_put(local);
    json_object_put(copy);
    json_object_put(other);
    json_object_put(off);
}

static void test_finalizers(void **state)
{
    static const struct {
        const char *what, *obj;
        int add;
        const char *want;
        int had;
    } cases[] = {
        {"add to none", "{\"metadata\":{}}", 1, "[\"crdreplicator.liqo.io/resource\"]", 0},
        {"add keeps others", "{\"metadata\":{\"finalizers\":[\"a\"]}}", 1, "[\"a\",\"crdreplicator.liqo.io/resource\"]", 0},
        {"add when present: unchanged", "{\"metadata\":{\"finalizers\":[\"crdreplicator.liqo.io/resource\",\"a\"]}}",
         1, "[\"crdreplicator.liqo.io/resource\",\"a\"]", 1},
        {"remove keeps others", "{\"metadata\":{\"finalizers\":[\"a\",\"crdreplicator.liqo.io/resource\",\"b\"]}}",
         0, "[\"a\",\"b\"]", 1},
        {"remove duplicates too", "{\"metadata\":{\"finalizers\":[\"crdreplicator.liqo.io/resource\","
                                  "\"crdreplicator.liqo.io/resource\"]}}", 0, "[]", 1},
        {"remove when absent", "{\"metadata\":{\"finalizers\":[\"a\"]}}", 0, "[\"a\"]", 0},
        {"not an array", "{\"metadata\":{\"finalizers\":\"crdreplicator.liqo.io/resource\"}}", 0, "[]", 0},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *o = parse(cases[i].obj), *want = parse(cases[i].want);
        json_object *got = tg_repl_finalizers_with(o, TG_REPL_FINALIZER, cases[i].add);
        if (!json_object_equal(got, want) || tg_repl_has_finalizer(o, TG_REPL_FINALIZER) != cases[i].had)
            fail_msg("%s: got %s", cases[i].what, json_object_to_json_string(got));
        json_object_put(got);
        json_object_put(want);
        json_object_put(o);
    }
}

static void test_plan(void **state)
{
    static const struct {
        const char *what;
        tg_repl_state in;
        unsigned want;
    } cases[] = {
        {"new local object, request complete", {.local = 1, .ready = 1},
         TG_REPL_ADD_FINALIZER | TG_REPL_CREATE},
        {"request not complete yet: nothing, no finalizer", {.local = 1}, 0},
        {"finalizer on, no copy (create failed before)", {.local = 1, .finalizer = 1, .ready = 1}, TG_REPL_CREATE},
        {"in sync", {.local = 1, .finalizer = 1, .ready = 1, .remote = 1, .remote_ours = 1}, 0},
        {"copy without the finalizer (made by an older process)",
         {.local = 1, .ready = 1, .remote = 1, .remote_ours = 1}, TG_REPL_ADD_FINALIZER},
        {"spec changed", {.local = 1, .finalizer = 1, .ready = 1, .remote = 1, .remote_ours = 1, .spec_differs = 1},
         TG_REPL_UPDATE_SPEC},
        {"status changed there", {.local = 1, .finalizer = 1, .ready = 1, .remote = 1, .remote_ours = 1,
                                  .status_differs = 1}, TG_REPL_PULL_STATUS},
        {"both", {.local = 1, .finalizer = 1, .ready = 1, .remote = 1, .remote_ours = 1, .spec_differs = 1,
                  .status_differs = 1}, TG_REPL_UPDATE_SPEC | TG_REPL_PULL_STATUS},
        {"spec incomplete again: the copy's spec is kept",
         {.local = 1, .finalizer = 1, .remote = 1, .remote_ours = 1, .spec_differs = 1}, 0},
        {"deleting, copy there", {.local = 1, .deleting = 1, .finalizer = 1, .remote = 1, .remote_ours = 1},
         TG_REPL_DELETE_REMOTE | TG_REPL_WAIT_GONE},
        {"deleting, copy going", {.local = 1, .deleting = 1, .finalizer = 1, .remote = 1, .remote_ours = 1,
                                  .remote_deleting = 1}, TG_REPL_WAIT_GONE},
        {"deleting, copy gone", {.local = 1, .deleting = 1, .finalizer = 1}, TG_REPL_REMOVE_FINALIZER},
        {"deleting, not ours to hold", {.local = 1, .deleting = 1}, 0},
        {"deleting: status is not pulled", {.local = 1, .deleting = 1, .finalizer = 1, .remote = 1,
                                            .remote_ours = 1, .status_differs = 1},
         TG_REPL_DELETE_REMOTE | TG_REPL_WAIT_GONE},
        {"local gone, orphan copy", {.remote = 1, .remote_ours = 1}, TG_REPL_DELETE_REMOTE | TG_REPL_WAIT_GONE},
        {"local gone, no copy", {0}, 0},
        {"same name, not our copy", {.local = 1, .ready = 1, .remote = 1}, TG_REPL_CONFLICT},
        {"local gone, same name not ours: left alone", {.remote = 1}, TG_REPL_CONFLICT},
        {"copy being deleted there, local alive", {.local = 1, .finalizer = 1, .ready = 1, .remote = 1,
                                                   .remote_ours = 1, .remote_deleting = 1}, TG_REPL_WAIT_GONE},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned got = tg_repl_plan(&cases[i].in);
        if (got != cases[i].want)
            fail_msg("%s: got 0x%x, want 0x%x", cases[i].what, got, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_labels), cmocka_unit_test(test_differ), cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_finalizers), cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
