/* test_render.c - the consumer kubeconfig (read back with the kube client's
 * own kubeconfig parser) and the renewal timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kube/kubeconfig.h"
#include "pki/csr.h"
#include "pki/issue.h"
#include "pki/keys.h"
#include "signer/kubeconfig_render.h"
#include "signer/renewal.h"

static const char CA[] = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
static const char CRT[] = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n";
static const char KEY[] = "-----BEGIN PRIVATE KEY-----\nMC4Ckey\n-----END PRIVATE KEY-----\n";

static void test_kubeconfig_roundtrip(void **state)
{
    tg_kubeconfig_in in = {
        .provider_id = "cl-provider", .server = "https://10.0.0.1:6443", .ca = (const unsigned char *)CA,
        .ca_len = sizeof(CA) - 1, .proxy_url = "http://proxy:3128", .cert = (const unsigned char *)CRT,
        .cert_len = sizeof(CRT) - 1, .key_pem = KEY, .key_len = sizeof(KEY) - 1, .user = "cl-consumer",
        .namespace_ = "liqo-tenant-cl-consumer",
    };
    tg_kube_config cfg;
    char err[256];
    size_t len = 0;
    char *y = tg_kubeconfig_render(&in, &len, err, sizeof(err));

    assert_non_null(y);
    assert_int_equal(strlen(y), len);
    assert_int_equal(tg_kube_config_parse(&cfg, y, len, NULL, NULL, err, sizeof(err)), 0);
    assert_string_equal(cfg.server, "https://10.0.0.1:6443");
    assert_string_equal(cfg.context, "cl-provider");
    assert_string_equal(cfg.namespace, "liqo-tenant-cl-consumer");
    assert_string_equal(cfg.proxy_url, "http://proxy:3128");
    assert_int_equal(cfg.ca_len, sizeof(CA) - 1);
    assert_memory_equal(cfg.ca, CA, cfg.ca_len);
    assert_int_equal(cfg.cert_len, sizeof(CRT) - 1);
    assert_memory_equal(cfg.cert, CRT, cfg.cert_len);
    assert_int_equal(cfg.key_len, sizeof(KEY) - 1);
    assert_memory_equal(cfg.key, KEY, cfg.key_len);
    tg_kube_config_free(&cfg);
    free(y);

    /* ResourceSlice identities: no namespace, no proxy, no CA (system trust) */
    in.namespace_ = NULL;
    in.proxy_url = "";
    in.ca = NULL;
    assert_non_null(y = tg_kubeconfig_render(&in, &len, err, sizeof(err)));
    assert_int_equal(tg_kube_config_parse(&cfg, y, len, NULL, NULL, err, sizeof(err)), 0);
    assert_null(cfg.namespace);
    assert_null(cfg.proxy_url);
    assert_null(cfg.ca);
    tg_kube_config_free(&cfg);
    free(y);
}

static void test_kubeconfig_missing(void **state)
{
    tg_kubeconfig_in in = {.provider_id = "p", .server = "https://x", .user = "c", .key_pem = KEY,
                           .key_len = sizeof(KEY) - 1};
    char err[256];

    assert_null(tg_kubeconfig_render(&in, NULL, err, sizeof(err)));
    assert_non_null(strstr(err, "signedCRT"));
    in.cert = (const unsigned char *)CRT;
    in.cert_len = sizeof(CRT) - 1;
    in.server = "";
    assert_null(tg_kubeconfig_render(&in, NULL, err, sizeof(err)));
    assert_non_null(strstr(err, "apiServer"));
}

