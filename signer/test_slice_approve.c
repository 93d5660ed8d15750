/* test_slice_approve.c - the provider's decisions on a replicated
 * ResourceSlice (tg_slice_auth_decide) and on a CSR made for one
 * (tg_approve_decide_slice), table-driven over a generated consumer key. */
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
#include "pki/keys.h"
#include "pki/slice.h"
#include "signer/approve_decide.h"

#define CONSUMER "cl-consumer"
#define NS "liqo-tenant-cl-consumer"
#define SLICE "mypool"

static char *b64_of(const void *p, size_t n)
{
    char *s = tg_base64_encode(p, n, NULL);
    assert_non_null(s);
    return s;
}

static char *slice_csr_b64(EVP_PKEY *key, const char *name, const char *consumer)
{
    size_t len = 0;
    char *pem = tg_slice_csr_build(key, name, consumer, &len), *b64;

    assert_non_null(pem);
    b64 = b64_of(pem, len);
    free(pem);
    return b64;
}

static json_object *parse(const char *text)
{
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

static json_object *make_tenant(EVP_PKEY *key)
{
    char *pub = tg_key_public_pem(key, NULL), *pub_b64, text[4096];
    json_object *t;

    assert_non_null(pub);
    pub_b64 = b64_of(pub, strlen(pub));
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Tenant\","
             "\"metadata\":{\"name\":\"" CONSUMER "\",\"namespace\":\"" NS "\"},"
             "\"spec\":{\"clusterID\":\"" CONSUMER "\",\"publicKey\":\"%s\",\"csr\":\"eA==\",\"signature\":\"eA==\"}}",
             pub_b64);
    t = parse(text);
    free(pub);
    free(pub_b64);
    return t;
}

static json_object *make_slice(const char *csr_b64)
{
    char text[8192];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"" SLICE "\",\"namespace\":\"" NS "\",\"uid\":\"u1\",\"labels\":{"
             "\"liqo.io/replicated\":\"true\",\"liqo.io/originID\":\"" CONSUMER "\","
             "\"liqo.io/remote-cluster-id\":\"" CONSUMER "\"}},"
             "\"spec\":{\"consumerClusterID\":\"" CONSUMER "\",\"class\":\"default\",\"csr\":\"%s\"}}",
             csr_b64);
    return parse(text);
}

static json_object *make_csr(const char *request_b64)
{
    char text[8192];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\","
             "\"metadata\":{\"name\":\"liqo-identity-x\",\"labels\":{\"liqo.io/remote-tenant-csr\":\"true\","
             "\"liqo.io/remote-cluster-id\":\"" CONSUMER "\"},\"annotations\":{\"" TG_ANNOTATION_CSR_SLICE
             "\":\"" NS "/" SLICE "\"}},"
             "\"spec\":{\"request\":\"%s\",\"signerName\":\"kubernetes.io/kube-apiserver-client\","
             "\"usages\":[\"digital signature\",\"key encipherment\",\"client auth\"],\"expirationSeconds\":600}}",
             request_b64);
    return parse(text);
}

static void set_path(json_object *o, const char *a, const char *b, const char *value)
{
    json_object *m = json_object_object_get(o, a);
    if (value)
        json_object_object_add(m, b, json_object_new_string(value));
    else
        json_object_object_del(m, b);
}

static void set_label(json_object *o, const char *k, const char *value)
{
    json_object *l = tg_json_path(o, "metadata", "labels", NULL);
    if (value)
        json_object_object_add(l, k, json_object_new_string(value));
    else
        json_object_object_del(l, k);
}

typedef enum mutation {
    M_NONE, M_NO_SLICE, M_SLICE_DELETING, M_NOT_REPLICATED, M_ORIGIN, M_NO_CONSUMER, M_BAD_CONSUMER, M_NAMESPACE,
    M_NO_TENANT, M_TENANT_DELETING, M_DRAINED, M_CORDONED, M_OTHER_KEY, M_OTHER_NAME, M_OTHER_CONSUMER_O, M_NO_CSR,
    M_CSR_NOT_B64, M_REQUEST_OTHER, M_SIGNER, M_USAGES, M_CSR_LABEL, M_NH_NOT_ALLOWED, M_NH_ALLOWED,
} mutation;

