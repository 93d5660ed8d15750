/* test_reconcile_slice.c - the provider's ResourceSlice controller
 * (tg_reconcile_remote_slice) against the fake API: for each row, the slice,
 * its Tenant and cache Secret in the store and the CSRs in the informer's
 * cache, and the writes (CSR, cache Secret, status, RoleBinding, events) and
 * the requeue, failures of the API included. A consumer key made per run
 * signs the slice's request, as tg_slice_csr_build makes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/keys.h"
#include "pki/slice.h"
#include "signer/approve_decide.h"
#include "signer/reconcile_common.h"
#include "signer/slice_ctx.h"
#include "signer/slice_liqo_quota.h"
#include "signer/slice_offer.h"
#include "signer/slice_plan.h"
#include "signer/slice_policy_memo.h"
#include "signer/settled.h"
#include "signer/cert_facts.h"
#include "signer/test_reconcile_fixture.h"

#define CONSUMER "cl-consumer"
#define NS "liqo-tenant-" CONSUMER
#define NAME "mypool"
#define SLICE TENANTS_API "/namespaces/" NS "/resourceslices/" NAME
#define TENANT TENANTS_API "/namespaces/" NS "/tenants/" CONSUMER
#define SECRETS "/api/v1/namespaces/" NS "/secrets"
#define SECRET SECRETS "/liqo-remote-certificate-" NAME
#define RBS "/apis/rbac.authorization.k8s.io/v1/namespaces/" NS "/rolebindings"
#define RB RBS "/tenantgate-rslice-" NAME
#define QUOTAS TG_LIQO_OFFLOADING_API "/namespaces/" NS "/quotas"
#define WAIT_MS 10000          /* provider_resourceslice.c: a CSR made, not decided */
#define POSITIVE_MS 1000000    /* want: any delay of at least this (a renewal far ahead) */
#define DENIED_RETRY_MS (-2)   /* want: TG_SLICE_DENIED_RETRY_S after the denial, give or take the seconds passed */
#define RES_RECHECK_MS 60000   /* Resources=Denied is looked at again this often */

typedef enum { S_ABSENT, S_REPLICATED, S_NOT_REPLICATED, S_BAD_CONSUMER } slice_kind;
typedef enum { T_ACTIVE, T_ABSENT, T_DRAINED } tenant_kind;
typedef enum { C_NONE, C_PENDING, C_ISSUED, C_DENIED } csr_kind;
typedef enum { X_NONE, X_OTHER_CSR, X_RB } extra;

typedef struct row {
    const char *what;
    slice_kind slice;
    tenant_kind tenant;
    csr_kind csr;
    extra x;
    const char *fail_method, *fail_path;
    long fail_status;
    const char *writes;
    long ret;
    const char *auth;           /* the Authentication condition's status afterwards, or NULL: none */
} row;

#define STATUS "PATCH " SLICE "/status 200\n"
#define DENIED_EVENT(reason) "EVENT " NS "/" NAME " " reason "\n"

static const row rows[] = {
    /* its grant is written with the certificate, in one status write */
    {"new slice: a CSR", S_REPLICATED, T_ACTIVE, C_NONE, X_NONE, NULL, NULL, 0,
     "POST " CSR_API " 201\n", WAIT_MS, NULL},
    {"slice gone", S_ABSENT, T_ACTIVE, C_NONE, X_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, NULL},
    {"slice GET answers 500", S_REPLICATED, T_ACTIVE, C_NONE, X_NONE, "GET", SLICE, 500, "", TG_RECONCILE_RETRY,
     NULL},
    /* Every slice of a tenant namespace is the consumer's (issue 36, finding 3): one
     * without Liqo's replication labels is denied, not left alone. */
    {"not replicated: denied LabelMismatch", S_NOT_REPLICATED, T_ACTIVE, C_NONE, X_NONE, NULL, NULL, 0,
     "EVENT " NS "/" NAME " LabelMismatch\n" STATUS, TG_RECONCILE_OK, "Denied"},
    {"hostile consumerClusterID: an event only", S_BAD_CONSUMER, T_ACTIVE, C_NONE, X_NONE, NULL, NULL, 0,
     "EVENT " NS "/" NAME " RemoteCertificateFailed\n", TG_RECONCILE_OK, NULL},
    {"Tenant GET transport error", S_REPLICATED, T_ACTIVE, C_NONE, X_NONE, "GET", TENANT, -1, "",
     TG_RECONCILE_RETRY, NULL},
    {"CSR POST answers 500", S_REPLICATED, T_ACTIVE, C_NONE, X_NONE, "POST", CSR_API, 500,
     "POST " CSR_API " 500\n", TG_RECONCILE_RETRY, NULL},
    {"CSR pending: wait, nothing written", S_REPLICATED, T_ACTIVE, C_PENDING, X_NONE, NULL, NULL, 0, "", WAIT_MS,
     NULL},
    {"CSR issued: cached, published, no binding of its own", S_REPLICATED, T_ACTIVE, C_ISSUED, X_NONE, NULL, NULL,
     0, "POST " SECRETS " 201\n" STATUS, POSITIVE_MS, "Accepted"},
    {"CSR issued: an older signer's binding goes", S_REPLICATED, T_ACTIVE, C_ISSUED, X_RB, NULL, NULL, 0,
     "POST " SECRETS " 201\n" STATUS "DELETE " RB " 200\n", POSITIVE_MS, "Accepted"},
    {"CSR issued, cache Secret POST fails", S_REPLICATED, T_ACTIVE, C_ISSUED, X_NONE, "POST", SECRETS, 500,
     "POST " SECRETS " 500\n", TG_RECONCILE_RETRY, NULL},
    {"CSR issued, status PATCH conflicts", S_REPLICATED, T_ACTIVE, C_ISSUED, X_NONE, "PATCH", SLICE "/status", 409,
     "POST " SECRETS " 201\nPATCH " SLICE "/status 409\n", TG_RECONCILE_RETRY, NULL},
    {"CSR issued, old RoleBinding's DELETE fails", S_REPLICATED, T_ACTIVE, C_ISSUED, X_RB, "DELETE", RB, -1,
     "POST " SECRETS " 201\n" STATUS "DELETE " RB " -1\n", TG_RECONCILE_RETRY, "Accepted"},
    {"CSR denied: shown, binding removed", S_REPLICATED, T_ACTIVE, C_DENIED, X_RB, NULL, NULL, 0,
     DENIED_EVENT("NoMatchingTenant") STATUS "DELETE " RB " 200\n", DENIED_RETRY_MS, "Denied"},
    {"no Tenant: denied", S_REPLICATED, T_ABSENT, C_NONE, X_NONE, NULL, NULL, 0,
     DENIED_EVENT("SliceTenantNotFound") STATUS, TG_RECONCILE_OK, "Denied"},
    {"Tenant drained: denied", S_REPLICATED, T_DRAINED, C_NONE, X_NONE, NULL, NULL, 0,
     DENIED_EVENT("SliceTenantDrained") STATUS, RES_RECHECK_MS, "Denied"},
    {"cache Secret holds another request: denied", S_REPLICATED, T_ACTIVE, C_NONE, X_OTHER_CSR, NULL, NULL, 0,
     DENIED_EVENT("CSRMismatch") STATUS, TG_RECONCILE_OK, "Denied"},
};

