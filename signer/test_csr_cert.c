/* test_csr_cert.c - the CSR cache keeps a digest of each certificate
 * (csr_cert.h): what an issued CSR costs there, and the certificate read
 * back (from the caller's copy, or live) when a pass copies it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/test_heap.h"
#include "kube/cache.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"
#include "signer/controller.h"
#include "signer/csr_cert.h"
#include "signer/reconcile_common.h"
#include "signer/test_reconcile_fixture.h"

#define CSRS 1000
#define CSR_PATH "/apis/certificates.k8s.io/v1/certificatesigningrequests/"
/* Bytes an issued tenant CSR costs in the CSR cache as informers.c sets it
 * up (glibc, a 1,400-character certificate): 2,379 with the certificate
 * kept, 1,047 with its digest. */
#define CSR_ENTRY_MAX 1200

/* A certificate-sized base64 text (a kube-apiserver-client certificate
 * of an Ed25519 key, as PEM, is about 1,000-1,400 base64 characters). */
static void fake_cert(char *out, size_t len, unsigned i)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned x = 2166136261u ^ i;

    for (size_t k = 0; k < len; k++) {
        x = x * 16777619u + (unsigned)k;
        out[k] = alphabet[(x >> 16) & 63];
    }
    out[len] = '\0';
}

/* A tenant CSR as the signer makes it and the API server sends it, issued. */
static char *csr_text(unsigned i, const char *cert)
{
    char req[601], *text = malloc(8192);

    assert_non_null(text);
    fake_cert(req, sizeof(req) - 1, i + 100000);
    snprintf(text, 8192,
             "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\",\"metadata\":{"
             "\"name\":\"liqo-identity-%05u\",\"uid\":\"0a1b%04u-2c3d-4e5f-8a9b-0c1d2e3f4a5b\",\"resourceVersion\":\"%u\","
             "\"creationTimestamp\":\"2026-12-07T06:00:01Z\",\"labels\":{\"" TG_LABEL_TENANT_CSR "\":\"true\",\""
             TG_LABEL_REMOTE_CLUSTER_ID "\":\"cl%05u\",\"" TG_LABEL_TENANT_NS "\":\"liqo-tenant-cl%05u\",\""
             TG_LABEL_CSR_REQUEST "\":\"0123456789abcdef0123456789abcdef\",\"" TG_LABEL_CSR_CREATED_MS
             "\":\"1796623201000\",\"" TG_LABEL_CSR_TENANT_UID "\":\"6f1c%04u-3b2a-4c7e-9d1f-0a2b3c4d5e6f\"},"
             "\"managedFields\":[{\"manager\":\"tenantgate-signer\",\"operation\":\"Update\"}]},"
             "\"spec\":{\"request\":\"%s\",\"signerName\":\"kubernetes.io/kube-apiserver-client\","
             "\"usages\":[\"client auth\"],\"username\":\"system:serviceaccount:tenantgate:tenantgate-signer\"},"
             "\"status\":{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\",\"reason\":\"TenantgateApproved\","
             "\"message\":\"approved by tenantgate\",\"lastUpdateTime\":\"2026-12-07T06:00:01Z\"}],"
             "\"certificate\":\"%s\"}}",
             i, i, 2000 + i, i, i, i, req, cert);
    return text;
}

static void copy_cert(json_object *o, void *data)
{
    const char *c = tg_json_path_string(o, "status", "certificate", NULL);

    snprintf(data, 128, "%s", c ? c : "");
}

/* Issue 47: the CSR cache's bytes per issued CSR, set up as the signer's. */
static void test_csr_cache_bytes_per_object(void **state)
{
    char **texts = calloc(CSRS + 1, sizeof(*texts)), cert[1401], got[128];   /* NULL-terminated */
    size_t before, after;
    tg_cache *c;
    char *want;

    (void)state;
    assert_non_null(texts);
    for (unsigned i = 0; i < CSRS; i++) {
        fake_cert(cert, sizeof(cert) - 1, i);
        texts[i] = csr_text(i, cert);
    }
    tg_cache_free(rt_cache_as(TG_INF_CSRS, (const char *const[]){texts[0], NULL}));   /* warm up */
    before = tg_test_heap_in_use();
    tg_cert_recent_clear();
    c = rt_cache_as(TG_INF_CSRS, (const char *const *)texts);
    /* the ring of recent certificates is a fixed bound (test_certificate_from_the_watch),
     * not a cost per CSR */
    tg_cert_recent_clear();
    after = tg_test_heap_in_use();
    /* the texts stay alive across both readings: only the cache counts */
    printf("[ csr cache ] bytes per issued CSR: %zu\n", (after - before) / CSRS);
    assert_int_equal(tg_cache_count(c), CSRS);
    if ((after - before) / CSRS > CSR_ENTRY_MAX)
        fail_msg("an issued CSR costs %zu bytes in the CSR cache, over %d", (after - before) / CSRS, CSR_ENTRY_MAX);
    /* what the readers see: the certificate's digest */
    fake_cert(cert, sizeof(cert) - 1, 42);
    want = tg_cert_digest(cert);
    assert_int_equal(tg_cache_get(c, NULL, "liqo-identity-00042", copy_cert, got), 1);
    assert_string_equal(got, want);
    free(want);
    tg_cache_free(c);
    for (unsigned i = 0; i < CSRS; i++)
        free(texts[i]);
    free(texts);
}

