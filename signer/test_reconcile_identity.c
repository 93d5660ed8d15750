/* test_reconcile_identity.c - the consumer's Identity controller
 * (tg_reconcile_identity) against two fake API servers, the consumer's and
 * the provider's (reached through the trial pool): a renewed kubeconfig
 * replaces the one in use only when a SelfSubjectReview with it answers
 * with its certificate's user (issue 48 #3), and the Identity carries the
 * RenewalOverdue condition and gauge of the certificate in use. */
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
#include "kube/whoami.h"
#include "pki/keys.h"
#include "signer/reconcile_common.h"
#include "signer/remote_pool.h"
#include "signer/renewal.h"
#include "signer/renewal_trial.h"
#include "signer/test_reconcile_fixture.h"

#define CONSUMER "consumer-1"
#define PROVIDER "provider-1"
#define NS "liqo-tenant-" PROVIDER
#define SERVER "https://provider.example:6443"
#define NAME "controlplane-" PROVIDER
#define IDENTITY "/apis/authentication.liqo.io/v1beta1/namespaces/" NS "/identities/" NAME
#define SECRET "/api/v1/namespaces/" NS "/secrets/kubeconfig-" NAME
#define CERT_USER "t"            /* the CN of rt_cert_b64's certificates */
#define FRESH_S 3600             /* renewal far ahead */
#define OVERDUE_S 320            /* lifetime 160 s: renew-at 33 s ago, overdue (10 %) 17 s ago */

typedef enum { A_NONE, A_OK, A_401, A_OTHER_USER, A_DOWN } whoami;

typedef struct world {
    tg_api *local, *remote;
    tg_metrics *metrics;
    tg_signer s;
} world;

static void store_identity(world *w, const char *crt_b64)
{
    char text[8192];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Identity\",\"metadata\":{\"name\":\"" NAME
             "\",\"namespace\":\"" NS "\"},\"spec\":{\"clusterID\":\"" PROVIDER "\",\"type\":\"ControlPlane\","
             "\"namespace\":\"liqo-tenant-" CONSUMER "\",\"authParams\":{\"apiServer\":\"" SERVER "\","
             "\"signedCRT\":\"%s\"}}}", crt_b64);
    if (fake_api_object(w->local, IDENTITY)) {
        /* keep the status the controller wrote: a renewal changes the spec only */
        json_object *old = json_object_get(fake_api_object(w->local, IDENTITY)), *next = json_tokener_parse(text);
        json_object_object_add(next, "status", json_object_get(json_object_object_get(old, "status")));
        fake_api_put_obj(w->local, IDENTITY, next);
        json_object_put(old);
        return;
    }
    fake_api_put(w->local, IDENTITY, text);
}

static void world_init(world *w)
{
    static const char *const ns[] = {"{\"metadata\":{\"name\":\"" NS "\",\"resourceVersion\":\"1\",\"labels\":{\""
                                     TG_LABEL_LIQO_TENANT_NS "\":\"true\",\"" TG_LABEL_REMOTE_CLUSTER_ID "\":\""
                                     PROVIDER "\"}}}", NULL};

    memset(w, 0, sizeof(*w));
    w->local = fake_api_new();
    w->remote = fake_api_new();
    fake_api_serve(w->remote, SERVER);
    rt_signer_init(&w->s);
    w->s.cluster_id = CONSUMER;
    w->s.renewal_grace_pct = TG_RENEWAL_GRACE_PCT_DEFAULT;
    w->s.ns_cache = rt_cache(NULL, ns);
    assert_non_null(w->s.cluster_key = tg_key_generate(TG_KEY_ED25519));
    assert_non_null(w->s.trial_pool = tg_remote_pool_new());
    w->metrics = tg_metrics_new();
    w->s.m_renewal_overdue = tg_metrics_gauge(w->metrics, "overdue", "h", 1, (const char *[]){"identity"});
    w->s.m_trial_failures = tg_metrics_counter(w->metrics, "trials", "h", 1, (const char *[]){"reason"});
}

static void world_free(world *w)
{
    tg_remote_pool_free(w->s.trial_pool);
    tg_cache_free(w->s.ns_cache);
    w->s.ns_cache = NULL;
    rt_signer_clear(&w->s);
    tg_metrics_free(w->metrics);
    fake_api_free(w->remote);
    fake_api_free(w->local);
}

/* The provider's answer to the next SelfSubjectReview. */
static void provider_answers(world *w, whoami how)
{
    switch (how) {
    case A_NONE: break;
    case A_OK:
    case A_OTHER_USER:
        fake_api_answer(w->remote, "POST", TG_WHOAMI_PATH, 201,
                        how == A_OK ? "{\"status\":{\"userInfo\":{\"username\":\"" CERT_USER "\"}}}"
                                    : "{\"status\":{\"userInfo\":{\"username\":\"system:anonymous\"}}}");
        break;
    case A_401: fake_api_answer(w->remote, "POST", TG_WHOAMI_PATH, 401, "{\"kind\":\"Status\"}"); break;
    case A_DOWN: fake_api_fail(w->remote, "POST", TG_WHOAMI_PATH, -1, 1); break;
    }
}

/* The kubeconfig in the Secret (borrowed base64), or NULL. */
static const char *kubeconfig_b64(world *w)
{
    return tg_json_path_string(fake_api_object(w->local, SECRET), "data", "kubeconfig", NULL);
}

static double metric(tg_metric_family *f, const char *label)
{
    return tg_metric_value(tg_metric_series_get(f, (const char *[]){label}));
}

static const char *overdue_status(world *w)
{
    json_object *conds = tg_json_path(fake_api_object(w->local, IDENTITY), "status", "conditions", NULL);

    for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        if (strcmp(tg_json_string(c, "type"), "RenewalOverdue") == 0)
            return tg_json_string(c, "status");
    }
    return NULL;
}

