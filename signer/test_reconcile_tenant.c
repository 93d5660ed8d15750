/* test_reconcile_tenant.c - the provider's Tenant controller
 * (tg_reconcile_tenant) against the fake API: for each row, the objects in
 * the store and the CSR cache, and the writes the reconcile makes and the
 * requeue it asks for, failures of the API included. The seed Tenant
 * (cl01, signed over the seed nonce) is the Tenant throughout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/cache.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "signer/approve_decide.h"
#include "signer/cert_group_plan.h"
#include "signer/reconcile_common.h"
#include "signer/tenant_rbac.h"
#include "signer/unpeer_plan.h"
#include "signer/test_reconcile_fixture.h"

#define NS "liqo-tenant-cl01"
#define TENANT TENANTS_API "/namespaces/" NS "/tenants/cl01"
#define NONCE "/api/v1/namespaces/" NS "/secrets/liqo-nonce"
#define RBS "/apis/rbac.authorization.k8s.io/v1/namespaces/" NS "/rolebindings"
#define RB RBS "/liqo-binding-tenantgate-remote-consumer"
#define RB_LEGACY RBS "/liqo-tenant-cl01"
#define RB_LIQO RBS "/liqo-binding-liqo-remote-controlplane"
#define RB_EXTRA RBS "/liqo-binding-extra-ops"
#define CRS "/apis/rbac.authorization.k8s.io/v1/clusterroles"
#define CRBS "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
#define CRB CRBS "/" TG_CLUSTERWIDE_BINDING_PREFIX "cl01"
#define WAIT_MS 30000          /* provider_tenant.c TENANT_WAIT_MS */
#define POSITIVE_MS 1000000    /* want: any delay of at least this (a renewal far ahead) */

/* T_REPEERED: a finalized Tenant made again after the old one went (uid
 * TENANT_UID_NEW, created at REPEERED_AT, an hour after the seed CSR). */
/* T_LEGACY / T_DELETING_LEGACY: finalized by a tenantgate before Liqo's name. */
typedef enum { T_ABSENT, T_NEW, T_FINALIZED, T_DELETING, T_BAD_CLUSTER_ID, T_DRAINED, T_REPEERED, T_LEGACY,
               T_DELETING_LEGACY } tenant_kind;
typedef enum { N_SEED, N_ROTATED, N_ABSENT } nonce_kind;
/* C_ISSUED_OLD / C_ISSUED_OURS: issued, labelled with the uid of the old
 * peering's Tenant / of T_REPEERED's. */
typedef enum { C_NONE, C_PENDING, C_ISSUED, C_DENIED, C_ISSUED_OLD, C_ISSUED_OURS } csr_kind;
#define TENANT_UID_OLD "0b1d0000-0000-4000-8000-000000000001"
#define TENANT_UID_NEW "0e2e0000-0000-4000-8000-000000000002"
#define REPEERED_AT "2026-11-28T01:00:00Z"

typedef struct row {
    const char *what;
    tenant_kind tenant;
    nonce_kind nonce;
    csr_kind csr;               /* in the CSR informer's cache */
    int rb_exists;              /* the namespaced RoleBinding is there already */
    int rotate;                 /* --nonce-rotation on-unpeer */
    const char *fail_method, *fail_path;
    long fail_status;
    const char *writes;         /* rt_writes after the reconcile */
    long ret;                   /* POSITIVE_MS: at least that */
    int tenant_left;            /* the Tenant is still stored afterwards */
} row;