/* tg_csr_certificate: from the caller's copy when the digests match (no
 * read), else live; a cache kept whole holds the certificate itself. */
static void test_certificate_from_digest(void **state)
{
    tg_api *api = fake_api_new();
    char cert[1401], other[1401], err[256], *out = NULL, *digest, *text;
    size_t gets;

    (void)state;
    fake_cert(cert, sizeof(cert) - 1, 1);
    fake_cert(other, sizeof(other) - 1, 2);
    digest = tg_cert_digest(cert);
    assert_non_null(digest);
    assert_int_equal(strlen(digest), TG_CERT_DIGEST_LEN);
    assert_null(tg_cert_digest(""));
    text = csr_text(1, cert);
    fake_api_put(api, CSR_PATH "liqo-identity-00001", text);

    gets = fake_api_ngets(api);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00001", digest, cert, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);
    assert_int_equal(fake_api_ngets(api), gets);   /* the Tenant's own: no read */
    free(out);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00001", digest, other, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);
    assert_int_equal(fake_api_ngets(api), gets + 1);   /* another: read live */
    free(out);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00001", digest, NULL, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);
    free(out);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00001", cert, NULL, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);   /* kept whole: itself */
    free(out);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-gone", digest, NULL, &out, err, sizeof(err)), -1);
    assert_null(out);
    assert_non_null(strstr(err, "404"));
    fake_api_put(api, CSR_PATH "liqo-identity-00002", "{\"metadata\":{\"name\":\"liqo-identity-00002\"},\"status\":{}}");
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00002", digest, NULL, &out, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no certificate"));
    free(text);
    free(digest);
    fake_api_free(api);
}

/* The certificate the watch brought is copied with no read, once; the
 * ring holds at most TG_CERT_RECENT_MAX of them. */
static void test_certificate_from_the_watch(void **state)
{
    tg_api *api = fake_api_new();
    char cert[1401], err[256], *out = NULL, *digest, *text;
    size_t gets;

    (void)state;
    tg_cert_recent_clear();
    fake_cert(cert, sizeof(cert) - 1, 7);
    text = csr_text(7, cert);
    fake_api_put(api, CSR_PATH "liqo-identity-00007", text);
    digest = tg_cert_digest_noted(cert);
    assert_non_null(digest);
    free(tg_cert_digest_noted(cert));   /* stored again (a relist): held once */
    assert_int_equal(tg_cert_recent_count(), 1);
    gets = fake_api_ngets(api);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00007", digest, NULL, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);
    assert_int_equal(fake_api_ngets(api), gets);   /* from the watch: no read */
    assert_int_equal(tg_cert_recent_count(), 0);   /* taken */
    free(out);
    assert_int_equal(tg_csr_certificate(api, "liqo-identity-00007", digest, NULL, &out, err, sizeof(err)), 0);
    assert_string_equal(out, cert);
    assert_int_equal(fake_api_ngets(api), gets + 1);   /* copied before: read live */
    free(out);
    for (unsigned i = 0; i < TG_CERT_RECENT_MAX + 10; i++) {
        fake_cert(cert, sizeof(cert) - 1, 100 + i);
        free(tg_cert_digest_noted(cert));
    }
    assert_int_equal(tg_cert_recent_count(), TG_CERT_RECENT_MAX);
    tg_cert_recent_clear();
    free(text);
    free(digest);
    fake_api_free(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_cache_bytes_per_object),
        cmocka_unit_test(test_certificate_from_digest),
        cmocka_unit_test(test_certificate_from_the_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
