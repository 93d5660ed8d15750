/* test_unpeer.c - the pure decisions of `unauthenticate --force` and
 * `--provider-side` (unpeer.h): which namespace is a peering's, which
 * finalizers come off, and the line naming what a provider keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "unpeer.h"
#include "kube/json.h"

static json_object *ns_obj(const char *name, const char *tenant, const char *rid)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();

    json_object_object_add(meta, "name", json_object_new_string(name));
    if (tenant)
        json_object_object_add(labels, "liqo.io/tenant-namespace", json_object_new_string(tenant));
    if (rid)
        json_object_object_add(labels, "liqo.io/remote-cluster-id", json_object_new_string(rid));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(o, "metadata", meta);
    return o;
}

/* Only liqo-tenant-<id> labelled for <id> is a peering's namespace: another
 * peering's, or one whose labels name another cluster, is never cleared. */
static void test_namespace_is_tenant(void **state)
{
    struct { const char *name, *tenant, *rid, *id; int want; } cases[] = {
        { "liqo-tenant-prov", "true", "prov", "prov", 1 },
        { "liqo-tenant-prov", "true", "other", "prov", 0 },   /* labelled for another */
        { "liqo-tenant-other", "true", "prov", "prov", 0 },   /* another name */
        { "liqo-tenant-prov", NULL, "prov", "prov", 0 },       /* not a tenant namespace */
        { "liqo-tenant-prov", "false", "prov", "prov", 0 },
        { "liqo-tenant-prov", "true", NULL, "prov", 0 },
        { "liqo-tenant-prov", "true", "prov", "pro", 0 },     /* a prefix is not the id */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *ns = ns_obj(cases[i].name, cases[i].tenant, cases[i].rid);

        assert_non_null(ns);
        assert_int_equal(cli_unpeer_namespace_is_tenant(ns, cases[i].id), cases[i].want);
        json_object_put(ns);
    }
    assert_int_equal(cli_unpeer_namespace_is_tenant(NULL, "prov"), 0);
}

/* The replicator's finalizers come off, any other stays, the patch is
 * guarded by resourceVersion; nothing of ours: no patch. */
static void test_strip_patch(void **state)
{
    json_object *o = json_tokener_parse("{\"metadata\":{\"resourceVersion\":\"42\",\"finalizers\":"
                                        "[\"crdreplicator.liqo.io/resource\",\"example.com/keep\"]}}");
    json_object *p = cli_unpeer_strip_patch(o, cli_unpeer_consumer_finalizers), *f;

    (void)state;
    assert_non_null(p);
    assert_string_equal(tg_json_path_string(p, "metadata", "resourceVersion", NULL), "42");
    f = tg_json_path(p, "metadata", "finalizers", NULL);
    assert_int_equal(json_object_array_length(f), 1);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 0)), "example.com/keep");
    json_object_put(p);
    json_object_put(o);

    o = json_tokener_parse("{\"metadata\":{\"finalizers\":[\"example.com/keep\"]}}");
    assert_null(cli_unpeer_strip_patch(o, cli_unpeer_consumer_finalizers));
    json_object_put(o);
    o = json_tokener_parse("{\"metadata\":{}}");
    assert_null(cli_unpeer_strip_patch(o, cli_unpeer_consumer_finalizers));
    json_object_put(o);

    /* The consumer's force never takes a Tenant's finalizer off. */
    o = json_tokener_parse("{\"metadata\":{\"finalizers\":[\"tenant.liqo.io/finalizer\"]}}");
    assert_null(cli_unpeer_strip_patch(o, cli_unpeer_consumer_finalizers));
    p = cli_unpeer_strip_patch(o, cli_unpeer_provider_finalizers);
    assert_non_null(p);
    assert_int_equal(json_object_array_length(tg_json_path(p, "metadata", "finalizers", NULL)), 0);
    json_object_put(p);
    json_object_put(o);
}

static void test_left_line(void **state)
{
    char line[512];

    (void)state;
    cli_unpeer_left_line(line, sizeof(line), "unreachable", "Tenant", "liqo-tenant-cons", "cons", "cons");
    assert_string_equal(line, "provider unreachable: Tenant liqo-tenant-cons/cons left: run `kubectl "
                              "tenantgate unauthenticate --provider-side --remote-cluster-id cons` on the "
                              "provider");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespace_is_tenant),
        cmocka_unit_test(test_strip_patch),
        cmocka_unit_test(test_left_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