static const row rows[] = {
    {"new Tenant: finalizer, bindings, CSR", T_NEW, N_SEED, C_NONE, 0, 0, NULL, NULL, 0,
     "PATCH " TENANT " 200\nPOST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " 201\n", WAIT_MS, 1},
    {"legacy finalizer: replaced by Liqo's", T_LEGACY, N_SEED, C_NONE, 0, 0, NULL, NULL, 0,
     "PATCH " TENANT " 200\nPOST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " 201\n", WAIT_MS, 1},
    {"Tenant gone", T_ABSENT, N_SEED, C_NONE, 0, 0, NULL, NULL, 0, "", TG_RECONCILE_OK, 0},
    {"GET answers 500", T_NEW, N_SEED, C_NONE, 0, 0, "GET", TENANT, 500, "", TG_RECONCILE_RETRY, 1},
    {"GET transport error", T_NEW, N_SEED, C_NONE, 0, 0, "GET", TENANT, -1, "", TG_RECONCILE_RETRY, 1},
    {"hostile clusterID: left alone", T_BAD_CLUSTER_ID, N_SEED, C_NONE, 0, 0, NULL, NULL, 0, "", TG_RECONCILE_OK, 1},
    {"nonce rotated: refused with an event", T_NEW, N_ROTATED, C_NONE, 0, 0, NULL, NULL, 0,
     "EVENT " NS "/cl01 SignatureVerificationFailed\n", TG_RECONCILE_OK, 1},
    {"no nonce: refused with an event", T_NEW, N_ABSENT, C_NONE, 0, 0, NULL, NULL, 0,
     "EVENT " NS "/cl01 NonceNotFound\n", TG_RECONCILE_OK, 1},
    {"finalizer PATCH conflicts", T_NEW, N_SEED, C_NONE, 0, 0, "PATCH", TENANT, 409,
     "PATCH " TENANT " 409\n", TG_RECONCILE_RETRY, 1},
    {"RoleBinding exists: adopted by the Tenant", T_NEW, N_SEED, C_NONE, 1, 0, NULL, NULL, 0,
     "PATCH " TENANT " 200\nPOST " RBS " 409\nPATCH " RB " 200\nPOST " CRBS " 201\nPOST " CSR_API " 201\n",
     WAIT_MS, 1},
    {"RoleBinding POST fails", T_FINALIZED, N_SEED, C_NONE, 0, 0, "POST", RBS, 500,
     "POST " RBS " 500\n", TG_RECONCILE_RETRY, 1},
    {"CSR POST transport error", T_FINALIZED, N_SEED, C_NONE, 0, 0, "POST", CSR_API, -1,
     "POST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " -1\n", TG_RECONCILE_RETRY, 1},
    {"CSR pending: wait", T_FINALIZED, N_SEED, C_PENDING, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\n", WAIT_MS, 1},
    {"CSR denied once: a new one at once", T_FINALIZED, N_SEED, C_DENIED, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " 201\n", WAIT_MS, 1},
    {"CSR issued: published", T_FINALIZED, N_SEED, C_ISSUED, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\nPATCH " TENANT "/status 200\nEVENT " NS "/cl01 IdentityIssued\n",
     POSITIVE_MS, 1},
    {"status PATCH finds the Tenant gone", T_FINALIZED, N_SEED, C_ISSUED, 0, 0, "PATCH", TENANT "/status", 404,
     "POST " RBS " 201\nPOST " CRBS " 201\nPATCH " TENANT "/status 404\n", TG_RECONCILE_RETRY, 1},
    {"Drained: the consumer's bindings go", T_DRAINED, N_SEED, C_PENDING, 1, 0, NULL, NULL, 0,
     "DELETE " RB " 200\nDELETE " CRB " 404\n", WAIT_MS, 1},
    {"deleted: bindings off, nonce kept (Liqo's way), finalizer off", T_DELETING, N_SEED, C_NONE, 1, 0, NULL,
     NULL, 0, "DELETE " RB " 200\nDELETE " CRB " 404\nPATCH " TENANT " 200\n", TG_RECONCILE_OK, 0},
    {"deleted with the legacy finalizer: bindings off, finalizer off", T_DELETING_LEGACY, N_SEED, C_NONE, 1, 0, NULL,
     NULL, 0, "DELETE " RB " 200\nDELETE " CRB " 404\nPATCH " TENANT " 200\n", TG_RECONCILE_OK, 0},
    {"deleted, on-unpeer: bindings off, nonce rotated, finalizer off", T_DELETING, N_SEED, C_NONE, 1, 1, NULL, NULL,
     0, "DELETE " RB " 200\nDELETE " CRB " 404\nPATCH " NONCE " 200\nPATCH " TENANT " 200\n", TG_RECONCILE_OK, 0},
    {"deleted, on-unpeer: nonce rotation conflicts, finalizer stays", T_DELETING, N_SEED, C_NONE, 0, 1, "PATCH",
     NONCE, 409, "DELETE " CRB " 404\nPATCH " NONCE " 409\n", TG_RECONCILE_RETRY, 1},
    /* Issue 38, break 5: a re-peering with the same key (the same request)
     * gets a new CSR, never the old peering's certificate */
    {"re-peered: the old peering's unlabelled CSR is ignored", T_REPEERED, N_SEED, C_ISSUED, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " 201\n", WAIT_MS, 1},
    {"re-peered: the old Tenant's labelled CSR is ignored", T_REPEERED, N_SEED, C_ISSUED_OLD, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\nPOST " CSR_API " 201\n", WAIT_MS, 1},
    {"re-peered: its own CSR is published", T_REPEERED, N_SEED, C_ISSUED_OURS, 0, 0, NULL, NULL, 0,
     "POST " RBS " 201\nPOST " CRBS " 201\nPATCH " TENANT "/status 200\nEVENT " NS "/cl01 IdentityIssued\n",
     POSITIVE_MS, 1},
};

/* The seed Tenant as stored for kind. */
static void store_tenant(tg_api *api, tenant_kind kind)
{
    char *text = rt_vector("seed-cl01-pemkey.json");
    json_object *t = tg_json_parse(text, strlen(text), NULL, 0), *meta = tg_json_path(t, "metadata", NULL);
    json_object *fin = json_object_new_array();

    json_object_array_add(fin, json_object_new_string(kind == T_LEGACY || kind == T_DELETING_LEGACY
                                                          ? TG_TENANT_FINALIZER_LEGACY : TG_TENANT_FINALIZER));
    if (kind == T_FINALIZED || kind == T_DELETING || kind == T_DRAINED || kind == T_REPEERED || kind == T_LEGACY ||
        kind == T_DELETING_LEGACY)
        json_object_object_add(meta, "finalizers", fin);
    else
        json_object_put(fin);
    if (kind == T_DELETING || kind == T_DELETING_LEGACY)
        json_object_object_add(meta, "deletionTimestamp", json_object_new_string("2026-11-28T00:00:00Z"));
    if (kind == T_DRAINED)
        json_object_object_add(tg_json_path(t, "spec", NULL), "tenantCondition", json_object_new_string("Drained"));
    if (kind == T_REPEERED) {
        json_object_object_add(meta, "uid", json_object_new_string(TENANT_UID_NEW));
        json_object_object_add(meta, "creationTimestamp", json_object_new_string(REPEERED_AT));
    }
    if (kind == T_BAD_CLUSTER_ID)
        json_object_object_add(tg_json_path(t, "spec", NULL), "clusterID", json_object_new_string("../cl01"));
    fake_api_put_obj(api, TENANT, t);
    free(text);
}

static void store_nonce(tg_api *api, nonce_kind kind)
{
    char *nonce = rt_vector("seed-cl01-pemkey.nonce"), *b64, text[512];

    if (kind == N_ROTATED)
        nonce[0] = nonce[0] == 'A' ? 'B' : 'A';
    b64 = rt_b64(nonce, strlen(nonce));
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"liqo-nonce\",\"namespace\":\"" NS "\"},"
             "\"data\":{\"nonce\":\"%s\"}}", b64);
    if (kind != N_ABSENT)
        fake_api_put(api, NONCE, text);
    free(b64);
    free(nonce);
}

/* The CSR cache: one CSR made for the seed Tenant's request, as kind says. */
/* The CSR of kind as the signer's CSR informer keeps it (status.certificate
 * as its digest, informers.c) and, whole, in the fake API server, where the
 * reconciler reads the certificate it copies. */
static tg_cache *csr_cache(tg_api *api, csr_kind kind)
{
    char *text = rt_vector("seed-cl01-pemkey.json"), hash[TG_REQUEST_HASH_LEN + 1], csr[8192], status[4096] = "";
    const char *uid = kind == C_ISSUED_OLD ? TENANT_UID_OLD : kind == C_ISSUED_OURS ? TENANT_UID_NEW : NULL;
    char uid_label[128] = "";
    json_object *t = tg_json_parse(text, strlen(text), NULL, 0);
    const char *items[] = {csr, NULL};
    EVP_PKEY *key;
    char *crt;
    tg_cache *c;

    rc_request_hash(tg_json_path_string(t, "spec", "csr", NULL), hash);
    if (uid)
        snprintf(uid_label, sizeof(uid_label), ",\"" TG_LABEL_CSR_TENANT_UID "\":\"%s\"", uid);
    if (kind == C_ISSUED || uid) {
        key = rt_public_key(tg_json_path_string(t, "spec", "publicKey", NULL));
        crt = rt_cert_b64(key, 86400);
        snprintf(status, sizeof(status), "\"certificate\":\"%s\",\"conditions\":[{\"type\":\"Approved\","
                 "\"status\":\"True\"}]", crt);
        free(crt);
        EVP_PKEY_free(key);
    } else if (kind == C_DENIED) {
        snprintf(status, sizeof(status), "\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\"}]");
    }
    snprintf(csr, sizeof(csr),
             "{\"metadata\":{\"name\":\"liqo-identity-old\",\"resourceVersion\":\"5\",\"creationTimestamp\":"
             "\"2026-11-28T00:00:00Z\",\"labels\":{\"" TG_LABEL_TENANT_NS "\":\"" NS "\",\"" TG_LABEL_REMOTE_CLUSTER_ID
             "\":\"cl01\",\"" TG_LABEL_CSR_REQUEST "\":\"%s\"%s}},\"spec\":{\"request\":\"eA==\"},\"status\":{%s}}",
             hash, uid_label, status);
    c = rt_cache_as(TG_INF_CSRS, kind == C_NONE ? NULL : items);
    if (kind != C_NONE)
        fake_api_put(api, "/apis/certificates.k8s.io/v1/certificatesigningrequests/liqo-identity-old", csr);
    json_object_put(t);
    free(text);
    return c;
}

/* A RoleBinding at path of User who to ClusterRole role, labelled for who. */
static void put_binding(tg_api *api, const char *path, const char *who, const char *role)
{
    char text[1024];

    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS "\",\"labels\":"
             "{\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"%s\"}},\"subjects\":[{\"kind\":\"User\",\"name\":\"%s\"}],"
             "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"%s\"}}", strrchr(path, '/') + 1, who, who, role);
    fake_api_put(api, path, text);
}

/* A ClusterRole, labelled remote-controlplane as Liqo's chart does when labelled. */
static void put_role(tg_api *api, const char *name, int labelled)
{
    char path[512], text[512];

    snprintf(path, sizeof(path), CRS "/%s", name);
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"" TG_REMOTE_CONTROLPLANE_LABEL
             "\":\"%s\"}}}", name, labelled ? TG_REMOTE_CONTROLPLANE_VALUE : "something-else");
    fake_api_put(api, path, text);
}

static void run_row(const row *r)
{
    tg_api *api = fake_api_new();
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    s.rotate_nonce_on_unpeer = r->rotate;
    s.csr_cache = csr_cache(api, r->csr);
    if (r->tenant != T_ABSENT)
        store_tenant(api, r->tenant);
    store_nonce(api, r->nonce);
    if (r->rb_exists)
        put_binding(api, RB, "cl01", TG_CONSUMER_CLUSTERROLE);
    if (r->fail_path)
        fake_api_fail(api, r->fail_method, r->fail_path, r->fail_status, 1);
    ret = tg_reconcile_tenant(&s, api, NS, "cl01");
    if (strcmp(rt_writes(api), r->writes) != 0)
        fail_msg("%s: writes\n%s\nwant\n%s", r->what, rt_writes(api), r->writes);
    if (r->ret == POSITIVE_MS ? ret < POSITIVE_MS : ret != r->ret)
        fail_msg("%s: returned %ld, want %ld", r->what, ret, r->ret);
    if ((fake_api_object(api, TENANT) != NULL) != r->tenant_left)
        fail_msg("%s: Tenant %s", r->what, r->tenant_left ? "gone" : "still stored");
    rt_signer_clear(&s);
    fake_api_free(api);
}

static void test_tenant_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* The stored nonce after a deletion with rotate (--nonce-rotation): equal
 * to the one before (1) or not (0). */
static int nonce_kept_by_deletion(int rotate)
{
    tg_api *api = fake_api_new();
    tg_signer s;
    char *before;
    int kept;

    rt_signer_init(&s);
    s.rotate_nonce_on_unpeer = rotate;
    s.csr_cache = csr_cache(api, C_NONE);
    store_tenant(api, T_DELETING);
    store_nonce(api, N_SEED);
    before = strdup(tg_json_path_string(fake_api_object(api, NONCE), "data", "nonce", NULL));
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_OK);
    kept = strcmp(tg_json_path_string(fake_api_object(api, NONCE), "data", "nonce", NULL), before) == 0;
    free(before);
    rt_signer_clear(&s);
    fake_api_free(api);
    return kept;
}

/* on-unpeer: deletion rotates the nonce, an old Tenant no longer verifies. */
static void test_deletion_rotates_the_nonce_on_unpeer(void **state)
{
    (void)state;
    assert_false(nonce_kept_by_deletion(1));
}

/* Issue 38, break 1: with keep the nonce stays, as Liqo keeps it: Liqo's
 * consumer keeps its liqo-signed-nonce and liqoctl refuses another nonce. */
static void test_deletion_keeps_the_nonce_with_keep(void **state)
{
    (void)state;
    assert_true(nonce_kept_by_deletion(0));
}

/* Break 5: the CSR made for a Tenant carries its uid, which is what later
 * tells this peering's CSRs from an older one's. */
static void test_csr_carries_the_tenant_uid(void **state)
{
    tg_api *api = fake_api_new();
    json_object *writes, *body = NULL;
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    s.csr_cache = csr_cache(api, C_ISSUED_OLD);
    store_tenant(api, T_REPEERED);
    store_nonce(api, N_SEED);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    writes = fake_api_writes(api);
    for (size_t i = 0; i < json_object_array_length(writes); i++) {
        json_object *w = json_object_array_get_idx(writes, i);
        const char *text = tg_json_string(w, "body");
        if (strcmp(tg_json_string(w, "path"), CSR_API) == 0 && text)
            body = tg_json_parse(text, strlen(text), NULL, 0);
    }
    assert_non_null(body);
    assert_string_equal(tg_json_path_string(body, "metadata", "labels", TG_LABEL_CSR_TENANT_UID, NULL),
                        TENANT_UID_NEW);
    json_object_put(body);
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* A second reconcile of a Tenant whose CSR is pending writes nothing new
 * but the bindings it does not know of (they are known now). */
static void test_second_run_is_quiet(void **state)
{
    tg_api *api = fake_api_new();
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    s.csr_cache = csr_cache(api, C_PENDING);
    store_tenant(api, T_FINALIZED);
    store_nonce(api, N_SEED);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    assert_int_equal(json_object_array_length(fake_api_writes(api)), 2);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    assert_int_equal(json_object_array_length(fake_api_writes(api)), 2);
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* One Tenant reconcile in Liqo's setting: roles labelled remote-controlplane
 * (and one that is not), a binding under the old name, another user's. */
static tg_api *liqo_setting(tg_signer *s, tenant_kind kind)
{
    tg_api *api = fake_api_new();

    rt_signer_init(s);
    s->csr_cache = csr_cache(api, C_PENDING);
    store_tenant(api, kind);
    store_nonce(api, N_SEED);
    put_role(api, "liqo-remote-controlplane", 1);
    put_role(api, "extra-ops", 1);
    put_role(api, "tenantgate-remote-consumer", 0);
    put_binding(api, RB_LEGACY, "cl01", TG_CONSUMER_CLUSTERROLE);
    put_binding(api, RBS "/liqo-binding-someone", "cl02", "liqo-remote-controlplane");
    return api;
}

/* Liqo installed: every labelled role bound under Liqo's name, the old
 * binding pruned, another user's left alone. */
static void test_liqo_roles_are_bound(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_FINALIZED);

    (void)state;
    put_binding(api, RB_LIQO, "cl01", "liqo-remote-controlplane");   /* Liqo's provider's, before replace */
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    assert_string_equal(rt_writes(api), "POST " RBS " 201\nPOST " RBS " 201\nDELETE " RB_LEGACY " 200\nDELETE "
                                        RB_LIQO " 200\nPOST " CRBS " 201\n");
    /* Liqo's own role is bound as tenantgate's equivalent without /status */
    assert_null(fake_api_object(api, RB_LIQO));
    assert_string_equal(tg_json_path_string(fake_api_object(api, RB), "roleRef", "name", NULL),
                        TG_CONSUMER_CLUSTERROLE);
    assert_string_equal(tg_json_path_string(fake_api_object(api, RB_EXTRA), "roleRef", "name", NULL), "extra-ops");
    /* owned by the Tenant: whichever side finalizes it, the garbage collector takes them */
    {
        json_object *owner = json_object_array_get_idx(
            tg_json_path(fake_api_object(api, RB), "metadata", "ownerReferences", NULL), 0);
        assert_non_null(owner);
        assert_string_equal(tg_json_path_string(owner, "kind", NULL), "Tenant");
        assert_string_equal(tg_json_path_string(owner, "name", NULL), "cl01");
        assert_non_null(tg_json_path_string(owner, "uid", NULL));
        assert_null(tg_json_path(fake_api_object(api, CRBS "/" TG_CLUSTERWIDE_BINDING_PREFIX "cl01"), "metadata",
                                 "ownerReferences", NULL));
    }
    assert_non_null(fake_api_object(api, RBS "/liqo-binding-someone"));
    rt_signer_clear(&s);
    fake_api_free(api);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The lines of text sorted, as one string (malloc'd): writes whose order
 * does not matter (the DELETEs of a prune follow the cache's or the list's). */
static char *sorted_lines(const char *text)
{
    char *copy = strdup(text), *lines[32], *out, *save = NULL;
    size_t n = 0;

    assert_non_null(copy);
    for (char *l = strtok_r(copy, "\n", &save); l && n < 32; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof(lines[0]), by_text);
    assert_non_null(out = calloc(1, strlen(text) + 2));
    for (size_t i = 0; i < n; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
    }
    free(copy);
    return out;
}

/* The RoleBinding informer's cache (synced, by namespace, as main.c makes
 * it) answers the pruning: the same writes as with the LIST, one GET fewer.
 * A revocable consumer's binding of a role no longer bound is known as ours
 * by its annotation, which that cache keeps. */
#define RB_OLD_GROUPS RBS "/liqo-binding-old-role"
static void test_prune_reads_the_binding_cache(void **state)
{
    static const char *const paths[] = {RB_LEGACY, RB_LIQO, RBS "/liqo-binding-someone", RB_OLD_GROUPS};
    const char *items[5] = {NULL};
    size_t listed_gets = 0;
    char *got, *want;
    tg_signer s;
    tg_api *api;

    (void)state;
    for (int cached = 0; cached < 2; cached++) {
        api = liqo_setting(&s, T_FINALIZED);
        put_binding(api, RB_LIQO, "cl01", "liqo-remote-controlplane");
        fake_api_put(api, RB_OLD_GROUPS, "{\"metadata\":{\"name\":\"liqo-binding-old-role\",\"namespace\":\"" NS
                     "\",\"labels\":{\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"cl01\"},\"annotations\":{\""
                     TG_ANNOTATION_CERT_GROUPS "\":\"[]\"}},\"subjects\":[{\"kind\":\"Group\",\"name\":\""
                     TG_CERT_GROUP_PREFIX "cl01:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}],\"roleRef\":{\"kind\":"
                     "\"ClusterRole\",\"name\":\"old-role\"}}");
        if (cached) {
            for (size_t i = 0; i < 4; i++)
                items[i] = json_object_to_json_string(fake_api_object(api, paths[i]));
            tg_cache_free(s.rb_cache);
            s.rb_cache = rt_cache_as(TG_INF_ROLEBINDINGS, items);
        }
        assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
        got = sorted_lines(rt_writes(api));
        want = sorted_lines("POST " RBS " 201\nPOST " RBS " 201\nDELETE " RB_LEGACY " 200\nDELETE " RB_LIQO
                            " 200\nDELETE " RB_OLD_GROUPS " 200\nPOST " CRBS " 201\n");
        assert_string_equal(got, want);
        free(got);
        free(want);
        assert_non_null(fake_api_object(api, RBS "/liqo-binding-someone"));
        if (!cached)
            listed_gets = fake_api_ngets(api);
        else
            assert_int_equal(fake_api_ngets(api), listed_gets - 1);
        rt_signer_clear(&s);
        fake_api_free(api);
    }
}

/* A role no longer labelled loses its binding at the next check. */
static void test_unlabelled_role_is_unbound(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_FINALIZED);

    (void)state;
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    put_role(api, "extra-ops", 0);
    tg_settled_free(s.rb_known);   /* RB_RECHECK_S has passed */
    s.rb_known = tg_settled_new();
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    assert_null(fake_api_object(api, RB_EXTRA));
    assert_non_null(fake_api_object(api, RB));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* A ClusterRoleBinding named name, labelled for who; with the annotation of
 * a revocable slice certificate's groups when groups. */
static void put_cluster_binding(tg_api *api, const char *name, const char *who, int groups)
{
    char path[512], text[1024];

    snprintf(path, sizeof(path), CRBS "/%s", name);
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"" TG_LABEL_REMOTE_CLUSTER_ID
             "\":\"%s\"}%s},\"subjects\":[],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"x\"}}", name, who,
             groups ? ",\"annotations\":{\"" TG_ANNOTATION_CERT_GROUPS "\":\"[]\"}" : "");
    fake_api_put(api, path, text);
}

/* Deleting the Tenant removes every binding made for it, whatever the
 * roles are now, and nobody else's: the ClusterRoleBindings of its revocable
 * slice certificates too (cluster-scoped, the Tenant cannot own them). */
static void test_deletion_leaves_no_binding(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_DELETING);

    (void)state;
    put_cluster_binding(api, TG_CLUSTERWIDE_BINDING_PREFIX "cl01-slice-a", "cl01", 1);
    put_cluster_binding(api, TG_CLUSTERWIDE_BINDING_PREFIX "cl02-slice-a", "cl02", 1);
    put_cluster_binding(api, "operators-cl01", "cl01", 1);
    put_cluster_binding(api, TG_CLUSTERWIDE_BINDING_PREFIX "cl01-by-hand", "cl01", 0);
    put_binding(api, RB_LIQO, "cl01", "liqo-remote-controlplane");
    put_binding(api, RB_EXTRA, "cl01", "extra-ops");
    put_binding(api, RB, "cl01", TG_CONSUMER_CLUSTERROLE);
    put_role(api, "extra-ops", 0);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_OK);
    assert_null(fake_api_object(api, RB));
    assert_null(fake_api_object(api, RB_LIQO));
    assert_null(fake_api_object(api, RB_EXTRA));
    assert_null(fake_api_object(api, RB_LEGACY));
    assert_non_null(fake_api_object(api, RBS "/liqo-binding-someone"));
    assert_null(fake_api_object(api, CRBS "/" TG_CLUSTERWIDE_BINDING_PREFIX "cl01-slice-a"));
    assert_non_null(fake_api_object(api, CRBS "/" TG_CLUSTERWIDE_BINDING_PREFIX "cl02-slice-a"));
    assert_non_null(fake_api_object(api, CRBS "/operators-cl01"));
    assert_non_null(fake_api_object(api, CRBS "/" TG_CLUSTERWIDE_BINDING_PREFIX "cl01-by-hand"));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* The consumer's replicated Renew in NS (as Liqo's crd-replicator writes it),
 * or none, as the remoterenew informer holds it. */
static tg_cache *renew_cache(int with_replica)
{
    const char *renew = "{\"metadata\":{\"name\":\"controlplane-provider-cluster\",\"namespace\":\"" NS "\","
                        "\"resourceVersion\":\"7\",\"labels\":{\"liqo.io/replicated\":\"true\","
                        "\"liqo.io/originID\":\"cl01\"}}}";
    tg_cache *c = tg_cache_new(NULL);
    json_object *list = json_object_new_array();
    char err[256] = "";

    assert_int_equal(tg_cache_index_metadata(c, TG_CACHE_BY_NAMESPACE), 0);
    if (with_replica)
        json_object_array_add(list, tg_json_parse(renew, strlen(renew), err, sizeof(err)));
    assert_int_equal(tg_cache_replace(c, list, "100", NULL, err, sizeof(err)), 0);
    json_object_put(list);
    return c;
}

/* Unpeering (liqoctl unauthenticate): the Tenant is deleted while the
 * consumer's crd-replicator still has to delete its Renew here with the
 * consumer's rights, so the bindings stay until it has (or the grace ends). */
static void test_deletion_waits_for_the_consumers_replicas(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_DELETING);
    char now[32];

    (void)state;
    rc_rfc3339(time(NULL), now, sizeof(now));
    json_object_object_add(tg_json_path(fake_api_object(api, TENANT), "metadata", NULL), "deletionTimestamp",
                           json_object_new_string(now));
    put_binding(api, RB, "cl01", TG_CONSUMER_CLUSTERROLE);
    s.renew_cache = renew_cache(1);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_UNPEER_POLL_MS);
    assert_string_equal(rt_writes(api), "");
    assert_non_null(fake_api_object(api, RB));
    /* the replicator deleted its copy: bindings away, finalizer off */
    tg_cache_free(s.renew_cache);
    s.renew_cache = renew_cache(0);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_OK);
    assert_null(fake_api_object(api, RB));
    assert_null(tg_json_path(fake_api_object(api, TENANT), "metadata", "finalizers", NULL));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* A consumer that never deletes its replica (gone, cut off) holds the
 * Tenant only for the grace period: the fixture's deletion is a day old. */
