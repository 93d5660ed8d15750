/* test_reconcile_approver.c - the provider's CSR approver (tg_reconcile_csr)
 * against the fake API: for each row, the CSR, Tenant and nonce in the store,
 * and the approval written (or not), the events, and the requeue, failures
 * of the API included. The seed Tenant (cl01) and its request are the
 * matching pair; the rows spoil one input each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/name_owner.h"
#include "signer/approve_decide.h"
#include "signer/reconcile_common.h"
#include "signer/test_reconcile_fixture.h"

#define NS "liqo-tenant-cl01"
#define TENANT TENANTS_API "/namespaces/" NS "/tenants/cl01"
#define NONCE "/api/v1/namespaces/" NS "/secrets/liqo-nonce"
#define CSR_NAME "liqo-identity-abcde"
#define CSR CSR_API "/" CSR_NAME
#define APPROVAL CSR "/approval"

typedef enum { S_PENDING, S_APPROVED, S_DENIED, S_ABSENT } csr_state;
typedef enum {
    M_NONE, M_NO_TENANT, M_NONCE_ROTATED, M_OTHER_SIGNER, M_HOSTILE_LABEL, M_APPROVER_OFF,
    M_CLAIM_TOKEN,              /* cl01's NameClaim is tenantgate-auth's (path token) */
    M_CLAIM_OURS,               /* cl01's NameClaim is the Tenant flow's, cl01's */
} spoil;

typedef struct row {
    const char *what;
    csr_state state;
    spoil m;
    const char *fail_method, *fail_path;
    long fail_status;
    const char *writes;
    long ret;
    const char *condition;      /* the CSR's last condition type afterwards, or NULL: none */
} row;

#define APPROVED "PUT " APPROVAL " 200\nEVENT /" CSR_NAME " "
#define CLAIMED "POST " TG_NAME_CLAIMS_PATH " 201\n"

static const row rows[] = {
    {"matching Tenant: claimed, approved", S_PENDING, M_NONE, NULL, NULL, 0, CLAIMED APPROVED "TenantValidated\n",
     TG_RECONCILE_OK, "Approved"},
    {"cl01 claimed by the token path: denied NameOwned, the Tenant told", S_PENDING, M_CLAIM_TOKEN, NULL, NULL, 0,
     "POST " TG_NAME_CLAIMS_PATH " 409\n" APPROVED "NameOwned\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK,
     "Denied"},
    {"cl01 claimed by its own Tenant flow (a renewal): approved", S_PENDING, M_CLAIM_OURS, NULL, NULL, 0,
     "POST " TG_NAME_CLAIMS_PATH " 409\n" APPROVED "TenantValidated\n", TG_RECONCILE_OK, "Approved"},
    {"claim POST answers 404 (no CRD): nothing decided", S_PENDING, M_NONE, "POST", TG_NAME_CLAIMS_PATH, 404,
     "POST " TG_NAME_CLAIMS_PATH " 404\n", TG_RECONCILE_RETRY, NULL},
    {"CSR gone", S_ABSENT, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, NULL},
    {"CSR GET answers 500", S_PENDING, M_NONE, "GET", CSR, 500, "", TG_RECONCILE_RETRY, NULL},
    {"decided already: approved", S_APPROVED, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, "Approved"},
    {"decided already: denied", S_DENIED, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, "Denied"},
    {"approver off", S_PENDING, M_APPROVER_OFF, NULL, NULL, 0, "", TG_RECONCILE_OK, NULL},
    {"no Tenant: denied", S_PENDING, M_NO_TENANT, NULL, NULL, 0, APPROVED "NoMatchingTenant\n", TG_RECONCILE_OK,
     "Denied"},
    {"nonce rotated: denied, the Tenant told", S_PENDING, M_NONCE_ROTATED, NULL, NULL, 0,
     APPROVED "SignatureVerificationFailed\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"other signer: denied", S_PENDING, M_OTHER_SIGNER, NULL, NULL, 0,
     APPROVED "SignerNameMismatch\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"hostile cluster-id label: no Tenant read, denied", S_PENDING, M_HOSTILE_LABEL, NULL, NULL, 0,
     APPROVED "NoMatchingTenant\n", TG_RECONCILE_OK, "Denied"},
    {"Tenant GET answers 500: nothing decided", S_PENDING, M_NONE, "GET", TENANT, 500, "", TG_RECONCILE_RETRY, NULL},
    {"Tenant GET transport error", S_PENDING, M_NONE, "GET", TENANT, -1, "", TG_RECONCILE_RETRY, NULL},
    {"approval PUT conflicts", S_PENDING, M_NONE, "PUT", APPROVAL, 409, CLAIMED "PUT " APPROVAL " 409\n",
     TG_RECONCILE_RETRY, NULL},
    {"approval PUT transport error", S_PENDING, M_NONE, "PUT", APPROVAL, -1, CLAIMED "PUT " APPROVAL " -1\n",
     TG_RECONCILE_RETRY, NULL},
};

