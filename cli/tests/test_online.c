/* test_online.c - the pure part of the online commands: the objects they
 * create, reading a Tenant's status, the Identity built from it, durations,
 * progress lines and API error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "online.h"
#include "kube/json.h"
#include "status_cert.h"   /* made once by make_status_cert.sh */

static json_object *parse(const char *text)
{
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);

    assert_non_null(o);
    return o;
}

static void test_tenant_namespace(void **state)
{
    (void)state;
    json_object *ns = cli_tenant_namespace_object("cl-consumer");

    assert_string_equal(tg_json_string(ns, "kind"), "Namespace");
    assert_string_equal(tg_json_path_string(ns, "metadata", "name", NULL), "liqo-tenant-cl-consumer");
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", "liqo.io/tenant-namespace", NULL),
                        "true");
    assert_string_equal(tg_json_path_string(ns, "metadata", "labels", "liqo.io/remote-cluster-id", NULL),
                        "cl-consumer");
    json_object_put(ns);
}

static void test_nonce_secrets(void **state)
{
    (void)state;
    const char *nonce = "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";
    json_object *n = cli_nonce_secret_object("liqo-tenant-c", "c");
    json_object *s = cli_signed_nonce_secret_object("liqo-tenant-p", "p", nonce);
    unsigned char *back;
    size_t len = 0;

    assert_string_equal(tg_json_path_string(n, "metadata", "name", NULL), "liqo-nonce");
    assert_string_equal(tg_json_path_string(n, "metadata", "namespace", NULL), "liqo-tenant-c");
    assert_string_equal(tg_json_path_string(n, "metadata", "labels", "liqo.io/nonce", NULL), "true");
    assert_string_equal(tg_json_path_string(n, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), "c");
    assert_null(tg_json_path(n, "data", NULL));     /* the signer fills it */
    assert_null(cli_secret_data(n, "nonce", NULL));

    assert_string_equal(tg_json_path_string(s, "metadata", "name", NULL), "liqo-signed-nonce");
    assert_string_equal(tg_json_path_string(s, "metadata", "labels", "liqo.io/signed-nonce", NULL), "true");
    assert_string_equal(tg_json_path_string(s, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), "p");
    /* data.nonce is the base64 of the nonce text, and reads back. */
    back = cli_secret_data(s, "nonce", &len);
    assert_non_null(back);
    assert_int_equal(len, 88);
    assert_memory_equal(back, nonce, 88);
    free(back);
    json_object_put(n);
    json_object_put(s);
}

static void test_secret_data_rejects_bad_base64(void **state)
{
    (void)state;
    json_object *s = parse("{\"data\":{\"a\":\"not base64!\",\"b\":\"\",\"c\":\"aGk=\"}}");
    size_t len = 0;
    unsigned char *c = cli_secret_data(s, "c", &len);

    assert_null(cli_secret_data(s, "a", NULL));
    assert_null(cli_secret_data(s, "b", NULL));
    assert_null(cli_secret_data(s, "missing", NULL));
    assert_non_null(c);
    assert_int_equal(len, 2);
    assert_string_equal((char *)c, "hi");
    free(c);
    json_object_put(s);
}

/* A Tenant whose status holds a certificate for its spec.publicKey, or for
 * another key (STATUS_* and OTHER_*: status_cert.h). */
static json_object *tenant_with(const char *pk_b64, const char *crt_b64, const char *tns)
{
    json_object *t = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"liqo-tenant-c\","
                           "\"uid\":\"u1\",\"resourceVersion\":\"7\"},\"spec\":{},\"status\":{\"authParams\":{}}}");

    json_object_object_add(tg_json_path(t, "spec", NULL), "publicKey", json_object_new_string(pk_b64));
    if (crt_b64)
        json_object_object_add(tg_json_path(t, "status", "authParams", NULL), "signedCRT",
                               json_object_new_string(crt_b64));
    if (tns)
        json_object_object_add(tg_json_path(t, "status", NULL), "tenantNamespace", json_object_new_string(tns));
    return t;
}

