/* test_reconcile_replicator.c - the consumer's CRD replicator
 * (tg_reconcile_replica) against two fake API servers, the local one and
 * the provider's (reached through the remote pool, from the kubeconfig in
 * the ControlPlane Secret of the informer cache): for each row, the local
 * Renew, the Secret and the provider's copy, and the writes on each side
 * and the requeue, failures of either API included. */
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
#include "signer/reconcile_common.h"
#include "signer/remote_pool.h"
#include "signer/replica_plan.h"
#include "signer/test_reconcile_fixture.h"

#define CONSUMER "consumer-1"
#define PROVIDER "provider-1"
#define NS "liqo-tenant-" PROVIDER            /* here: where P's Secret and the objects for P live */
#define REMOTE_NS "liqo-tenant-" CONSUMER     /* on P: our tenant namespace */
#define SERVER "https://provider.example:6443"
#define GROUP "/apis/authentication.liqo.io/v1beta1"
#define LOCAL GROUP "/namespaces/" NS "/renews/r1"
#define REMOTES GROUP "/namespaces/" REMOTE_NS "/renews"
#define REMOTE REMOTES "/r1"
#define SECRET "/api/v1/namespaces/" NS "/secrets/kubeconfig-controlplane-" PROVIDER
#define CONFLICT_MS 60000      /* consumer_replicator.c: a same-name object that is not ours */
#define WAIT_GONE_MS 1000

typedef enum { L_ABSENT, L_NEW, L_HELD, L_DELETING, L_UNLABELLED } local_kind;
typedef enum { R_ABSENT, R_SAME, R_OTHER_SPEC, R_WITH_STATUS, R_NOT_OURS } remote_kind;
typedef enum { K_HELD, K_NEW, K_ABSENT, K_DELETING } secret_kind;

typedef struct row {
    const char *what;
    const char *code;           /* the key's kind code */
    local_kind local;
    remote_kind remote;
    secret_kind secret;
    int remote_fails;           /* the fault below is the provider's */
    const char *fail_method, *fail_path;
    long fail_status;
    const char *local_writes, *remote_writes;
    long ret;
} row;

