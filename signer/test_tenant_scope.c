/* test_tenant_scope.c - the nonce controller fills liqo-nonce in
 * liqo-tenant-C labelled for C, and no other labelled Secret; the replicator
 * uses a ControlPlane kubeconfig Secret only in liqo-tenant-P labelled for P. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "signer/tenant_scope.h"

typedef struct scope_case {
    const char *what;
    const char *ns, *name, *cluster_id;
    tg_scope want;
    const char *reason;
} scope_case;

static const scope_case cases[] = {
    {"the tenant namespace's liqo-nonce", "liqo-tenant-cl01", "liqo-nonce", "cl01", TG_SCOPE_OK, "ok"},
    {"an id with dashes and dots", "liqo-tenant-a-b.c", "liqo-nonce", "a-b.c", TG_SCOPE_OK, "ok"},
    {"labelled Secret in default", "default", "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"in the install namespace", "liqo", "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"prefix without an id", "liqo-tenant-", "liqo-nonce", "", TG_SCOPE_NAMESPACE, "namespace"},
    {"prefix without the dash", "liqo-tenantcl01", "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"prefix in the middle", "x-liqo-tenant-cl01", "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"another name in the tenant namespace", "liqo-tenant-cl01", "my-nonce", "cl01", TG_SCOPE_NAME, "name"},
    {"name with a suffix", "liqo-tenant-cl01", "liqo-nonce-2", "cl01", TG_SCOPE_NAME, "name"},
    {"name a prefix of liqo-nonce", "liqo-tenant-cl01", "liqo-non", "cl01", TG_SCOPE_NAME, "name"},
    {"wrong name and namespace: name first", "default", "x", "cl01", TG_SCOPE_NAME, "name"},
    {"labelled for another cluster", "liqo-tenant-cl01", "liqo-nonce", "cl02", TG_SCOPE_CLUSTER, "cluster"},
    {"id a prefix of the namespace's", "liqo-tenant-cl01", "liqo-nonce", "cl0", TG_SCOPE_CLUSTER, "cluster"},
    {"namespace's id a prefix of the label", "liqo-tenant-cl0", "liqo-nonce", "cl01", TG_SCOPE_CLUSTER, "cluster"},
    {"a longer, custom tenant namespace name", "liqo-tenant-cl-provider-x1", "liqo-nonce", "cl-provider",
     TG_SCOPE_CLUSTER, "cluster"},
    {"no cluster label", "liqo-tenant-cl01", "liqo-nonce", NULL, TG_SCOPE_CLUSTER, "cluster"},
    {"empty cluster label", "liqo-tenant-cl01", "liqo-nonce", "", TG_SCOPE_CLUSTER, "cluster"},
    {"no namespace", NULL, "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"empty namespace (cluster-scoped)", "", "liqo-nonce", "cl01", TG_SCOPE_NAMESPACE, "namespace"},
    {"no name", "liqo-tenant-cl01", NULL, "cl01", TG_SCOPE_NAME, "name"},
    {"empty name", "liqo-tenant-cl01", "", "cl01", TG_SCOPE_NAME, "name"},
};

static void test_scope_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const scope_case *c = &cases[i];
        tg_scope got = tg_nonce_scope_of(c->ns, c->name, c->cluster_id);

        if (got != c->want)
            fail_msg("%s: got %s, expected %s", c->what, tg_scope_reason(got), c->reason);
        assert_string_equal(tg_scope_reason(got), c->reason);
    }
}

typedef struct ns_case {
    const char *what;
    const char *ns, *cluster_id;
    tg_scope want;
} ns_case;

/* The replicator's kubeconfig Secrets: any name, the namespace rule only. */
static const ns_case ns_cases[] = {
    {"the provider's tenant namespace", "liqo-tenant-prov1", "prov1", TG_SCOPE_OK},
    {"labelled Secret in a user namespace", "team-a", "prov1", TG_SCOPE_NAMESPACE},
    {"labelled Secret in default", "default", "prov1", TG_SCOPE_NAMESPACE},
    {"prefix without an id", "liqo-tenant-", "", TG_SCOPE_NAMESPACE},
    {"prefix in the middle", "x-liqo-tenant-prov1", "prov1", TG_SCOPE_NAMESPACE},
    {"another provider's tenant namespace", "liqo-tenant-prov1", "prov2", TG_SCOPE_CLUSTER},
    {"no cluster label", "liqo-tenant-prov1", NULL, TG_SCOPE_CLUSTER},
    {"id a prefix of the namespace's", "liqo-tenant-prov1", "prov", TG_SCOPE_CLUSTER},
    {"no namespace", NULL, "prov1", TG_SCOPE_NAMESPACE},
};

