/* test_review.c - AdmissionReview parsing and the answer's JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>
#include <openssl/evp.h>

#include "kube/json.h"
#include "webhook/review.h"
#include "test_util.h"

static void test_parse_fixtures(void **state)
{
    static const struct {
        const char *file;
        tg_review_version version;
        const char *uid;
        tg_review_op op;
        const char *sub_resource;
        int has_object, has_old;
    } cases[] = {
        {"review-v1-create-seed-cl01-pemkey.json", TG_REVIEW_V1, "uid-seed-cl01-pemkey", TG_OP_CREATE, "", 1, 0},
        {"review-v1beta1-create-seed-cl01-pemkey.json", TG_REVIEW_V1BETA1, "uid-beta", TG_OP_CREATE, "", 1, 0},
        {"review-v1-update-unchanged-proof.json", TG_REVIEW_V1, "uid-upd-same", TG_OP_UPDATE, "", 1, 1},
        {"review-v1-delete.json", TG_REVIEW_V1, "uid-del", TG_OP_DELETE, "", 0, 1},
        {"review-v1-status-update.json", TG_REVIEW_V1, "uid-status", TG_OP_UPDATE, "status", 1, 1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len;
        char *body = test_read_file(cases[i].file, 0, &len);
        tg_review_request req;
        char err[256];

        assert_non_null(body);
        assert_int_equal(tg_review_parse(body, len, &req, err, sizeof(err)), 0);
        assert_int_equal(req.version, cases[i].version);
        assert_string_equal(req.uid, cases[i].uid);
        assert_int_equal(req.op, cases[i].op);
        assert_string_equal(req.resource_group, "authentication.liqo.io");
        assert_string_equal(req.resource, "tenants");
        assert_string_equal(req.sub_resource, cases[i].sub_resource);
        assert_string_equal(req.kind, "Tenant");
        assert_string_equal(req.namespace_, "liqo-tenant-cl01");
        assert_int_equal(req.object != NULL, cases[i].has_object);
        assert_int_equal(req.old_object != NULL, cases[i].has_old);
        tg_review_request_clear(&req);
        free(body);
    }
}

#define REQ_OK "\"resource\":{\"group\":\"g\",\"resource\":\"r\"},\"operation\":\"CREATE\""

static void test_parse_rejects(void **state)
{
    static const struct {
        const char *body;
        const char *want_uid;          /* echoed even when the review is unusable */
        tg_review_version version;
        const char *err_part;
    } cases[] = {
        {"", "", TG_REVIEW_V1, "invalid JSON"},
        {"{\"apiVersion\":", "", TG_REVIEW_V1, "invalid JSON"},
        {"[1,2]", "", TG_REVIEW_V1, "AdmissionReview object"},
        {"null", "", TG_REVIEW_V1, "invalid JSON"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "", TG_REVIEW_V1,
         "request"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{" REQ_OK "}}", "",
         TG_REVIEW_V1, "request.uid"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":7," REQ_OK
         "}}",
         "", TG_REVIEW_V1, "request.uid"},
        {"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"u1\"," REQ_OK
         "}}",
         "u1", TG_REVIEW_V1BETA1, "kind"},
        {"{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u2\"," REQ_OK
         "}}",
         "u2", TG_REVIEW_V1, "apiVersion"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u3\"}}",
         "u3", TG_REVIEW_V1, "request.resource"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u4\","
         "\"resource\":{},\"operation\":\"CREATE\",\"object\":\"text\"}}",
         "u4", TG_REVIEW_V1, "request.object"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u5\","
         "\"resource\":{}}}",
         "u5", TG_REVIEW_V1, "request.operation"},
        /* two "kind" keys: parsers disagreeing on duplicates is a smuggling trick */
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"kind\":\"AdmissionReview\","
         "\"request\":{\"uid\":\"u6\"," REQ_OK "}}",
         "", TG_REVIEW_V1, "invalid JSON"},
        /* case matters: "Request" is not "request" */
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"Request\":{\"uid\":\"u7\"," REQ_OK
         "}}",
         "", TG_REVIEW_V1, "request"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"\xff\"," REQ_OK
         "}}",
         "", TG_REVIEW_V1, "invalid JSON"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_review_request req;
        char err[256] = "";

        assert_int_equal(tg_review_parse(cases[i].body, strlen(cases[i].body), &req, err, sizeof(err)), -1);
        assert_string_equal(req.uid, cases[i].want_uid);
        assert_int_equal(req.version, cases[i].version);
        if (!strstr(err, cases[i].err_part))
            fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, err, cases[i].err_part);
        tg_review_request_clear(&req);
    }

    /* A long uid is not one the API server sent: not echoed. */
    char body[600];
    char uid[300];
    memset(uid, 'a', sizeof(uid) - 1);
    uid[sizeof(uid) - 1] = '\0';
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"%s\","
             REQ_OK "}}",
             uid);
    tg_review_request req;
    char err[256];
    assert_int_equal(tg_review_parse(body, strlen(body), &req, err, sizeof(err)), -1);
    assert_string_equal(req.uid, "");
    tg_review_request_clear(&req);
}

