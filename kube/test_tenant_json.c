/* test_tenant_json.c - Tenant decoding (PROTOCOL.md 5 step 1) and encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "kube/yaml.h"

static char *read_vector(const char *name, size_t *len)
{
    const char *dir = getenv("TG_VECTORS_DIR");
    char path[1024];
    FILE *f;
    char *buf = malloc(1 << 16);

    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static json_object *load_vector(const char *name)
{
    size_t len;
    char err[256];
    char *text = read_vector(name, &len);
    json_object *obj = tg_json_parse(text, len, err, sizeof(err));

    if (obj == NULL)
        fail_msg("%s: %s", name, err);
    free(text);
    return obj;
}

/* A mutation of the valid seed Tenant: set the member at path (NULL value
 * text = delete it), then decoding must succeed or fail mentioning err_has. */
typedef struct mutation {
    const char *name;
    const char *path[4];        /* NULL-terminated */
    const char *value;          /* JSON text, or NULL to delete */
    int ok;
    const char *err_has;
} mutation;

#define B64_X1 "\"eA==\""        /* "x" */

static const mutation mutations[] = {
    { "unchanged", { "kind" }, "\"Tenant\"", 1, NULL },
    { "wrong apiVersion", { "apiVersion" }, "\"authentication.liqo.io/v1alpha1\"", 0,
      "apiVersion: expected \"authentication.liqo.io/v1beta1\", found \"authentication.liqo.io/v1alpha1\"" },
    { "apiVersion wrong case", { "apiVersion" }, "\"Authentication.liqo.io/v1beta1\"", 0,
      "apiVersion: expected" },
    { "apiVersion missing", { "apiVersion" }, NULL, 0, "apiVersion: expected \"authentication.liqo.io/v1beta1\", found nothing" },
    { "apiVersion a number", { "apiVersion" }, "1", 0, "apiVersion: expected \"authentication.liqo.io/v1beta1\", found int" },
    { "wrong kind", { "kind" }, "\"Identity\"", 0, "kind: expected \"Tenant\", found \"Identity\"" },
    { "kind lower case", { "kind" }, "\"tenant\"", 0, "kind: expected \"Tenant\"" },
    { "kind missing", { "kind" }, NULL, 0, "kind: expected \"Tenant\", found nothing" },
    { "spec missing", { "spec" }, NULL, 0, "spec: required field is missing" },
    { "spec a string", { "spec" }, "\"x\"", 0, "spec: expected an object, found string" },
    { "spec null", { "spec" }, "null", 0, "spec: required field is missing" },
    { "clusterID missing", { "spec", "clusterID" }, NULL, 0, "spec.clusterID: required field is missing" },
    { "clusterID number", { "spec", "clusterID" }, "7", 0, "spec.clusterID: expected a string, found int" },
    { "clusterID empty", { "spec", "clusterID" }, "\"\"", 0, "spec.clusterID: expected a non-empty string" },
    { "clusterID with NUL", { "spec", "clusterID" }, "\"cl01\\u0000x\"", 0, "spec.clusterID: string contains a NUL" },
    { "clusterID huge", { "spec", "clusterID" }, NULL /* set below */, 0, "spec.clusterID: expected at most 2048 characters" },
    { "publicKey missing", { "spec", "publicKey" }, NULL, 0, "spec.publicKey: required field is missing" },
    { "csr missing", { "spec", "csr" }, NULL, 0, "spec.csr: required field is missing" },
    { "signature missing", { "spec", "signature" }, NULL, 0, "spec.signature: required field is missing" },
    { "publicKey null", { "spec", "publicKey" }, "null", 0, "spec.publicKey: required field is missing" },
    { "publicKey empty", { "spec", "publicKey" }, "\"\"", 0, "spec.publicKey: expected non-empty base64" },
    { "csr an array", { "spec", "csr" }, "[\"eA==\"]", 0, "spec.csr: expected a base64 string, found array" },
    { "signature an object", { "spec", "signature" }, "{}", 0, "spec.signature: expected a base64 string, found object" },
    { "signature bool", { "spec", "signature" }, "true", 0, "spec.signature: expected a base64 string, found boolean" },
    { "csr bad length", { "spec", "csr" }, "\"eA=\"", 0, "spec.csr: expected standard padded base64, found length 3" },
    { "csr unpadded", { "spec", "csr" }, "\"eA\"", 0, "spec.csr: expected standard padded base64" },
    { "csr url alphabet", { "spec", "csr" }, "\"ab-_\"", 0, "spec.csr: expected standard padded base64, found character at position 2" },
    { "csr with newline", { "spec", "csr" }, "\"eHl\\neHl6\"", 0, "found character at position 3" },
    { "csr with space", { "spec", "csr" }, "\"eA== \"", 0, "spec.csr: expected standard padded base64" },
    { "publicKey padding inside", { "spec", "publicKey" }, "\"eA==eA==\"", 0, "spec.publicKey: expected standard padded base64, found padding" },
    { "signature triple padding", { "spec", "signature" }, "\"e===\"", 0, "spec.signature: expected standard padded base64" },
    { "signature too long", { "spec", "signature" }, NULL /* set below */, 0, "spec.signature: expected at most 1024 bytes" },
    { "csr too long", { "spec", "csr" }, NULL /* set below */, 0, "spec.csr: expected at most 16384 bytes" },
    { "authzPolicy unknown", { "spec", "authzPolicy" }, "\"Trust\"", 0, "spec.authzPolicy: expected KeysExchange or TolerateNoHandshake, found \"Trust\"" },
    { "authzPolicy wrong case", { "spec", "authzPolicy" }, "\"keysExchange\"", 0, "spec.authzPolicy: expected" },
    { "authzPolicy number", { "spec", "authzPolicy" }, "1", 0, "spec.authzPolicy: expected KeysExchange or TolerateNoHandshake, found int" },
    { "authzPolicy KeysExchange", { "spec", "authzPolicy" }, "\"KeysExchange\"", 1, NULL },
    { "tenantCondition unknown", { "spec", "tenantCondition" }, "\"Paused\"", 0, "spec.tenantCondition: expected Active, Cordoned or Drained, found \"Paused\"" },
    { "tenantCondition Drained", { "spec", "tenantCondition" }, "\"Drained\"", 1, NULL },
    { "proxyURL number", { "spec", "proxyURL" }, "3", 0, "spec.proxyURL: expected a string, found int" },
    { "proxyURL string", { "spec", "proxyURL" }, "\"http://proxy:3128\"", 1, NULL },
    { "metadata an array", { "metadata" }, "[]", 0, "metadata: expected an object, found array" },
    { "metadata missing", { "metadata" }, NULL, 1, NULL },
    { "name a number", { "metadata", "name" }, "1", 0, "metadata.name: expected a string, found int" },
    { "labels a string", { "metadata", "labels" }, "\"x\"", 0, "metadata.labels: expected an object" },
    { "label a number", { "metadata", "labels", "liqo.io/remote-cluster-id" }, "1", 0, "metadata.labels.liqo.io/remote-cluster-id: expected a string" },
    { "unknown spec field ignored", { "spec", "extra" }, "{\"a\":1}", 1, NULL },
    { "Spec is not spec", { "Spec" }, "{}", 1, NULL },
    { "keys are case-sensitive", { "spec" },
      "{\"ClusterID\":\"cl01\",\"PublicKey\":\"eA==\",\"CSR\":\"eA==\",\"Signature\":\"eA==\"}", 0,
      "spec.clusterID: required field is missing" },
};