static void test_renewal_timing(void **state)
{
    /* NotBefore is backdated 300 s: lifetime = span - min(300, span/2) */
    static const struct { time_t nb, na, now; int due; } t[] = {
        {0, 3300, 0, 0},
        {0, 3300, 2299, 0},
        {0, 3300, 2300, 0},      /* exactly NotAfter - lifetime/3 (3000/3): not yet */
        {0, 3300, 2301, 1},
        {0, 3300, 5000, 1},      /* expired */
        {700, 1600, 1400, 0},    /* expirationSeconds 600, the apiserver's minimum, issued at 1000 */
        {700, 1600, 1401, 1},
        /* a 90 s own-signer cert (span 390, issued at 300): due 25 s later, not at once */
        {0, 390, 300, 0},
        {0, 390, 325, 0},
        {0, 390, 326, 1},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        assert_int_equal(tg_renewal_due(t[i].nb, t[i].na, t[i].now), t[i].due);
    assert_int_equal(tg_renewal_at(700, 1600), 1400);
    assert_int_equal(tg_renewal_at(0, 390), 390 - 195 / 3);
}

/* Overdue: renew-at plus grace percent of the lifetime, before NotAfter for any allowed grace. */
static void test_renewal_overdue(void **state)
{
    static const struct { time_t nb, na, now; int pct, overdue; } t[] = {
        {0, 3300, 2301, 10, 0},      /* due (renew-at 2300), not overdue */
        {0, 3300, 2600, 10, 0},      /* exactly renew-at + 10 % of 3000 */
        {0, 3300, 2601, 10, 1},
        {0, 3300, 2301, 0, 1},       /* no grace: overdue once due */
        {0, 3300, 3199, 30, 0},      /* the largest grace: 3200, still before NotAfter */
        {0, 3300, 3201, 30, 1},
        {0, 3300, 3201, 90, 1},      /* clamped to 30 % */
        {0, 3300, 5000, 10, 1},      /* expired */
        /* a week (kube-apiserver CSRs are not backdated): renew-at day 4.67, overdue day 5.37 */
        {0, 604800, 460000, 10, 0},
        {0, 604800, 464000, 10, 1},
        /* the 90 s own-signer cert of the e2e bed (lifetime 195): renew-at 325, 10 % = 19 s */
        {0, 390, 344, 10, 0},
        {0, 390, 345, 10, 1},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (tg_renewal_overdue(t[i].nb, t[i].na, t[i].now, t[i].pct) != t[i].overdue)
            fail_msg("row %zu: overdue %d, want %d", i, !t[i].overdue, t[i].overdue);
        assert_true(tg_renewal_overdue_at(t[i].nb, t[i].na, t[i].pct) < t[i].na);
    }
    assert_int_equal(tg_renewal_overdue_at(0, 3300, 10), 2600);
}

/* NotBefore/NotAfter and the key read from a real certificate (own-signer issuing). */
static void test_cert_validity(void **state)
{
    EVP_PKEY *cakey = tg_key_generate(TG_KEY_ED25519), *ck = tg_key_generate(TG_KEY_ED25519);
    X509 *ca = X509_new();
    X509_NAME *n;
    tg_ca c = {0};
    X509_REQ *req;
    BIO *b;
    char *csr, *pem, err[256];
    size_t csr_len, pem_len;
    time_t nb, na, now = 1800000000;

    n = X509_get_subject_name(ca);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"test-ca", -1, -1, 0);
    X509_set_issuer_name(ca, n);
    X509_set_version(ca, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(ca), 1);
    X509_gmtime_adj(X509_getm_notBefore(ca), 0);
    X509_gmtime_adj(X509_getm_notAfter(ca), 86400L * 3650);
    X509_set_pubkey(ca, cakey);
    assert_true(X509_sign(ca, cakey, NULL) > 0);
    c.cert = ca;
    c.key = cakey;
    c.max_lifetime_seconds = 3600;
    csr = tg_csr_build(ck, "cl01", &csr_len);
    b = BIO_new_mem_buf(csr, (int)csr_len);
    req = PEM_read_bio_X509_REQ(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(req);
    pem = tg_issue_client_cert(&c, req, 0, now, &pem_len, err, sizeof(err));
    assert_non_null(pem);
    assert_int_equal(tg_cert_validity((unsigned char *)pem, pem_len, &nb, &na), 0);
    assert_int_equal(nb, now - 300);
    assert_true(na <= now + 3600);
    assert_int_equal(tg_cert_validity((const unsigned char *)"garbage", 7, &nb, &na), -1);
    /* the key it certifies: the request's, not the CA's, not garbage */
    assert_int_equal(tg_cert_key_is((unsigned char *)pem, pem_len, ck), 1);
    assert_int_equal(tg_cert_key_is((unsigned char *)pem, pem_len, cakey), 0);
    assert_int_equal(tg_cert_key_is((const unsigned char *)"garbage", 7, ck), -1);
    free(pem);
    free(csr);
    X509_REQ_free(req);
    X509_free(ca);
    EVP_PKEY_free(cakey);
    EVP_PKEY_free(ck);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_roundtrip),
        cmocka_unit_test(test_kubeconfig_missing),
        cmocka_unit_test(test_renewal_timing),
        cmocka_unit_test(test_renewal_overdue),
        cmocka_unit_test(test_cert_validity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
