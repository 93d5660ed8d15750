/* test_liqo_vectors.c - the server against Liqo v0.10.3's wire format as
 * Go's encoding/json writes it (auth/testdata/liqo-v0.10.3, README there):
 * the consumer's requests parse with the provider's token as the one checked
 * and the consumer's own as the origin, and the answers are byte for byte
 * what Liqo's server would send. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "auth/answer.h"
#include "auth/csr_policy.h"
#include "auth/request.h"
#include "kube/base64.h"
#include "kube/kubeconfig.h"

#define SELF "3f1c2b4e-8d7a-4c59-9e61-0a2b3c4d5e6f"

/* A vector file, NUL-terminated. */
static char *vector(const char *name, size_t *len)
{
    const char *src = getenv("TG_SOURCE_DIR");
    char path[1024], err[256], *buf;
    size_t n;

    snprintf(path, sizeof(path), "%s/auth/testdata/liqo-v0.10.3/%s", src ? src : ".", name);
    if (tg_kube_read_file(path, 1 << 16, &buf, &n, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    *len = n;
    return buf;
}

static char *repeat(const char *two)
{
    char *s = malloc(129);
    for (int i = 0; i < 64; i++)
        memcpy(s + 2 * i, two, 2);
    s[128] = '\0';
    return s;
}

static void parse_vector(const char *name, const char *want_origin)
{
    size_t len;
    char *body = vector(name, &len), *dest = repeat("ab"), why[400];
    tg_auth_request r;
    tg_auth_reason reason;

    if (tg_auth_request_parse(body, len, &r, &reason, why, sizeof(why)) != 0)
        fail_msg("%s: %s", name, why);
    assert_string_equal(r.cluster_id, SELF);
    assert_string_equal(r.cluster_name, SELF);
    assert_string_equal(r.token, dest);            /* destinationClusterToken is the one checked */
    assert_string_equal(r.origin_token, want_origin);
    if (tg_auth_csr_check(r.csr_pem, r.csr_len, r.cluster_id, &reason, why, sizeof(why)) != 0)
        fail_msg("%s: CSR refused: %s", name, why);
    tg_auth_request_clear(&r);
    free(dest);
    free(body);
}

static void test_requests_parse(void **state)
{
    char *origin = repeat("cd");

    (void)state;
    parse_vector("identity-request.json", origin);
    parse_vector("identity-request-no-origin.json", "");
    free(origin);
}

/* A base64 member of the vector, decoded. */
static unsigned char *member_pem(json_object *doc, const char *key, size_t *len)
{
    json_object *v;
    const char *s;

    assert_true(json_object_object_get_ex(doc, key, &v));
    s = json_object_get_string(v);
    return tg_base64_decode(s, strlen(s), len, NULL, 0);
}

static void test_identity_answer_is_gos_bytes(void **state)
{
    size_t len, cert_len, ca_len, got_len;
    char *want = vector("identity-response.json", &len), *got;
    json_object *doc = json_tokener_parse(want);
    unsigned char *cert = member_pem(doc, "certificate", &cert_len), *ca = member_pem(doc, "apiServerCA", &ca_len);

    (void)state;
    got = tg_auth_answer_identity("liqo-tenant-" SELF, (char *)cert, cert_len, "https://provider.example:6443",
                                  (char *)ca, ca_len, &got_len);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(got_len, len);
    free(got);
    /* no CA: apiServerCA left out (omitempty), aws still there */
    got = tg_auth_answer_identity("ns", (char *)cert, cert_len, "https://p:6443", NULL, 0, &got_len);
    assert_null(strstr(got, "apiServerCA"));
    assert_non_null(strstr(got, "\"aws\":{\"accessKeyID\":\"\""));
    free(got);
    free(cert);
    free(ca);
    json_object_put(doc);
    free(want);
}

static void test_ids_answer_is_gos_bytes(void **state)
{
    size_t len, got_len;
    char *want = vector("ids-response.json", &len), *got = tg_auth_answer_ids("provider-1", "prov", &got_len);

    (void)state;
    assert_string_equal(got, want);
    free(got);
    free(want);
    want = vector("ids-response-no-name.json", &len);
    got = tg_auth_answer_ids("provider-1", "", &got_len);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_parse),
        cmocka_unit_test(test_identity_answer_is_gos_bytes),
        cmocka_unit_test(test_ids_answer_is_gos_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
