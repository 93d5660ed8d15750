/* test_approve_decide.c - the approver's decision, table-driven over the
 * seed's real Tenant (seed vectors) and CSR objects derived from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "signer/approve_decide.h"

static char *read_vector(const char *name)
{
    const char *dir = getenv("TG_VECTORS_DIR");
    char path[1024];
    FILE *f;
    char *buf;
    long n;

    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return buf;
}

/* A CSR object as the Tenant controller creates it, for the seed Tenant. */
static json_object *make_csr(json_object *tenant)
{
    char text[4096];
    const char *req = tg_json_path_string(tenant, "spec", "csr", NULL);

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\","
             "\"metadata\":{\"name\":\"liqo-identity-abcde\",\"labels\":{\"liqo.io/remote-tenant-csr\":\"true\","
             "\"liqo.io/remote-cluster-id\":\"cl01\"}},"
             "\"spec\":{\"request\":\"%s\",\"signerName\":\"kubernetes.io/kube-apiserver-client\","
             "\"usages\":[\"digital signature\",\"key encipherment\",\"client auth\"],\"expirationSeconds\":3600}}",
             req);
    return tg_json_parse(text, strlen(text), NULL, 0);
}

static void set_spec_string(json_object *o, const char *key, const char *value)
{
    json_object_object_add(json_object_object_get(o, "spec"), key, json_object_new_string(value));
}

/* spec.request <- base64 of a CSR from a fresh key for cn. */
static void replace_request(json_object *csr, const char *cn)
{
    EVP_PKEY *k = tg_key_generate(TG_KEY_ED25519);
    size_t pem_len = 0;
    char *pem = tg_csr_build(k, cn, &pem_len);
    char *b64 = tg_base64_encode((unsigned char *)pem, pem_len, NULL);

    assert_non_null(b64);
    set_spec_string(csr, "request", b64);
    free(b64);
    free(pem);
    EVP_PKEY_free(k);
}

typedef enum mutation {
    M_NONE, M_SIGNER, M_USAGE_EXTRA, M_USAGE_MISSING, M_USAGE_DUP, M_NO_TENANT, M_NO_NONCE, M_OTHER_NONCE,
    M_OTHER_KEY, M_OTHER_CN, M_NOT_BASE64, M_TENANT_DELETING, M_LABEL, M_TENANT_POLICY_NH,
} mutation;

static const struct {
    const char *name;
    mutation m;
    int approve;
    const char *reason;
} cases[] = {
    {"matching request", M_NONE, 1, "TenantValidated"},
    {"other signer", M_SIGNER, 0, "SignerNameMismatch"},
    {"server auth usage", M_USAGE_EXTRA, 0, "UsagesMismatch"},
    {"no client auth", M_USAGE_MISSING, 0, "UsagesMismatch"},
    {"repeated usage", M_USAGE_DUP, 0, "UsagesMismatch"},
    {"no Tenant", M_NO_TENANT, 0, "NoMatchingTenant"},
    {"no nonce", M_NO_NONCE, 0, "NonceNotFound"},
    {"rotated nonce", M_OTHER_NONCE, 0, "SignatureVerificationFailed"},
    {"another key", M_OTHER_KEY, 0, "CSRPublicKeyMismatch"},
    {"another CN", M_OTHER_CN, 0, "CSRSubjectMismatch"},
    {"request not base64", M_NOT_BASE64, 0, "MalformedCSR"},
    {"Tenant being deleted", M_TENANT_DELETING, 0, "TenantDeleted"},
    {"label names another cluster", M_LABEL, 0, "LabelMismatch"},
    {"TolerateNoHandshake not allowed", M_TENANT_POLICY_NH, 0, "MalformedTenant"},
};