typedef struct world {
    EVP_PKEY *key;              /* the consumer's */
    char *csr_b64;              /* the slice's request */
} world;

static void store_slice(tg_api *api, const world *w, slice_kind kind)
{
    char text[8192];

    if (kind == S_ABSENT)
        return;
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"" NAME "\",\"namespace\":\"" NS "\",\"labels\":{%s"
             "\"liqo.io/originID\":\"" CONSUMER "\",\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"" CONSUMER "\"}},"
             "\"spec\":{\"consumerClusterID\":\"%s\",\"class\":\"default\",\"csr\":\"%s\"}}",
             kind == S_NOT_REPLICATED ? "" : "\"liqo.io/replicated\":\"true\",",
             kind == S_BAD_CONSUMER ? "../" CONSUMER : CONSUMER, w->csr_b64);
    fake_api_put(api, SLICE, text);
}

static void store_tenant(tg_api *api, const world *w, tenant_kind kind)
{
    char *pub = tg_key_public_pem(w->key, NULL), *pub_b64 = rt_b64(pub, strlen(pub)), text[4096];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Tenant\","
             "\"metadata\":{\"name\":\"" CONSUMER "\",\"namespace\":\"" NS "\"},"
             "\"spec\":{\"clusterID\":\"" CONSUMER "\",\"publicKey\":\"%s\",\"csr\":\"eA==\",\"signature\":\"eA==\""
             "%s}}", pub_b64, kind == T_DRAINED ? ",\"tenantCondition\":\"Drained\"" : "");
    if (kind != T_ABSENT)
        fake_api_put(api, TENANT, text);
    free(pub);
    free(pub_b64);
}

/* The CSR informer's cache: one CSR for the slice's request, as kind says. */
/* The slice's CSR of kind as the signer's CSR informer keeps it (status.certificate
 * as its digest, informers.c) and, whole, in the fake API server, where the
 * reconciler reads the certificate it copies. */
static tg_cache *csr_cache(tg_api *api, const world *w, csr_kind kind)
{
    char hash[TG_REQUEST_HASH_LEN + 1], now[32], csr[8192], status[4096] = "", *crt;
    const char *items[] = {csr, NULL};

    rc_request_hash(w->csr_b64, hash);
    rc_rfc3339(time(NULL), now, sizeof(now));
    if (kind == C_ISSUED) {
        crt = rt_cert_b64(w->key, 86400);
        snprintf(status, sizeof(status), "\"certificate\":\"%s\",\"conditions\":[{\"type\":\"Approved\","
                 "\"status\":\"True\"}]", crt);
        free(crt);
    } else if (kind == C_DENIED) {
        snprintf(status, sizeof(status), "\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\","
                 "\"reason\":\"NoMatchingTenant\",\"message\":\"no Tenant\"}]");
    }
    snprintf(csr, sizeof(csr),
             "{\"metadata\":{\"name\":\"liqo-identity-s1\",\"resourceVersion\":\"5\",\"creationTimestamp\":\"%s\","
             "\"labels\":{\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"" CONSUMER "\",\"" TG_LABEL_CSR_REQUEST "\":\"%s\"},"
             "\"annotations\":{\"" TG_ANNOTATION_CSR_SLICE "\":\"" NS "/" NAME "\"}},\"status\":{%s}}",
             now, hash, status);
    if (kind != C_NONE)
        fake_api_put(api, "/apis/certificates.k8s.io/v1/certificatesigningrequests/liqo-identity-s1", csr);
    return rt_cache_as(TG_INF_CSRS, kind == C_NONE ? NULL : items);
}

static tg_cache *cache_of(tg_api *api, const char *path);

/* The old binding is stored and in the RoleBinding cache, as main.c's
 * informer shows it (slice_rbac.c reads that cache when synced). */
static void store_extra(tg_signer *s, tg_api *api, extra x)
{
    if (x == X_OTHER_CSR)
        fake_api_put(api, SECRET, "{\"metadata\":{\"name\":\"liqo-remote-certificate-" NAME "\",\"namespace\":\"" NS
                     "\"},\"data\":{\"csr\":\"b3RoZXI=\",\"certificate\":\"\"}}");
    if (x == X_RB) {
        fake_api_put(api, RB, "{\"metadata\":{\"name\":\"tenantgate-rslice-" NAME "\",\"namespace\":\"" NS "\"}}");
        tg_cache_free(s->rb_cache);
        s->rb_cache = cache_of(api, RB);
    }
}

/* The status of the slice's Authentication condition as stored, or NULL. */
static const char *auth_status(tg_api *api)
{
    json_object *c = tg_json_path(fake_api_object(api, SLICE), "status", "conditions", NULL);

    for (size_t i = 0; c && i < json_object_array_length(c); i++) {
        json_object *e = json_object_array_get_idx(c, i);
        if (tg_json_string(e, "type") && strcmp(tg_json_string(e, "type"), "Authentication") == 0)
            return tg_json_string(e, "status");
    }
    return NULL;
}

