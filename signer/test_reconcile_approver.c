/* test_reconcile_approver.c - the provider's CSR approver (tg_reconcile_csr)
 * against the fake API: for each row, the CSR, Tenant and nonce in the store,
 * and the approval written (or not), the events, and the requeue, failures
 * of the API included. The seed Tenant (cl01) and its request are the
 * matching pair; the rows spoil one input each. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/base64.h"
#include "kube/cache.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/keys.h"
#include "pki/name_owner.h"
#include "pki/slice.h"
#include "signer/settled.h"
#include "signer/slice_ctx.h"
#include "signer/slice_policy_memo.h"
#include "signer/approve_decide.h"
#include "signer/binding_index.h"
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
    M_CRB_FOREIGN,              /* an admin's ClusterRoleBinding binds view to User cl01 */
    M_RB_GROUP_ELSEWHERE,       /* a RoleBinding in team-a names Group cl01 */
    M_OWN_BINDINGS,             /* the signer's liqo-binding-* in liqo-tenant-cl01 and Liqo's clusterwide one */
    M_BINDINGS_UNSYNCED,        /* the RoleBinding informer has not listed yet */
    M_LIQO_OFFLOAD,             /* Liqo's RoleBinding in a namespace it offloaded for cl01 */
    M_OFFLOAD_ADMIN,            /* the same, but binding the ClusterRole admin */
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

#define DECIDED "PUT " APPROVAL " 200\n"
/* a denial's Event on the CSR (an approval has none) */
#define CSR_EVENT "EVENT /" CSR_NAME " "
#define CLAIMED "POST " TG_NAME_CLAIMS_PATH " 201\n"

