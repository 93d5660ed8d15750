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
#include "signer/slice_plan.h"
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
    {"new slice: a CSR", S_REPLICATED, T_ACTIVE, C_NONE, X_NONE, NULL, NULL, 0,
     "POST " CSR_API " 201\n" STATUS, WAIT_MS, NULL},
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
    {"CSR pending: wait", S_REPLICATED, T_ACTIVE, C_PENDING, X_NONE, NULL, NULL, 0, STATUS, WAIT_MS, NULL},
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
static tg_cache *csr_cache(const world *w, csr_kind kind)
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
    return rt_cache(TG_LABEL_REMOTE_CLUSTER_ID, kind == C_NONE ? NULL : items);
}

static void store_extra(tg_api *api, extra x)
{
    if (x == X_OTHER_CSR)
        fake_api_put(api, SECRET, "{\"metadata\":{\"name\":\"liqo-remote-certificate-" NAME "\",\"namespace\":\"" NS
                     "\"},\"data\":{\"csr\":\"b3RoZXI=\",\"certificate\":\"\"}}");
    if (x == X_RB)
        fake_api_put(api, RB, "{\"metadata\":{\"name\":\"tenantgate-rslice-" NAME "\",\"namespace\":\"" NS "\"}}");
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
    s.csr_cache = csr_cache(w, r->csr);
    store_slice(api, w, r->slice);
    store_tenant(api, w, r->tenant);
    store_extra(api, r->x);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