static void test_deletion_grace_ends(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_DELETING);

    (void)state;
    put_binding(api, RB, "cl01", TG_CONSUMER_CLUSTERROLE);
    s.renew_cache = renew_cache(1);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_OK);
    assert_null(fake_api_object(api, RB));
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* Listing the roles fails: nothing bound, retried. */
static void test_role_list_fails(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_FINALIZED);

    (void)state;
    fake_api_fail(api, "GET", CRS, 403, 1);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_RETRY);
    assert_string_equal(rt_writes(api), "");
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* Hostile or odd answers: only remote-controlplane roles with names that fit. */
static void test_roles_pure(void **state)
{
    char text[1024], longname[260];
    const char *names[4];
    json_object *list;

    (void)state;
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    snprintf(text, sizeof(text), "{\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"" TG_REMOTE_CONTROLPLANE_LABEL
             "\":\"" TG_REMOTE_CONTROLPLANE_VALUE "\"}}},{\"metadata\":{\"name\":\"cluster-admin\"}},"
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"" TG_REMOTE_CONTROLPLANE_LABEL "\":\""
             TG_REMOTE_CONTROLPLANE_VALUE "\"}}},{\"metadata\":{\"labels\":{\"" TG_REMOTE_CONTROLPLANE_LABEL "\":\""
             TG_REMOTE_CONTROLPLANE_VALUE "\"}}},7]}", longname);
    list = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(list);
    assert_int_equal(tg_tenant_roles(list, names, 4), 1);
    assert_string_equal(names[0], "a");
    json_object_put(list);
    list = tg_json_parse("{\"items\":[]}", 12, NULL, 0);
    assert_int_equal(tg_tenant_roles(list, names, 4), 1);
    assert_string_equal(names[0], TG_CONSUMER_CLUSTERROLE);
    json_object_put(list);
    assert_int_equal(tg_tenant_roles(NULL, names, 4), 1);
    /* Liqo's own role becomes tenantgate's, listed once even when both are labelled */
    snprintf(text, sizeof(text), "{\"items\":[{\"metadata\":{\"name\":\"liqo-remote-controlplane\",\"labels\":{\""
             TG_REMOTE_CONTROLPLANE_LABEL "\":\"" TG_REMOTE_CONTROLPLANE_VALUE "\"}}},{\"metadata\":{\"name\":\""
             TG_CONSUMER_CLUSTERROLE "\",\"labels\":{\"" TG_REMOTE_CONTROLPLANE_LABEL "\":\""
             TG_REMOTE_CONTROLPLANE_VALUE "\"}}}]}");
    list = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(list);
    assert_int_equal(tg_tenant_roles(list, names, 4), 1);
    assert_string_equal(names[0], TG_CONSUMER_CLUSTERROLE);
    json_object_put(list);
}