static const row rows[] = {
    {"matching Tenant: claimed, approved", S_PENDING, M_NONE, NULL, NULL, 0, CLAIMED DECIDED,
     TG_RECONCILE_OK, "Approved"},
    {"cl01 claimed by the token path: denied NameOwned, the Tenant told", S_PENDING, M_CLAIM_TOKEN, NULL, NULL, 0,
     "POST " TG_NAME_CLAIMS_PATH " 409\n" DECIDED CSR_EVENT "NameOwned\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK,
     "Denied"},
    {"cl01 claimed by its own Tenant flow (a renewal): approved", S_PENDING, M_CLAIM_OURS, NULL, NULL, 0,
     "POST " TG_NAME_CLAIMS_PATH " 409\n" DECIDED, TG_RECONCILE_OK, "Approved"},
    {"claim POST answers 404 (no CRD): nothing decided", S_PENDING, M_NONE, "POST", TG_NAME_CLAIMS_PATH, 404,
     "POST " TG_NAME_CLAIMS_PATH " 404\n", TG_RECONCILE_RETRY, NULL},
    {"a foreign ClusterRoleBinding names cl01: denied NameBound, the Tenant told", S_PENDING, M_CRB_FOREIGN, NULL,
     NULL, 0, DECIDED CSR_EVENT "NameBound\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"a RoleBinding in another namespace names Group cl01: denied NameBound", S_PENDING, M_RB_GROUP_ELSEWHERE, NULL,
     NULL, 0, DECIDED CSR_EVENT "NameBound\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"the Tenant flow's own bindings for cl01: claimed, approved", S_PENDING, M_OWN_BINDINGS, NULL, NULL, 0,
     CLAIMED DECIDED, TG_RECONCILE_OK, "Approved"},
    {"Liqo's offload binding names Group cl01: claimed, approved", S_PENDING, M_LIQO_OFFLOAD, NULL, NULL, 0,
     CLAIMED DECIDED, TG_RECONCILE_OK, "Approved"},
    {"Liqo's offload binding's shape binding admin: denied NameBound", S_PENDING, M_OFFLOAD_ADMIN, NULL, NULL, 0,
     DECIDED CSR_EVENT "NameBound\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"binding informers not synced: nothing decided", S_PENDING, M_BINDINGS_UNSYNCED, NULL, NULL, 0, "",
     TG_RECONCILE_RETRY, NULL},
    {"CSR gone", S_ABSENT, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, NULL},
    {"CSR GET answers 500", S_PENDING, M_NONE, "GET", CSR, 500, "", TG_RECONCILE_RETRY, NULL},
    {"decided already: approved", S_APPROVED, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, "Approved"},
    {"decided already: denied", S_DENIED, M_NONE, NULL, NULL, 0, "", TG_RECONCILE_OK, "Denied"},
    {"approver off", S_PENDING, M_APPROVER_OFF, NULL, NULL, 0, "", TG_RECONCILE_OK, NULL},
    {"no Tenant: denied", S_PENDING, M_NO_TENANT, NULL, NULL, 0, DECIDED CSR_EVENT "NoMatchingTenant\n", TG_RECONCILE_OK,
     "Denied"},
    {"nonce rotated: denied, the Tenant told", S_PENDING, M_NONCE_ROTATED, NULL, NULL, 0,
     DECIDED CSR_EVENT "SignatureVerificationFailed\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"other signer: denied", S_PENDING, M_OTHER_SIGNER, NULL, NULL, 0,
     DECIDED CSR_EVENT "SignerNameMismatch\nEVENT " NS "/cl01 CSRDenied\n", TG_RECONCILE_OK, "Denied"},
    {"hostile cluster-id label: no Tenant read, denied", S_PENDING, M_HOSTILE_LABEL, NULL, NULL, 0,
     DECIDED CSR_EVENT "NoMatchingTenant\n", TG_RECONCILE_OK, "Denied"},
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

static const char *const crb_foreign[] = {
    "{\"metadata\":{\"name\":\"cl01-view\"},\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"view\"},"
    "\"subjects\":[{\"kind\":\"User\",\"name\":\"cl01\"}]}", NULL};
static const char *const rb_group_elsewhere[] = {
    "{\"metadata\":{\"name\":\"cl01-edit\",\"namespace\":\"team-a\"},\"roleRef\":{\"kind\":\"ClusterRole\","
    "\"name\":\"edit\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"x\"},"
    "{\"kind\":\"Group\",\"name\":\"cl01\"}]}", NULL};
static const char *const rb_own[] = {
    "{\"metadata\":{\"name\":\"liqo-binding-liqo-remote-controlplane\",\"namespace\":\"" NS "\"},"
    "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"liqo-remote-controlplane\"},"
    "\"subjects\":[{\"kind\":\"User\",\"name\":\"cl01\"}]}", NULL};
static const char *const crb_own[] = {
    "{\"metadata\":{\"name\":\"liqo-binding-liqo-virtual-kubelet-remote-clusterwide-cl01\"},"
    "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"liqo-virtual-kubelet-remote-clusterwide\"},"
    "\"subjects\":[{\"kind\":\"Group\",\"name\":\"cl01\"}]}", NULL};

/* Liqo's NamespaceMap controller's RoleBinding in the namespace it made for
 * cl01's offloaded namespace default, as Liqo v1.2 writes it. */
#define OFFLOAD_RB(role) \
    "{\"metadata\":{\"name\":\"" NS "\",\"namespace\":\"default-cl01\",\"labels\":{" \
    "\"app.kubernetes.io/managed-by\":\"liqo\",\"liqo.io/remote-cluster-id\":\"cl01\"}}," \
    "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"" role "\"}," \
    "\"subjects\":[{\"kind\":\"Group\",\"name\":\"cl01\"}]}"
static const char *const rb_liqo_offload[] = {OFFLOAD_RB("liqo-virtual-kubelet-remote"), NULL};
static const char *const rb_offload_admin[] = {OFFLOAD_RB("admin"), NULL};

/* The binding informers' caches (and their index) as the row has them. */
static void set_bindings(tg_signer *s, const char *const *rbs, const char *const *crbs)
{
    tg_cache_free(s->rb_cache);
    tg_cache_free(s->crb_cache);
    s->rb_cache = rt_cache(NULL, rbs);
    s->crb_cache = rt_cache(NULL, crbs);
    tg_binding_index_fill(s->binding_index, s->rb_cache);
    tg_binding_index_fill(s->binding_index, s->crb_cache);
}

static void store_bindings(tg_signer *s, spoil m)
{
    static const char *const none[] = {NULL};

    if (m == M_CRB_FOREIGN)
        set_bindings(s, none, crb_foreign);
    else if (m == M_RB_GROUP_ELSEWHERE)
        set_bindings(s, rb_group_elsewhere, none);
    else if (m == M_OWN_BINDINGS)
        set_bindings(s, rb_own, crb_own);
    else if (m == M_LIQO_OFFLOAD)
        set_bindings(s, rb_liqo_offload, none);
    else if (m == M_OFFLOAD_ADMIN)
        set_bindings(s, rb_offload_admin, none);
    else if (m == M_BINDINGS_UNSYNCED) {
        tg_cache_free(s->rb_cache);
        s->rb_cache = tg_cache_new(NULL);
    }
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
    store_bindings(&s, r->m);
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
    tg_api_keep(s.settled, CSR, fake_api_object(api, CSR), CSR_STASH_MS);
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
    tg_api_keep(s.settled, CSR, fake_api_object(api, CSR), CSR_STASH_MS);
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

#define SLICE "mypool"
#define SLICE_PATH TENANTS_API "/namespaces/" NS "/resourceslices/" SLICE

static char *b64_of(const void *p, size_t n)
{
    char *b = tg_base64_encode(p, n, NULL);

    assert_non_null(b);
    return b;
}

/* cl01's Tenant (key's public half), its admitted slice mypool and the
 * slice's CSR in the fake API: a pair the approver approves. */
static void store_slice_world(tg_api *api, EVP_PKEY *key)
{
    size_t len = 0;
    char *pub = tg_key_public_pem(key, NULL), *pub_b64 = b64_of(pub, strlen(pub)), text[8192];
    char *pem = tg_slice_csr_build(key, SLICE, "cl01", &len), *req = b64_of(pem, len);

    snprintf(text, sizeof(text), "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Tenant\","
             "\"metadata\":{\"name\":\"cl01\",\"namespace\":\"" NS "\"},"
             "\"spec\":{\"clusterID\":\"cl01\",\"publicKey\":\"%s\",\"csr\":\"eA==\",\"signature\":\"eA==\"}}",
             pub_b64);
    fake_api_put(api, TENANT, text);
    snprintf(text, sizeof(text), "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"" SLICE "\",\"namespace\":\"" NS "\",\"uid\":\"u1\","
             "\"labels\":{\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"cl01\","
             "\"liqo.io/remote-cluster-id\":\"cl01\"}},"
             "\"spec\":{\"consumerClusterID\":\"cl01\",\"class\":\"default\",\"csr\":\"%s\"}}", req);
    fake_api_put(api, SLICE_PATH, text);
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"" CSR_NAME "\",\"labels\":{\"" TG_LABEL_TENANT_CSR
             "\":\"true\",\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"cl01\"},\"annotations\":{\"" TG_ANNOTATION_CSR_SLICE
             "\":\"" NS "/" SLICE "\"}},\"spec\":{\"request\":\"%s\",\"signerName\":\"" TG_SIGNER_NAME_KUBE "\","
             "\"usages\":[\"digital signature\",\"key encipherment\",\"client auth\"]}}", req);
    fake_api_put(api, CSR, text);
    fake_api_put(api, "/api/v1/namespaces/" NS, "{\"metadata\":{\"name\":\"" NS "\",\"uid\":\"u-ns\"}}");
    free(req);
    free(pem);
    free(pub_b64);
    free(pub);
}

/* A slice's user is refused while a RoleBinding tenantgate did not make
 * names it (NameBound); without that binding the same CSR is approved. */
static void test_slice_user_bound(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    char user[TG_SLICE_USER_MAX], rb[512];
    const char *rbs[] = {rb, NULL}, *none[] = {NULL};

    (void)state;
    assert_non_null(key);
    assert_int_equal(tg_slice_user_name(SLICE, "cl01", user, sizeof(user)), 0);
    snprintf(rb, sizeof(rb), "{\"metadata\":{\"name\":\"peek\",\"namespace\":\"team-a\"},\"roleRef\":{"
             "\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"%s\"}]}", user);
    for (int bound = 1; bound >= 0; bound--) {
        tg_api *api = fake_api_new();
        tg_signer s;
        rt_signer_init(&s);
        set_bindings(&s, bound ? rbs : none, none);
        store_slice_world(api, key);
        assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
        assert_string_equal(last_condition(api), bound ? "Denied" : "Approved");
        if (bound)
            assert_non_null(strstr(rt_writes(api), "NameBound"));
        rt_signer_clear(&s);
        fake_api_free(api);
    }
    EVP_PKEY_free(key);
}

/* A slice's certificate carries its consumer's id as group: a foreign
 * binding naming Group cl01 refuses the slice too (NameBound); Liqo's
 * offload binding for cl01 does not. */
static void test_slice_group_bound(void **state)
{
    static const char *const group_elsewhere[] = {
        "{\"metadata\":{\"name\":\"peek\",\"namespace\":\"team-a\"},\"roleRef\":{\"kind\":\"ClusterRole\","
        "\"name\":\"view\"},\"subjects\":[{\"kind\":\"Group\",\"name\":\"cl01\"}]}", NULL};
    static const struct { const char *const *rbs; const char *cond; } cases[] = {
        {group_elsewhere, "Denied"}, {rb_liqo_offload, "Approved"}, {rb_offload_admin, "Denied"}};
    static const char *const none[] = {NULL};
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    const char *cond;

    (void)state;
    assert_non_null(key);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_api *api = fake_api_new();
        tg_signer s;
        rt_signer_init(&s);
        set_bindings(&s, cases[i].rbs, none);
        store_slice_world(api, key);
        assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
        cond = last_condition(api);
        if (!cond || strcmp(cond, cases[i].cond) != 0)
            fail_msg("case %zu: %s, want %s\n%s", i, cond ? cond : "none", cases[i].cond, rt_writes(api));
        if (strcmp(cases[i].cond, "Denied") == 0)
            assert_non_null(strstr(rt_writes(api), "NameBound"));
        rt_signer_clear(&s);
        fake_api_free(api);
    }
    EVP_PKEY_free(key);
}