static const struct {
    const char *name;
    mutation m;
    int auth;                   /* tg_slice_auth_decide */
    const char *auth_reason;
    int approve;                /* tg_approve_decide_slice */
    const char *approve_reason;
} cases[] = {
    {"admitted slice", M_NONE, 1, "ResourceSliceValidated", 1, "ResourceSliceValidated"},
    {"no slice", M_NO_SLICE, 0, "NoMatchingResourceSlice", 0, "NoMatchingResourceSlice"},
    {"slice being deleted", M_SLICE_DELETING, 1, "ResourceSliceValidated", 0, "ResourceSliceDeleted"},
    {"not replicated", M_NOT_REPLICATED, 0, "LabelMismatch", 0, "LabelMismatch"},
    {"originID of another", M_ORIGIN, 0, "LabelMismatch", 0, "LabelMismatch"},
    {"no consumerClusterID", M_NO_CONSUMER, 0, "MalformedResourceSlice", 0, "LabelMismatch"},
    {"invalid consumerClusterID", M_BAD_CONSUMER, 0, "InvalidClusterID", 0, "LabelMismatch"},
    {"another namespace", M_NAMESPACE, 0, "WrongNamespace", 0, "WrongNamespace"},
    {"no Tenant", M_NO_TENANT, 0, "SliceTenantNotFound", 0, "SliceTenantNotFound"},
    {"Tenant being deleted", M_TENANT_DELETING, 0, "TenantDeleted", 0, "TenantDeleted"},
    {"Tenant Drained", M_DRAINED, 0, "SliceTenantDrained", 0, "SliceTenantDrained"},
    {"Tenant Cordoned", M_CORDONED, 1, "ResourceSliceValidated", 1, "ResourceSliceValidated"},
    {"CSR under another key", M_OTHER_KEY, 0, "CSRPublicKeyMismatch", 0, "CSRPublicKeyMismatch"},
    {"CSR for another slice name", M_OTHER_NAME, 0, "CSRSubjectMismatch", 0, "CSRSubjectMismatch"},
    {"CSR for another consumer", M_OTHER_CONSUMER_O, 0, "CSRSubjectMismatch", 0, "CSRSubjectMismatch"},
    {"no spec.csr", M_NO_CSR, 0, "MalformedResourceSlice", 0, "MalformedResourceSlice"},
    {"spec.csr not base64", M_CSR_NOT_B64, 0, "MalformedResourceSlice", 0, "MalformedResourceSlice"},
    {"CSR object asks another request", M_REQUEST_OTHER, 1, "ResourceSliceValidated", 0, "RequestNotFromResourceSlice"},
    {"other signer", M_SIGNER, 1, "ResourceSliceValidated", 0, "SignerNameMismatch"},
    {"server auth usage", M_USAGES, 1, "ResourceSliceValidated", 0, "UsagesMismatch"},
    {"CSR labelled for another consumer", M_CSR_LABEL, 1, "ResourceSliceValidated", 0, "LabelMismatch"},
    {"TolerateNoHandshake not allowed", M_NH_NOT_ALLOWED, 0, "MalformedTenant", 0, "MalformedTenant"},
    {"TolerateNoHandshake allowed: key not compared", M_NH_ALLOWED, 1, "ResourceSliceValidated", 1,
     "ResourceSliceValidated"},
};

