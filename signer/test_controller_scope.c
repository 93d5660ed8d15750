/* test_controller_scope.c - every controller, one row each: an object in its
 * scope is queued under its key, one outside it (issue 36: another namespace,
 * another peer, the cluster's own local slice) is dropped by the generic
 * handler before anything is queued, and counted once. The rows go through
 * the real descriptors, the shared informer table and events.c, with the
 * Namespace labels from an in-memory cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "kube/json.h"
#include "signer/controller.h"
#include "signer/events.h"
#include "signer/remote_pool.h"
#include "signer/replica_plan.h"
#include "signer/replicator_watch.h"

#define SELF "cl-self"
#define PEER "cl-p"
#define TENANT_NS "liqo-tenant-cl-p"

typedef struct scope_row {
    const tg_controller_desc *ctl;
    tg_informer_id informer;          /* its own objects' informer */
    const char *in;                   /* an object in scope ... */
    const char *want_key;             /* ... queued under this key */
    const char *out;                  /* an object out of scope: nothing queued */
    const char *why_out;
    unsigned without;                 /* controllers not running for this row */
} scope_row;

#define OBJ(meta, rest) "{\"metadata\":" meta rest "}"

static const scope_row rows[] = {
    {&tg_ctl_nonce, TG_INF_NONCES,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"liqo-nonce\",\"labels\":{\"liqo.io/remote-cluster-id\":\"" PEER "\"}}", ""),
     "nonce/" TENANT_NS "/liqo-nonce",
     OBJ("{\"namespace\":\"team-b\",\"name\":\"liqo-nonce\",\"labels\":{\"liqo.io/remote-cluster-id\":\"" PEER "\"}}", ""),
     "issue 44 finding 2: a namespace user's own namespace, which it labelled for the peer", 0},
    {&tg_ctl_tenant, TG_INF_TENANTS,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"" PEER "\"}", ",\"spec\":{\"clusterID\":\"" PEER "\"}"),
     "tenant/" TENANT_NS "/" PEER,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"cl-q\"}", ",\"spec\":{\"clusterID\":\"cl-q\"}"),
     "a Tenant for another peer in this peer's namespace", 0},
    {&tg_ctl_approver, TG_INF_CSRS, OBJ("{\"name\":\"csr-1\"}", ""), "approve//csr-1",
     OBJ("{\"namespace\":\"team-a\",\"name\":\"csr-1\"}", ""), "a namespaced object", 0},
    /* the own signer alone: with the approver, the approver signs what it approves */
    {&tg_ctl_own_signer, TG_INF_CSRS,
     OBJ("{\"name\":\"csr-2\"}", ",\"status\":{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}"),
     "sign//csr-2",
     OBJ("{\"namespace\":\"team-a\",\"name\":\"csr-2\"}",
         ",\"status\":{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}"),
     "a namespaced object", TG_CTL_APPROVER},
    {&tg_ctl_remote_renew, TG_INF_REMOTE_RENEWS, OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"r1\"}", ""),
     "remoterenew/" TENANT_NS "/r1", OBJ("{\"namespace\":\"team-a\",\"name\":\"r1\"}", ""), "not a tenant namespace", 0},
    /* issue 36 finding 3: no liqo.io/replicated nor originID, still the provider's */
    {&tg_ctl_remote_slice, TG_INF_TENANT_SLICES,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"s1\"}", ",\"spec\":{\"consumerClusterID\":\"" PEER "\"}"),
     "remoteslice/" TENANT_NS "/s1",
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"s1\",\"labels\":{\"liqo.io/replication\":\"true\"}}",
         ",\"spec\":{\"consumerClusterID\":\"" SELF "\"}"),
     "this cluster's own local slice", 0},
    {&tg_ctl_noncesigner, TG_INF_SIGNED_NONCES,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"liqo-signed-nonce\",\"labels\":{\"liqo.io/remote-cluster-id\":\"" PEER "\"}}", ""),
     "signednonce/" TENANT_NS "/liqo-signed-nonce",
     OBJ("{\"namespace\":\"team-b\",\"name\":\"liqo-signed-nonce\",\"labels\":{\"liqo.io/remote-cluster-id\":\"" PEER "\"}}", ""),
     "issue 44 finding 1: a namespace user's own namespace, which it labelled for the peer", 0},
    /* issue 36 (a): an Identity in the user's own namespace */
    {&tg_ctl_identity, TG_INF_IDENTITIES,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"i1\"}", ",\"spec\":{\"clusterID\":\"" PEER "\"}"),
     "identity/" TENANT_NS "/i1",
     OBJ("{\"namespace\":\"team-b\",\"name\":\"i1\"}", ",\"spec\":{\"clusterID\":\"" PEER "\"}"),
     "issue 44 finding 1: a namespace user's own namespace, which it labelled for the peer", 0},
    /* issue 36 (b): a slice in the user's own namespace */
    {&tg_ctl_resourceslice, TG_INF_LOCAL_SLICES,
     OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"s2\",\"labels\":{\"liqo.io/replication\":\"true\"}}", ""),
     "rslice/" TENANT_NS "/s2",
     OBJ("{\"namespace\":\"team-a\",\"name\":\"s2\",\"labels\":{\"liqo.io/replication\":\"true\"}}",
         ",\"spec\":{\"providerClusterID\":\"" PEER "\"}"),
     "a namespace user's own namespace", 0},
    {&tg_ctl_renew, TG_INF_LOCAL_RENEWS, OBJ("{\"namespace\":\"" TENANT_NS "\",\"name\":\"r2\"}", ""),
     "renew/" TENANT_NS "/r2", OBJ("{\"namespace\":\"liqo-tenant-fake\",\"name\":\"r2\"}", ""),
     "a tenant-like name without the labels", 0},
    {&tg_ctl_authtoken, TG_INF_AUTH_TOKENS,
     OBJ("{\"namespace\":\"liqo\",\"name\":\"remote-token-p\",\"labels\":{\"discovery.liqo.io/auth-token\":\"true\"}}", ""),
     "authtoken/liqo/remote-token-p",
     OBJ("{\"namespace\":\"team-a\",\"name\":\"remote-token-p\",\"labels\":{\"discovery.liqo.io/auth-token\":\"true\"}}", ""),
     "a namespace user's own namespace", 0},
};

