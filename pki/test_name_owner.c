/* test_name_owner.c - the rules of name_owner.h, as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "pki/name_owner.h"

#define ID "3114c478-173d-4344-8f01-eb21efb95aea"
#define PROVIDER "provider-1"

static void test_reserved(void **state)
{
    static const struct { const char *name; int reserved; } rows[] = {
        {"", 1},
        {"system:masters", 1},
        {"SYSTEM:masters", 1},
        {"System:node:x", 1},
        {"liqo-peer-user-" ID, 1},
        {PROVIDER, 1},
        {ID, 0},
        {"ops", 0},
        {"systemd", 0},
        {"liqo-peer-userx", 0},
    };
    char why[200];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        why[0] = '\0';
        assert_int_equal(tg_name_reserved(rows[i].name, PROVIDER, why, sizeof(why)), rows[i].reserved);
        assert_true(rows[i].reserved ? strncmp(why, "expected ", 9) == 0 : why[0] == '\0');
    }
    assert_false(tg_name_reserved(PROVIDER, NULL, why, sizeof(why)));
    assert_true(tg_name_reserved(NULL, NULL, why, sizeof(why)));
}

static void test_claim_object(void **state)
{
    char a[TG_NAME_CLAIM_OBJECT_MAX], b[TG_NAME_CLAIM_OBJECT_MAX];

    tg_name_claim_object("abc", a);
    /* SHA-256("abc") */
    assert_string_equal(a, "n-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    tg_name_claim_object("abd", b);
    assert_string_not_equal(a, b);
    assert_int_equal(strlen(a), TG_NAME_CLAIM_OBJECT_MAX - 1);
}

static void test_paths(void **state)
{
    for (int p = 0; p < TG_NAME_PATH_COUNT; p++)
        assert_int_equal(tg_name_path_parse(tg_name_path_string((tg_name_path)p)), p);
    assert_int_equal(tg_name_path_parse("other"), TG_NAME_PATH_COUNT);
    assert_int_equal(tg_name_path_parse(NULL), TG_NAME_PATH_COUNT);
    assert_null(tg_name_path_string(TG_NAME_PATH_COUNT));
}

#define RB(ns, name, kind, who, ref) \
    "{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"},\"roleRef\":{\"kind\":\"" ref "\"," \
    "\"name\":\"r\"},\"subjects\":[{\"kind\":\"" kind "\",\"name\":\"" who "\"}]}"
#define CRB(name, kind, who) \
    "{\"metadata\":{\"name\":\"" name "\"},\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"r\"}," \
    "\"subjects\":[{\"kind\":\"" kind "\",\"name\":\"" who "\"}]}"
#define TNS "liqo-tenant-" ID
#define VK "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"
/* Liqo's NamespaceMap controller's RoleBinding in a namespace it offloads,
 * with its labels, subject and ClusterRole varied per row. */
#define OFF(ns, name, managed, rcid, kind, who, refkind, ref) \
    "{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\",\"labels\":{" \
    "\"app.kubernetes.io/managed-by\":\"" managed "\",\"liqo.io/remote-cluster-id\":\"" rcid "\"}}," \
    "\"roleRef\":{\"kind\":\"" refkind "\",\"name\":\"" ref "\"}," \
    "\"subjects\":[{\"kind\":\"" kind "\",\"name\":\"" who "\"}]}"
#define OFFLOADED "default-" ID
#define VKR "liqo-virtual-kubelet-remote"

