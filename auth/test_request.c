/* test_request.c - the POST /identity/certificate body (request.h) and the
 * CSR policy behind it (csr_policy.h): the v0.10 wire format parses; hostile
 * and malformed bodies are refused with the documented reason. */
#define _GNU_SOURCE /* asprintf */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "auth/csr_policy.h"
#include "auth/request.h"
#include "kube/base64.h"
#include "pki/csr.h"

#define ID "3114c478-173d-4344-8f01-eb21efb95aea"

/* A key by OpenSSL name: "RSA" (2048 bits), "RSA:1024", "EC:P-256", "ED25519". */
static EVP_PKEY *make_key(const char *type)
{
    if (strcmp(type, "RSA") == 0)
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    if (strncmp(type, "RSA:", 4) == 0)
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)strtoul(type + 4, NULL, 10));
    if (strncmp(type, "EC:", 3) == 0)
        return EVP_PKEY_Q_keygen(NULL, NULL, "EC", type + 3);
    return EVP_PKEY_Q_keygen(NULL, NULL, type);
}

static char *csr_b64(const char *type, const char *cn, const char *org)
{
    EVP_PKEY *key = make_key(type);
    size_t len;
    char *pem, *b64;

    assert_non_null(key);
    pem = tg_csr_build_subject(key, cn, org, &len);
    assert_non_null(pem);
    b64 = tg_base64_encode((unsigned char *)pem, len, NULL);
    free(pem);
    EVP_PKEY_free(key);
    return b64;
}

static char *body_with(const char *cluster, const char *token, const char *csr)
{
    char *out;
    assert_true(asprintf(&out,
                         "{\"cluster\":%s,\"originClusterToken\":\"the-consumers-own\","
                         "\"destinationClusterToken\":\"%s\",\"certificateSigningRequest\":\"%s\"}",
                         cluster, token, csr) > 0);
    return out;
}

static int parse(const char *body, tg_auth_request *r, tg_auth_reason *reason)
{
    char why[400];
    int rc = tg_auth_request_parse(body, strlen(body), r, reason, why, sizeof(why));
    if (rc != 0) {
        assert_true(strncmp(why, "expected", 8) == 0);   /* every denial says what was expected */
        assert_null(strstr(why, "s3cret"));              /* and never quotes the token */
    }
    return rc;
}

static void test_wire_format_parses(void **state)
{
    char *csr = csr_b64("ED25519", ID, "liqo.io");
    char *body = body_with("{\"clusterID\":\"" ID "\",\"clusterName\":\"home\"}", "s3cret", csr);
    tg_auth_request r;
    tg_auth_reason reason;
    char why[400];

    assert_int_equal(parse(body, &r, &reason), 0);
    assert_string_equal(r.cluster_id, ID);
    assert_string_equal(r.cluster_name, "home");
    assert_int_equal(r.token_len, 6);
    assert_memory_equal(r.token, "s3cret", 6);
    assert_string_equal(r.origin_token, "the-consumers-own");
    assert_non_null(strstr((char *)r.csr_pem, "BEGIN CERTIFICATE REQUEST"));
    assert_int_equal(tg_auth_csr_check(r.csr_pem, r.csr_len, r.cluster_id, &reason, why, sizeof(why)), 0);
    tg_auth_request_clear(&r);
    assert_null(r.token);
    assert_null(r.origin_token);
    free(body);
    free(csr);
}

/* Issue 45 item 1: Liqo v0.10.3 checks destinationClusterToken (GetToken());
 * originClusterToken is the sender's own token. A token sent only as
 * originClusterToken is no token for this cluster. */
static void test_origin_token_is_not_the_token_checked(void **state)
{
    char *csr = csr_b64("ED25519", ID, "liqo.io"), *body;
    tg_auth_request r;
    tg_auth_reason reason;

    assert_true(asprintf(&body,
                         "{\"cluster\":{\"clusterID\":\"%s\"},\"originClusterToken\":\"s3cret\","
                         "\"destinationClusterToken\":\"\",\"certificateSigningRequest\":\"%s\"}",
                         ID, csr) > 0);
    assert_int_equal(parse(body, &r, &reason), 0);
    assert_int_equal(r.token_len, 0);
    assert_int_equal(r.origin_token_len, 6);
    tg_auth_request_clear(&r);
    free(body);
    free(csr);
}

