#define _GNU_SOURCE /* asprintf */
/* test_v1.c - the v1 one-string peering's pure parts: the two bodies
 * (v1_request.h), whether a token Secret accepts a token (btoken_record.h),
 * and the documents and answers (v1_docs.h). Hostile bodies are refused with
 * the documented reason; every way a token is not good gives the same 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "auth/btoken_record.h"
#include "auth/v1_docs.h"
#include "auth/v1_request.h"
#include "kube/base64.h"
#include "kube/json.h"

#define TOKEN "abc123.0123456789abcdefghijklmnopqrstuv"
#define ID "3114c478-173d-4344-8f01-eb21efb95aea"

static int parse_nonce(const char *body, tg_auth_reason *reason)
{
    tg_auth_v1_request r;
    char why[400];
    int rc = tg_auth_v1_parse_nonce(body, strlen(body), &r, reason, why, sizeof(why));

    assert_null(strstr(why, "0123456789abcdef"));   /* never the secret */
    tg_auth_v1_request_clear(&r);
    return rc;
}

static int parse_tenant(const char *body, tg_auth_v1_request *r, tg_auth_reason *reason)
{
    char why[400];
    int rc = tg_auth_v1_parse_tenant(body, strlen(body), r, reason, why, sizeof(why));

    assert_null(strstr(why, "0123456789abcdef"));
    return rc;
}

static void test_nonce_body(void **state)
{
    tg_auth_v1_request r;
    tg_auth_reason reason;
    char why[200];
    const char *ok = "{\"token\":\"" TOKEN "\",\"clusterID\":\"" ID "\",\"extra\":1}";

    assert_int_equal(tg_auth_v1_parse_nonce(ok, strlen(ok), &r, &reason, why, sizeof(why)), 0);
    assert_string_equal(r.cluster_id, ID);
    assert_string_equal(r.token.id, "abc123");
    assert_string_equal(r.token.secret, "0123456789abcdefghijklmnopqrstuv");
    tg_auth_v1_request_clear(&r);
    assert_int_equal(r.token.secret[0], 0);
}

static void test_hostile_nonce_bodies(void **state)
{
    static const struct {
        const char *body;
        tg_auth_reason want;
    } cases[] = {
        {"", TG_AUTH_MALFORMED_REQUEST},
        {"[]", TG_AUTH_MALFORMED_REQUEST},
        {"null", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":\"" ID "\",\"clusterID\":\"x\"}", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\"}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":\"\"}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":\"../kube-system\"}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":\"a\\u0000b\"}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":\"UPPER\"}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"" TOKEN "\",\"clusterID\":7}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"clusterID\":\"" ID "\"}", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":5,\"clusterID\":\"" ID "\"}", TG_AUTH_MALFORMED_REQUEST},
        /* a token of the wrong shape is answered as a wrong token: no oracle */
        {"{\"token\":\"abc\",\"clusterID\":\"" ID "\"}", TG_AUTH_INVALID_TOKEN},
        {"{\"token\":\"ABC123.0123456789abcdefghijklmnopqrstuv\",\"clusterID\":\"" ID "\"}", TG_AUTH_INVALID_TOKEN},
        {"{\"token\":\"abc123.0123456789abcdefghijklmnopqrstuv \",\"clusterID\":\"" ID "\"}",
         TG_AUTH_INVALID_TOKEN},
    };
    char long_id[200];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_auth_reason reason = TG_AUTH_ISSUED;
        assert_int_equal(parse_nonce(cases[i].body, &reason), -1);
        if (reason != cases[i].want)
            fail_msg("case %zu: %s, expected %s", i, tg_auth_reason_name(reason), tg_auth_reason_name(cases[i].want));
    }
    memset(long_id, 'a', 64);
    long_id[64] = '\0';
    {
        char *b = NULL;
        tg_auth_reason reason;
        assert_true(asprintf(&b, "{\"token\":\"" TOKEN "\",\"clusterID\":\"%s\"}", long_id) > 0);
        assert_int_equal(parse_nonce(b, &reason), -1);
        assert_int_equal(reason, TG_AUTH_INVALID_CLUSTER_ID);
        free(b);
    }
}