static void test_tenant_status_table(void **state)
{
    (void)state;
    static const struct {
        const char *pk, *crt, *tns;
        cli_tenant_state want;
    } cases[] = {
        { STATUS_KEY_PEM_B64, STATUS_CERT_B64, "t", CLI_TENANT_READY },
        { STATUS_KEY_RAW_B64, STATUS_CERT_B64, "t", CLI_TENANT_READY },     /* legacy raw key */
        { OTHER_KEY_PEM_B64, STATUS_CERT_B64, "t", CLI_TENANT_PENDING },    /* an older key's cert */
        { STATUS_KEY_PEM_B64, NULL, "t", CLI_TENANT_PENDING },
        { STATUS_KEY_PEM_B64, STATUS_CERT_B64, NULL, CLI_TENANT_PENDING },
        { STATUS_KEY_PEM_B64, "bm90IGEgY2VydA==", "t", CLI_TENANT_PENDING }, /* not a certificate */
        { "!!", STATUS_CERT_B64, "t", CLI_TENANT_PENDING },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *t = tenant_with(cases[i].pk, cases[i].crt, cases[i].tns);

        assert_int_equal(cli_tenant_status(t), cases[i].want);
        /* being deleted (an unpeering that did not wait): the last peering's certificate */
        json_object_object_add(tg_json_path(t, "metadata", NULL), "deletionTimestamp",
                               json_object_new_string("2026-01-01T00:00:00Z"));
        assert_int_equal(cli_tenant_status(t), CLI_TENANT_PENDING);
        json_object_put(t);
    }
}

static void test_tenant_refusal_table(void **state)
{
    (void)state;
#define EV(type, from, uid, rv) \
    "{\"type\":\"" type "\",\"reason\":\"CSRSubjectMismatch\",\"message\":\"CN is x\"," \
    "\"source\":{\"component\":\"" from "\"},\"involvedObject\":{\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\"}}"
    static const struct {
        const char *events;
        int want;
    } cases[] = {
        { "{\"items\":[" EV("Warning", "tenantgate-signer", "u1", "7") "]}", 1 },
        { "{\"items\":[" EV("Warning", "tenantgate-signer", "u1", "6") "]}", 0 },   /* an older version */
        { "{\"items\":[" EV("Warning", "tenantgate-signer", "u2", "7") "]}", 0 },   /* another Tenant */
        { "{\"items\":[" EV("Normal", "tenantgate-signer", "u1", "7") "]}", 0 },
        { "{\"items\":[" EV("Warning", "someone-else", "u1", "7") "]}", 0 },
        { "{\"items\":[]}", 0 },
        { "{}", 0 },
    };
#undef EV
    json_object *t = tenant_with(STATUS_KEY_PEM_B64, NULL, NULL);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *ev = parse(cases[i].events);
        char why[256] = "";

        assert_int_equal(cli_tenant_refusal(t, ev, why, sizeof(why)), cases[i].want);
        if (cases[i].want)
            assert_string_equal(why, "CSRSubjectMismatch: CN is x");
        json_object_put(ev);
    }
    json_object_put(t);
}

static const char ready_tenant[] =
    "{\"metadata\":{\"name\":\"c\"},"
    "\"status\":{\"tenantNamespace\":\"liqo-tenant-c\","
    "\"authParams\":{\"ca\":\"Q0E=\",\"signedCRT\":\"Q1JU\",\"apiServer\":\"https://1.2.3.4:6443\"}}}";

static void test_identity_from_tenant(void **state)
{
    (void)state;
    json_object *t = parse(ready_tenant);
    char err[256];
    json_object *id = cli_identity_from_tenant(t, "cl-provider", "liqo-tenant-cl-provider", err,
                                               sizeof(err));

    assert_non_null(id);
    assert_string_equal(tg_json_string(id, "apiVersion"), "authentication.liqo.io/v1beta1");
    assert_string_equal(tg_json_string(id, "kind"), "Identity");
    assert_string_equal(tg_json_path_string(id, "metadata", "name", NULL), "controlplane-cl-provider");
    assert_string_equal(tg_json_path_string(id, "metadata", "namespace", NULL), "liqo-tenant-cl-provider");
    assert_string_equal(tg_json_path_string(id, "metadata", "labels", "liqo.io/remote-cluster-id", NULL),
                        "cl-provider");
    assert_string_equal(tg_json_path_string(id, "spec", "clusterID", NULL), "cl-provider");
    assert_string_equal(tg_json_path_string(id, "spec", "type", NULL), "ControlPlane");
    assert_string_equal(tg_json_path_string(id, "spec", "namespace", NULL), "liqo-tenant-c");
    assert_string_equal(tg_json_path_string(id, "spec", "authParams", "signedCRT", NULL), "Q1JU");
    assert_string_equal(tg_json_path_string(id, "spec", "authParams", "ca", NULL), "Q0E=");
    assert_string_equal(tg_json_path_string(id, "spec", "authParams", "apiServer", NULL),
                        "https://1.2.3.4:6443");
    assert_null(tg_json_path_string(id, "spec", "authParams", "proxyURL", NULL));
    json_object_put(id);
    json_object_put(t);

    /* no status yet: a clear error, no object */
    t = parse("{\"status\":{\"authParams\":{\"ca\":\"Q0E=\",\"apiServer\":\"x\"}}}");
    assert_null(cli_identity_from_tenant(t, "p", "ns", err, sizeof(err)));
    assert_non_null(strstr(err, "signedCRT"));
    json_object_put(t);
}