static void test_absent_token_is_empty(void **state)
{
    char *csr = csr_b64("ED25519", ID, "liqo.io");
    char *body;
    tg_auth_request r;
    tg_auth_reason reason;

    assert_true(asprintf(&body, "{\"cluster\":{\"clusterID\":\"%s\"},\"certificateSigningRequest\":\"%s\"}", ID,
                         csr) > 0);
    assert_int_equal(parse(body, &r, &reason), 0);
    assert_int_equal(r.token_len, 0);
    assert_int_equal(r.origin_token_len, 0);
    tg_auth_request_clear(&r);
    free(body);
    free(csr);
}

static void expect_refused(const char *body, tg_auth_reason want)
{
    tg_auth_request r;
    tg_auth_reason reason = TG_AUTH_ISSUED;

    assert_int_equal(parse(body, &r, &reason), -1);
    assert_int_equal(reason, want);
    tg_auth_request_clear(&r);
}

static void test_malformed_bodies(void **state)
{
    static const char *bad[] = {
        "", "{", "[]", "null", "\"x\"", "{}", "{\"cluster\":\"x\"}",
        "{\"cluster\":{\"clusterID\":\"" ID "\"}}",                                        /* no CSR */
        "{\"cluster\":{\"clusterID\":\"" ID "\"},\"certificateSigningRequest\":\"!!!!\"}", /* not base64 */
        "{\"cluster\":{\"clusterID\":\"" ID "\"},\"certificateSigningRequest\":7}",
        "{\"cluster\":{\"clusterID\":\"" ID "\"},\"originClusterToken\":5,\"certificateSigningRequest\":\"QQ==\"}",
        "{\"cluster\":{\"clusterID\":\"" ID "\"},\"destinationClusterToken\":5,\"certificateSigningRequest\":\"QQ==\"}",
        "{\"cluster\":{\"clusterID\":\"" ID "\",\"clusterName\":[]},\"certificateSigningRequest\":\"QQ==\"}",
        /* duplicate keys: two parsers could pick different ones */
        ("{\"cluster\":{\"clusterID\":\"" ID "\"},\"originClusterToken\":\"a\",\"originClusterToken\":\"b\","
         "\"certificateSigningRequest\":\"QQ==\"}"),
        ("{\"cluster\":{\"clusterID\":\"" ID "\"},\"destinationClusterToken\":\"a\",\"destinationClusterToken\":\"b\","
         "\"certificateSigningRequest\":\"QQ==\"}"),
        "{\"cluster\":{\"clusterID\":\"" ID "\"},\"certificateSigningRequest\":\"QQ==\"} trailing",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refused(bad[i], TG_AUTH_MALFORMED_REQUEST);
}

static void test_hostile_cluster_ids(void **state)
{
    static const char *bad[] = {
        "{\"cluster\":{\"clusterID\":\"\"},\"certificateSigningRequest\":\"QQ==\"}",
        "{\"cluster\":{\"clusterID\":\"../kube-system\"},\"certificateSigningRequest\":\"QQ==\"}",
        "{\"cluster\":{\"clusterID\":\"UPPER\"},\"certificateSigningRequest\":\"QQ==\"}",
        "{\"cluster\":{\"clusterID\":\"a\\u0000b\"},\"certificateSigningRequest\":\"QQ==\"}",
        ("{\"cluster\":{\"clusterID\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},"
         "\"certificateSigningRequest\":\"QQ==\"}"),
        "{\"cluster\":{\"clusterID\":5},\"certificateSigningRequest\":\"QQ==\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refused(bad[i], TG_AUTH_INVALID_CLUSTER_ID);
}

static void test_oversized_token_and_body(void **state)
{
    size_t n = TG_AUTH_MAX_TOKEN + 1;
    char *tok = malloc(n + 1), *body;

    memset(tok, 'a', n);
    tok[n] = '\0';
    body = body_with("{\"clusterID\":\"" ID "\"}", tok, "QQ==");
    expect_refused(body, TG_AUTH_MALFORMED_REQUEST);
    free(body);
    free(tok);
    {
        tg_auth_request r;
        tg_auth_reason reason;
        char why[200];
        assert_int_equal(tg_auth_request_parse("{}", TG_AUTH_MAX_BODY + 1, &r, &reason, why, sizeof(why)), -1);
        assert_int_equal(reason, TG_AUTH_MALFORMED_REQUEST);
    }
}

/* want TG_AUTH_ISSUED: the CSR passes. */
static void expect_csr(const char *type, const char *cn, const char *org, tg_auth_reason want)
{
    char *b64 = csr_b64(type, cn, org);
    size_t len;
    char err[100], why[400] = "";
    unsigned char *pem = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err));
    tg_auth_reason reason = TG_AUTH_ISSUED;

    int rc = tg_auth_csr_check(pem, len, ID, &reason, why, sizeof(why));

    print_message("%s %s %s -> %s %s\n", type, cn, org, tg_auth_reason_name(reason), why);
    assert_int_equal(rc, want == TG_AUTH_ISSUED ? 0 : -1);
    assert_int_equal(reason, want);
    if (want != TG_AUTH_ISSUED)
        assert_non_null(strstr(why, "expected"));
    free(pem);
    free(b64);
}