static int is_ours(const char *json)
{
    json_object *rb = tg_json_parse(json, strlen(json), NULL, 0);
    int r = tg_tenant_binding_is_ours(rb, "cl01");

    json_object_put(rb);
    return r;
}

#define SUBJ_USER "\"subjects\":[{\"kind\":\"User\",\"name\":\"cl01\"}]"
#define REF_CR "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"x\"}"

/* Only the controller's own bindings are ever pruned. */
static void test_binding_is_ours(void **state)
{
    (void)state;
    assert_true(is_ours("{\"metadata\":{\"name\":\"liqo-binding-x\"}," SUBJ_USER "," REF_CR "}"));
    assert_true(is_ours("{\"metadata\":{\"name\":\"liqo-tenant-cl01\"}," SUBJ_USER "," REF_CR "}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"liqo-tenant-cl02\"}," SUBJ_USER "," REF_CR "}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"admin-binding\"}," SUBJ_USER "," REF_CR "}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"liqo-binding-x\"},\"subjects\":[{\"kind\":\"Group\","
                         "\"name\":\"cl01\"}]," REF_CR "}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"liqo-binding-x\"},\"subjects\":[{\"kind\":\"User\","
                         "\"name\":\"cl01\"},{\"kind\":\"User\",\"name\":\"ops\"}]," REF_CR "}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"liqo-binding-x\"}," SUBJ_USER ",\"roleRef\":{\"kind\":"
                         "\"Role\",\"name\":\"x\"}}"));
    assert_false(is_ours("{\"metadata\":{\"name\":\"liqo-binding-x\"}}"));
    assert_false(is_ours("[]"));
}