/* Values too big to write inline. */
static const char *big_value(const char *name)
{
    static char buf[40000];
    size_t n = 0;

    if (strcmp(name, "clusterID huge") == 0)
        n = 2049;
    else if (strcmp(name, "signature too long") == 0)
        n = (1024 / 3 + 1) * 4 + 4;
    else if (strcmp(name, "csr too long") == 0)
        n = (16384 / 3 + 1) * 4 + 4;
    else
        return NULL;
    buf[0] = '"';
    memset(buf + 1, 'A', n);
    buf[n + 1] = '"';
    buf[n + 2] = '\0';
    return buf;
}

static void apply(json_object *doc, const mutation *m)
{
    json_object *parent = doc;
    const char *value = m->value ? m->value : big_value(m->name);
    int last = 0;

    while (m->path[last + 1] != NULL)
        last++;
    for (int i = 0; i < last; i++) {
        json_object *next;

        if (!json_object_object_get_ex(parent, m->path[i], &next)) {
            next = json_object_new_object();
            json_object_object_add(parent, m->path[i], next);
        }
        parent = next;
    }
    if (value == NULL)
        json_object_object_del(parent, m->path[last]);
    else
        json_object_object_add(parent, m->path[last], json_tokener_parse(value));
}

static void test_mutations(void **state)
{
    for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
        const mutation *m = &mutations[i];
        json_object *doc = load_vector("seed-cl01-pemkey.json");
        tg_tenant t;
        tg_verdict v;
        int rc;

        apply(doc, m);
        tg_verdict_init(&v);
        rc = tg_tenant_from_json(doc, &t, &v);
        if (m->ok) {
            if (rc != 0)
                fail_msg("case \"%s\": refused: %s", m->name, v.message);
            assert_int_equal(v.reason, TG_ACCEPTED);
            tg_tenant_clear(&t);
        } else {
            if (rc == 0)
                fail_msg("case \"%s\": accepted", m->name);
            assert_int_equal(v.reason, TG_MALFORMED_TENANT);
            assert_int_equal(v.code, 400);
            if (strstr(v.message, m->err_has) == NULL)
                fail_msg("case \"%s\": message \"%s\" lacks \"%s\"", m->name, v.message,
                         m->err_has);
            /* refused: nothing left allocated */
            assert_null(t.cluster_id);
            assert_null(t.public_key.data);
            assert_null(t.csr.data);
        }
        json_object_put(doc);
    }
}