static void test_tenant_namespace_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ns_cases) / sizeof(ns_cases[0]); i++) {
        const ns_case *c = &ns_cases[i];
        tg_scope got = tg_tenant_scope_of(c->ns, c->cluster_id);

        if (got != c->want)
            fail_msg("%s: got %s, expected %s", c->what, tg_scope_reason(got), tg_scope_reason(c->want));
    }
}

static void test_unknown_verdict_has_a_word(void **state)
{
    (void)state;
    assert_string_equal(tg_scope_reason((tg_scope)99), "unknown");
}

/* The signed nonce's rule reads the namespace's name and labels. */
typedef struct signed_case {
    const char *what;
    const char *ns, *name, *cluster_id;
    int ns_tenant;
    const char *ns_cluster_id;
    tg_scope want;
} signed_case;

#define PNS "liqo-tenant-prov"
static const signed_case signed_cases[] = {
    {"liqo-signed-nonce in the provider's tenant namespace", PNS, "liqo-signed-nonce", "prov", 1, "prov", TG_SCOPE_OK},
    {"in a namespace that is no tenant namespace (default)", "default", "liqo-signed-nonce", "prov", 0, NULL,
     TG_SCOPE_NAMESPACE},
    {"in a namespace labelled for the provider but not a tenant namespace", PNS, "liqo-signed-nonce", "prov", 0,
     "prov", TG_SCOPE_NAMESPACE},
    {"in another provider's tenant namespace", PNS, "liqo-signed-nonce", "prov", 1, "other", TG_SCOPE_CLUSTER},
    {"in a tenant namespace without a cluster label", PNS, "liqo-signed-nonce", "prov", 1, NULL, TG_SCOPE_CLUSTER},
    {"id a prefix of the namespace's", PNS, "liqo-signed-nonce", "pro", 1, "prov", TG_SCOPE_CLUSTER},
    {"no cluster label on the Secret", PNS, "liqo-signed-nonce", NULL, 1, "prov", TG_SCOPE_CLUSTER},
    {"empty cluster label on both", PNS, "liqo-signed-nonce", "", 1, "", TG_SCOPE_CLUSTER},
    {"another name", PNS, "my-signed-nonce", "prov", 1, "prov", TG_SCOPE_NAME},
    {"the provider's nonce name", PNS, "liqo-nonce", "prov", 1, "prov", TG_SCOPE_NAME},
    {"no name", PNS, NULL, "prov", 1, "prov", TG_SCOPE_NAME},
    {"wrong name and namespace: name first", "default", "x", "prov", 0, NULL, TG_SCOPE_NAME},
    /* issue 44 finding 1: a namespace owner labelled its own Namespace for the provider */
    {"both labels on a namespace not named liqo-tenant-<id>", "team-a", "liqo-signed-nonce", "prov", 1, "prov",
     TG_SCOPE_NAMESPACE},
    {"both labels on another peer's tenant namespace name", "liqo-tenant-other", "liqo-signed-nonce", "prov", 1,
     "prov", TG_SCOPE_NAMESPACE},
    {"the name with a suffix", PNS "-1", "liqo-signed-nonce", "prov", 1, "prov", TG_SCOPE_NAMESPACE},
    {"no namespace", NULL, "liqo-signed-nonce", "prov", 1, "prov", TG_SCOPE_NAMESPACE},
};

static void test_signed_nonce_scope_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(signed_cases) / sizeof(signed_cases[0]); i++) {
        const signed_case *c = &signed_cases[i];
        tg_scope got = tg_signed_nonce_scope_of(c->ns, c->name, c->cluster_id, c->ns_tenant, c->ns_cluster_id);

        if (got != c->want)
            fail_msg("%s: got %s, expected %s", c->what, tg_scope_reason(got), tg_scope_reason(c->want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_table),
        cmocka_unit_test(test_signed_nonce_scope_table),
        cmocka_unit_test(test_tenant_namespace_table),
        cmocka_unit_test(test_unknown_verdict_has_a_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