static void run_row(const world *w, const row *r)
{
    tg_api *api = fake_api_new();
    const char *auth;
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    s.csr_cache = csr_cache(api, w, r->csr);
    store_slice(api, w, r->slice);
    store_tenant(api, w, r->tenant);
    store_extra(&s, api, r->x);
    if (r->fail_path)
        fake_api_fail(api, r->fail_method, r->fail_path, r->fail_status, 1);
    ret = tg_reconcile_remote_slice(&s, api, NS, NAME);
    if (strcmp(rt_writes(api), r->writes) != 0)
        fail_msg("%s: writes\n%s\nwant\n%s", r->what, rt_writes(api), r->writes);
    if (r->ret == POSITIVE_MS       ? ret < POSITIVE_MS
        : r->ret == DENIED_RETRY_MS ? ret < (TG_SLICE_DENIED_RETRY_S - 5) * 1000 || ret > (TG_SLICE_DENIED_RETRY_S + 1) * 1000
                                    : ret != r->ret)
        fail_msg("%s: returned %ld, want %ld", r->what, ret, r->ret);
    auth = auth_status(api);
    if (r->auth ? !auth || strcmp(auth, r->auth) != 0 : auth != NULL)
        fail_msg("%s: Authentication %s, want %s", r->what, auth ? auth : "none", r->auth ? r->auth : "none");
    rt_signer_clear(&s);
    fake_api_free(api);
}

static void test_slice_rows(void **state)
{
    world w = {.key = tg_key_generate(TG_KEY_ED25519)};
    size_t len = 0;
    char *pem;

    (void)state;
    assert_non_null(w.key);
    assert_non_null(pem = tg_slice_csr_build(w.key, NAME, CONSUMER, &len));
    w.csr_b64 = rt_b64(pem, len);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&w, &rows[i]);
    free(pem);
    free(w.csr_b64);
    EVP_PKEY_free(w.key);
}

/* ---------- Liqo's Quota (issue 38, break 2) ---------- */

/* Liqo's offloading API as discovery shows it where Liqo is installed. */
static void serve_quota_crd(tg_api *api)
{
    fake_api_put(api, TG_LIQO_OFFLOADING_API, "{\"kind\":\"APIResourceList\",\"groupVersion\":"
                 "\"offloading.liqo.io/v1beta1\",\"resources\":[{\"name\":\"shadowpods\"},{\"name\":\"quotas\"}]}");
}

#define ASKED "{\"cpu\":\"2\",\"memory\":\"4Gi\"}"

/* The slice, its Tenant and an issued CSR, the slice asking for ASKED. */
static tg_api *quota_setting(const world *w, tg_signer *s, int crd)
{
    tg_api *api = fake_api_new();

    rt_signer_init(s);
    s->csr_cache = csr_cache(api, w, C_ISSUED);
    store_slice(api, w, S_REPLICATED);
    json_object_object_add(tg_json_path(fake_api_object(api, SLICE), "spec", NULL), "resources",
                           tg_json_parse(ASKED, strlen(ASKED), NULL, 0));
    store_tenant(api, w, T_ACTIVE);
    if (crd)
        serve_quota_crd(api);
    return api;
}

/* The stored Quota of the slice's user, or NULL. */
static json_object *stored_quota(tg_api *api, const char *user)
{
    char path[512];

    snprintf(path, sizeof(path), QUOTAS "/%s", user);
    return fake_api_object(api, path);
}

static void slice_user(char *user, size_t len)
{
    assert_int_equal(tg_slice_user_name(NAME, CONSUMER, user, len), 0);
}

/* Accepted: Quota <user> as Liqo's quotacreator writes it, owned by the
 * slice; a second run (a restart) writes nothing more. */
static void test_accepted_slice_gets_liqo_quota(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 1);
    char user[TG_SLICE_USER_MAX];
    json_object *q;

    slice_user(user, sizeof(user));
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS "POST " QUOTAS " 201\n");
    assert_non_null(q = stored_quota(api, user));
    assert_string_equal(tg_json_path_string(q, "spec", "user", NULL), user);
    assert_string_equal(tg_json_path_string(q, "spec", "limitsEnforcement", NULL), "None");
    assert_string_equal(tg_json_path_string(q, "spec", "resources", "cpu", NULL), "2");
    assert_string_equal(tg_json_path_string(q, "spec", "resources", "memory", NULL), "4Gi");
    assert_null(tg_json_path(q, "spec", "cordoned", NULL));
    assert_string_equal(tg_json_path_string(json_object_array_get_idx(tg_json_path(q, "metadata", "ownerReferences",
                        NULL), 0), "uid", NULL), tg_json_path_string(fake_api_object(api, SLICE), "metadata", "uid",
                        NULL));
    /* restarted: the same Quota is found, none is added */
    s.quota_crd = 0;
    json_object_array_del_idx(fake_api_writes(api), 0, json_object_array_length(fake_api_writes(api)));
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_null(strstr(rt_writes(api), "quotas"));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* Without Liqo's Quota CRD (tenantgate alone): no Quota call but discovery. */
static void test_no_quota_crd_no_quota(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 0);

    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* Discovery refused (403): no Quota, the slice's verdict stands; a failing
 * discovery (500): looked at again. */