static void test_durations(void **state)
{
    (void)state;
    static const struct { const char *in; long ms; } cases[] = {
        { "2m", 120000 }, { "30s", 30000 }, { "1h30m", 5400000 }, { "45", 45000 },
        { "1.5m", 90000 }, { "500ms", 500 }, { "1m30s", 90000 },
        { "", -1 }, { "0", -1 }, { "0s", -1 }, { "-1s", -1 }, { "5x", -1 }, { "m", -1 },
        { "25h", -1 }, { "1m 2s", -1 }, { "99999999999", -1 },
    };
    char buf[32];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long got = cli_parse_duration(cases[i].in);

        if (got != cases[i].ms)
            fail_msg("duration \"%s\": want %ld, got %ld", cases[i].in, cases[i].ms, got);
    }
    cli_format_duration(buf, sizeof(buf), 120000);
    assert_string_equal(buf, "2m0s");
    cli_format_duration(buf, sizeof(buf), 2000);
    assert_string_equal(buf, "2s");
    cli_format_duration(buf, sizeof(buf), 3725000);
    assert_string_equal(buf, "1h2m5s");
}

static void test_progress_lines_match_the_seed(void **state)
{
    (void)state;
    char line[256];

    cli_progress_format(line, sizeof(line), "local", "Tenant namespace correctly ensured");
    assert_string_equal(line, " INFO   (local) Tenant namespace correctly ensured\n");
    cli_progress_format(line, sizeof(line), "remote", "Nonce retrieved");
    assert_string_equal(line, " INFO   (remote) Nonce retrieved\n");
    cli_progress_format(line, sizeof(line), NULL, "Nonce created");
    assert_string_equal(line, " INFO  Nonce created\n");
}

static void test_api_errors_table(void **state)
{
    (void)state;
    static const cli_api_call secret_create = {
        .scope = "remote", .server = "https://127.0.0.1:6443", .verb = "create",
        .resource = "secrets", .group = "", .namespace_ = "liqo-tenant-c", .name = "liqo-nonce",
    };
    static const cli_api_call tenant_get = {
        .server = "https://h:1", .verb = "get", .resource = "tenants",
        .group = "authentication.liqo.io", .namespace_ = "ns", .name = "c",
    };
    static const struct {
        const cli_api_call *call;
        long status;
        const char *body;
        const char *terr;
        int rc;
        const char *want[3];
    } cases[] = {
        { &secret_create, -1, NULL, "Couldn't connect to server", TG_EXIT_UNREACHABLE,
          { "cannot reach the API server https://127.0.0.1:6443", "Couldn't connect", NULL } },
        { &secret_create, 403,
          "{\"kind\":\"Status\",\"message\":\"secrets is forbidden: User \\\"bob\\\" cannot create "
          "resource \\\"secrets\\\"\",\"reason\":\"Forbidden\",\"code\":403}",
          NULL, TG_EXIT_REJECTED,
          { "forbidden: the kubeconfig's user may not create secrets in namespace liqo-tenant-c",
            "User \"bob\"", NULL } },
        { &secret_create, 401, "{\"kind\":\"Status\",\"code\":401}", NULL, TG_EXIT_REJECTED,
          { "401 Unauthorized", NULL, NULL } },
        { &tenant_get, 404, "404 page not found\n", NULL, TG_EXIT_REJECTED,
          { "does not serve tenants.authentication.liqo.io", "CustomResourceDefinition", NULL } },
        { &tenant_get, 404,
          "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"details\":{\"name\":\"c\",\"kind\":\"tenants\"},"
          "\"code\":404}", NULL, TG_EXIT_REJECTED,
          { "tenants.authentication.liqo.io c not found in namespace ns", NULL, NULL } },
        { &tenant_get, 500,
          "{\"kind\":\"Status\",\"message\":\"Internal error occurred: failed calling webhook "
          "\\\"tenants.validate.tenantgate.io\\\": connection refused\",\"code\":500}", NULL,
          TG_EXIT_REJECTED, { "tenantgate admission webhook", "connection refused", NULL } },
        { &tenant_get, 400,
          "{\"kind\":\"Status\",\"message\":\"admission webhook \\\"tenants.validate.tenantgate.io\\\" "
          "denied the request: SignatureVerificationFailed: bad\",\"code\":400}", NULL,
          TG_EXIT_REJECTED, { "tenants.authentication.liqo.io refused", "SignatureVerificationFailed", NULL } },
        { &tenant_get, 422, "{\"kind\":\"Status\",\"message\":\"spec.clusterID: Invalid\"}", NULL,
          TG_EXIT_REJECTED, { "get tenants.authentication.liqo.io c in namespace ns failed (HTTP 422)",
                              "spec.clusterID: Invalid", NULL } },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char msg[2048];
        int rc = cli_api_error(msg, sizeof(msg), cases[i].call, cases[i].status, cases[i].body,
                               cases[i].terr);

        assert_int_equal(rc, cases[i].rc);
        for (size_t j = 0; j < 3 && cases[i].want[j]; j++)
            if (strstr(msg, cases[i].want[j]) == NULL)
                fail_msg("case %zu: \"%s\" not in \"%s\"", i, cases[i].want[j], msg);
    }
    assert_true(cli_api_type_missing(404, "404 page not found"));
    assert_true(cli_api_type_missing(404, "{\"kind\":\"Status\",\"details\":{}}"));
    assert_false(cli_api_type_missing(404, "{\"kind\":\"Status\",\"details\":{\"name\":\"x\"}}"));
    assert_false(cli_api_type_missing(403, "404 page not found"));
}