/* A revocable Tenant (its CSR carries group) as tg_tenant_bind reads it:
 * only spec.csr and the owner fields count there. */
static json_object *revocable_tenant(EVP_PKEY *key, const char *group)
{
    char *pem = tg_csr_build_group(key, "cl01", TG_CSR_ORGANIZATION, group, NULL);
    char *b64 = rt_b64(pem, strlen(pem));
    char text[4096];

    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"cl01\",\"namespace\":\"" NS "\",\"uid\":\"u1\"},"
             "\"spec\":{\"clusterID\":\"cl01\",\"csr\":\"%s\"}}", b64);
    free(pem);
    free(b64);
    return tg_json_parse(text, strlen(text), NULL, 0);
}

static const char *subject_names(tg_api *api, char *buf, size_t len)
{
    json_object *subjects = tg_json_path(fake_api_object(api, RB), "subjects", NULL);

    buf[0] = '\0';
    for (size_t i = 0; subjects && i < json_object_array_length(subjects); i++) {
        json_object *sub = json_object_array_get_idx(subjects, i);
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s %s", i ? "," : "",
                 tg_json_path_string(sub, "kind", NULL), tg_json_path_string(sub, "name", NULL));
    }
    return buf;
}

/* A revocable Tenant's RoleBinding lists its groups, never the user (a
 * binding of the user is turned into that form); a new request adds its
 * group beside the old one; a revoked group is dropped and never listed
 * again. The ClusterRoleBinding (slice certificates' Group cl01) stays. */