static void test_tenant_body_keeps_only_the_spec(void **state)
{
    tg_auth_v1_request r;
    tg_auth_reason reason;
    const char *body = "{\"token\":\"" TOKEN "\",\"tenant\":{\"apiVersion\":\"" TG_AUTH_TENANT_API "\","
                       "\"kind\":\"Tenant\",\"metadata\":{\"name\":\"evil\",\"namespace\":\"kube-system\","
                       "\"labels\":{\"x\":\"y\"},\"finalizers\":[\"f\"]},\"status\":{\"tenantNamespace\":\"t\"},"
                       "\"spec\":{\"clusterID\":\"" ID "\",\"publicKey\":\"cGs=\"}}}";

    assert_int_equal(parse_tenant(body, &r, &reason), 0);
    assert_string_equal(r.cluster_id, ID);
    assert_string_equal(tg_json_path_string(r.tenant, "metadata", "name", NULL), ID);
    assert_string_equal(tg_json_path_string(r.tenant, "metadata", "namespace", NULL), "liqo-tenant-" ID);
    assert_string_equal(tg_json_path_string(r.tenant, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), ID);
    assert_null(tg_json_path(r.tenant, "metadata", "labels", "x", NULL));
    assert_null(tg_json_path(r.tenant, "metadata", "finalizers", NULL));
    assert_null(tg_json_path(r.tenant, "status", NULL));
    assert_string_equal(tg_json_path_string(r.tenant, "spec", "publicKey", NULL), "cGs=");
    tg_auth_v1_request_clear(&r);
}

static void test_hostile_tenant_bodies(void **state)
{
    static const struct {
        const char *body;
        tg_auth_reason want;
    } cases[] = {
        {"{\"token\":\"" TOKEN "\"}", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"tenant\":[]}", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"tenant\":{\"apiVersion\":\"v1\",\"kind\":\"Tenant\",\"spec\":{}}}",
         TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"tenant\":{\"apiVersion\":\"" TG_AUTH_TENANT_API "\",\"kind\":\"Secret\","
         "\"spec\":{\"clusterID\":\"" ID "\"}}}", TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"tenant\":{\"apiVersion\":\"" TG_AUTH_TENANT_API "\",\"kind\":\"Tenant\"}}",
         TG_AUTH_MALFORMED_REQUEST},
        {"{\"token\":\"" TOKEN "\",\"tenant\":{\"apiVersion\":\"" TG_AUTH_TENANT_API "\",\"kind\":\"Tenant\","
         "\"spec\":{\"clusterID\":\"a/b\"}}}", TG_AUTH_INVALID_CLUSTER_ID},
        {"{\"token\":\"x\",\"tenant\":{\"apiVersion\":\"" TG_AUTH_TENANT_API "\",\"kind\":\"Tenant\","
         "\"spec\":{\"clusterID\":\"" ID "\"}}}", TG_AUTH_INVALID_TOKEN},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_auth_v1_request r;
        tg_auth_reason reason = TG_AUTH_ISSUED;
        assert_int_equal(parse_tenant(cases[i].body, &r, &reason), -1);
        tg_auth_v1_request_clear(&r);
        if (reason != cases[i].want)
            fail_msg("case %zu: %s, expected %s", i, tg_auth_reason_name(reason), tg_auth_reason_name(cases[i].want));
    }
}

/* --- token records ---------------------------------------------------------- */

static char *b64(const char *s)
{
    return tg_base64_encode((const unsigned char *)s, strlen(s), NULL);
}

static json_object *record(const char *type, const char *id, const char *secret, const char *expiration,
                           const char *usage)
{
    json_object *s = json_object_new_object(), *m = json_object_new_object(), *d = json_object_new_object();
    char hash[TG_BTOKEN_HASH_HEX_LEN + 1];
    const char *vals[4];
    const char *keys[] = {"token-id", "secret-sha256", "expiration", "usage"};

    tg_btoken_hash_hex(secret, hash);
    vals[0] = id;
    vals[1] = hash;
    vals[2] = expiration;
    vals[3] = usage;
    json_object_object_add(s, "type", json_object_new_string(type));
    json_object_object_add(m, "uid", json_object_new_string("u-1"));
    json_object_object_add(m, "resourceVersion", json_object_new_string("42"));
    json_object_object_add(s, "metadata", m);
    for (int i = 0; i < 4; i++) {
        char *v = b64(vals[i]);
        json_object_object_add(d, keys[i], json_object_new_string(v));
        free(v);
    }
    json_object_object_add(s, "data", d);
    return s;
}