/* Which answers the CLI asks again, and after how long (as client-go). */
static void test_api_retry_after(void **state)
{
    static const struct {
        long status;
        const char *body;
        long want_ms;
    } cases[] = {
        /* the webhook's CacheNotSynced, through the API server */
        {500, "{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\","
              "\"details\":{\"retryAfterSeconds\":1}}", 1000},
        {429, "{\"kind\":\"Status\",\"details\":{\"retryAfterSeconds\":2}}", 2000},
        {429, "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\"}", CLI_RETRY_DEFAULT_MS},
        {503, "service unavailable", CLI_RETRY_DEFAULT_MS},
        {429, NULL, CLI_RETRY_DEFAULT_MS},
        {504, "{\"details\":{\"retryAfterSeconds\":3600}}", CLI_RETRY_AFTER_MAX_S * 1000L},
        /* final answers */
        {500, "{\"kind\":\"Status\",\"code\":500,\"message\":\"internal error\"}", -1},
        {500, "{\"details\":{\"retryAfterSeconds\":0}}", -1},
        {500, "{\"details\":{\"retryAfterSeconds\":-5}}", -1},
        {500, "{\"details\":{\"retryAfterSeconds\":\"1\"}}", -1},
        {500, "not json", -1},
        {400, "{\"details\":{\"retryAfterSeconds\":1}}", -1},
        {403, "{\"details\":{\"retryAfterSeconds\":1}}", -1},
        {409, NULL, -1},
        {201, "{}", -1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long got = cli_api_retry_after_ms(cases[i].status, cases[i].body);
        if (got != cases[i].want_ms)
            fail_msg("case %zu (%ld): %ld ms, want %ld", i, cases[i].status, got, cases[i].want_ms);
    }
}

static void test_call_timeout(void **state)
{
    static const struct {
        long remaining_ms, want_ms;
    } cases[] = {
        {CLI_NO_DEADLINE, CLI_CALL_TIMEOUT_MS},   /* no --timeout: the client's own bound */
        {120000, CLI_CALL_TIMEOUT_MS},            /* the default 2m: each request 20 s */
        {CLI_CALL_TIMEOUT_MS, CLI_CALL_TIMEOUT_MS},
        {5000, 5000},                             /* --timeout 5s: what is left of it */
        {1001, 1001},
        {CLI_CALL_MIN_TIMEOUT_MS, CLI_CALL_MIN_TIMEOUT_MS},
        {200, CLI_CALL_MIN_TIMEOUT_MS},           /* nearly out: still a short chance */
        {0, CLI_CALL_MIN_TIMEOUT_MS},
        {-30000, CLI_CALL_MIN_TIMEOUT_MS},        /* past it */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long got = cli_call_timeout_ms(cases[i].remaining_ms);
        if (got != cases[i].want_ms)
            fail_msg("case %zu (%ld ms left): %ld ms, want %ld", i, cases[i].remaining_ms, got,
                     cases[i].want_ms);
    }
}

static void test_call_retry_sleep(void **state)
{
    static const struct {
        long delay_ms;
        int retries_done;
        long slept_ms, remaining_ms, want_ms;
    } cases[] = {
        {1000, 0, 0, CLI_NO_DEADLINE, 1000},
        {1000, 0, 0, 120000, 1000},
        {-1, 0, 0, 120000, -1},                           /* a final answer */
        {1000, CLI_CALL_RETRIES - 1, 0, 120000, 1000},     /* the last retry */
        {1000, CLI_CALL_RETRIES, 0, 120000, -1},           /* the retries are spent */
        {10000, 1, 10000, 120000, -1},                    /* the sleep budget would pass 15 s */
        {5000, 1, 10000, 120000, 5000},                   /* ... and exactly reaches it */
        {10000, 0, 0, 5000, -1},                          /* --timeout would run out asleep */
        {5000, 0, 0, 5000, -1},                           /* waking at the deadline: no use */
        {1000, 0, 0, 4999, 1000},
        {500, 3, 1500, 0, -1},                            /* already past the deadline */
        {500, 3, 1500, -100, -1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long got = cli_call_retry_sleep_ms(cases[i].delay_ms, cases[i].retries_done, cases[i].slept_ms,
                                           cases[i].remaining_ms);
        if (got != cases[i].want_ms)
            fail_msg("case %zu: %ld ms, want %ld", i, got, cases[i].want_ms);
    }
}

static void test_call_retry_note(void **state)
{
    char line[400], long_msg[600], body[700];

    static const struct {
        long status;
        const char *body;
        long sleep_ms;
        const char *want;
    } rows[] = {
        {500, "{\"kind\":\"Status\",\"message\":\"admission webhook \\\"tenants\\\" denied the request: "
              "CacheNotSynced: cache not synced, retry later\",\"reason\":\"InternalError\"}", 1000,
         "the API server answered HTTP 500 (admission webhook \"tenants\" denied the request: "
         "CacheNotSynced: cache not synced, retry later) and asked to be asked again: asking again in 1.0s"},
        /* no message: the reason */
        {429, "{\"reason\":\"TooManyRequests\"}", 500,
         "the API server answered HTTP 429 (TooManyRequests) and asked to be asked again: asking again in 0.5s"},
        /* not JSON, or no body: the status alone */
        {503, "service unavailable", 10000,
         "the API server answered HTTP 503 and asked to be asked again: asking again in 10.0s"},
        {503, NULL, 1500, "the API server answered HTTP 503 and asked to be asked again: asking again in 1.5s"},
        /* the server's text is cut at the first line break... */
        {500, "{\"message\":\"first\\nsecond\"}", 1000,
         "the API server answered HTTP 500 (first) and asked to be asked again: asking again in 1.0s"},
        /* ...and shows no control character a terminal would act on */
        {500, "{\"message\":\"red \\u001b[31mtext\\tend\"}", 1000,
         "the API server answered HTTP 500 (red ?[31mtext?end) and asked to be asked again: asking again in "
         "1.0s"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cli_call_retry_note(line, sizeof(line), rows[i].status, rows[i].body, rows[i].sleep_ms);
        if (strcmp(line, rows[i].want) != 0)
            fail_msg("row %zu: \"%s\", want \"%s\"", i, line, rows[i].want);
    }
    /* ...and at 200 characters. */
    memset(long_msg, 'x', sizeof(long_msg) - 1);
    long_msg[sizeof(long_msg) - 1] = '\0';
    snprintf(body, sizeof(body), "{\"message\":\"%s\"}", long_msg);
    cli_call_retry_note(line, sizeof(line), 500, body, 1000);
    assert_non_null(strstr(line, "(xxxxxxxx"));
    assert_int_equal(strspn(strchr(line, '(') + 1, "x"), 200);
    /* A buffer too small still ends in NUL. */
    cli_call_retry_note(line, 16, 500, body, 1000);
    assert_string_equal(line, "the API server ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenant_namespace),
        cmocka_unit_test(test_api_retry_after),
        cmocka_unit_test(test_call_timeout),
        cmocka_unit_test(test_call_retry_sleep),
        cmocka_unit_test(test_call_retry_note),
        cmocka_unit_test(test_nonce_secrets),
        cmocka_unit_test(test_secret_data_rejects_bad_base64),
        cmocka_unit_test(test_tenant_status_table),
        cmocka_unit_test(test_tenant_refusal_table),
        cmocka_unit_test(test_identity_from_tenant),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_progress_lines_match_the_seed),
        cmocka_unit_test(test_api_errors_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
