/* test_clusterid.c - the cluster id ConfigMap: decoding a LIST answer (one,
 * none, several, no key, a bad id, hostile shapes), its path and its object. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "kube/clusterid.h"
#include "kube/json.h"

static void test_from_list(void **state)
{
    static const struct {
        const char *desc;
        const char *list;
        tg_cluster_id_result want;
        const char *id;          /* FOUND */
        const char *in_why;      /* others */
    } cases[] = {
        {"one", "{\"items\":[{\"metadata\":{\"name\":\"x\"},\"data\":{\"CLUSTER_ID\":\"cl-a\"}}]}",
         TG_CLUSTER_ID_FOUND, "cl-a", NULL},
        {"uuid, as Liqo makes them",
         "{\"items\":[{\"metadata\":{\"name\":\"x\"},\"data\":{\"CLUSTER_ID\":"
         "\"6d1e3c7a-2b4f-4a51-9c1e-0f7a2b3c4d5e\",\"CLUSTER_NAME\":\"n\"}}]}",
         TG_CLUSTER_ID_FOUND, "6d1e3c7a-2b4f-4a51-9c1e-0f7a2b3c4d5e", NULL},
        {"empty list", "{\"items\":[]}", TG_CLUSTER_ID_NONE, NULL, "no ConfigMap labelled"},
        {"no items", "{\"kind\":\"ConfigMapList\"}", TG_CLUSTER_ID_NONE, NULL, "in namespace liqo"},
        {"items not an array", "{\"items\":{}}", TG_CLUSTER_ID_NONE, NULL, "no ConfigMap"},
        {"two", "{\"items\":[{\"data\":{\"CLUSTER_ID\":\"a\"}},{\"data\":{\"CLUSTER_ID\":\"b\"}}]}",
         TG_CLUSTER_ID_BAD, NULL, "2 ConfigMaps"},
        {"no key", "{\"items\":[{\"metadata\":{\"name\":\"x\"},\"data\":{\"CLUSTER_NAME\":\"a\"}}]}",
         TG_CLUSTER_ID_BAD, NULL, "has no data.CLUSTER_ID"},
        {"no data", "{\"items\":[{\"metadata\":{\"name\":\"x\"}}]}", TG_CLUSTER_ID_BAD, NULL,
         "liqo/x has no data.CLUSTER_ID"},
        {"key not a string", "{\"items\":[{\"data\":{\"CLUSTER_ID\":42}}]}", TG_CLUSTER_ID_BAD,
         NULL, "has no data.CLUSTER_ID"},
        {"upper case", "{\"items\":[{\"data\":{\"CLUSTER_ID\":\"Cl-A\"}}]}", TG_CLUSTER_ID_BAD,
         NULL, "not a cluster id"},
        {"empty", "{\"items\":[{\"data\":{\"CLUSTER_ID\":\"\"}}]}", TG_CLUSTER_ID_BAD, NULL,
         "not a cluster id"},
        {"item not an object", "{\"items\":[7]}", TG_CLUSTER_ID_BAD, NULL, "?"},
    };
    char id[TG_CLUSTERID_MAX + 1], why[512];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[128];
        json_object *list = tg_json_parse(cases[i].list, strlen(cases[i].list), err, sizeof(err));
        tg_cluster_id_result r;

        print_message("%s\n", cases[i].desc);
        assert_non_null(list);
        why[0] = '\0';
        r = tg_cluster_id_from_list(list, "liqo", id, why, sizeof(why));
        assert_int_equal(r, cases[i].want);
        if (r == TG_CLUSTER_ID_FOUND) {
            assert_string_equal(id, cases[i].id);
        } else {
            assert_string_equal(id, "");
            assert_non_null(strstr(why, cases[i].in_why));
        }
        json_object_put(list);
    }
}

/* A hostile id is capped in the message and never copied out. */
static void test_long_value_is_capped(void **state)
{
    char doc[4096], value[2001], id[TG_CLUSTERID_MAX + 1], why[256];
    json_object *list;

    memset(value, 'a', sizeof(value) - 1);
    value[sizeof(value) - 1] = '\0';
    snprintf(doc, sizeof(doc),
             "{\"items\":[{\"metadata\":{\"name\":\"x\"},\"data\":{\"CLUSTER_ID\":\"%s\"}}]}", value);
    list = tg_json_parse(doc, strlen(doc), NULL, 0);
    assert_non_null(list);
    assert_int_equal(tg_cluster_id_from_list(list, "liqo", id, why, sizeof(why)), TG_CLUSTER_ID_BAD);
    assert_true(strlen(why) < sizeof(why));
    assert_string_equal(id, "");
    json_object_put(list);
}

static void test_path_and_object(void **state)
{
    char path[128], small[20];
    json_object *cm;

    assert_int_equal(tg_cluster_id_list_path(path, sizeof(path), "liqo"), 0);
    assert_string_equal(path, "/api/v1/namespaces/liqo/configmaps?labelSelector="
                              "app.kubernetes.io%2Fname%3Dclusterid-configmap");
    assert_int_equal(tg_cluster_id_list_path(small, sizeof(small), "liqo"), -1);

    cm = tg_cluster_id_configmap("liqo", "cl-a");
    assert_non_null(cm);
    assert_string_equal(tg_json_path_string(cm, "metadata", "name", NULL), "liqo-clusterid-configmap");
    assert_string_equal(tg_json_path_string(cm, "metadata", "namespace", NULL), "liqo");
    assert_string_equal(tg_json_path_string(cm, "metadata", "labels", "app.kubernetes.io/name", NULL),
                        "clusterid-configmap");
    assert_string_equal(tg_json_path_string(cm, "data", "CLUSTER_ID", NULL), "cl-a");
    json_object_put(cm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_list),
        cmocka_unit_test(test_long_value_is_capped),
        cmocka_unit_test(test_path_and_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