static tg_btoken token(void)
{
    tg_btoken t;
    char why[100];

    assert_int_equal(tg_btoken_parse(TOKEN, strlen(TOKEN), &t, why, sizeof(why)), 0);
    return t;
}

#define NOW ((time_t)1800000000)   /* 2027-01-15T08:00:00Z */
#define SECRET "0123456789abcdefghijklmnopqrstuv"

static void test_record_accepts_the_token(void **state)
{
    tg_btoken t = token();
    tg_auth_btoken_record rec;
    json_object *s = record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:01Z", "single-use");

    assert_true(tg_auth_btoken_accepts(s, &t, NOW, &rec));
    assert_true(rec.single_use);
    assert_string_equal(rec.uid, "u-1");
    assert_string_equal(rec.resource_version, "42");
    json_object_put(s);
    s = record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:01Z", "reusable");
    assert_true(tg_auth_btoken_accepts(s, &t, NOW, &rec));
    assert_false(rec.single_use);
    json_object_put(s);
}

static void test_record_refusals_are_alike(void **state)
{
    tg_btoken t = token();
    tg_auth_btoken_record rec;
    json_object *cases[] = {
        NULL,                                                                        /* unknown id */
        record("Opaque", "abc123", SECRET, "2027-01-15T08:00:01Z", "reusable"),       /* not a token */
        record(TG_AUTH_BTOKEN_TYPE, "zzz999", SECRET, "2027-01-15T08:00:01Z", "reusable"),  /* another id */
        record(TG_AUTH_BTOKEN_TYPE, "abc123", "0123456789abcdefghijklmnopqrstuw", "2027-01-15T08:00:01Z",
               "reusable"),                                                          /* wrong secret */
        record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:00Z", "reusable"),  /* expired now */
        record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2020-01-01T00:00:00Z", "reusable"),
        record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:01+01:00", "reusable"),
        record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "tomorrow", "reusable"),
        record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:01Z", "forever"),
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (tg_auth_btoken_accepts(cases[i], &t, NOW, &rec))
            fail_msg("case %zu accepted", i);
        json_object_put(cases[i]);
    }
}

static void test_rfc3339(void **state)
{
    assert_int_equal(tg_auth_rfc3339_utc("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(tg_auth_rfc3339_utc("2027-01-15T08:00:00Z"), 1800000000);
    assert_int_equal(tg_auth_rfc3339_utc("2027-13-15T08:00:00Z"), -1);
    assert_int_equal(tg_auth_rfc3339_utc("2027-01-15 08:00:00Z"), -1);
    assert_int_equal(tg_auth_rfc3339_utc("2027-01-15T08:00:00"), -1);
    assert_int_equal(tg_auth_rfc3339_utc(""), -1);
}

static void test_nonce_places(void **state)
{
    tg_auth_btoken_record rec = {0};

    /* single-use: one id, retried as often as wanted */
    rec.single_use = 1;
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "a", 3), TG_AUTH_NONCE_RECORD);
    strcpy(rec.nonce_ids, "a");
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "a", 3), TG_AUTH_NONCE_KNOWN);
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "b", 3), TG_AUTH_NONCE_EXHAUSTED);
    /* reusable: max ids */
    rec.single_use = 0;
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "b", 3), TG_AUTH_NONCE_RECORD);
    strcpy(rec.nonce_ids, "a,bb,c");
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "b", 3), TG_AUTH_NONCE_EXHAUSTED);   /* not a prefix match */
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "bb", 3), TG_AUTH_NONCE_KNOWN);
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "c", 3), TG_AUTH_NONCE_KNOWN);
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "d", 4), TG_AUTH_NONCE_RECORD);
    /* a list this server would not write counts as full */
    strcpy(rec.nonce_ids, "a,,b");
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "z", 10), TG_AUTH_NONCE_EXHAUSTED);
    strcpy(rec.nonce_ids, "a,");
    assert_int_equal(tg_auth_btoken_nonce_room(&rec, "z", 10), TG_AUTH_NONCE_EXHAUSTED);
}