static void test_quota_discovery_fails(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 1);

    fake_api_fail(api, "GET", TG_LIQO_OFFLOADING_API, 403, 1);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    rt_signer_clear(&s);
    fake_api_free(api);
    api = quota_setting(w, &s, 1);
    fake_api_fail(api, "GET", TG_LIQO_OFFLOADING_API, 500, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    assert_null(strstr(rt_writes(api), "quotas"));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* A stale Quota (another slice's of that name, other resources, cordoned
 * by hand, Soft) is brought to the grant: PUT, now ours. */
static void test_stale_quota_is_replaced(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 1);
    char user[TG_SLICE_USER_MAX], path[512], text[1024];
    json_object *q;

    slice_user(user, sizeof(user));
    s.quota_limits_enforcement = "Hard";
    snprintf(path, sizeof(path), QUOTAS "/%s", user);
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS "\",\"ownerReferences\":"
             "[{\"kind\":\"ResourceSlice\",\"name\":\"" NAME "\",\"uid\":\"old\",\"controller\":true}]},"
             "\"spec\":{\"user\":\"%s\",\"resources\":{\"cpu\":\"64\"},\"cordoned\":true}}", user, user);
    fake_api_put(api, path, text);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_non_null(strstr(rt_writes(api), "POST " SECRETS " 201\n" STATUS "PUT " QUOTAS "/"));
    assert_null(strstr(rt_writes(api), "POST " QUOTAS));
    q = stored_quota(api, user);
    assert_string_equal(tg_json_path_string(q, "spec", "resources", "cpu", NULL), "2");
    assert_string_equal(tg_json_path_string(q, "spec", "limitsEnforcement", NULL), "Hard");
    assert_null(tg_json_path(q, "spec", "cordoned", NULL));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* The Quota write fails: retried, no verdict lost. */
static void test_quota_post_fails(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 1);

    fake_api_fail(api, "POST", QUOTAS, 500, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS "POST " QUOTAS " 500\n");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* A slice being deleted takes its Quota along; another owner's stays. */
static void test_deleting_slice_drops_its_quota(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 1);
    char user[TG_SLICE_USER_MAX];

    slice_user(user, sizeof(user));
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_non_null(stored_quota(api, user));
    json_object_object_add(tg_json_path(fake_api_object(api, SLICE), "metadata", NULL), "deletionTimestamp",
                           json_object_new_string("2026-11-28T00:00:01Z"));
    json_object_array_del_idx(fake_api_writes(api), 0, json_object_array_length(fake_api_writes(api)));
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_OK);
    assert_null(stored_quota(api, user));
    assert_non_null(strstr(rt_writes(api), "DELETE " QUOTAS "/"));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* The spec from odd or hostile slices: only an Accepted grant that is an
 * object makes one; Liqo's cordon annotations, as Liqo reads them. */
static void test_quota_spec_pure(void **state)
{
    static const struct {
        const char *slice;
        int tenant_cordoned;
        int made, cordoned;
    } cases[] = {
        {"{}", 0, 0, 0},
        {"{\"status\":{\"conditions\":[{\"type\":\"Resources\",\"status\":\"Denied\"}],\"resources\":{}}}", 0, 0, 0},
        {"{\"status\":{\"conditions\":[{\"type\":\"Resources\",\"status\":\"Accepted\"}],\"resources\":\"x\"}}", 0,
         0, 0},
        {"{\"status\":{\"conditions\":[{\"type\":\"Resources\",\"status\":\"Accepted\"}]}}", 0, 1, 0},
        {"{\"status\":{\"conditions\":[{\"type\":\"Resources\",\"status\":\"Accepted\"}],\"resources\":{\"cpu\":1}}}",
         1, 1, 1},
        {"{\"metadata\":{\"annotations\":{\"liqo.io/cordon\":\"true\"}},\"status\":{\"conditions\":[{\"type\":"
         "\"Resources\",\"status\":\"Accepted\"}]}}", 0, 1, 1},
        {"{\"metadata\":{\"annotations\":{\"liqo.io/cordon-tenant\":\"False\"}},\"status\":{\"conditions\":[{\"type\":"
         "\"Resources\",\"status\":\"Accepted\"}]}}", 0, 1, 0},
        {"{\"metadata\":{\"annotations\":{\"liqo.io/cordon-tenant\":\"\"}},\"status\":{\"conditions\":[{\"type\":"
         "\"Resources\",\"status\":\"Accepted\"}]}}", 0, 1, 1},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *slice = tg_json_parse(cases[i].slice, strlen(cases[i].slice), NULL, 0);
        json_object *spec = tg_liqo_quota_spec(slice, "u-1", "Bogus", cases[i].tenant_cordoned);
        if (!!spec != cases[i].made)
            fail_msg("case %zu: made %d", i, !!spec);
        if (spec) {
            assert_string_equal(tg_json_path_string(spec, "limitsEnforcement", NULL), "None");
            assert_non_null(tg_json_path(spec, "resources", NULL));
            if (!!tg_json_path(spec, "cordoned", NULL) != cases[i].cordoned)
                fail_msg("case %zu: cordoned", i);
        }
        json_object_put(spec);
        json_object_put(slice);
    }
    assert_null(tg_liqo_quota_spec(NULL, "u-1", NULL, 0));
    assert_false(tg_liqo_quota_enforcement_valid("none"));   /* Liqo's own schema wants None */
    assert_true(tg_liqo_quota_enforcement_valid("Soft"));
}


/* ---------- settled passes, the policy and the old binding read once (issue 39) ---------- */

#define POLICY_CM "/api/v1/namespaces/liqo/configmaps/slice-policy"

/* A synced cache holding the object stored at path (or none). */
static tg_cache *cache_of(tg_api *api, const char *path)
{
    json_object *o = fake_api_object(api, path);
    const char *items[] = {o ? json_object_to_json_string(o) : NULL, NULL};

    return rt_cache(NULL, items);
}

/* The provider as main.c wires it: settled records, the namespace, Tenant
 * and CSR caches (the CSR issued), the slice and its Tenant stored. */
static tg_api *settled_world(const world *w, tg_signer *s)
{
    tg_api *api = fake_api_new();
    static const char *const ns[] = {"{\"metadata\":{\"name\":\"" NS "\",\"resourceVersion\":\"1\",\"labels\":{\""
                                     TG_LABEL_LIQO_TENANT_NS "\":\"true\",\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\""
                                     CONSUMER "\"}}}", NULL};

    rt_signer_init(s);
    s->settled = tg_settled_new();
    s->ns_cache = rt_cache(NULL, ns);
    s->csr_cache = csr_cache(api, w, C_ISSUED);
    store_slice(api, w, S_REPLICATED);
    store_tenant(api, w, T_ACTIVE);
    s->tenant_cache = cache_of(api, TENANT);
    s->slice_cache = cache_of(api, SLICE);
    return api;
}