/* The two informer-less controllers: their keys are judged alone. */
typedef struct key_row {
    const tg_controller_desc *ctl;
    const char *ns, *name;
    tg_scope_verdict want;
} key_row;

static const key_row key_rows[] = {
    {&tg_ctl_keys, "liqo", "authentication-keys", TG_IN_SCOPE},
    {&tg_ctl_keys, "team-a", "authentication-keys", TG_OUT_NAMESPACE},
    {&tg_ctl_keys, "liqo", "other", TG_OUT_NAME},
    {&tg_ctl_replicator, TENANT_NS, "s1", TG_IN_SCOPE},
    {&tg_ctl_replicator, "team-a", "s1", TG_OUT_NAMESPACE},
    {&tg_ctl_replicator, "team-b", "s1", TG_OUT_NAMESPACE},   /* labelled, not named liqo-tenant-cl-p */
    /* woken by Namespace events: the key names the namespace itself */
    {&tg_ctl_bootstrapgc, TENANT_NS, TENANT_NS, TG_IN_SCOPE},
    {&tg_ctl_bootstrapgc, "team-b", "team-b", TG_OUT_NAMESPACE},
    {&tg_ctl_bootstrapgc, "team-a", "team-a", TG_OUT_NAMESPACE},
};

typedef struct fixture {
    tg_signer s;
    tg_events *events;
    tg_metrics *metrics;
    tg_metric_family *out_of_scope;
} fixture;