static void test_record_reads_the_nonce_ids(void **state)
{
    tg_btoken t = token();
    tg_auth_btoken_record rec;
    json_object *s = record(TG_AUTH_BTOKEN_TYPE, "abc123", SECRET, "2027-01-15T08:00:01Z", "reusable"), *a;

    assert_true(tg_auth_btoken_accepts(s, &t, NOW, &rec));
    assert_string_equal(rec.nonce_ids, "");
    a = json_object_new_object();
    json_object_object_add(a, TG_AUTH_BTOKEN_NONCE_IDS, json_object_new_string("x,y"));
    json_object_object_add(tg_json_path(s, "metadata", NULL), "annotations", a);
    assert_true(tg_auth_btoken_accepts(s, &t, NOW, &rec));
    assert_string_equal(rec.nonce_ids, "x,y");
    json_object_put(s);
}

/* --- documents and answers -------------------------------------------------- */

static void test_namespace_and_record_docs(void **state)
{
    json_object *ns = tg_auth_v1_namespace_doc(ID, "abc123");
    json_object *p = tg_auth_v1_record_nonce_doc("", ID, "7"), *q = tg_auth_v1_record_nonce_doc("x,y", ID, "8");

    assert_string_equal(tg_json_path_string(ns, "metadata", "name", NULL), "liqo-tenant-" ID);
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", "liqo.io/tenant-namespace", NULL), "true");
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), ID);
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", TG_AUTH_BTOKEN_ID_LABEL, NULL), "abc123");
    assert_string_equal(tg_json_path_string(p, "metadata", "resourceVersion", NULL), "7");
    assert_string_equal(tg_json_path_string(p, "metadata", "annotations", TG_AUTH_BTOKEN_NONCE_IDS, NULL), ID);
    assert_string_equal(tg_json_path_string(q, "metadata", "annotations", TG_AUTH_BTOKEN_NONCE_IDS, NULL),
                        "x,y," ID);
    json_object_put(ns);
    json_object_put(p);
    json_object_put(q);
}

static void test_docs(void **state)
{
    json_object *s = json_object_new_object(), *d = tg_auth_v1_consume_doc("u-1", "42"), *tenant;
    char nonce[64], msg[64];
    size_t len = 0;
    char *ans, *enc = b64("n0nce");

    assert_string_equal(tg_json_path_string(d, "preconditions", "uid", NULL), "u-1");
    assert_string_equal(tg_json_path_string(d, "preconditions", "resourceVersion", NULL), "42");
    assert_int_equal(tg_auth_v1_nonce_of(s, nonce, sizeof(nonce)), -1);   /* not filled yet */
    json_object_object_add(s, "data", json_object_new_object());
    json_object_object_add(tg_json_path(s, "data", NULL), "nonce", json_object_new_string(enc));
    assert_int_equal(tg_auth_v1_nonce_of(s, nonce, sizeof(nonce)), 0);
    assert_string_equal(nonce, "n0nce");
    const char *signed_tenant = "{\"status\":{\"tenantNamespace\":\"t\",\"authParams\":{\"signedCRT\":\"c\"}}}";

    tenant = tg_json_parse(signed_tenant, strlen(signed_tenant), NULL, 0);
    assert_non_null(tenant);
    assert_true(tg_auth_v1_tenant_signed(tenant));
    ans = tg_auth_v1_answer_tenant("prov", tenant, "https://api", "PEM", 3, &len);
    assert_non_null(strstr(ans, "\"apiServerCA\":\"UEVN\""));
    free(ans);
    tg_auth_v1_status_message("{\"message\":\"denied\\nby webhook\"}", 32, msg, sizeof(msg));
    assert_string_equal(msg, "denied by webhook");
    tg_auth_v1_status_message("not json", 8, msg, sizeof(msg));
    assert_string_equal(msg, "");
    free(enc);
    json_object_put(tenant);
    json_object_put(s);
    json_object_put(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonce_body),          cmocka_unit_test(test_hostile_nonce_bodies),
        cmocka_unit_test(test_tenant_body_keeps_only_the_spec), cmocka_unit_test(test_hostile_tenant_bodies),
        cmocka_unit_test(test_record_accepts_the_token), cmocka_unit_test(test_record_refusals_are_alike),
        cmocka_unit_test(test_rfc3339),             cmocka_unit_test(test_docs),
        cmocka_unit_test(test_nonce_places),        cmocka_unit_test(test_record_reads_the_nonce_ids),
        cmocka_unit_test(test_namespace_and_record_docs),
    };
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