static void settled_clear(tg_signer *s, tg_api *api)
{
    tg_cache_free(s->ns_cache);
    rt_signer_clear(s);
    fake_api_free(api);
}

static void forget_writes(tg_api *api)
{
    json_object_array_del_idx(fake_api_writes(api), 0, json_object_array_length(fake_api_writes(api)));
}

/* The event of our own status write (the cache shows the version the PATCH
 * made) costs no GET and no write; a Tenant change then runs the full pass. */
static void test_echo_of_own_write_is_skipped(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    size_t gets;

    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    tg_cache_free(s.slice_cache);
    s.slice_cache = cache_of(api, SLICE);   /* the echo */
    forget_writes(api);
    gets = fake_api_ngets(api);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_int_equal(fake_api_ngets(api), gets);
    assert_string_equal(rt_writes(api), "");
    /* the Tenant moved: the record no longer holds */
    store_tenant(api, w, T_DRAINED);
    tg_cache_free(s.tenant_cache);
    s.tenant_cache = cache_of(api, TENANT);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), RES_RECHECK_MS);
    assert_true(fake_api_ngets(api) > gets);
    assert_string_equal(auth_status(api), "Denied");
    settled_clear(&s, api);
}

/* A cache that has not seen our write (the version before it) runs the
 * full pass, which finds the status as written and writes nothing. */
static void test_stale_cache_runs_the_pass(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    size_t gets;

    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    forget_writes(api);
    gets = fake_api_ngets(api);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_true(fake_api_ngets(api) > gets);
    assert_string_equal(rt_writes(api), "");
    settled_clear(&s, api);
}

/* The full pass again, on a slice whose certificate is published: its CSR
 * and certificate were parsed by the first pass, and are not parsed again
 * (cert_facts.h: those parses were a fifth of the signer's CPU in a burst). */
static void test_later_passes_parse_nothing(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    unsigned long parses;

    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    parses = tg_cert_memo_parses(s.cert_memo);
    assert_true(parses > 0);
    for (int i = 0; i < 3; i++) {
        forget_writes(api);
        assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
        assert_string_equal(rt_writes(api), "");
    }
    assert_int_equal(tg_cert_memo_parses(s.cert_memo), parses);
    settled_clear(&s, api);
}

/* A status write that conflicts settles nothing: the next wake-up at the
 * same version runs the pass again, and it goes through. */
static void test_conflict_settles_nothing(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    size_t gets;

    fake_api_fail(api, "PATCH", SLICE "/status", 409, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    forget_writes(api);
    gets = fake_api_ngets(api);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_true(fake_api_ngets(api) > gets);
    assert_string_equal(rt_writes(api), STATUS);
    settled_clear(&s, api);
}

/* A pass that makes a CSR settles the slice whether or not the CSR cache
 * shows that CSR yet (it writes no status: the grant waits for the
 * certificate); its issue then runs the pass. */
static void test_new_csr_settles_both_views(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    size_t gets;

    tg_cache_free(s.csr_cache);
    s.csr_cache = csr_cache(api, w, C_NONE);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), WAIT_MS);
    assert_string_equal(rt_writes(api), "POST " CSR_API " 201\n");
    tg_cache_free(s.slice_cache);
    s.slice_cache = cache_of(api, SLICE);
    forget_writes(api);
    gets = fake_api_ngets(api);
    /* cache without our CSR; the record outlasts the WAIT_MS safety net */
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) > WAIT_MS);
    assert_int_equal(fake_api_ngets(api), gets);
    tg_cache_free(s.csr_cache);
    s.csr_cache = csr_cache(api, w, C_ISSUED);   /* a CSR of the slice issued: not what was settled */
    /* the pass runs and waits for our own CSR */
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), 1000);
    settled_clear(&s, api);
}

/* One read of the policy ConfigMap serves every pass of a slice first seen
 * before the read started (slice_policy_memo.h); a slice seen after it (a
 * new generation here) reads again, and so does every slice once the
 * ConfigMap's watch showed a change. The old binding's absence is read once. */
static json_object *resources_condition(tg_api *api);

static void test_policy_read_serves_slices_seen_before(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    json_object *meta, *cond;
    size_t gets;

    s.slice_policy_ns = "liqo";
    s.slice_policy_name = "slice-policy";
    fake_api_put(api, POLICY_CM, "{\"metadata\":{\"name\":\"slice-policy\",\"namespace\":\"liqo\"},"
                                 "\"data\":{\"default\":\"{}\"}}");
    tg_cache_free(s.slice_cache);
    s.slice_cache = NULL;   /* no record can spare the second pass */
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    fake_api_fail(api, "GET", RB, 500, 1);
    fake_api_fail(api, "GET", POLICY_CM, 500, 1);
    /* the same slice again: seen before the read, which serves it (the
     * failing GET is never asked) */
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    /* the failure still armed: a slice seen now reads, and fails */
    meta = tg_json_path(fake_api_object(api, SLICE), "metadata", NULL);
    json_object_object_add(meta, "generation", json_object_new_int64(2));
    gets = fake_api_ngets(api);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) < POSITIVE_MS);
    assert_true(fake_api_ngets(api) > gets);
    /* a quota tightened, then a slice seen at once: refused by the new read */
    fake_api_put(api, POLICY_CM, "{\"metadata\":{\"name\":\"slice-policy\",\"namespace\":\"liqo\"},"
                                 "\"data\":{\"default\":\"{\\\"maxPerSlice\\\":{\\\"cpu\\\":\\\"1\\\"}}\"}}");
    json_object_object_add(meta, "generation", json_object_new_int64(3));
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) > 0);
    cond = resources_condition(api);
    assert_non_null(cond);
    assert_string_equal(tg_json_string(cond, "status"), "Denied");
    /* loosened, and the watch says so: the read before it no longer serves */
    fake_api_put(api, POLICY_CM, "{\"metadata\":{\"name\":\"slice-policy\",\"namespace\":\"liqo\"},"
                                 "\"data\":{\"default\":\"{}\"}}");
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) > 0);
    assert_string_equal(tg_json_string(resources_condition(api), "status"), "Denied");
    rs_policy_changed(&s);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) > 0);
    assert_string_equal(tg_json_string(resources_condition(api), "status"), "Accepted");
    assert_string_equal(auth_status(api), "Accepted");
    settled_clear(&s, api);
}