static int setup(void **state)
{
    static fixture f;
    const char *namespaces =
        "[{\"metadata\":{\"name\":\"" TENANT_NS "\",\"resourceVersion\":\"1\",\"labels\":{\"liqo.io/tenant-namespace\":"
        "\"true\",\"liqo.io/remote-cluster-id\":\"" PEER "\"}}},"
        "{\"metadata\":{\"name\":\"team-a\",\"resourceVersion\":\"1\",\"labels\":{\"liqo.io/remote-cluster-id\":\"" PEER "\"}}},"
        "{\"metadata\":{\"name\":\"liqo-tenant-fake\",\"resourceVersion\":\"1\"}},"
        /* labelled as cl-p's tenant namespace, but not named liqo-tenant-cl-p */
        "{\"metadata\":{\"name\":\"team-b\",\"resourceVersion\":\"1\",\"labels\":{\"liqo.io/tenant-namespace\":"
        "\"true\",\"liqo.io/remote-cluster-id\":\"" PEER "\"}}},"
        "{\"metadata\":{\"name\":\"liqo\",\"resourceVersion\":\"1\"}}]";
    json_object *items = json_tokener_parse(namespaces);
    char err[256];

    memset(&f, 0, sizeof(f));
    f.s.cluster_id = SELF;
    f.s.namespace_ = "liqo";
    f.s.controllers = TG_CTL_ALL;
    assert_non_null(f.s.own_ca.cert = X509_new());   /* own-signer mode: the sign keys exist */
    assert_non_null(f.s.q = tg_wq_new(NULL));
    assert_non_null(f.s.ns_cache = tg_cache_new(NULL));
    assert_int_equal(tg_cache_replace(f.s.ns_cache, items, "1", NULL, err, sizeof(err)), 0);
    json_object_put(items);
    assert_non_null(f.metrics = tg_metrics_new());
    f.out_of_scope = tg_metrics_counter(f.metrics, "tenantgate_signer_out_of_scope_total", "t", 1,
                                        (const char *[]){"controller"});
    assert_non_null(f.events = tg_events_new(&f.s, f.out_of_scope));
    tg_events_set_cache(f.events, TG_INF_NAMESPACES, f.s.ns_cache);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    tg_events_free(f->events);
    tg_cache_free(f->s.ns_cache);
    tg_wq_free(f->s.q);
    tg_metrics_free(f->metrics);
    X509_free(f->s.own_ca.cert);
    return 0;
}

/* Take every queued key; 1 when want (may be NULL) was among them. n: how
 * many were the controller's own (other controllers' wake-ups judged by
 * namespace alone may follow an object another controller refuses). */
static int drain(tg_signer *s, const tg_controller_desc *d, const char *want, int *n)
{
    char key[TG_WQ_KEY_MAX], kind[32];
    int found = 0;

    *n = 0;
    while (tg_wq_get(s->q, UINT64_MAX / 2, key)) {
        snprintf(kind, sizeof(kind), "%.*s", (int)strcspn(key, "/"), key);
        found |= want && strcmp(key, want) == 0;
        *n += tg_controller_by_kind(kind) == d;
        tg_wq_done(s->q, key, 0);
        tg_wq_forget(s->q, key);
    }
    return found;
}

static double dropped(fixture *f, const tg_controller_desc *d)
{
    return tg_metric_value(tg_metric_series_get(f->out_of_scope, (const char *[]){d->name}));
}

static void add_event(fixture *f, tg_informer_id id, const char *text)
{
    json_object *o = json_tokener_parse(text);
    tg_cache_handlers h = tg_events_handlers(f->events, id);

    assert_non_null(o);
    h.on_add(o, h.data);
    h.on_update(o, o, h.data);   /* a second event of the same object: counted once */
    json_object_put(o);
}