/* Parse our own answer back and check its fields. */
static json_object *answer(tg_review_version v, const char *uid, const tg_review_response *r)
{
    size_t len;
    char *text = tg_review_response_json(v, uid, r, &len);
    json_object *o;

    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    o = tg_json_parse(text, len, NULL, 0);
    assert_non_null(o);
    free(text);
    return o;
}

static void test_response_allowed(void **state)
{
    tg_review_response r = {.allowed = 1};
    size_t len;
    char *text = tg_review_response_json(TG_REVIEW_V1, "705ab4f5-6393-11e8-b7cc-42010a800002", &r, &len);

    assert_string_equal(text, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                              "\"response\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\",\"allowed\":true}}");
    free(text);

    text = tg_review_response_json(TG_REVIEW_V1BETA1, "u\"q", &r, &len);
    assert_string_equal(text, "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                              "\"response\":{\"uid\":\"u\\\"q\",\"allowed\":true}}");
    free(text);
}

static void test_response_denied_with_warnings(void **state)
{
    tg_review_response r = {
        .allowed = 0,
        .code = 403,
        .message = "Duplicate: expected no other Tenant in namespace liqo-tenant-x, found 1",
        .reason = "Forbidden",
        .warnings = {"w1", "w/2"},
        .nwarnings = 2,
        .patch = "[]",           /* a denial carries no patch */
        .patch_len = 2,
    };
    json_object *o = answer(TG_REVIEW_V1, "u1", &r);

    assert_string_equal(tg_json_path_string(o, "response", "uid", NULL), "u1");
    assert_false(json_object_get_boolean(tg_json_path(o, "response", "allowed", NULL)));
    assert_int_equal(json_object_get_int(tg_json_path(o, "response", "status", "code", NULL)), 403);
    assert_string_equal(tg_json_path_string(o, "response", "status", "message", NULL), r.message);
    assert_string_equal(tg_json_path_string(o, "response", "status", "reason", NULL), "Forbidden");
    json_object *w = tg_json_path(o, "response", "warnings", NULL);
    assert_int_equal(json_object_array_length(w), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(w, 1)), "w/2");
    assert_null(tg_json_path(o, "response", "patch", NULL));
    /* a verdict: no retry hint */
    assert_null(tg_json_path(o, "response", "status", "details", NULL));
    json_object_put(o);
}

/* "Retry later" answers carry status.details.retryAfterSeconds, the field
 * the API server turns into a Retry-After header; allowed answers never. */
static void test_response_retry_after(void **state)
{
    tg_review_response busy = {.allowed = 0, .code = 429, .message = "LiveReadBusy: retry later",
                               .reason = "TooManyRequests", .retry_after_s = 1};
    tg_review_response allowed = {.allowed = 1, .retry_after_s = 1};
    json_object *o = answer(TG_REVIEW_V1, "u1", &busy);

    assert_int_equal(json_object_get_int(tg_json_path(o, "response", "status", "code", NULL)), 429);
    assert_string_equal(tg_json_path_string(o, "response", "status", "reason", NULL), "TooManyRequests");
    assert_int_equal(json_object_get_int(tg_json_path(o, "response", "status", "details", "retryAfterSeconds", NULL)),
                     1);
    json_object_put(o);
    o = answer(TG_REVIEW_V1BETA1, "u2", &allowed);
    assert_null(tg_json_path(o, "response", "status", NULL));
    json_object_put(o);
}

static void test_response_patch_base64(void **state)
{
    static const char patch[] =
        "[{\"op\":\"add\",\"path\":\"/metadata/labels/liqo.io~1remote-cluster-id\",\"value\":\"cl01\"}]";
    tg_review_response r = {.allowed = 1, .patch = patch, .patch_len = sizeof(patch) - 1};
    json_object *o = answer(TG_REVIEW_V1, "u1", &r);
    const char *b64 = tg_json_path_string(o, "response", "patch", NULL);
    unsigned char decoded[256];
    int n;

    assert_string_equal(tg_json_path_string(o, "response", "patchType", NULL), "JSONPatch");
    assert_non_null(b64);
    assert_int_equal(strlen(b64) % 4, 0);
    n = EVP_DecodeBlock(decoded, (const unsigned char *)b64, (int)strlen(b64));
    assert_true(n >= (int)sizeof(patch) - 1);
    /* EVP_DecodeBlock counts padding as zero bytes: compare the payload */
    assert_memory_equal(decoded, patch, sizeof(patch) - 1);
    for (int i = (int)sizeof(patch) - 1; i < n; i++)
        assert_int_equal(decoded[i], 0);
    json_object_put(o);
}