static void test_table(void **state)
{
    char *tenant_text = read_vector("seed-cl01-pemkey.json");
    char *nonce = read_vector("seed-cl01-pemkey.nonce");
    char other_nonce[] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";
    tg_approve_policy pol = {.signer_name = TG_SIGNER_NAME_KUBE};
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *tenant = tg_json_parse(tenant_text, strlen(tenant_text), NULL, 0);
        json_object *csr = make_csr(tenant);
        json_object *usages = tg_json_path(csr, "spec", "usages", NULL);
        const char *use_nonce = nonce;
        tg_approve_decision d;
        int r;

        assert_non_null(csr);
        switch (cases[i].m) {
        case M_NONE: break;
        case M_SIGNER: set_spec_string(csr, "signerName", TG_SIGNER_NAME_OWN); break;
        case M_USAGE_EXTRA: json_object_array_add(usages, json_object_new_string("server auth")); break;
        case M_USAGE_MISSING: json_object_array_del_idx(usages, 2, 1); break;
        case M_USAGE_DUP: json_object_array_add(usages, json_object_new_string("client auth")); break;
        case M_NO_TENANT: json_object_put(tenant); tenant = NULL; break;
        case M_NO_NONCE: use_nonce = NULL; break;
        case M_OTHER_NONCE: use_nonce = other_nonce; break;
        case M_OTHER_KEY: replace_request(csr, "cl01"); break;
        case M_OTHER_CN: replace_request(csr, "cl02"); break;
        case M_NOT_BASE64: set_spec_string(csr, "request", "not base64!"); break;
        case M_TENANT_DELETING:
            json_object_object_add(json_object_object_get(tenant, "metadata"), "deletionTimestamp",
                                   json_object_new_string("2026-01-01T00:00:00Z"));
            break;
        case M_LABEL:
            json_object_object_add(tg_json_path(csr, "metadata", "labels", NULL), "liqo.io/remote-cluster-id",
                                   json_object_new_string("cl02"));
            break;
        case M_TENANT_POLICY_NH: set_spec_string(tenant, "authzPolicy", "TolerateNoHandshake"); break;
        }
        r = tg_approve_decide(csr, tenant, use_nonce, &pol, &d);
        printf("# %-32s -> %d %s: %s\n", cases[i].name, d.approve, d.reason, d.message);
        assert_int_equal(r, cases[i].approve);
        assert_int_equal(d.approve, cases[i].approve);
        assert_string_equal(d.reason, cases[i].reason);
        assert_non_null(d.message[0] ? d.message : NULL);
        assert_null(strchr(d.message, '\n'));
        json_object_put(csr);
        json_object_put(tenant);
    }
    free(tenant_text);
    free(nonce);
}

/* Own-signer mode expects its own signerName. */
static void test_own_signer_policy(void **state)
{
    char *tenant_text = read_vector("seed-cl01-pemkey.json");
    char *nonce = read_vector("seed-cl01-pemkey.nonce");
    json_object *tenant = tg_json_parse(tenant_text, strlen(tenant_text), NULL, 0);
    json_object *csr = make_csr(tenant);
    tg_approve_policy pol = {.signer_name = TG_SIGNER_NAME_OWN};
    tg_approve_decision d;

    assert_int_equal(tg_approve_decide(csr, tenant, nonce, &pol, &d), 0);
    assert_string_equal(d.reason, "SignerNameMismatch");
    set_spec_string(csr, "signerName", TG_SIGNER_NAME_OWN);
    assert_int_equal(tg_approve_decide(csr, tenant, nonce, &pol, &d), 1);
    json_object_put(csr);
    json_object_put(tenant);
    free(tenant_text);
    free(nonce);
}

/* Only the creator the API server wrote counts; a missing, empty, other-typed
 * or merely similar name is someone else. */
static void test_csr_made_by(void **state)
{
    static const struct {
        const char *desc;
        const char *csr;
        const char *user;
        int want;
    } made_by_cases[] = {
        {"ours", "{\"spec\":{\"username\":\"system:serviceaccount:liqo:tenantgate-signer\"}}",
         "system:serviceaccount:liqo:tenantgate-signer", 1},
        {"another user", "{\"spec\":{\"username\":\"kubernetes-admin\"}}",
         "system:serviceaccount:liqo:tenantgate-signer", 0},
        {"a prefix of ours", "{\"spec\":{\"username\":\"system:serviceaccount:liqo:tenantgate\"}}",
         "system:serviceaccount:liqo:tenantgate-signer", 0},
        {"ours plus a suffix", "{\"spec\":{\"username\":\"system:serviceaccount:liqo:tenantgate-signer2\"}}",
         "system:serviceaccount:liqo:tenantgate-signer", 0},
        {"case differs", "{\"spec\":{\"username\":\"Kubernetes-Admin\"}}", "kubernetes-admin", 0},
        {"no username", "{\"spec\":{\"signerName\":\"x\"}}", "kubernetes-admin", 0},
        {"empty username", "{\"spec\":{\"username\":\"\"}}", "kubernetes-admin", 0},
        {"username not a string", "{\"spec\":{\"username\":7}}", "kubernetes-admin", 0},
        {"no spec", "{}", "kubernetes-admin", 0},
        {"own name unknown: every CSR counts", "{\"spec\":{\"username\":\"anyone\"}}", NULL, 1},
        {"own name unknown, no username", "{}", NULL, 1},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(made_by_cases) / sizeof(made_by_cases[0]); i++) {
        json_object *csr = tg_json_parse(made_by_cases[i].csr, strlen(made_by_cases[i].csr), NULL, 0);
        assert_non_null(csr);
        if (tg_csr_made_by(csr, made_by_cases[i].user) != made_by_cases[i].want)
            fail_msg("%s: expected %d", made_by_cases[i].desc, made_by_cases[i].want);
        json_object_put(csr);
    }
}


/* Issue 36 #7: slice user web-<h(c-alpha)> = web-03942366fce4 against the
 * Tenants' cluster ids, and a cluster id of that shape against the slices. */
#define WEB_ALPHA "web-03942366fce4"
#define SLICE(name, consumer) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"liqo-tenant-" consumer "\"}," \
                              "\"spec\":{\"consumerClusterID\":\"" consumer "\"}}"
#define TENANT(name, cid) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"liqo-tenant-" name "\"}," \
                          "\"spec\":{\"clusterID\":\"" cid "\"}}"