/* A pass that waits for its CSR, then the cache showing that CSR issued
 * (named otherwise here, so the waiting record is forgotten by hand). */
static void wait_then_see_issued(world *w, tg_signer *s, tg_api *api, int reload_slice)
{
    char hash[TG_REQUEST_HASH_LEN + 1], pending[900];

    tg_cache_free(s->csr_cache);
    s->csr_cache = csr_cache(api, w, C_NONE);
    assert_int_equal(tg_reconcile_remote_slice(s, api, NS, NAME), WAIT_MS);
    if (reload_slice) {
        tg_cache_free(s->slice_cache);
        s->slice_cache = cache_of(api, SLICE);
    }
    tg_cache_free(s->csr_cache);
    s->csr_cache = csr_cache(api, w, C_ISSUED);
    rc_request_hash(w->csr_b64, hash);
    snprintf(pending, sizeof(pending), "slice-csr/" NS "/" NAME "/%s", hash);
    tg_settled_forget(s->settled, pending);
}

/* The pass the CSR's issue wakes reads the slice as the approver read it
 * to decide the CSR (kept here as provider_approver.c keeps it; the
 * informer shows that version) and knows the cache Secret absent: neither
 * GET is made (both would fail here). Its one status write carries both
 * verdicts, the grant and the certificate. */
static void test_issue_pass_reads_our_own_write(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    char stash[300];

    wait_then_see_issued(w, &s, api, 1);
    tg_api_keep(s.settled, rs_slice_stash_key(NS, NAME, stash, sizeof(stash)), fake_api_object(api, SLICE),
                SLICE_STASH_MS);
    forget_writes(api);
    fake_api_fail(api, "GET", SLICE, 500, 1);
    fake_api_fail(api, "GET", SECRET, 500, 1);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    assert_string_equal(auth_status(api), "Accepted");
    assert_string_equal(tg_json_string(resources_condition(api), "status"), "Accepted");
    settled_clear(&s, api);
}

/* A slice never decided has no cache Secret to read: neither its first
 * pass nor the one its CSR's issue wakes GETs it, however long the CSR took
 * (the note of the first pass forgotten here), and the Secret is POSTed. */
static void test_undecided_slice_reads_no_secret(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    char key[300];

    fake_api_fail(api, "GET", SECRET, 500, 1);
    wait_then_see_issued(w, &s, api, 1);
    snprintf(key, sizeof(key), "slice-secret-absent/%s",
             tg_json_path_string(fake_api_object(api, SLICE), "metadata", "uid", NULL));
    tg_settled_forget(s.settled, key);
    forget_writes(api);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    assert_string_equal(auth_status(api), "Accepted");
    settled_clear(&s, api);
}

/* The cache Secret made meanwhile by someone else: our POST answers 409,
 * the pass fails, and the next one reads the Secret (and refuses it). */
static void test_secret_made_meanwhile_is_read_next(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);

    wait_then_see_issued(w, &s, api, 0);
    store_extra(&s, api, X_OTHER_CSR);
    forget_writes(api);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 409\n");
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_OK);
    assert_string_equal(auth_status(api), "Denied");
    settled_clear(&s, api);
}


/* A consumer's slices read its Tenant once while the informer shows the
 * version read (the second GET would fail here); a Tenant moved since is
 * read live. */
static void test_tenant_read_once_per_version(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);
    size_t gets;

    tg_cache_free(s.slice_cache);
    s.slice_cache = NULL;   /* no record can spare a pass */
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    fake_api_fail(api, "GET", TENANT, 500, 1);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    store_tenant(api, w, T_DRAINED);
    tg_cache_free(s.tenant_cache);
    s.tenant_cache = cache_of(api, TENANT);
    /* read live: the failure armed above (unspent by the second pass) meets it */
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    gets = fake_api_ngets(api);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), RES_RECHECK_MS);
    assert_true(fake_api_ngets(api) > gets);
    assert_string_equal(auth_status(api), "Denied");
    settled_clear(&s, api);
}

/* The old binding is looked for in the RoleBinding cache when synced: a
 * slice absent from it reads nothing (the list and the GET would fail
 * here); one in it is deleted. */
static void test_old_binding_from_cache(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);

    fake_api_fail(api, "GET", RBS, 500, 1);
    fake_api_fail(api, "GET", RB, 500, 1);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    settled_clear(&s, api);
    api = settled_world(w, &s);
    store_extra(&s, api, X_RB);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS "DELETE " RB " 200\n");
    settled_clear(&s, api);
}

/* Without a synced RoleBinding cache the old bindings are listed once a
 * namespace: a slice absent from the list needs no GET of its own (it
 * would fail here); one in it is deleted. */
static void test_old_bindings_listed_per_namespace(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);

    tg_cache_free(s.rb_cache);
    s.rb_cache = NULL;
    fake_api_fail(api, "GET", RB, 500, 1);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS);
    settled_clear(&s, api);
    api = settled_world(w, &s);
    store_extra(&s, api, X_RB);
    tg_cache_free(s.rb_cache);
    s.rb_cache = NULL;
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(rt_writes(api), "POST " SECRETS " 201\n" STATUS "DELETE " RB " 200\n");
    settled_clear(&s, api);
}

/* A never-decided slice's first pass reads it from the slice cache, which
 * keeps its spec (the CSR): the CSR is made with no GET of the slice (it
 * would fail here). */
static void test_first_pass_from_cache(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);

    tg_cache_free(s.csr_cache);
    s.csr_cache = csr_cache(api, w, C_NONE);
    fake_api_fail(api, "GET", SLICE, 500, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), WAIT_MS);
    assert_string_equal(rt_writes(api), "POST " CSR_API " 201\n");
    settled_clear(&s, api);
}

