/* test_issue_docs.c - the objects the auth server writes (issue_docs.h) and
 * its reading of a CSR's status: names, labels, the approval reason, and a
 * Denied or Failed CSR never taken for issued. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "auth/issue_docs.h"
#include "kube/json.h"

#define ID "c1"

static json_object *parse(const char *s)
{
    json_object *o = tg_json_parse(s, strlen(s), NULL, 0);
    assert_non_null(o);
    return o;
}

static void test_objects(void **state)
{
    json_object *ns = tg_auth_namespace_doc(ID), *rb = tg_auth_rolebinding_doc(ID, "role-x", NULL);
    json_object *csr = tg_auth_csr_doc(ID, (const unsigned char *)"PEM", 3, 3600);

    assert_string_equal(tg_json_path_string(ns, "metadata", "name", NULL), "liqo-tenant-" ID);
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), ID);
    assert_string_equal(tg_json_path_string(rb, "metadata", "namespace", NULL), "liqo-tenant-" ID);
    assert_string_equal(tg_json_path_string(rb, "metadata", "name", NULL), TG_AUTH_ROLEBINDING);
    assert_string_equal(tg_json_path_string(rb, "roleRef", "name", NULL), "role-x");
    assert_string_equal(tg_json_string(json_object_array_get_idx(tg_json_path(rb, "subjects", NULL), 0), "name"), ID);
    assert_string_equal(tg_json_path_string(csr, "metadata", "generateName", NULL), "tenantgate-auth-" ID "-");
    assert_string_equal(tg_json_path_string(csr, "spec", "signerName", NULL), TG_AUTH_CSR_SIGNER);
    assert_string_equal(tg_json_path_string(csr, "spec", "request", NULL), "UEVN");
    assert_int_equal(json_object_get_int64(tg_json_path(csr, "spec", "expirationSeconds", NULL)), 3600);
    /* the signer's approver must not take it for one of its own */
    assert_null(tg_json_path(csr, "metadata", "labels", "liqo.io/remote-tenant-csr", NULL));
    json_object_put(ns);
    json_object_put(rb);
    json_object_put(csr);
}

/* A revocable certificate's binding names its group and not the user: removing
 * the group (kubectl tenantgate revoke) must leave the certificate nothing. */
static void test_rolebinding_of_group(void **state)
{
    const char *g = "tenantgate.io/cert:" ID ":0123456789abcdef0123456789abcdef";
    json_object *rb = tg_auth_rolebinding_doc(ID, "role-x", g);
    json_object *subjects = tg_json_path(rb, "subjects", NULL);

    assert_int_equal(json_object_array_length(subjects), 1);
    assert_string_equal(tg_json_string(json_object_array_get_idx(subjects, 0), "kind"), "Group");
    assert_string_equal(tg_json_string(json_object_array_get_idx(subjects, 0), "name"), g);
    json_object_put(rb);
}

static void test_approve(void **state)
{
    json_object *csr = parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"request\":\"UEVN\"}}");
    json_object *c;

    assert_int_equal(tg_auth_csr_approve(csr), 0);
    c = json_object_array_get_idx(tg_json_path(csr, "status", "conditions", NULL), 0);
    assert_string_equal(tg_json_string(c, "type"), "Approved");
    assert_string_equal(tg_json_string(c, "reason"), TG_AUTH_APPROVAL_REASON);
    json_object_put(csr);
    csr = parse("[]");
    assert_int_equal(tg_auth_csr_approve(csr), -1);
    json_object_put(csr);
}

static void test_read_status(void **state)
{
    static const struct {
        const char *doc;
        tg_auth_csr_state want;
    } cases[] = {
        {"{}", TG_AUTH_CSR_WAITING},
        {"{\"status\":{\"conditions\":[{\"type\":\"Approved\"}]}}", TG_AUTH_CSR_WAITING},
        {"{\"status\":{\"certificate\":\"\"}}", TG_AUTH_CSR_WAITING},
        {"{\"status\":{\"certificate\":\"QQ==\"}}", TG_AUTH_CSR_ISSUED},
        {"{\"status\":{\"conditions\":[{\"type\":\"Denied\"}]}}", TG_AUTH_CSR_REFUSED},
        /* a certificate beside Failed is not taken */
        {"{\"status\":{\"certificate\":\"QQ==\",\"conditions\":[{\"type\":\"Failed\"}]}}", TG_AUTH_CSR_REFUSED},
        {"{\"status\":{\"conditions\":\"junk\",\"certificate\":7}}", TG_AUTH_CSR_WAITING},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *o = parse(cases[i].doc);
        const char *b64 = NULL;
        assert_int_equal(tg_auth_csr_read(o, &b64), cases[i].want);
        if (cases[i].want == TG_AUTH_CSR_ISSUED)
            assert_string_equal(b64, "QQ==");
        json_object_put(o);
    }
}

/* The consumer's own token, kept as Liqo's auth service keeps it, in the
 * namespace given (Liqo: its own namespace). */
static void test_origin_token_secret(void **state)
{
    json_object *d = tg_auth_origin_token_doc("tenantgate-tokens", ID, "cdcd", 4);

    (void)state;
    assert_string_equal(tg_json_path_string(d, "metadata", "name", NULL), "remote-token-" ID);
    assert_string_equal(tg_json_path_string(d, "metadata", "namespace", NULL), "tenantgate-tokens");
    assert_string_equal(tg_json_path_string(d, "metadata", "labels", "discovery.liqo.io/cluster-id", NULL), ID);
    assert_string_equal(tg_json_path_string(d, "metadata", "labels", "discovery.liqo.io/auth-token", NULL), "");
    assert_string_equal(tg_json_path_string(d, "type", NULL), "Opaque");
    assert_string_equal(tg_json_path_string(d, "data", "token", NULL), "Y2RjZA==");
    json_object_put(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_objects), cmocka_unit_test(test_rolebinding_of_group),
                                       cmocka_unit_test(test_approve),
                                       cmocka_unit_test(test_read_status), cmocka_unit_test(test_origin_token_secret)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