static void test_decode_fields(void **state)
{
    json_object *doc = load_vector("seed-cl01-pemkey.json");
    tg_tenant t;
    tg_verdict v;

    tg_verdict_init(&v);
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), 0);
    assert_string_equal(t.name, "cl01");
    assert_string_equal(t.namespace_, "liqo-tenant-cl01");
    assert_string_equal(t.label_cluster_id, "cl01");
    assert_string_equal(t.cluster_id, "cl01");
    assert_int_equal(t.authz_policy, TG_POLICY_KEYS_EXCHANGE);
    assert_int_equal(t.condition, TG_CONDITION_ACTIVE);
    assert_null(t.proxy_url);
    assert_true(t.public_key.len > 26);
    assert_memory_equal(t.public_key.data, "-----BEGIN PUBLIC KEY-----\n", 27);
    assert_memory_equal(t.csr.data, "-----BEGIN CERTIFICATE REQUEST-----\n", 36);
    assert_int_equal(t.signature.len, 64);            /* Ed25519 */
    tg_tenant_clear(&t);
    json_object_put(doc);

    doc = load_vector("seed-cl01-rawkey.json");
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), 0);
    assert_int_equal(t.public_key.len, 32);           /* legacy raw Ed25519 key */
    tg_tenant_clear(&t);
    json_object_put(doc);
}

static void test_tolerate_no_handshake(void **state)
{
    const char *text = "apiVersion: authentication.liqo.io/v1beta1\nkind: Tenant\n"
                       "spec:\n  clusterID: cl02\n  authzPolicy: TolerateNoHandshake\n"
                       "  tenantCondition: Cordoned\n";
    const char *bad_b64 = "apiVersion: authentication.liqo.io/v1beta1\nkind: Tenant\n"
                          "spec:\n  clusterID: cl02\n  authzPolicy: TolerateNoHandshake\n"
                          "  csr: '!!!!'\n";
    const char *no_id = "apiVersion: authentication.liqo.io/v1beta1\nkind: Tenant\n"
                        "spec:\n  authzPolicy: TolerateNoHandshake\n";
    json_object *doc = tg_yaml_parse(text, strlen(text), NULL, 0);
    tg_tenant t;
    tg_verdict v;

    tg_verdict_init(&v);
    assert_non_null(doc);
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), 0);
    assert_int_equal(t.authz_policy, TG_POLICY_TOLERATE_NO_HANDSHAKE);
    assert_int_equal(t.condition, TG_CONDITION_CORDONED);
    assert_null(t.public_key.data);
    assert_null(t.name);
    tg_tenant_clear(&t);
    json_object_put(doc);

    doc = tg_yaml_parse(bad_b64, strlen(bad_b64), NULL, 0);
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), -1);
    assert_non_null(strstr(v.message, "spec.csr: expected standard padded base64"));
    json_object_put(doc);

    tg_verdict_init(&v);
    doc = tg_yaml_parse(no_id, strlen(no_id), NULL, 0);
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), -1);
    assert_non_null(strstr(v.message, "spec.clusterID: required"));
    json_object_put(doc);
}

static void test_not_an_object(void **state)
{
    static const char *const docs[] = { "[1]", "\"Tenant\"", "3" };
    tg_tenant t;
    tg_verdict v;

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_object *doc = tg_json_parse(docs[i], strlen(docs[i]), NULL, 0);

        tg_verdict_init(&v);
        assert_int_equal(tg_tenant_from_json(doc, &t, &v), -1);
        assert_int_equal(v.reason, TG_MALFORMED_TENANT);
        assert_non_null(strstr(v.message, "expected a Tenant object"));
        json_object_put(doc);
    }
    tg_verdict_init(&v);
    assert_int_equal(tg_tenant_from_json(NULL, &t, &v), -1);
}