static const row rows[] = {
    {"new object: finalizers first, then the copy", "replrn", L_NEW, R_ABSENT, K_NEW, 0, NULL, NULL, 0,
     "PATCH " SECRET " 200\nPATCH " LOCAL " 200\n", "POST " REMOTES " 201\n", TG_RECONCILE_OK},
    {"in sync: nothing", "replrn", L_HELD, R_SAME, K_HELD, 0, NULL, NULL, 0, "", "", TG_RECONCILE_OK},
    {"spec changed: sent down", "replrn", L_HELD, R_OTHER_SPEC, K_HELD, 0, NULL, NULL, 0, "", "PUT " REMOTE " 200\n",
     TG_RECONCILE_OK},
    {"status on the copy: taken back", "replrn", L_HELD, R_WITH_STATUS, K_HELD, 0, NULL, NULL, 0,
     "PUT " LOCAL "/status 200\n", "", TG_RECONCILE_OK},
    {"deleted here: the copy goes first", "replrn", L_DELETING, R_SAME, K_HELD, 0, NULL, NULL, 0, "",
     "DELETE " REMOTE " 200\n", WAIT_GONE_MS},
    {"deleted here, copy gone: finalizer off", "replrn", L_DELETING, R_ABSENT, K_HELD, 0, NULL, NULL, 0,
     "PATCH " LOCAL " 200\n", "", TG_RECONCILE_OK},
    {"gone here: the copy goes", "replrn", L_ABSENT, R_SAME, K_HELD, 0, NULL, NULL, 0, "", "DELETE " REMOTE " 200\n",
     WAIT_GONE_MS},
    {"name taken on the provider: left alone", "replrn", L_HELD, R_NOT_OURS, K_HELD, 0, NULL, NULL, 0,
     "EVENT " NS "/r1 ReplicationConflict\n", "", CONFLICT_MS},
    {"not meant for replication", "replrn", L_UNLABELLED, R_ABSENT, K_HELD, 0, NULL, NULL, 0, "", "",
     TG_RECONCILE_OK},
    {"no kubeconfig Secret yet", "replrn", L_NEW, R_ABSENT, K_ABSENT, 0, NULL, NULL, 0, "", "", TG_RECONCILE_OK},
    {"unknown kind code", "replxx", L_NEW, R_ABSENT, K_NEW, 0, NULL, NULL, 0, "", "", TG_RECONCILE_OK},
    {"local GET answers 500", "replrn", L_NEW, R_ABSENT, K_NEW, 0, "GET", LOCAL, 500, "", "", TG_RECONCILE_RETRY},
    {"Secret finalizer PATCH conflicts", "replrn", L_NEW, R_ABSENT, K_NEW, 0, "PATCH", SECRET, 409,
     "PATCH " SECRET " 409\n", "", TG_RECONCILE_RETRY},
    {"local finalizer PATCH finds it gone", "replrn", L_NEW, R_ABSENT, K_NEW, 0, "PATCH", LOCAL, 404,
     "PATCH " SECRET " 200\nPATCH " LOCAL " 404\n", "", TG_RECONCILE_RETRY},
    {"provider GET transport error", "replrn", L_HELD, R_SAME, K_HELD, 1, "GET", REMOTE, -1, "", "",
     TG_RECONCILE_RETRY},
    {"provider refuses the copy", "replrn", L_HELD, R_ABSENT, K_HELD, 1, "POST", REMOTES, 403,
     "EVENT " NS "/r1 ReplicationFailed\n", "POST " REMOTES " 403\n", TG_RECONCILE_RETRY},
    {"provider conflicts on the spec", "replrn", L_HELD, R_OTHER_SPEC, K_HELD, 1, "PUT", REMOTE, 409, "",
     "PUT " REMOTE " 409\n", TG_RECONCILE_RETRY},
    {"status PUT here conflicts", "replrn", L_HELD, R_WITH_STATUS, K_HELD, 0, "PUT", LOCAL "/status", 409,
     "PUT " LOCAL "/status 409\n", "", TG_RECONCILE_RETRY},
    {"deleted here, provider refuses, Secret held: the finalizer waits", "replrn", L_DELETING, R_SAME, K_HELD, 1,
     "GET", REMOTE, 403, "", "", TG_RECONCILE_RETRY},
    {"deleted here, provider refuses, Secret going: finalizer off, copy left", "replrn", L_DELETING, R_SAME,
     K_DELETING, 1, "GET", REMOTE, 403, "EVENT " NS "/r1 ReplicaLeftOnProvider\nPATCH " LOCAL " 200\n", "",
     TG_RECONCILE_OK},
    {"gone here, provider refuses, Secret going: nothing left to do", "replrn", L_ABSENT, R_SAME, K_DELETING, 1,
     "GET", REMOTE, 401, "", "", TG_RECONCILE_OK},
    {"gone here, provider refuses, Secret held: retried", "replrn", L_ABSENT, R_SAME, K_HELD, 1, "GET", REMOTE, 403,
     "", "", TG_RECONCILE_RETRY},
    {"Secret going, no copies held: released", "replsec", L_ABSENT, R_ABSENT, K_DELETING, 0, NULL, NULL, 0,
     "PATCH " SECRET " 200\n", "", TG_RECONCILE_OK},
};

static const char kubeconfig[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
    "clusters:\n- name: k\n  cluster:\n    server: " SERVER "\n"
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1BQT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=\n"
    "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
    "users:\n- name: u\n  user:\n    token: abc\n";

/* The ControlPlane Secret: in the informer cache and in the local store. */
static tg_cache *store_secret(tg_api *local, secret_kind kind)
{
    char *kc = rt_b64(kubeconfig, strlen(kubeconfig)), text[4096];
    const char *items[] = {text, NULL};
    tg_cache *c;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"kubeconfig-controlplane-" PROVIDER "\",\"namespace\":\"" NS "\","
             "\"resourceVersion\":\"3\",%s\"labels\":{\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\"" PROVIDER "\",\""
             TG_LABEL_IDENTITY_TYPE "\":\"ControlPlane\"},\"annotations\":{\"" TG_ANNOTATION_REMOTE_TENANT_NS "\":\""
             REMOTE_NS "\"}%s},\"data\":{\"kubeconfig\":\"%s\"}}",
             kind == K_DELETING ? "\"deletionTimestamp\":\"2026-11-28T00:00:00Z\"," : "",
             kind == K_NEW ? "" : ",\"finalizers\":[\"" TG_REPL_SECRET_FINALIZER "\"]", kc);
    free(kc);
    c = rt_cache(TG_LABEL_REMOTE_CLUSTER_ID, kind == K_ABSENT ? NULL : items);
    if (kind != K_ABSENT)
        fake_api_put(local, SECRET, text);
    return c;
}