static void test_rows(void **state)
{
    fixture *f = *state;
    int n;

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const scope_row *r = &rows[i];
        double before = dropped(f, r->ctl);

        f->s.controllers = TG_CTL_ALL & ~r->without;
        print_message("%s: in scope -> %s\n", r->ctl->name, r->want_key);
        add_event(f, r->informer, r->in);
        assert_true(drain(&f->s, r->ctl, r->want_key, &n));
        print_message("%s: out of scope (%s) -> nothing\n", r->ctl->name, r->why_out);
        add_event(f, r->informer, r->out);
        assert_false(drain(&f->s, r->ctl, NULL, &n));
        assert_int_equal(n, 0);
        assert_true(dropped(f, r->ctl) == before + 1);
    }
}

/* A wake-up from an object the consumer writes names only the namespace's own
 * peer: Renews in liqo-tenant-cl-p with any other liqo.io/originID would queue
 * Tenant keys of the consumer's choosing ahead of new work. */
static void test_wakeups_name_the_namespaces_peer(void **state)
{
    static const struct {
        const char *origin;
        const char *want;             /* the Tenant key queued, or NULL */
    } wake_rows[] = {
        {PEER, "tenant/" TENANT_NS "/" PEER},
        {"cl-q", NULL},
        {"", NULL},
    };
    fixture *f = *state;
    char text[512];
    int n;

    f->s.controllers = TG_CTL_ALL;
    for (size_t i = 0; i < sizeof(wake_rows) / sizeof(wake_rows[0]); i++) {
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"namespace\":\"" TENANT_NS "\",\"name\":\"r%zu\",\"labels\":"
                 "{\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"%s\"}}}", i, wake_rows[i].origin);
        print_message("Renew with originID '%s' -> %s\n", wake_rows[i].origin,
                      wake_rows[i].want ? wake_rows[i].want : "no Tenant key");
        add_event(f, TG_INF_REMOTE_RENEWS, text);
        assert_int_equal(drain(&f->s, &tg_ctl_tenant, wake_rows[i].want, &n), wake_rows[i].want != NULL);
        assert_int_equal(n, wake_rows[i].want != NULL);
    }
}

static void test_informerless_keys(void **state)
{
    fixture *f = *state;
    char cid[64];

    for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++) {
        const key_row *r = &key_rows[i];
        tg_ns_facts nsf = tg_ns_facts_lookup(&f->s, r->ns, cid, sizeof(cid));
        assert_int_equal(tg_scope_judge_key(&r->ctl->scope, "liqo", r->ns, r->name, &nsf), r->want);
    }
}

/* ---- the replicator's own watches (replicator_watch.c), through the same judge ---- */

/* A ControlPlane kubeconfig Secret: a server nothing listens on (the loop never runs). */
#define CP_KUBECONFIG                                                                                          \
    "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "      \
    "https://127.0.0.1:9\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n" \
    "  user:\n    token: abc\n"

typedef struct repl_row {
    const char *what;
    int secret;                       /* 1: a ControlPlane Secret (ns, labelled for peer); 0: a local ResourceSlice */
    const char *ns, *peer;
    int in_scope;                     /* Secret: its remote informers start; slice: its key is queued */
} repl_row;

static const repl_row repl_rows[] = {
    {"Secret in liqo-tenant-cl-p labelled for cl-p", 1, TENANT_NS, PEER, 1},
    {"Secret in a user's namespace", 1, "team-a", PEER, 0},
    {"Secret in liqo-tenant-cl-p labelled for another peer", 1, TENANT_NS, "cl-q", 0},
    {"Secret in a tenant-like name without the labels", 1, "liqo-tenant-fake", "fake", 0},
    {"Secret in a labelled tenant namespace of another name", 1, "team-b", PEER, 0},
    {"slice for cl-p in its tenant namespace", 0, TENANT_NS, PEER, 1},
    {"slice in a user's namespace", 0, "team-a", PEER, 0},
    {"slice for another peer in cl-p's namespace", 0, TENANT_NS, "cl-q", 0},
};