static void test_table(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519), *other = tg_key_generate(TG_KEY_ED25519);
    char *good = slice_csr_b64(key, SLICE, CONSUMER);
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *tenant = make_tenant(key), *slice = make_slice(good), *csr = make_csr(good);
        tg_approve_policy pol = {.signer_name = TG_SIGNER_NAME_KUBE};
        tg_approve_decision d;
        char *alt = NULL;
        int r;

        switch (cases[i].m) {
        case M_NONE: break;
        case M_NO_SLICE: json_object_put(slice); slice = NULL; break;
        case M_SLICE_DELETING: set_path(slice, "metadata", "deletionTimestamp", "2026-01-01T00:00:00Z"); break;
        case M_NOT_REPLICATED: set_label(slice, "liqo.io/replicated", NULL); break;
        case M_ORIGIN: set_label(slice, "liqo.io/originID", "cl-other"); break;
        case M_NO_CONSUMER: set_path(slice, "spec", "consumerClusterID", NULL); break;
        case M_BAD_CONSUMER: set_path(slice, "spec", "consumerClusterID", "Not_An_Id"); break;
        case M_NAMESPACE: set_path(slice, "metadata", "namespace", "default"); break;
        case M_NO_TENANT: json_object_put(tenant); tenant = NULL; break;
        case M_TENANT_DELETING: set_path(tenant, "metadata", "deletionTimestamp", "2026-01-01T00:00:00Z"); break;
        case M_DRAINED: set_path(tenant, "spec", "tenantCondition", "Drained"); break;
        case M_CORDONED: set_path(tenant, "spec", "tenantCondition", "Cordoned"); break;
        case M_OTHER_KEY: alt = slice_csr_b64(other, SLICE, CONSUMER); break;
        case M_OTHER_NAME: alt = slice_csr_b64(key, "otherpool", CONSUMER); break;
        case M_OTHER_CONSUMER_O: alt = slice_csr_b64(key, SLICE, "cl-other"); break;
        case M_NO_CSR: set_path(slice, "spec", "csr", NULL); break;
        case M_CSR_NOT_B64: set_path(slice, "spec", "csr", "not base64!"); break;
        case M_REQUEST_OTHER:
            alt = slice_csr_b64(other, SLICE, CONSUMER);   /* the same subject, another key */
            set_path(csr, "spec", "request", alt);
            free(alt);
            alt = NULL;
            break;
        case M_SIGNER: set_path(csr, "spec", "signerName", TG_SIGNER_NAME_OWN); break;
        case M_USAGES:
            json_object_array_add(tg_json_path(csr, "spec", "usages", NULL), json_object_new_string("server auth"));
            break;
        case M_CSR_LABEL: set_label(csr, "liqo.io/remote-cluster-id", "cl-other"); break;
        case M_NH_NOT_ALLOWED: set_path(tenant, "spec", "authzPolicy", "TolerateNoHandshake"); break;
        case M_NH_ALLOWED:
            set_path(tenant, "spec", "authzPolicy", "TolerateNoHandshake");
            pol.allow_no_handshake = 1;
            alt = slice_csr_b64(other, SLICE, CONSUMER);
            break;
        }
        if (alt) {   /* the slice carries (and the CSR object asks for) another request */
            set_path(slice, "spec", "csr", alt);
            set_path(csr, "spec", "request", alt);
        }
        r = tg_slice_auth_decide(slice, tenant, &pol, &d);
        printf("# %-40s auth    -> %d %s: %s\n", cases[i].name, d.approve, d.reason, d.message);
        assert_int_equal(r, cases[i].auth);
        assert_string_equal(d.reason, cases[i].auth_reason);
        assert_null(strchr(d.message, '\n'));
        r = tg_approve_decide_slice(csr, slice, tenant, &pol, &d);
        printf("# %-40s approve -> %d %s: %s\n", cases[i].name, d.approve, d.reason, d.message);
        assert_int_equal(r, cases[i].approve);
        assert_string_equal(d.reason, cases[i].approve_reason);
        assert_true(d.message[0] != '\0');
        free(alt);
        json_object_put(csr);
        json_object_put(slice);
        json_object_put(tenant);
    }
    free(good);
    EVP_PKEY_free(key);
    EVP_PKEY_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