/* A second slice CSR of cl01 (named name, uid uid) like the first. */
static void copy_csr(tg_api *api, const char *name, const char *uid)
{
    json_object *c = NULL, *meta;
    char path[256];

    assert_int_equal(json_object_deep_copy(fake_api_object(api, CSR), &c, NULL), 0);
    meta = tg_json_path(c, "metadata", NULL);
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "uid", json_object_new_string(uid));
    snprintf(path, sizeof(path), CSR_API "/%s", name);
    fake_api_put_obj(api, path, c);
}

/* The slice as its consumer changed it (a new request, seen now). */
static void new_generation(tg_api *api)
{
    json_object_object_add(tg_json_path(fake_api_object(api, SLICE_PATH), "metadata", NULL), "generation",
                           json_object_new_int64(2));
}

/* A slice of cl01 with three CSRs (uids c1, c2, c3), the slice seen
 * before any read, and the first CSR approved: the shared-read tests'
 * start. */
static void three_slice_csrs_first_approved(tg_signer *s, tg_api *api, EVP_PKEY *key)
{
    store_slice_world(api, key);
    json_object_object_add(tg_json_path(fake_api_object(api, CSR), "metadata", NULL), "uid",
                           json_object_new_string("c1"));
    copy_csr(api, "liqo-identity-s2", "c2");
    copy_csr(api, "liqo-identity-s3", "c3");
    rs_memo_note_seen(s, fake_api_object(api, SLICE_PATH));
    assert_int_equal(tg_reconcile_csr(s, api, CSR_NAME), TG_RECONCILE_OK);
    assert_string_equal(last_condition(api), "Approved");
}