static void test_binding_owner(void **state)
{
    static const struct { const char *doc; tg_binding_owner want; } rows[] = {
        /* tenantgate's, for this identity */
        {RB(TNS, "tenantgate-auth-identity", "User", ID, "ClusterRole"), TG_BINDING_TOKEN},
        {RB(TNS, "liqo-binding-tenantgate-remote-consumer", "User", ID, "ClusterRole"), TG_BINDING_TENANT},
        {RB(TNS, "liqo-binding-liqo-remote-controlplane", "User", ID, "ClusterRole"), TG_BINDING_TENANT},
        {RB(TNS, "liqo-tenant-" ID, "User", ID, "ClusterRole"), TG_BINDING_TENANT},
        {CRB(VK ID, "Group", ID), TG_BINDING_TENANT},
        /* Liqo's offload binding for this consumer, in any namespace but a tenant one */
        {OFF(OFFLOADED, TNS, "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_TENANT},
        {OFF("team-a", TNS, "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_TENANT},
        /* its shape, but another grant, identity, place or label: foreign */
        {OFF(OFFLOADED, TNS, "liqo", ID, "Group", ID, "ClusterRole", "admin"), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, TNS, "liqo", ID, "Group", ID, "Role", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, TNS, "liqo", ID, "User", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, "liqo-tenant-other", "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, "liqo-tenant-" ID "x", "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, "ops-offload", "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, TNS, "helm", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(OFFLOADED, TNS, "liqo", "other", "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF("liqo-tenant-other", TNS, "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {OFF(TNS, TNS, "liqo", ID, "Group", ID, "ClusterRole", VKR), TG_BINDING_FOREIGN},
        {RB(OFFLOADED, TNS, "Group", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        /* the same names elsewhere, or another shape: not tenantgate's */
        {RB("team-a", "tenantgate-auth-identity", "User", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        {RB("team-a", "liqo-binding-x", "User", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        {RB("liqo-tenant-other", "liqo-binding-x", "User", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        {RB(TNS, "liqo-binding-x", "User", ID, "Role"), TG_BINDING_FOREIGN},
        {RB(TNS, "liqo-binding-x", "Group", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        {RB(TNS, "admin-made", "User", ID, "ClusterRole"), TG_BINDING_FOREIGN},
        {CRB(VK ID, "User", ID), TG_BINDING_FOREIGN},
        {CRB(VK "other", "Group", ID), TG_BINDING_FOREIGN},
        {CRB("ops-view", "User", ID), TG_BINDING_FOREIGN},
        {CRB("ops-view", "Group", ID), TG_BINDING_FOREIGN},
        {"{\"subjects\":[{\"kind\":\"User\",\"name\":\"" ID "\"}]}", TG_BINDING_FOREIGN},
        /* does not name it as User or Group */
        {CRB("sa", "ServiceAccount", ID), TG_BINDING_NONE},
        {CRB("other", "User", "someone"), TG_BINDING_NONE},
        {CRB("prefix", "User", "3114c478"), TG_BINDING_NONE},
        {"{\"metadata\":{\"name\":\"x\"},\"subjects\":null}", TG_BINDING_NONE},
        {"{\"metadata\":{\"name\":\"x\"}}", TG_BINDING_NONE},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *b = json_tokener_parse(rows[i].doc);
        assert_non_null(b);
        if (tg_binding_owner_of(b, ID) != rows[i].want)
            fail_msg("row %zu: %s", i, rows[i].doc);
        assert_int_equal(tg_binding_names(b, ID), rows[i].want != TG_BINDING_NONE);
        json_object_put(b);
    }
    assert_int_equal(tg_binding_owner_of(NULL, ID), TG_BINDING_NONE);
}

static void test_two_subjects_are_not_tenantgates(void **state)
{
    json_object *b = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"" TNS "\",\"name\":\"tenantgate-auth-identity\"},"
        "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"r\"},"
        "\"subjects\":[{\"kind\":\"User\",\"name\":\"" ID "\"},{\"kind\":\"User\",\"name\":\"ops\"}]}");

    assert_int_equal(tg_binding_owner_of(b, ID), TG_BINDING_FOREIGN);
    assert_int_equal(tg_binding_owner_of(b, "ops"), TG_BINDING_FOREIGN);
    json_object_put(b);
}

/* Liqo's offload binding with a second subject grants someone else too: it
 * is nobody's own. */
static void test_offload_binding_with_two_subjects_is_foreign(void **state)
{
    json_object *b = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"" OFFLOADED "\",\"name\":\"" TNS "\",\"labels\":{"
        "\"app.kubernetes.io/managed-by\":\"liqo\",\"liqo.io/remote-cluster-id\":\"" ID "\"}},"
        "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"" VKR "\"},"
        "\"subjects\":[{\"kind\":\"Group\",\"name\":\"" ID "\"},{\"kind\":\"Group\",\"name\":\"ops\"}]}");

    (void)state;
    assert_int_equal(tg_binding_owner_of(b, ID), TG_BINDING_FOREIGN);
    assert_int_equal(tg_binding_owner_of(b, "ops"), TG_BINDING_FOREIGN);
    json_object_put(b);
}

static void test_slice_user_split(void **state)
{
    static const struct { const char *user; const char *slice; } rows[] = {
        {ID, "3114c478-173d-4344-8f01"},
        {"mypool-0123456789ab", "mypool"},
        {"a-0123456789ab", "a"},
        {"-0123456789ab", NULL},
        {"mypool-0123456789aB", NULL},
        {"mypool_0123456789ab", NULL},
        {"mypool-0123456789a", NULL},
        {"ops", NULL},
        {"", NULL},
    };
    char out[64];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int rc = tg_name_slice_user_split(rows[i].user, out, sizeof(out));
        if (rows[i].slice) {
            assert_int_equal(rc, 0);
            assert_string_equal(out, rows[i].slice);
        } else {
            assert_int_equal(rc, -1);
        }
    }
    assert_int_equal(tg_name_slice_user_split("mypool-0123456789ab", out, 6), -1);
}

static void test_claim_doc_and_owner(void **state)
{
    json_object *d = tg_name_claim_doc(ID, TG_NAME_PATH_TOKEN, ID, TNS, "uid-1");
    char owner[300], obj[TG_NAME_CLAIM_OBJECT_MAX];
    json_object *other = json_tokener_parse("{\"spec\":{\"name\":\"" ID "\"}}");

    tg_name_claim_object(ID, obj);
    assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(d, "metadata"), "name")),
                        obj);
    assert_true(tg_name_claim_is(d, ID, TG_NAME_PATH_TOKEN, ID, owner, sizeof(owner)));
    assert_string_equal(owner, "token " ID);
    assert_false(tg_name_claim_is(d, ID, TG_NAME_PATH_TENANT, ID, owner, sizeof(owner)));
    assert_false(tg_name_claim_is(d, ID, TG_NAME_PATH_TOKEN, "other", owner, sizeof(owner)));
    assert_false(tg_name_claim_is(d, "other", TG_NAME_PATH_TOKEN, ID, owner, sizeof(owner)));
    assert_false(tg_name_claim_is(other, ID, TG_NAME_PATH_TOKEN, ID, owner, sizeof(owner)));
    assert_string_equal(owner, "unreadable");
    json_object_put(d);
    json_object_put(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserved),
        cmocka_unit_test(test_claim_object),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_binding_owner),
        cmocka_unit_test(test_offload_binding_with_two_subjects_is_foreign),
        cmocka_unit_test(test_two_subjects_are_not_tenantgates),
        cmocka_unit_test(test_slice_user_split),
        cmocka_unit_test(test_claim_doc_and_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
