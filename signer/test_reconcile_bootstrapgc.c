/* test_reconcile_bootstrapgc.c - what tenantgate-auth's /v1/nonce leaves is
 * the signer's to fill and to clean (bootstrap_ns.h): the nonce controller
 * makes liqo-nonce only in a namespace /v1/nonce made for its id; bootstrapgc
 * deletes such a namespace once no Tenant and no live token kept it for the
 * grace period, and nothing else. Against signer/fake_api.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "signer/bootstrap_ns.h"
#include "signer/fake_api.h"
#include "signer/signer.h"
#include "signer/test_reconcile_fixture.h"

#define CID "c0ffee00-0000-4000-8000-000000000001"
#define NS "liqo-tenant-" CID
#define NS_PATH "/api/v1/namespaces/" NS
#define NONCE_PATH NS_PATH "/secrets/liqo-nonce"
#define TOKEN_PATH "/api/v1/namespaces/tenantgate-tokens/secrets/tenantgate-token-abc123"
#define TENANT_PATH "/apis/authentication.liqo.io/v1beta1/namespaces/" NS "/tenants/" CID

/* A Namespace as /v1/nonce makes it, with one label changed (or none). */
static void put_namespace(tg_api *api, const char *name, const char *cid, const char *token_id, const char *tenant)
{
    char text[1024], path[320];
    int n = snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":{", name);

    if (tenant)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "\"liqo.io/tenant-namespace\":\"%s\",", tenant);
    if (token_id)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "\"tenantgate.io/bootstrap-token-id\":\"%s\",", token_id);
    snprintf(text + n, sizeof(text) - (size_t)n, "\"liqo.io/remote-cluster-id\":\"%s\"}}}", cid);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", name);
    fake_api_put(api, path, text);
}

/* The token's Secret, expiring in ttl seconds (negative: expired). */
static void put_token(tg_api *api, long ttl)
{
    char exp[32], text[512], *e, *id, *type;
    time_t t = time(NULL) + ttl;

    strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    e = rt_b64(exp, strlen(exp));
    id = rt_b64("abc123", 6);
    type = "tenantgate.io/bootstrap-token";
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"tenantgate-token-abc123\"},\"type\":\"%s\","
             "\"data\":{\"token-id\":\"%s\",\"expiration\":\"%s\"}}", type, id, e);
    fake_api_put(api, TOKEN_PATH, text);
    free(e);
    free(id);
}

typedef struct fx {
    tg_signer s;
    tg_api *api;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));

    rt_signer_init(&f->s);
    f->s.token_ns = "tenantgate-tokens";
    f->s.bootstrap_grace_s = 0;    /* the grace still needs a second pass */
    f->api = fake_api_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    fake_api_free(f->api);
    rt_signer_clear(&f->s);
    free(f);
    return 0;
}

static long gc(fx *f) { return tg_signer_reconcile(&f->s, f->api, "bootstrapgc/" NS "/" NS); }

/* --- the nonce controller ----------------------------------------------------------- */

static void test_nonce_made_in_a_namespace_v1_nonce_made(void **state)
{
    fx *f = *state;
    json_object *sec;

    put_namespace(f->api, NS, CID, "abc123", "true");
    assert_int_equal(tg_signer_reconcile(&f->s, f->api, "nonce/" NS "/liqo-nonce"), TG_RECONCILE_OK);
    assert_non_null(sec = fake_api_object(f->api, NONCE_PATH));
    assert_string_equal(tg_json_path_string(sec, "metadata", "labels", "liqo.io/nonce", NULL), "true");
    assert_string_equal(tg_json_path_string(sec, "metadata", "labels", "liqo.io/remote-cluster-id", NULL), CID);
    assert_int_equal(strlen(tg_json_path_string(sec, "data", "nonce", NULL)), 120);   /* base64 of 88 */
    /* and never overwritten */
    assert_int_equal(tg_signer_reconcile(&f->s, f->api, "nonce/" NS "/liqo-nonce"), TG_RECONCILE_OK);
    assert_string_equal(rt_writes(f->api), "POST " NS_PATH "/secrets 201\n");
}