/* The CSRs of slices first seen before a read of their Tenant started
 * share it (slice_policy_memo.h), whenever the CSRs came; a slice seen
 * after (a new generation here) reads again: a Tenant drained just before
 * it refuses it. */
static void test_slice_csrs_share_a_tenant_read(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    tg_api *api = fake_api_new();
    tg_signer s;

    (void)state;
    assert_non_null(key);
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    three_slice_csrs_first_approved(&s, api, key);
    /* the second was seen before that read: it serves (the failing GET is never asked) */
    fake_api_fail(api, "GET", TENANT, 500, 1);
    assert_int_equal(tg_reconcile_csr(&s, api, "liqo-identity-s2"), TG_RECONCILE_OK);
    assert_true(strstr(rt_writes(api), "PUT " CSR_API "/liqo-identity-s2/approval 200") != NULL);
    /* the Tenant drained, then the slice changed: it reads (and fails), then reads the drain */
    json_object_object_add(tg_json_path(fake_api_object(api, TENANT), "spec", NULL), "tenantCondition",
                           json_object_new_string("Drained"));
    new_generation(api);
    assert_int_not_equal(tg_reconcile_csr(&s, api, "liqo-identity-s3"), TG_RECONCILE_OK);
    assert_int_equal(tg_reconcile_csr(&s, api, "liqo-identity-s3"), TG_RECONCILE_OK);
    assert_non_null(strstr(rt_writes(api), "SliceTenantDrained"));
    rt_signer_clear(&s);
    fake_api_free(api);
    EVP_PKEY_free(key);
}

/* The NameClaim of a slice's user is owned by its namespace as the
 * namespace informer shows it: no GET of the Namespace (it would fail
 * here); without that informer the Namespace is read live. */