static void store_csr(tg_api *api, const char *request, csr_state state, spoil m)
{
    char text[8192];
    const char *cond = state == S_APPROVED ? ",\"status\":{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}"
                       : state == S_DENIED ? ",\"status\":{\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\"}]}"
                                           : "";

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\","
             "\"metadata\":{\"name\":\"" CSR_NAME "\",\"labels\":{\"" TG_LABEL_TENANT_CSR "\":\"true\","
             "\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"%s\",\"" TG_LABEL_TENANT_NS "\":\"" NS "\"}},"
             "\"spec\":{\"request\":\"%s\",\"signerName\":\"%s\","
             "\"usages\":[\"digital signature\",\"key encipherment\",\"client auth\"]}%s}",
             m == M_HOSTILE_LABEL ? "../../cl01" : "cl01", request,
             m == M_OTHER_SIGNER ? "example.com/other" : TG_SIGNER_NAME_KUBE, cond);
    fake_api_put(api, CSR, text);
}

static void store_objects(tg_api *api, const row *r)
{
    char *tenant = rt_vector("seed-cl01-pemkey.json"), *nonce = rt_vector("seed-cl01-pemkey.nonce"), *b64;
    json_object *t = tg_json_parse(tenant, strlen(tenant), NULL, 0);
    char text[512];

    if (r->state != S_ABSENT)
        store_csr(api, tg_json_path_string(t, "spec", "csr", NULL), r->state, r->m);
    if (r->m != M_NO_TENANT)
        fake_api_put_obj(api, TENANT, t);
    else
        json_object_put(t);
    if (r->m == M_NONCE_ROTATED)
        nonce[0] = nonce[0] == 'A' ? 'B' : 'A';
    b64 = rt_b64(nonce, strlen(nonce));
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"liqo-nonce\",\"namespace\":\"" NS "\"},"
             "\"data\":{\"nonce\":\"%s\"}}", b64);
    fake_api_put(api, NONCE, text);
    fake_api_put(api, "/api/v1/namespaces/" NS, "{\"metadata\":{\"name\":\"" NS "\"}}");
    if (r->m == M_CLAIM_TOKEN || r->m == M_CLAIM_OURS) {
        char obj[TG_NAME_CLAIM_OBJECT_MAX], path[200];
        tg_name_claim_object("cl01", obj);
        snprintf(path, sizeof(path), TG_NAME_CLAIMS_PATH "/%s", obj);
        fake_api_put_obj(api, path, tg_name_claim_doc("cl01", r->m == M_CLAIM_TOKEN ? TG_NAME_PATH_TOKEN
                                                                                      : TG_NAME_PATH_TENANT,
                                                      "cl01", NS, "uid"));
    }
    free(b64);
    free(nonce);
    free(tenant);
}

/* The type of the CSR's last condition as stored, or NULL. */
static const char *last_condition(tg_api *api)
{
    json_object *c = tg_json_path(fake_api_object(api, CSR), "status", "conditions", NULL);
    size_t n = c ? json_object_array_length(c) : 0;

    return n ? tg_json_string(json_object_array_get_idx(c, n - 1), "type") : NULL;
}