/* The answer as json-c writes it from a tree (how tg_review_response_json
 * built it before it wrote the text directly): the oracle for the bytes. */
static char *answer_by_json_c(tg_review_version version, const char *uid, const tg_review_response *resp)
{
    json_object *root = json_object_new_object(), *response = json_object_new_object();
    char *copy;

    json_object_object_add(root, "apiVersion", json_object_new_string(version == TG_REVIEW_V1BETA1
                                                                          ? "admission.k8s.io/v1beta1"
                                                                          : "admission.k8s.io/v1"));
    json_object_object_add(root, "kind", json_object_new_string("AdmissionReview"));
    json_object_object_add(response, "uid", json_object_new_string(uid));
    json_object_object_add(response, "allowed", json_object_new_boolean(resp->allowed));
    if (!resp->allowed) {
        json_object *status = json_object_new_object();
        json_object_object_add(status, "code", json_object_new_int(resp->code));
        json_object_object_add(status, "message", json_object_new_string(resp->message));
        if (resp->reason)
            json_object_object_add(status, "reason", json_object_new_string(resp->reason));
        if (resp->retry_after_s > 0) {
            json_object *details = json_object_new_object();
            json_object_object_add(details, "retryAfterSeconds", json_object_new_int(resp->retry_after_s));
            json_object_object_add(status, "details", details);
        }
        json_object_object_add(response, "status", status);
    }
    if (resp->nwarnings > 0) {
        json_object *w = json_object_new_array();
        for (size_t i = 0; i < resp->nwarnings; i++)
            json_object_array_add(w, json_object_new_string(resp->warnings[i]));
        json_object_object_add(response, "warnings", w);
    }
    if (resp->allowed && resp->patch) {
        unsigned char b64[512];
        int n = EVP_EncodeBlock(b64, (const unsigned char *)resp->patch, (int)resp->patch_len);
        json_object_object_add(response, "patchType", json_object_new_string("JSONPatch"));
        json_object_object_add(response, "patch", json_object_new_string_len((const char *)b64, n));
    }
    json_object_object_add(root, "response", response);
    copy = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    return copy;
}

/* Byte for byte what json-c writes, on strings with every kind of byte. */
static void test_response_matches_json_c(void **state)
{
    static char all_controls[40], high[140];
    static const char *const strings[] = {
        "", "plain-uid-0001", "q\"uote", "back\\slash", "sl/ash//", "tab\there\nnl\rcr\bbs\fff",
        "del\x7f", "utf8 \xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80", "bad \xff\xfe \xc3", all_controls, high,
        "Duplicate: expected no other Tenant in namespace liqo-tenant-x, found 1",
    };
    static const char patch[] = "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{}}]";
    const size_t n = sizeof(strings) / sizeof(strings[0]);

    for (int i = 1; i < 0x20; i++)
        all_controls[i - 1] = (char)i;
    for (int i = 0x7f; i <= 0xff && i - 0x7f < (int)sizeof(high) - 1; i++)
        high[i - 0x7f] = (char)i;
    for (size_t i = 0; i < n; i++) {
        const char *str = strings[i], *other = strings[(i + 3) % n];
        const tg_review_response cases[] = {
            {.allowed = 1},
            {.allowed = 1, .patch = patch, .patch_len = sizeof(patch) - 1},
            {.allowed = 1, .warnings = {str, other}, .nwarnings = 2},
            {.allowed = 0, .code = 403, .message = str, .reason = "Forbidden"},
            {.allowed = 0, .code = 500, .message = other, .reason = str, .warnings = {str}, .nwarnings = 1},
            {.allowed = 0, .code = 429, .message = str, .reason = "TooManyRequests", .retry_after_s = 1},
            {.allowed = 0, .code = 503, .message = other, .retry_after_s = 30},
            {.allowed = 0, .code = 400, .message = str, .patch = patch, .patch_len = 3},
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            for (int v = 0; v < 2; v++) {
                tg_review_version version = v ? TG_REVIEW_V1BETA1 : TG_REVIEW_V1;
                size_t len = 0;
                char *got = tg_review_response_json(version, str, &cases[c], &len);
                char *want = answer_by_json_c(version, str, &cases[c]);
                assert_non_null(got);
                if (strcmp(got, want) != 0)
                    fail_msg("string %zu, case %zu:\n got  %s\n want %s", i, c, got, want);
                assert_int_equal(len, strlen(got));
                free(got);
                free(want);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_fixtures),
        cmocka_unit_test(test_parse_rejects),
        cmocka_unit_test(test_response_allowed),
        cmocka_unit_test(test_response_denied_with_warnings),
        cmocka_unit_test(test_response_retry_after),
        cmocka_unit_test(test_response_patch_base64),
        cmocka_unit_test(test_response_matches_json_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