/* The message must not carry the signature or key: only field and position. */
static void test_no_secret_in_message(void **state)
{
    json_object *doc = load_vector("seed-cl01-pemkey.json");
    json_object *spec = json_object_object_get(doc, "spec");
    const char *secret = "K5GP+UkTKJ5ao02l8RBUJLwaUPp+gE85HtCYdJ2i2g8IW/pkmBmzjdAw1RujU3//"
                         "Mnp+zdgExlQA2MWiv7jTBw=#";
    tg_tenant t;
    tg_verdict v;

    json_object_object_add(spec, "signature", json_object_new_string(secret));
    tg_verdict_init(&v);
    assert_int_equal(tg_tenant_from_json(doc, &t, &v), -1);
    assert_null(strstr(v.message, "K5GP"));
    assert_non_null(strstr(v.message, "spec.signature"));
    json_object_put(doc);
}

static void test_to_json_round_trip(void **state)
{
    const char *pub = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n";
    const char *csr = "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
    const unsigned char sig[] = { 0x00, 0xff, 0x10, 0x20, 0x30 };
    json_object *obj = tg_tenant_to_json("cl-consumer", (const unsigned char *)pub, strlen(pub), csr, sig,
                                         sizeof(sig));
    tg_tenant t;
    tg_verdict v;
    char *yaml;
    size_t len;
    json_object *back;

    assert_non_null(obj);
    assert_string_equal(tg_json_path_string(obj, "metadata", "name", NULL), "cl-consumer");
    assert_string_equal(tg_json_path_string(obj, "metadata", "namespace", NULL),
                        "liqo-tenant-cl-consumer");
    assert_string_equal(
        tg_json_path_string(obj, "metadata", "labels", "liqo.io/remote-cluster-id", NULL),
        "cl-consumer");
    assert_string_equal(tg_json_path_string(obj, "spec", "signature", NULL), "AP8QIDA=");

    /* through YAML text and back, as the CLI prints and a user applies it */
    yaml = tg_yaml_emit(obj, &len);
    assert_non_null(yaml);
    back = tg_yaml_parse(yaml, len, NULL, 0);
    assert_non_null(back);
    assert_true(json_object_equal(obj, back));
    tg_verdict_init(&v);
    assert_int_equal(tg_tenant_from_json(back, &t, &v), 0);
    assert_string_equal(t.cluster_id, "cl-consumer");
    assert_int_equal(t.public_key.len, strlen(pub));
    assert_memory_equal(t.public_key.data, pub, strlen(pub));
    assert_int_equal(t.csr.len, strlen(csr));
    assert_memory_equal(t.csr.data, csr, strlen(csr));
    assert_int_equal(t.signature.len, sizeof(sig));
    assert_memory_equal(t.signature.data, sig, sizeof(sig));
    tg_tenant_clear(&t);
    free(yaml);
    json_object_put(back);
    json_object_put(obj);
}

typedef struct b64_case {
    const char *text;
    const char *decoded;     /* NULL: must be refused */
    size_t decoded_len;
} b64_case;

static const b64_case b64_cases[] = {
    { "", "", 0 },
    { "eA==", "x", 1 },
    { "eHk=", "xy", 2 },
    { "eHl6", "xyz", 3 },
    { "AP8QIDA=", "\x00\xff\x10\x20\x30", 5 },
    { "eA=", NULL, 0 },
    { "eA", NULL, 0 },
    { "e===", NULL, 0 },
    { "=eA=", NULL, 0 },
    { "eA=x", NULL, 0 },
    { " eA=", NULL, 0 },
    { "eHl6\n", NULL, 0 },
    { "eH-6", NULL, 0 },
    { "eH_6", NULL, 0 },
    { "eH\x80" "6", NULL, 0 },
};

static void test_base64_strict(void **state)
{
    for (size_t i = 0; i < sizeof(b64_cases) / sizeof(b64_cases[0]); i++) {
        const b64_case *c = &b64_cases[i];
        char err[128];
        size_t n = 0;
        unsigned char *out = tg_base64_decode(c->text, strlen(c->text), &n, err, sizeof(err));

        if (c->decoded == NULL) {
            if (out != NULL)
                fail_msg("\"%s\" accepted", c->text);
        } else {
            if (out == NULL)
                fail_msg("\"%s\" refused: %s", c->text, err);
            assert_int_equal(n, c->decoded_len);
            assert_memory_equal(out, c->decoded, n);
        }
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_decode_fields),
        cmocka_unit_test(test_tolerate_no_handshake),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_no_secret_in_message),
        cmocka_unit_test(test_to_json_round_trip),
        cmocka_unit_test(test_base64_strict),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