static void test_revocable_tenant_binds_groups(void **state)
{
    const char *ga = TG_CERT_GROUP_PREFIX "cl01:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const char *gb = TG_CERT_GROUP_PREFIX "cl01:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    json_object *ta = revocable_tenant(key, ga), *tb = revocable_tenant(key, gb);
    tg_api *api = fake_api_new();
    char err[256], buf[512], want[512];
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    put_binding(api, RB, "cl01", TG_CONSUMER_CLUSTERROLE);   /* before: the user's */
    assert_int_equal(tg_tenant_bind(&s, api, NS, "cl01", ta, 1, err, sizeof(err)), 200);
    snprintf(want, sizeof(want), "Group %s", ga);
    assert_string_equal(subject_names(api, buf, sizeof(buf)), want);
    assert_non_null(tg_json_path_string(fake_api_object(api, RB), "metadata", "annotations",
                                        TG_ANNOTATION_CERT_GROUPS, NULL));
    assert_true(tg_tenant_binding_is_ours(fake_api_object(api, RB), "cl01"));
    assert_false(tg_tenant_binding_is_ours(fake_api_object(api, RB), "cl02"));
    assert_string_equal(tg_json_path_string(json_object_array_get_idx(
                            tg_json_path(fake_api_object(api, CRB), "subjects", NULL), 0), "name", NULL), "cl01");

    assert_int_equal(tg_tenant_bind(&s, api, NS, "cl01", tb, 1, err, sizeof(err)), 200);
    snprintf(want, sizeof(want), "Group %s,Group %s", ga, gb);
    assert_string_equal(subject_names(api, buf, sizeof(buf)), want);

    fake_api_put(api, "/api/v1/namespaces/liqo/configmaps/" TG_REVOKED_CONFIGMAP,
                 "{\"metadata\":{\"name\":\"" TG_REVOKED_CONFIGMAP "\",\"namespace\":\"liqo\"},"
                 "\"data\":{\"cl01.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":\"4102444800\"}}");
    assert_int_equal(tg_tenant_bind(&s, api, NS, "cl01", tb, 1, err, sizeof(err)), 200);
    snprintf(want, sizeof(want), "Group %s", gb);
    assert_string_equal(subject_names(api, buf, sizeof(buf)), want);
    assert_int_equal(tg_tenant_bind(&s, api, NS, "cl01", ta, 1, err, sizeof(err)), 200);   /* asked again */
    assert_string_equal(subject_names(api, buf, sizeof(buf)), want);

    /* deletion: the group binding goes like the user's did */
    assert_int_equal(tg_tenant_bind(&s, api, NS, "cl01", NULL, 0, err, sizeof(err)), 200);
    assert_null(fake_api_object(api, RB));
    json_object_put(ta);
    json_object_put(tb);
    EVP_PKEY_free(key);
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* The Tenant informer's cache holding the Tenant as stored now. */
static tg_cache *cache_of_tenant(tg_api *api)
{
    const char *items[] = {json_object_to_json_string(fake_api_object(api, TENANT)), NULL};

    return rt_cache(NULL, items);
}

/* A first pass (finalizer, bindings, CSR), then the Tenant as the informer
 * shows it after that pass's finalizer PATCH. */
static tg_api *after_first_pass(tg_signer *s)
{
    tg_api *api = fake_api_new();

    rt_signer_init(s);
    s->settled = tg_settled_new();
    s->csr_cache = csr_cache(api, C_NONE);
    store_tenant(api, T_NEW);
    store_nonce(api, N_SEED);
    assert_int_equal(tg_reconcile_tenant(s, api, NS, "cl01"), WAIT_MS);
    s->tenant_cache = cache_of_tenant(api);
    tg_cache_free(s->csr_cache);
    s->csr_cache = csr_cache(api, C_DENIED);   /* news about its CSRs: not what was settled */
    return api;
}

/* The next pass reads the Tenant our PATCH returned, at the version the
 * informer shows, without a GET (issue 39): its GET would fail here. */
static void test_pass_reads_our_own_write(void **state)
{
    tg_signer s;
    tg_api *api = after_first_pass(&s);

    (void)state;
    fake_api_fail(api, "GET", TENANT, 500, 1);
    assert_true(tg_reconcile_tenant(&s, api, NS, "cl01") > 0);
    rt_signer_clear(&s);
    fake_api_free(api);
}

/* Someone else wrote the Tenant since: the informer's version is not ours,
 * and the pass reads live (its failed GET shows it tried). */
static void test_other_version_is_read_live(void **state)
{
    tg_signer s;
    tg_api *api = after_first_pass(&s);
    json_object *t = json_object_get(fake_api_object(api, TENANT));

    (void)state;
    json_object_object_del(tg_json_path(t, "metadata", NULL), "resourceVersion");
    fake_api_put_obj(api, TENANT, t);   /* a new version */
    tg_cache_free(s.tenant_cache);
    s.tenant_cache = cache_of_tenant(api);
    fake_api_fail(api, "GET", TENANT, 500, 1);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), TG_RECONCILE_RETRY);
    assert_true(tg_reconcile_tenant(&s, api, NS, "cl01") > 0);
    rt_signer_clear(&s);
    fake_api_free(api);
}