static json_object *repl_object(const repl_row *r, int i)
{
    char text[2048], b64[1024], name[32];

    snprintf(name, sizeof(name), "o%d", i);
    if (!r->secret) {
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"labels\":{\"liqo.io/replication\":\"true\","
                 "\"liqo.io/remoteID\":\"%s\"}}}", r->ns, name, r->peer);
        return json_tokener_parse(text);
    }
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)CP_KUBECONFIG, (int)strlen(CP_KUBECONFIG));
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"labels\":{\"liqo.io/identity-type\":"
             "\"ControlPlane\",\"liqo.io/remote-cluster-id\":\"%s\"},\"annotations\":{"
             "\"liqo.io/remote-tenant-namespace\":\"liqo-tenant-" SELF "\"}},\"data\":{\"kubeconfig\":\"%s\"}}",
             r->ns, name, r->peer, b64);
    return json_tokener_parse(text);
}

/* Issue 36: the replicator's watches are judged by the one scope rule and
 * counted under controller="replicator", as every other controller's events. */
static void test_replicator_watch(void **state)
{
    fixture *f = *state;
    uv_loop_t loop;
    tg_kube_config cfg = {.server = (char *)"https://127.0.0.1:9", .token = (char *)"t"};
    tg_kube_client *local;
    tg_repl_watch *w;
    char err[256], want[TG_WQ_KEY_MAX];
    int n;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_non_null(f->s.remote_pool = tg_remote_pool_new());
    assert_non_null(local = tg_kube_client_new(&loop, &cfg, err, sizeof(err)));
    f->s.controllers = TG_CTL_ALL;
    assert_non_null(w = tg_repl_watch_new(&loop, local, &f->s, f->events, 1u << 0, err, sizeof(err)));
    drain(&f->s, &tg_ctl_replicator, NULL, &n);
    for (size_t i = 0; i < sizeof(repl_rows) / sizeof(repl_rows[0]); i++) {
        const repl_row *r = &repl_rows[i];
        json_object *o = repl_object(r, (int)i);
        tg_cache_handlers h = r->secret ? tg_repl_watch_secret_handlers(w) : tg_repl_watch_local_handlers(w, 0);
        double before = dropped(f, &tg_ctl_replicator);
        int running, synced, was;

        print_message("replicator: %s -> %s\n", r->what, r->in_scope ? "used" : "ignored, counted");
        assert_non_null(o);
        tg_repl_watch_remotes(w, &was, &synced);
        h.on_add(o, h.data);
        h.on_update(o, o, h.data);    /* counted once */
        tg_repl_watch_remotes(w, &running, &synced);
        snprintf(want, sizeof(want), "%s/%s/o%d", tg_repl_kinds[0].code, r->ns, (int)i);
        if (r->secret)
            assert_int_equal(running > was, r->in_scope);
        else
            assert_int_equal(drain(&f->s, &tg_ctl_replicator, want, &n), r->in_scope);
        drain(&f->s, &tg_ctl_replicator, NULL, &n);
        assert_true(dropped(f, &tg_ctl_replicator) == before + (r->in_scope ? 0 : 1));
        h.on_delete(o, h.data);       /* a deletion forgets, counts nothing */
        assert_true(dropped(f, &tg_ctl_replicator) == before + (r->in_scope ? 0 : 1));
        drain(&f->s, &tg_ctl_replicator, NULL, &n);
        json_object_put(o);
    }
    tg_repl_watch_free(w);
    tg_kube_client_free(local);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    tg_remote_pool_free(f->s.remote_pool);
    f->s.remote_pool = NULL;
}