/* Issue a first certificate (valid_s) and write its kubeconfig; its base64 text (malloc'd). */
static char *first_kubeconfig(world *w, long valid_s)
{
    char *crt = rt_cert_b64(w->s.cluster_key, valid_s);
    long ret;

    store_identity(w, crt);
    free(crt);
    ret = tg_reconcile_identity(&w->s, w->local, NS, NAME);
    assert_true(ret >= 0);
    assert_non_null(kubeconfig_b64(w));
    return strdup(kubeconfig_b64(w));
}

typedef struct row {
    const char *what;
    whoami answer;
    int replaced;                 /* the Secret holds the renewed kubeconfig afterwards */
    const char *reason;           /* counted trial failure, or NULL */
} row;

static const row rows[] = {
    {"trial answers with the certificate's user: replaced", A_OK, 1, NULL},
    {"provider refuses the certificate (401): old kept", A_401, 0, "Unauthorized"},
    {"provider answers as someone else: old kept", A_OTHER_USER, 0, "UnexpectedUser"},
    {"provider unreachable (TLS, connection): old kept", A_DOWN, 0, "ServerUnreachable"},
    {"no answer with a user name: old kept", A_NONE, 0, "ReviewRefused"},
};

static void run_row(const row *r)
{
    world w;
    char *old, *crt;
    long ret;

    world_init(&w);
    old = first_kubeconfig(&w, FRESH_S);
    assert_int_equal(json_object_array_length(fake_api_writes(w.remote)), 0);   /* nothing to keep: no trial */
    crt = rt_cert_b64(w.s.cluster_key, FRESH_S + 60);                           /* the renewal */
    store_identity(&w, crt);
    provider_answers(&w, r->answer);
    ret = tg_reconcile_identity(&w.s, w.local, NS, NAME);
    if ((strcmp(kubeconfig_b64(&w), old) != 0) != r->replaced)
        fail_msg("%s: kubeconfig %s", r->what, r->replaced ? "kept" : "replaced");
    if (r->replaced ? ret < 0 : ret != TG_RECONCILE_RETRY)
        fail_msg("%s: returned %ld", r->what, ret);
    if (r->reason && metric(w.s.m_trial_failures, r->reason) != 1)
        fail_msg("%s: %s counted %g times, want 1", r->what, r->reason, metric(w.s.m_trial_failures, r->reason));
    if (!r->reason && metric(w.s.m_trial_failures, TG_TRIAL_UNAUTHORIZED) != 0)
        fail_msg("%s: a failure counted", r->what);
    if (!r->replaced && !strstr(rt_writes(w.local), "EVENT " NS "/" NAME " RenewalTrialFailed"))
        fail_msg("%s: no RenewalTrialFailed event in\n%s", r->what, rt_writes(w.local));
    free(crt);
    free(old);
    world_free(&w);
}

static void test_trial_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* An overdue certificate sets the condition and gauge; a renewal that fails
 * its trial leaves them set (the old certificate is still the one in use);
 * one that passes clears them. */
static void test_overdue(void **state)
{
    world w;
    char *old, *crt;
    long ret;

    (void)state;
    world_init(&w);
    old = first_kubeconfig(&w, OVERDUE_S);
    assert_string_equal(overdue_status(&w), "True");
    assert_true(metric(w.s.m_renewal_overdue, NS "/" NAME) == 1);
    assert_non_null(strstr(rt_writes(w.local), "EVENT " NS "/" NAME " RenewalOverdue"));
    crt = rt_cert_b64(w.s.cluster_key, FRESH_S);
    store_identity(&w, crt);
    provider_answers(&w, A_401);
    assert_int_equal(tg_reconcile_identity(&w.s, w.local, NS, NAME), TG_RECONCILE_RETRY);
    assert_string_equal(kubeconfig_b64(&w), old);
    assert_string_equal(overdue_status(&w), "True");
    assert_true(metric(w.s.m_renewal_overdue, NS "/" NAME) == 1);
    provider_answers(&w, A_OK);
    ret = tg_reconcile_identity(&w.s, w.local, NS, NAME);
    assert_true(ret > 0);                       /* looked at again when it would become overdue */
    assert_true(ret <= (FRESH_S - 300) * 1000L);
    assert_string_not_equal(kubeconfig_b64(&w), old);
    assert_string_equal(overdue_status(&w), "False");
    assert_true(metric(w.s.m_renewal_overdue, NS "/" NAME) == 0);
    free(crt);
    free(old);
    world_free(&w);
}

/* The first kubeconfig: written without a trial, condition False, and the
 * same reconcile again writes no status. */
static void test_first_and_steady(void **state)
{
    world w;
    char *old;
    size_t nwrites;

    (void)state;
    world_init(&w);
    old = first_kubeconfig(&w, FRESH_S);
    assert_string_equal(overdue_status(&w), "False");
    assert_string_equal(tg_json_path_string(fake_api_object(w.local, IDENTITY), "status", "kubeconfigSecretRef",
                                            "name", NULL), "kubeconfig-" NAME);
    nwrites = json_object_array_length(fake_api_writes(w.local));
    assert_true(tg_reconcile_identity(&w.s, w.local, NS, NAME) > 0);
    /* only the Secret's idempotent apply, no status write, no trial */
    assert_int_equal(json_object_array_length(fake_api_writes(w.local)), nwrites + 1);
    assert_int_equal(json_object_array_length(fake_api_writes(w.remote)), 0);
    free(old);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_and_steady),
        cmocka_unit_test(test_trial_rows),
        cmocka_unit_test(test_overdue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