static void test_slice_claim_owner_from_ns_cache(void **state)
{
    static const char *const ns_items[] = {"{\"metadata\":{\"name\":\"" NS "\",\"uid\":\"u-cached\"}}", NULL};
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    char user[TG_SLICE_USER_MAX], obj[TG_NAME_CLAIM_OBJECT_MAX], path[256];
    json_object *owners;

    (void)state;
    assert_non_null(key);
    assert_int_equal(tg_slice_user_name(SLICE, "cl01", user, sizeof(user)), 0);
    tg_name_claim_object(user, obj);
    snprintf(path, sizeof(path), TG_NAME_CLAIMS_PATH "/%s", obj);
    for (int cached = 1; cached >= 0; cached--) {
        tg_api *api = fake_api_new();
        tg_signer s;
        rt_signer_init(&s);
        if (cached)
            s.ns_cache = rt_cache(NULL, ns_items);
        store_slice_world(api, key);
        if (cached)
            fake_api_fail(api, "GET", "/api/v1/namespaces/" NS, 500, 1);
        assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
        assert_string_equal(last_condition(api), "Approved");
        owners = tg_json_path(fake_api_object(api, path), "metadata", "ownerReferences", NULL);
        assert_non_null(owners);
        assert_string_equal(tg_json_string(json_object_array_get_idx(owners, 0), "uid"), cached ? "u-cached" : "u-ns");
        tg_cache_free(s.ns_cache);
        s.ns_cache = NULL;
        rt_signer_clear(&s);
        fake_api_free(api);
    }
    EVP_PKEY_free(key);
}

/* The consumer's own NameClaim, which a slice's group must be the Tenant
 * flow's, is read once for the CSRs of slices first seen before that read
 * (the failing GET is never asked for the second); a slice seen after (a
 * new generation) reads again and meets a claim of another path made
 * meanwhile (NameOwned). */
static void test_slice_csrs_share_a_group_claim_read(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    tg_api *api = fake_api_new();
    tg_signer s;
    char obj[TG_NAME_CLAIM_OBJECT_MAX], path[256];

    (void)state;
    assert_non_null(key);
    tg_name_claim_object("cl01", obj);
    snprintf(path, sizeof(path), TG_NAME_CLAIMS_PATH "/%s", obj);
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    three_slice_csrs_first_approved(&s, api, key);
    fake_api_fail(api, "GET", path, 500, 1);
    assert_int_equal(tg_reconcile_csr(&s, api, "liqo-identity-s2"), TG_RECONCILE_OK);
    assert_true(strstr(rt_writes(api), "PUT " CSR_API "/liqo-identity-s2/approval 200") != NULL);
    /* cl01 claimed by the token path meanwhile; the slice changed: it reads (fails, then reads it) */
    fake_api_put_obj(api, path, tg_name_claim_doc("cl01", TG_NAME_PATH_TOKEN, "someone", NS, "u-ns"));
    new_generation(api);
    assert_int_not_equal(tg_reconcile_csr(&s, api, "liqo-identity-s3"), TG_RECONCILE_OK);
    assert_int_equal(tg_reconcile_csr(&s, api, "liqo-identity-s3"), TG_RECONCILE_OK);
    assert_non_null(strstr(rt_writes(api), "NameOwned"));
    rt_signer_clear(&s);
    fake_api_free(api);
    EVP_PKEY_free(key);
}

/* The approver keeps its live reads of a slice and of its Tenant, at their
 * versions, for the pass the CSR's issue wakes (slice_ctx.h): that pass
 * needs no GET. */
static void test_slice_read_kept_for_the_issue_pass(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    tg_api *api = fake_api_new();
    tg_signer s;
    json_object *kept;
    char stash[300];

    (void)state;
    assert_non_null(key);
    rt_signer_init(&s);
    s.settled = tg_settled_new();
    store_slice_world(api, key);
    assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
    assert_string_equal(last_condition(api), "Approved");
    kept = tg_api_kept(s.settled, rs_slice_stash_key(NS, SLICE, stash, sizeof(stash)),
                       tg_json_path_string(fake_api_object(api, SLICE_PATH), "metadata", "resourceVersion", NULL));
    assert_non_null(kept);
    assert_string_equal(tg_json_path_string(kept, "metadata", "uid", NULL), "u1");
    json_object_put(kept);
    /* and its Tenant read, for every slice pass of cl01 while the informer shows that version */
    kept = tg_api_kept(s.settled, rs_slice_tenant_key(NS, "cl01", stash, sizeof(stash)),
                       tg_json_path_string(fake_api_object(api, TENANT), "metadata", "resourceVersion", NULL));
    assert_non_null(kept);
    json_object_put(kept);
    rt_signer_clear(&s);
    fake_api_free(api);
    EVP_PKEY_free(key);
}