static void run_row(const row *r)
{
    tg_api *api = fake_api_new();
    const char *cond;
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    if (r->m == M_APPROVER_OFF)
        s.controllers &= ~TG_CTL_APPROVER;
    store_objects(api, r);
    if (r->fail_path)
        fake_api_fail(api, r->fail_method, r->fail_path, r->fail_status, 1);
    ret = tg_reconcile_csr(&s, api, CSR_NAME);
    if (strcmp(rt_writes(api), r->writes) != 0)
        fail_msg("%s: writes\n%s\nwant\n%s", r->what, rt_writes(api), r->writes);
    if (ret != r->ret)
        fail_msg("%s: returned %ld, want %ld", r->what, ret, r->ret);
    cond = last_condition(api);
    if (r->condition ? !cond || strcmp(cond, r->condition) != 0 : cond != NULL)
        fail_msg("%s: condition %s, want %s", r->what, cond ? cond : "none", r->condition ? r->condition : "none");
    rt_signer_clear(&s);
    fake_api_free(api);
}

static void test_approver_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* A CSR the informer shows issued needs no GET at all (settled.h). */
static void test_issued_in_cache_costs_nothing(void **state)
{
    static const char *const csrs[] = {
        "{\"metadata\":{\"name\":\"" CSR_NAME "\",\"resourceVersion\":\"9\"},\"status\":{\"certificate\":\"eA==\"}}",
        NULL};
    tg_api *api = fake_api_new();
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    s.csr_cache = rt_cache(TG_LABEL_REMOTE_CLUSTER_ID, csrs);
    assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
    assert_int_equal(fake_api_ngets(api), 0);
    assert_int_equal(json_object_array_length(fake_api_writes(api)), 0);
    rt_signer_clear(&s);
    fake_api_free(api);
}


/* The CSR informer's cache holding the CSR as stored now. */
static tg_cache *cache_of_csr(tg_api *api)
{
    const char *items[] = {json_object_to_json_string(fake_api_object(api, CSR)), NULL};

    return rt_cache(TG_LABEL_REMOTE_CLUSTER_ID, items);
}

/* The CSR our own POST returned, while the informer shows that version, is
 * decided without a GET of it (issue 39): its GET would fail here. */
static void test_stashed_csr_costs_no_get(void **state)
{
    static const row r = {.state = S_PENDING, .m = M_NONE};
    tg_api *api = fake_api_new();
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    store_objects(api, &r);
    rc_csr_stash(&s, fake_api_object(api, CSR));
    s.csr_cache = cache_of_csr(api);
    fake_api_fail(api, "GET", CSR, 500, 1);
    assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
    assert_string_equal(last_condition(api), "Approved");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* The stash and the informer both behind the live CSR: the PUT carries the
 * old resourceVersion, the API server answers 409, the key comes back at
 * once and the next pass reads live and decides. */
static void test_stale_stash_conflicts_then_converges(void **state)
{
    static const row r = {.state = S_PENDING, .m = M_NONE};
    tg_api *api = fake_api_new();
    tg_signer s;
    char *tenant = rt_vector("seed-cl01-pemkey.json");
    json_object *t = tg_json_parse(tenant, strlen(tenant), NULL, 0);

    (void)state;
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    store_objects(api, &r);
    rc_csr_stash(&s, fake_api_object(api, CSR));
    s.csr_cache = cache_of_csr(api);
    store_csr(api, tg_json_path_string(t, "spec", "csr", NULL), S_PENDING, M_NONE);   /* a newer version */
    assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), 1);
    assert_string_equal(rt_writes(api), CLAIMED "PUT " APPROVAL " 409\n");
    assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
    assert_string_equal(last_condition(api), "Approved");
    json_object_put(t);
    free(tenant);
    rt_signer_clear(&s);
    fake_api_free(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_approver_rows),
        cmocka_unit_test(test_issued_in_cache_costs_nothing),
        cmocka_unit_test(test_stashed_csr_costs_no_get),
        cmocka_unit_test(test_stale_stash_conflicts_then_converges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