static void test_csr_policy(void **state)
{
    char why[400];
    tg_auth_reason reason;

    /* another cluster's name, or the admin group, is not what the token buys */
    expect_csr("ED25519", "other-cluster", "liqo.io", TG_AUTH_CSR_SUBJECT_MISMATCH);
    expect_csr("ED25519", ID, "system:masters", TG_AUTH_CSR_SUBJECT_MISMATCH);
    assert_int_equal(tg_auth_csr_check((const unsigned char *)"junk", 4, ID, &reason, why, sizeof(why)), -1);
    assert_int_equal(reason, TG_AUTH_INVALID_CSR);
}

static tg_auth_reason check_group_csr(const char *group, char *why, size_t why_len)
{
    EVP_PKEY *key = make_key("ED25519");
    size_t len;
    char *pem = tg_csr_build_group(key, ID, "liqo.io", group, &len);
    tg_auth_reason reason = TG_AUTH_ISSUED;

    assert_non_null(pem);
    tg_auth_csr_check((unsigned char *)pem, len, ID, &reason, why, why_len);
    print_message("%s -> %s %s\n", group, tg_auth_reason_name(reason), why);
    free(pem);
    EVP_PKEY_free(key);
    return reason;
}

/* A revocable consumer's CSR carries its own per-certificate group beside
 * O=liqo.io (docs/revocation.md); another identity's group, or a look-alike
 * of the form, is NameReserved: the token buys no other identity's rights. */
static void test_csr_cert_group(void **state)
{
    char why[400] = "";

    assert_int_equal(check_group_csr("tenantgate.io/cert:" ID ":0123456789abcdef0123456789abcdef", why, sizeof(why)),
                     TG_AUTH_ISSUED);
    assert_int_equal(check_group_csr("tenantgate.io/cert:other:0123456789abcdef0123456789abcdef", why, sizeof(why)),
                     TG_AUTH_NAME_RESERVED);
    assert_non_null(strstr(why, "expected"));
    assert_int_equal(check_group_csr("TenantGate.io/cert:" ID ":0123456789abcdef0123456789abcdef", why, sizeof(why)),
                     TG_AUTH_NAME_RESERVED);
    assert_int_equal(check_group_csr("tenantgate.io/cert:" ID ":0123", why, sizeof(why)), TG_AUTH_NAME_RESERVED);
}

/* Every --key-type (and Liqo's TLS compatibility mode, RSA-2048) is signed;
 * keys under the webhook's strength policy are not. */
static void test_csr_key_types(void **state)
{
    static const struct {
        const char *type;
        tg_auth_reason want;
    } cases[] = {
        {"ED25519", TG_AUTH_ISSUED},        {"RSA", TG_AUTH_ISSUED},
        {"EC:P-256", TG_AUTH_ISSUED},       {"EC:P-384", TG_AUTH_ISSUED},
        {"RSA:1024", TG_AUTH_WEAK_KEY},     {"EC:secp256k1", TG_AUTH_WEAK_KEY},
        {"EC:P-521", TG_AUTH_WEAK_KEY},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_csr(cases[i].type, ID, "liqo.io", cases[i].want);
}

static void test_uuid_shape(void **state)
{
    assert_true(tg_auth_cluster_id_is_uuid(ID));
    assert_false(tg_auth_cluster_id_is_uuid("admin"));
    assert_false(tg_auth_cluster_id_is_uuid("3114C478-173d-4344-8f01-eb21efb95aea"));
    assert_false(tg_auth_cluster_id_is_uuid("3114c478-173d-4344-8f01-eb21efb95aea0"));
    assert_false(tg_auth_cluster_id_is_uuid("3114c478-173d-4344-8f01eeb21efb95aea"));
    assert_false(tg_auth_cluster_id_is_uuid("3114c478-173d-4344-8f01-eb21efb95ae-"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_format_parses),     cmocka_unit_test(test_absent_token_is_empty),
        cmocka_unit_test(test_malformed_bodies),       cmocka_unit_test(test_hostile_cluster_ids),
        cmocka_unit_test(test_oversized_token_and_body), cmocka_unit_test(test_csr_policy),
        cmocka_unit_test(test_csr_cert_group),
        cmocka_unit_test(test_csr_key_types),
        cmocka_unit_test(test_uuid_shape),
        cmocka_unit_test(test_origin_token_is_not_the_token_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