/* The labelled ClusterRoles are listed once for a burst: a second Tenant's
 * pass right after binds from that list (its LIST would fail here). */
static void test_roles_listed_once_for_a_burst(void **state)
{
    tg_signer s;
    tg_api *api = liqo_setting(&s, T_FINALIZED);

    (void)state;
    s.settled = tg_settled_new();
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    tg_settled_forget(s.rb_known, NS "/liqo-binding-liqo-remote-controlplane");   /* made to check again */
    fake_api_fail(api, "GET", CRS, 500, 1);
    assert_int_equal(tg_reconcile_tenant(&s, api, NS, "cl01"), WAIT_MS);
    rt_signer_clear(&s);
    fake_api_free(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenant_rows),
        cmocka_unit_test(test_deletion_rotates_the_nonce_on_unpeer),
        cmocka_unit_test(test_deletion_keeps_the_nonce_with_keep),
        cmocka_unit_test(test_csr_carries_the_tenant_uid),
        cmocka_unit_test(test_second_run_is_quiet),
        cmocka_unit_test(test_pass_reads_our_own_write),
        cmocka_unit_test(test_roles_listed_once_for_a_burst),
        cmocka_unit_test(test_other_version_is_read_live),
        cmocka_unit_test(test_liqo_roles_are_bound),
        cmocka_unit_test(test_prune_reads_the_binding_cache),
        cmocka_unit_test(test_unlabelled_role_is_unbound),
        cmocka_unit_test(test_deletion_leaves_no_binding),
        cmocka_unit_test(test_deletion_waits_for_the_consumers_replicas),
        cmocka_unit_test(test_deletion_grace_ends),
        cmocka_unit_test(test_role_list_fails),
        cmocka_unit_test(test_roles_pure),
        cmocka_unit_test(test_binding_is_ours),
        cmocka_unit_test(test_revocable_tenant_binds_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