/* The Tenant informer by name, as informers.c indexes it. */
static tg_cache *tenants_by_name(const char *const *items)
{
    tg_cache *c = tg_cache_new(NULL);
    json_object *list = json_object_new_array();
    char err[256] = "";

    assert_non_null(c);
    assert_int_equal(tg_cache_index_metadata(c, TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME), 0);
    for (size_t i = 0; items[i]; i++)
        json_object_array_add(list, tg_json_parse(items[i], strlen(items[i]), NULL, 0));
    assert_int_equal(tg_cache_replace(c, list, "1", NULL, err, sizeof(err)), 0);
    json_object_put(list);
    return c;
}

/* A slice's user that is a Tenant's name somewhere, as the Tenant informer
 * shows it, is refused (UserNameTaken) with no LIST of Tenants (it would
 * fail here); one nobody has is approved, with no LIST either. */
static void test_slice_user_taken_from_the_tenant_cache(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    char user[TG_SLICE_USER_MAX], text[4 * TG_SLICE_USER_MAX + 128];
    const char *taken[] = {text, NULL}, *none[] = {NULL};

    (void)state;
    assert_non_null(key);
    assert_int_equal(tg_slice_user_name(SLICE, "cl01", user, sizeof(user)), 0);
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"liqo-tenant-%s\"},"
             "\"spec\":{\"clusterID\":\"%s\"}}", user, user, user);
    for (int is_taken = 1; is_taken >= 0; is_taken--) {
        tg_api *api = fake_api_new();
        tg_signer s;
        rt_signer_init(&s);
        s.tenant_cache = tenants_by_name(is_taken ? taken : none);
        store_slice_world(api, key);
        fake_api_fail(api, "GET", TENANTS_API "/tenants", 500, 1);
        assert_int_equal(tg_reconcile_csr(&s, api, CSR_NAME), TG_RECONCILE_OK);
        assert_string_equal(last_condition(api), is_taken ? "Denied" : "Approved");
        if (is_taken)
            assert_non_null(strstr(rt_writes(api), "UserNameTaken"));
        rt_signer_clear(&s);
        fake_api_free(api);
    }
    EVP_PKEY_free(key);
}

/* rs_memo_now_us: strictly later on every call, in every thread, so "a read
 * that started after the request was seen" holds for two events in the same
 * microsecond (the first pass notes the slice seen, then reads). */
#define CLOCK_CALLS 20000

static void *clock_calls(void *out)
{
    uint64_t *t = out;

    for (size_t i = 0; i < CLOCK_CALLS; i++)
        t[i] = rs_memo_now_us();
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void test_memo_clock_never_repeats(void **state)
{
    uint64_t *t = calloc(2 * CLOCK_CALLS, sizeof(*t));
    pthread_t th;

    (void)state;
    assert_non_null(t);
    assert_int_equal(pthread_create(&th, NULL, clock_calls, t + CLOCK_CALLS), 0);
    clock_calls(t);
    pthread_join(th, NULL);
    for (size_t i = 1; i < CLOCK_CALLS; i++) {
        assert_true(t[i] > t[i - 1]);
        assert_true(t[CLOCK_CALLS + i] > t[CLOCK_CALLS + i - 1]);
    }
    qsort(t, 2 * CLOCK_CALLS, sizeof(*t), cmp_u64);
    for (size_t i = 1; i < 2 * CLOCK_CALLS; i++)
        assert_true(t[i] != t[i - 1]);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_approver_rows),
        cmocka_unit_test(test_issued_in_cache_costs_nothing),
        cmocka_unit_test(test_stashed_csr_costs_no_get),
        cmocka_unit_test(test_stale_stash_conflicts_then_converges),
        cmocka_unit_test(test_slice_user_bound),
        cmocka_unit_test(test_slice_group_bound),
        cmocka_unit_test(test_slice_csrs_share_a_tenant_read),
        cmocka_unit_test(test_slice_claim_owner_from_ns_cache),
        cmocka_unit_test(test_slice_csrs_share_a_group_claim_read),
        cmocka_unit_test(test_slice_read_kept_for_the_issue_pass),
        cmocka_unit_test(test_slice_user_taken_from_the_tenant_cache),
        cmocka_unit_test(test_memo_clock_never_repeats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