static void test_no_nonce_made_elsewhere(void **state)
{
    fx *f = *state;
    static const struct {
        const char *what, *name, *cid, *token, *tenant;
    } cases[] = {
        {"no token label (an admin's or the v0.10 path's namespace)", NS, CID, NULL, "true"},
        {"not labelled a tenant namespace", NS, CID, "abc123", NULL},
        {"labelled for another id", NS, "c0ffee00-0000-4000-8000-000000000002", "abc123", "true"},
        {"a token label that is no token id", NS, CID, "ABC!", "true"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_api *api = fake_api_new();
        put_namespace(api, cases[i].name, cases[i].cid, cases[i].token, cases[i].tenant);
        assert_int_equal(tg_signer_reconcile(&f->s, api, "nonce/" NS "/liqo-nonce"), TG_RECONCILE_OK);
        if (fake_api_object(api, NONCE_PATH))
            fail_msg("%s: a nonce Secret was made", cases[i].what);
        fake_api_free(api);
    }
    /* another name, in a good namespace */
    put_namespace(f->api, NS, CID, "abc123", "true");
    assert_int_equal(tg_signer_reconcile(&f->s, f->api, "nonce/" NS "/other"), TG_RECONCILE_OK);
    assert_string_equal(rt_writes(f->api), "");
}

/* --- bootstrapgc --------------------------------------------------------------------- */

static void test_gc_deletes_after_the_grace_when_the_token_is_gone(void **state)
{
    fx *f = *state;

    put_namespace(f->api, NS, CID, "abc123", "true");
    assert_true(gc(f) > 0);                        /* first found unkept: wait the grace */
    assert_non_null(fake_api_object(f->api, NS_PATH));
    assert_int_equal(gc(f), TG_RECONCILE_OK);      /* still unkept after it: gone */
    assert_null(fake_api_object(f->api, NS_PATH));
    assert_string_equal(rt_writes(f->api), "DELETE " NS_PATH " 200\n");
}

static void test_gc_deletes_when_the_token_expired(void **state)
{
    fx *f = *state;

    put_namespace(f->api, NS, CID, "abc123", "true");
    put_token(f->api, -5);
    assert_true(gc(f) > 0);
    assert_int_equal(gc(f), TG_RECONCILE_OK);
    assert_null(fake_api_object(f->api, NS_PATH));
}

static void test_gc_keeps(void **state)
{
    fx *f = *state;

    /* a live token: looked at again by its expiration at the latest */
    put_namespace(f->api, NS, CID, "abc123", "true");
    put_token(f->api, 3600);
    f->s.bootstrap_grace_s = 60;
    assert_int_equal(gc(f), 60000);
    assert_int_equal(gc(f), 60000);
    /* a Tenant, token gone: the peering was made */
    fake_api_put(f->api, TENANT_PATH, "{\"metadata\":{\"name\":\"" CID "\",\"namespace\":\"" NS "\"}}");
    fake_api_put(f->api, TOKEN_PATH, "{\"metadata\":{\"name\":\"x\"},\"type\":\"Opaque\"}");
    f->s.bootstrap_grace_s = 0;
    assert_int_equal(gc(f), TG_RECONCILE_OK);
    assert_int_equal(gc(f), TG_RECONCILE_OK);
    assert_non_null(fake_api_object(f->api, NS_PATH));
    assert_string_equal(rt_writes(f->api), "");
}

static void test_gc_touches_no_other_namespace(void **state)
{
    fx *f = *state;
    static const struct {
        const char *name, *cid, *token, *tenant;
    } cases[] = {
        {NS, CID, NULL, "true"},                   /* not made by /v1/nonce */
        {NS, CID, "abc123", NULL},                 /* not a tenant namespace */
        {NS, CID, "abc123", "false"},
        {NS, "c0ffee00-0000-4000-8000-000000000002", "abc123", "true"},   /* named for another id */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put_namespace(f->api, cases[i].name, cases[i].cid, cases[i].token, cases[i].tenant);
        assert_int_equal(gc(f), TG_RECONCILE_OK);
        assert_int_equal(gc(f), TG_RECONCILE_OK);
        if (!fake_api_object(f->api, NS_PATH))
            fail_msg("case %zu deleted", i);
    }
    /* the namespace changed between the judgement and the DELETE: judged again */
    put_namespace(f->api, NS, CID, "abc123", "true");
    assert_true(gc(f) > 0);
    fake_api_fail(f->api, "DELETE", NS_PATH, 409, 1);
    assert_true(gc(f) > 0);
    assert_non_null(fake_api_object(f->api, NS_PATH));
    assert_string_equal(rt_writes(f->api), "DELETE " NS_PATH " 409\n");
}

static void test_decide(void **state)
{
    long long r;
    tg_bgc_facts f = {.now_ms = 1000000, .token_expires_s = -1, .grace_ms = 30000};

    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_WAIT);
    assert_int_equal(r, 30000);
    f.unkept_since_ms = 990000;
    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_WAIT);
    assert_int_equal(r, 20000);
    f.unkept_since_ms = 970000;
    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_DELETE);
    f.tenant = 1;
    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_KEEP);
    f.tenant = 0;
    f.token_expires_s = 1005;                     /* 5 s left */
    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_KEEP);
    assert_int_equal(r, 5000);
    f.token_expires_s = 1000;                     /* expired this very second */
    assert_int_equal(tg_bgc_decide(&f, &r), TG_BGC_DELETE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nonce_made_in_a_namespace_v1_nonce_made, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_nonce_made_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_deletes_after_the_grace_when_the_token_is_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_deletes_when_the_token_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_keeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_touches_no_other_namespace, setup, teardown),
        cmocka_unit_test(test_decide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