static void test_user_name_taken(void **state)
{
    static const struct {
        const char *desc;
        const char *slice;     /* a slice CSR for this slice, or NULL: a Tenant CSR for cid */
        const char *cid;
        const char *others;    /* the Tenants (slice CSR) or slices (Tenant CSR), a JSON array or NULL */
        int approved;          /* what the decision said before */
        int want;
        const char *reason;    /* wanted reason when denied */
    } rows[] = {
        {"slice, no Tenants", SLICE("web", "c-alpha"), NULL, NULL, 1, 1, NULL},
        {"slice, other Tenants", SLICE("web", "c-alpha"), NULL, "[" TENANT("c-beta", "c-beta") "]", 1, 1, NULL},
        {"slice user is a Tenant's name", SLICE("web", "c-alpha"), NULL,
         "[" TENANT("c-beta", "c-beta") "," TENANT(WEB_ALPHA, WEB_ALPHA) "]", 1, 0, "UserNameTaken"},
        {"slice user is a Tenant's clusterID", SLICE("web", "c-alpha"), NULL, "[" TENANT("x", WEB_ALPHA) "]", 1, 0,
         "UserNameTaken"},
        {"one hex digit off", SLICE("web", "c-alpha"), NULL, "[" TENANT("web-03942366fce5", "web-03942366fce5") "]",
         1, 1, NULL},
        {"slice of another consumer, same name", SLICE("web", "c-beta"), NULL, "[" TENANT(WEB_ALPHA, WEB_ALPHA) "]",
         1, 1, NULL},
        {"a denial stays the denial it was", SLICE("web", "c-alpha"), NULL, "[" TENANT(WEB_ALPHA, WEB_ALPHA) "]", 0,
         0, "Earlier"},
        {"hostile: items not an array", SLICE("web", "c-alpha"), NULL, "{\"items\":1}", 1, 1, NULL},
        {"cluster id is a slice's user", NULL, WEB_ALPHA, "[" SLICE("web", "c-alpha") "]", 1, 0, "UserNameTaken"},
        {"same slice name, other consumer", NULL, WEB_ALPHA, "[" SLICE("web", "c-beta") "]", 1, 1, NULL},
        {"other slice name, same consumer", NULL, WEB_ALPHA, "[" SLICE("web2", "c-alpha") "]", 1, 1, NULL},
        {"cluster id, no slices", NULL, WEB_ALPHA, NULL, 1, 1, NULL},
        {"ordinary cluster id", NULL, "c-alpha", "[" SLICE("web", "c-alpha") "]", 1, 1, NULL},
        {"hostile: slice without consumer", NULL, WEB_ALPHA, "[{\"metadata\":{\"name\":\"web\"}}]", 1, 1, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *subject = rows[i].slice ? tg_json_parse(rows[i].slice, strlen(rows[i].slice), NULL, 0) : NULL;
        json_object *others = rows[i].others ? tg_json_parse(rows[i].others, strlen(rows[i].others), NULL, 0) : NULL;
        tg_approve_decision d = {.approve = rows[i].approved};
        int got;

        snprintf(d.reason, sizeof(d.reason), "%s", rows[i].approved ? TG_APPROVE_REASON : "Earlier");
        got = rows[i].slice ? tg_approve_slice_user_free(subject, others, &d)
                            : tg_approve_cluster_id_free(rows[i].cid, others, &d);
        print_message("%-40s -> %d %s %s\n", rows[i].desc, got, d.reason, d.message);
        if (got != rows[i].want || d.approve != rows[i].want)
            fail_msg("%s: approve %d, wanted %d", rows[i].desc, got, rows[i].want);
        if (rows[i].reason)
            assert_string_equal(d.reason, rows[i].reason);
        if (!got && rows[i].approved)
            assert_non_null(strstr(d.message, WEB_ALPHA));
        json_object_put(subject);
        json_object_put(others);
    }
}

static void test_slice_user_slice_name(void **state)
{
    static const struct {
        const char *user, *want;   /* want NULL: not a slice user's shape */
    } rows[] = {
        {WEB_ALPHA, "web"},          {"a.b-000000000000", "a.b"}, {"x-y-0123456789ab", "x-y"},
        {"-03942366fce4", NULL},     {"web03942366fce4", NULL},   {"web-03942366FCE4", NULL},
        {"web-0394", NULL},          {"web-03942366fce4x", NULL}, {"", NULL},
        {NULL, NULL},
    };
    char name[254];

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int rc = tg_slice_user_slice_name(rows[i].user, name, sizeof(name));
        if (!rows[i].want) {
            assert_int_equal(rc, -1);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_string_equal(name, rows[i].want);
    }
    assert_int_equal(tg_slice_user_slice_name(WEB_ALPHA, name, 3), -1);   /* "web" + NUL does not fit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_own_signer_policy),
        cmocka_unit_test(test_csr_made_by),
        cmocka_unit_test(test_user_name_taken),
        cmocka_unit_test(test_slice_user_slice_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