/* A pass from the cached copy that has a verdict to write (the Tenant
 * drained) reads the slice live first: the projection lacks what a write
 * reads (annotations, the status as a whole). A failed read writes nothing. */
static void test_cached_pass_writes_from_live(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = settled_world(w, &s);

    store_tenant(api, w, T_DRAINED);
    tg_cache_free(s.tenant_cache);
    s.tenant_cache = cache_of(api, TENANT);
    fake_api_fail(api, "GET", SLICE, 500, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    assert_string_equal(rt_writes(api), "");
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), RES_RECHECK_MS);
    assert_string_equal(auth_status(api), "Denied");
    settled_clear(&s, api);
}

static int world_setup(void **state)
{
    static world w;
    static char *pem;
    size_t len = 0;

    w.key = tg_key_generate(TG_KEY_ED25519);
    if (!w.key || !(pem = tg_slice_csr_build(w.key, NAME, CONSUMER, &len)))
        return -1;
    w.csr_b64 = rt_b64(pem, len);
    free(pem);
    *state = &w;
    return 0;
}

static int world_teardown(void **state)
{
    world *w = *state;

    free(w->csr_b64);
    EVP_PKEY_free(w->key);
    return 0;
}

#define STORAGE_CLASSES "/apis/storage.k8s.io/v1/storageclasses"
#define SC_LIST "{\"kind\":\"StorageClassList\",\"items\":[{\"metadata\":{\"name\":\"standard\"," \
                "\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}," \
                "{\"metadata\":{\"name\":\"fast\"}}]}"

static const char *status_text(tg_api *api, const char *field)
{
    return json_object_to_json_string_ext(tg_json_path(fake_api_object(api, SLICE), "status", field, NULL),
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Liqo's --enable-storage, --ingress-classes and --load-balancer-classes: an
 * accepted slice's status carries the provider's StorageClasses (sorted, the
 * cluster default marked) and the configured classes, as Liqo writes them. */
static void test_offered_classes(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 0);
    char err[128];

    s.slice_offer.enable_storage = 1;
    s.slice_offer.ingress_classes = tg_slice_class_list_parse("nginx;default,traefik", "ingressClassName", err,
                                                              sizeof(err));
    s.slice_offer.load_balancer_classes = tg_slice_class_list_parse("metallb;default", "loadBalancerClassName", err,
                                                                    sizeof(err));
    fake_api_answer(api, "GET", STORAGE_CLASSES, 200, SC_LIST);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(status_text(api, "storageClasses"),
                        "[{\"storageClassName\":\"fast\"},{\"storageClassName\":\"standard\",\"default\":true}]");
    assert_string_equal(status_text(api, "ingressClasses"),
                        "[{\"ingressClassName\":\"nginx\",\"default\":true},{\"ingressClassName\":\"traefik\"}]");
    assert_string_equal(status_text(api, "loadBalancerClasses"),
                        "[{\"loadBalancerClassName\":\"metallb\",\"default\":true}]");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* --real-storage-class-name marks that class instead; a failed list is
 * retried and writes no status (Liqo requeues). Without the flags: []. */
static void test_offered_storage_real_and_failing(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 0);

    s.slice_offer.enable_storage = 1;
    s.slice_offer.real_storage_class = "fast";
    fake_api_answer(api, "GET", STORAGE_CLASSES, 200, SC_LIST);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(status_text(api, "storageClasses"),
                        "[{\"storageClassName\":\"fast\",\"default\":true},{\"storageClassName\":\"standard\"}]");
    rt_signer_clear(&s);
    fake_api_free(api);

    api = quota_setting(w, &s, 0);
    s.slice_offer.enable_storage = 1;
    fake_api_fail(api, "GET", STORAGE_CLASSES, 403, 1);
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME), TG_RECONCILE_RETRY);
    assert_null(strstr(rt_writes(api), "/status"));
    rt_signer_clear(&s);
    fake_api_free(api);

    api = quota_setting(w, &s, 0);
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    assert_string_equal(status_text(api, "storageClasses"), "[]");
    assert_string_equal(status_text(api, "ingressClasses"), "[]");
    assert_string_equal(status_text(api, "loadBalancerClasses"), "[]");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* --default-node-resources: what the slice does not ask is granted from the
 * flag; --default-resource-slice-class-enabled=false: Resources Denied with
 * Liqo's reason in the condition, nothing granted nor offered. */
static void test_default_class_switches(void **state)
{
    world *w = *state;
    tg_signer s;
    tg_api *api = quota_setting(w, &s, 0);
    char err[128];
    json_object *res;

    s.slice_provider.defaults = tg_slice_defaults_parse("cpu=3,pods=7,ephemeral-storage=1Gi", err, sizeof(err));
    assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) >= POSITIVE_MS);
    res = tg_json_path(fake_api_object(api, SLICE), "status", "resources", NULL);
    assert_string_equal(tg_json_string(res, "pods"), "7");
    assert_string_equal(tg_json_string(res, "ephemeral-storage"), "1Gi");
    assert_string_equal(tg_json_string(res, "cpu"), "2");        /* asked (ASKED) */
    assert_string_equal(tg_json_string(res, "memory"), "4Gi");   /* asked */
    assert_int_equal(json_object_object_length(res), 4);
    rt_signer_clear(&s);
    fake_api_free(api);

    api = quota_setting(w, &s, 0);
    s.slice_provider.default_class_disabled = 1;
    assert_int_equal(tg_reconcile_remote_slice(&s, api, NS, NAME) > 0, 1);
    json_object *slice = fake_api_object(api, SLICE), *cond = NULL, *conds = tg_json_path(slice, "status", "conditions", NULL);
    for (size_t i = 0; conds && i < json_object_array_length(conds); i++)
        if (strcmp(tg_json_string(json_object_array_get_idx(conds, i), "type"), "Resources") == 0)
            cond = json_object_array_get_idx(conds, i);
    assert_non_null(cond);
    assert_string_equal(tg_json_string(cond, "status"), "Denied");
    assert_string_equal(tg_json_string(cond, "reason"), "DefaultResourceSliceClassDisabled");
    assert_non_null(strstr(tg_json_string(cond, "message"), "(DefaultResourceSliceClassDisabled): the default "
                           "ResourceSlice class has been administratively disabled on the provider: expected a class"));
    assert_null(tg_json_path(slice, "status", "resources", NULL));
    assert_string_equal(status_text(api, "storageClasses"), "[]");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* ---------- the consumer's own policy (data.tenant.<id>, issue 48) ---------- */