static void store_local(tg_api *local, local_kind kind)
{
    char text[2048];

    if (kind == L_ABSENT)
        return;
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Renew\",\"metadata\":{\"name\":\"r1\","
             "\"namespace\":\"" NS "\",%s%s\"labels\":{%s\"" TG_LABEL_REMOTE_ID "\":\"" PROVIDER "\"}},"
             "\"spec\":{\"consumerClusterID\":\"" CONSUMER "\"}}",
             kind == L_HELD || kind == L_DELETING ? "\"finalizers\":[\"" TG_REPL_FINALIZER "\"]," : "",
             kind == L_DELETING ? "\"deletionTimestamp\":\"2026-11-28T00:00:00Z\"," : "",
             kind == L_UNLABELLED ? "" : "\"" TG_LABEL_REPLICATION "\":\"true\",");
    fake_api_put(local, LOCAL, text);
}

static void store_remote(tg_api *remote, remote_kind kind)
{
    char text[2048];

    if (kind == R_ABSENT)
        return;
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Renew\",\"metadata\":{\"name\":\"r1\","
             "\"namespace\":\"" REMOTE_NS "\",\"labels\":{\"" TG_LABEL_REPLICATED "\":\"true\",\"" TG_LABEL_ORIGIN_ID
             "\":\"%s\",\"" TG_LABEL_REMOTE_ID "\":\"" PROVIDER "\"}},\"spec\":{\"consumerClusterID\":\"%s\"}%s}",
             kind == R_NOT_OURS ? "someone-else" : CONSUMER, kind == R_OTHER_SPEC ? "changed" : CONSUMER,
             kind == R_WITH_STATUS ? ",\"status\":{\"renewed\":true}" : "");
    fake_api_put(remote, REMOTE, text);
}

static void run_row(const row *r)
{
    tg_api *local = fake_api_new(), *remote = fake_api_new();
    char local_writes[4096];
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    s.cluster_id = CONSUMER;
    s.remote_pool = tg_remote_pool_new();
    fake_api_serve(remote, SERVER);
    s.cp_secret_cache = store_secret(local, r->secret);
    store_local(local, r->local);
    store_remote(remote, r->remote);
    if (r->fail_path)
        fake_api_fail(r->remote_fails ? remote : local, r->fail_method, r->fail_path, r->fail_status, 1);
    /* a replsec key names the Secret */
    ret = tg_reconcile_replica(&s, local, r->code, NS,
                               strcmp(r->code, "replsec") == 0 ? "kubeconfig-controlplane-" PROVIDER : "r1");
    snprintf(local_writes, sizeof(local_writes), "%s", rt_writes(local));
    if (strcmp(local_writes, r->local_writes) != 0)
        fail_msg("%s: local writes\n%s\nwant\n%s", r->what, local_writes, r->local_writes);
    if (strcmp(rt_writes(remote), r->remote_writes) != 0)
        fail_msg("%s: provider writes\n%s\nwant\n%s", r->what, rt_writes(remote), r->remote_writes);
    if (ret != r->ret)
        fail_msg("%s: returned %ld, want %ld", r->what, ret, r->ret);
    tg_remote_pool_free(s.remote_pool);
    rt_signer_clear(&s);
    fake_api_free(remote);
    fake_api_free(local);
}

static void test_replicator_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* The copy as created: the local spec, the labels rewritten as Liqo does. */
static void test_the_copy(void **state)
{
    tg_api *local = fake_api_new(), *remote = fake_api_new();
    json_object *copy;
    tg_signer s;

    (void)state;
    rt_signer_init(&s);
    s.cluster_id = CONSUMER;
    s.remote_pool = tg_remote_pool_new();
    fake_api_serve(remote, SERVER);
    s.cp_secret_cache = store_secret(local, K_HELD);
    store_local(local, L_HELD);
    assert_int_equal(tg_reconcile_replica(&s, local, "replrn", NS, "r1"), TG_RECONCILE_OK);
    assert_non_null(copy = fake_api_object(remote, REMOTE));
    assert_string_equal(tg_json_path_string(copy, "spec", "consumerClusterID", NULL), CONSUMER);
    assert_string_equal(tg_json_path_string(copy, "metadata", "labels", TG_LABEL_REPLICATED, NULL), "true");
    assert_string_equal(tg_json_path_string(copy, "metadata", "labels", TG_LABEL_ORIGIN_ID, NULL), CONSUMER);
    assert_string_equal(tg_json_path_string(copy, "metadata", "labels", TG_LABEL_REPLICATION, NULL), "false");
    /* run again: in sync, no second write */
    assert_int_equal(tg_reconcile_replica(&s, local, "replrn", NS, "r1"), TG_RECONCILE_OK);
    assert_int_equal(json_object_array_length(fake_api_writes(remote)), 1);
    tg_remote_pool_free(s.remote_pool);
    rt_signer_clear(&s);
    fake_api_free(remote);
    fake_api_free(local);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicator_rows),
        cmocka_unit_test(test_the_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