/* Every descriptor in the table has a row above (a new controller needs one). */
static void test_every_controller_has_a_row(void **state)
{
    (void)state;
    for (const tg_controller_desc *const *d = tg_controller_descriptors; *d; d++) {
        int covered = 0;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
            covered |= rows[i].ctl == *d;
        for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++)
            covered |= key_rows[i].ctl == *d;
        if (!covered)
            fail_msg("controller %s has no scope row", (*d)->name);
        assert_non_null((*d)->scope.acts_on);
        assert_non_null((*d)->scope.writes);
        assert_ptr_equal(tg_controller_by_kind((*d)->key_prefix), *d);
    }
}

/* Key material only where its peer's tenant namespace is. */
static void test_key_material(void **state)
{
    fixture *f = *state;

    assert_true(tg_key_material_allowed(&f->s, TENANT_NS, PEER));
    assert_false(tg_key_material_allowed(&f->s, TENANT_NS, "cl-q"));
    assert_false(tg_key_material_allowed(&f->s, "team-a", PEER));   /* labelled cluster id, no tenant label */
    /* issue 44 finding 1: both labels, set by the namespace's own user, not the name */
    assert_false(tg_key_material_allowed(&f->s, "team-b", PEER));
    assert_false(tg_key_material_allowed(&f->s, "liqo-tenant-fake", "fake"));
    assert_false(tg_key_material_allowed(&f->s, "missing", PEER));
    assert_false(tg_key_material_allowed(&f->s, NULL, PEER));
}

/* Hostile namespace labels and names: both labels are needed, only "true"
 * counts, and only in the namespace named liqo-tenant-<its cluster id>. */
static void test_ns_facts(void **state)
{
    static const struct { const char *name, *labels; int labelled, tenant; const char *cid; } cases[] = {
        {"liqo-tenant-x", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 1, "x"},
        {"liqo-tenant-x", "{\"tenantgate.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 1, "x"},
        {"liqo-tenant-x", "{\"liqo.io/tenant-namespace\":\"True\",\"liqo.io/remote-cluster-id\":\"x\"}", 0, 0, "x"},
        {"liqo-tenant-", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"\"}", 1, 0, NULL},
        {"liqo-tenant-x", "{\"liqo.io/tenant-namespace\":\"true\"}", 1, 0, NULL},
        {"liqo-tenant-x", "{}", 0, 0, NULL},
        /* issue 44: a namespace owner labels its own Namespace */
        {"team-x", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 0, "x"},
        {"liqo-tenant-y", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 0, "x"},
        {"liqo-tenant-x-1", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 0, "x"},
        {"xliqo-tenant-x", "{\"liqo.io/tenant-namespace\":\"true\",\"liqo.io/remote-cluster-id\":\"x\"}", 1, 0, "x"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        json_object *ns;
        tg_ns_facts f;
        tg_scope_rule rule = {.where = TG_WHERE_TENANT_NS};
        snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":%s}}", cases[i].name,
                 cases[i].labels);
        ns = json_tokener_parse(text);
        f = tg_ns_facts_of(ns);
        if (f.tenant != cases[i].tenant || f.labelled != cases[i].labelled)
            fail_msg("case %zu (%s): tenant %d labelled %d", i, cases[i].name, f.tenant, f.labelled);
        if (cases[i].cid)
            assert_string_equal(f.cluster_id, cases[i].cid);
        else
            assert_null(f.cluster_id);
        assert_int_equal(tg_scope_judge_key(&rule, "liqo", cases[i].name, "o", &f) == TG_IN_SCOPE, cases[i].tenant);
        /* the facts of one namespace do not admit an object of another */
        assert_int_equal(tg_scope_judge_key(&rule, "liqo", "team-z", "o", &f), TG_OUT_NAMESPACE);
        json_object_put(ns);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_wakeups_name_the_namespaces_peer),
        cmocka_unit_test(test_informerless_keys),
        cmocka_unit_test(test_replicator_watch),
        cmocka_unit_test(test_every_controller_has_a_row),
        cmocka_unit_test(test_key_material),
        cmocka_unit_test(test_ns_facts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