/* The slice's Resources condition as stored, or NULL. */
static json_object *resources_condition(tg_api *api)
{
    json_object *conds = tg_json_path(fake_api_object(api, SLICE), "status", "conditions", NULL);

    for (size_t i = 0; conds && i < json_object_array_length(conds); i++)
        if (strcmp(tg_json_string(json_object_array_get_idx(conds, i), "type"), "Resources") == 0)
            return json_object_array_get_idx(conds, i);
    return NULL;
}

/* The same rule as the webhook's (pki/slice_tenant_policy.h), over what the
 * signer would grant (defaults included) and the siblings' sum: a slice
 * admitted while the webhook was down, or before the policy tightened. The
 * slice asks ASKED (cpu 2, memory 4Gi); Liqo's chart grants pods 110. */
static void test_tenant_policy(void **state)
{
    static const struct {
        const char *what, *class_, *key, *entry, *status, *found;
    } policy_rows[] = {
        {"no entry", NULL, NULL, NULL, "Accepted", NULL},
        {"within", NULL, "tenant." CONSUMER, "{\"classes\":[\"default\"],\"maxPerSlice\":{\"cpu\":\"2\"}}",
         "Accepted", NULL},
        {"over per slice", NULL, "tenant." CONSUMER, "{\"maxPerSlice\":{\"cpu\":\"1\"}}", "Denied",
         "(TenantPolicyExceeded): cpu: 2 asked, at most 1 per slice for this consumer (1 over)"},
        {"a default judged too", NULL, "tenant." CONSUMER, "{\"maxPerSlice\":{\"pods\":\"100\"}}", "Denied",
         "(TenantPolicyExceeded): pods: 110 asked"},
        {"over per tenant", NULL, "tenant." CONSUMER, "{\"maxPerTenant\":{\"cpu\":\"1\"}}", "Denied",
         "(TenantPolicyExceeded): cpu: 2 asked with 0 already granted to this consumer, at most 1 per consumer"},
        {"default not allowed", NULL, "tenant." CONSUMER, "{\"classes\":[\"gpu\"]}", "Denied",
         "(ClassNotAllowed): spec.class: expected a class this consumer may use [\"gpu\"], found \"default\""},
        {"another class not allowed", "gpu", "tenant." CONSUMER, "{\"classes\":[\"default\"]}", "Denied",
         "(ClassNotAllowed)"},
        {"another class allowed: its controller's", "gpu", "tenant." CONSUMER, "{\"classes\":[\"gpu\"]}", NULL,
         NULL},
        {"broken entry", NULL, "tenant." CONSUMER, "{\"maxPerslice\":{}}", "Denied", "(TenantPolicyInvalid)"},
        {"another consumer's entry", NULL, "tenant.other", "{\"classes\":[]}", "Accepted", NULL},
    };
    world *w = *state;

    for (size_t i = 0; i < sizeof(policy_rows) / sizeof(policy_rows[0]); i++) {
        tg_signer s;
        tg_api *api = quota_setting(w, &s, 0);
        json_object *cm = json_object_new_object(), *data = json_object_new_object(), *meta, *cond;

        s.slice_policy_ns = "liqo";
        s.slice_policy_name = "slice-policy";
        meta = tg_json_parse("{\"name\":\"slice-policy\",\"namespace\":\"liqo\"}", 42, NULL, 0);
        json_object_object_add(cm, "metadata", meta);
        if (policy_rows[i].key)
            json_object_object_add(data, policy_rows[i].key, json_object_new_string(policy_rows[i].entry));
        json_object_object_add(cm, "data", data);
        fake_api_put(api, POLICY_CM, json_object_to_json_string(cm));
        json_object_put(cm);
        if (policy_rows[i].class_)
            json_object_object_add(tg_json_path(fake_api_object(api, SLICE), "spec", NULL), "class",
                                   json_object_new_string(policy_rows[i].class_));
        assert_true(tg_reconcile_remote_slice(&s, api, NS, NAME) > 0);
        cond = resources_condition(api);
        if (policy_rows[i].status ? !cond || strcmp(tg_json_string(cond, "status"), policy_rows[i].status) != 0 : cond != NULL)
            fail_msg("%s: Resources %s, want %s", policy_rows[i].what, cond ? tg_json_string(cond, "status") : "none",
                     policy_rows[i].status ? policy_rows[i].status : "none");
        if (policy_rows[i].found && !strstr(tg_json_string(cond, "message"), policy_rows[i].found))
            fail_msg("%s: message \"%s\", want \"%s\"", policy_rows[i].what, tg_json_string(cond, "message"),
                     policy_rows[i].found);
        rt_signer_clear(&s);
        fake_api_free(api);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_rows),
        cmocka_unit_test(test_quota_spec_pure),
        cmocka_unit_test_setup_teardown(test_accepted_slice_gets_liqo_quota, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_no_quota_crd_no_quota, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_quota_discovery_fails, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_stale_quota_is_replaced, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_quota_post_fails, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_deleting_slice_drops_its_quota, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_echo_of_own_write_is_skipped, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_stale_cache_runs_the_pass, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_later_passes_parse_nothing, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_conflict_settles_nothing, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_new_csr_settles_both_views, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_policy_read_serves_slices_seen_before, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_issue_pass_reads_our_own_write, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_undecided_slice_reads_no_secret, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_secret_made_meanwhile_is_read_next, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_tenant_read_once_per_version, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_old_bindings_listed_per_namespace, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_old_binding_from_cache, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_first_pass_from_cache, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_cached_pass_writes_from_live, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_offered_classes, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_offered_storage_real_and_failing, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_default_class_switches, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_tenant_policy, world_setup, world_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
