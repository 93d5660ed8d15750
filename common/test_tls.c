/* test_tls.c - the serving certificate store: good pairs load, bad ones are
 * refused and the loaded pair is kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/tls.h"

static char dir[] = "/tmp/tg-test-tls-XXXXXX";
static char cert_path[256], key_path[256];

/* A self-signed P-256 certificate valid for `days` days. */
static void mint(EVP_PKEY **key, X509 **cert, long days)
{
    *key = EVP_EC_gen("P-256");
    *cert = X509_new();
    assert_non_null(*key);
    ASN1_INTEGER_set(X509_get_serialNumber(*cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(*cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(*cert), days * 86400);
    X509_set_pubkey(*cert, *key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(*cert), "CN", MBSTRING_ASC,
                               (const unsigned char *)"localhost", -1, -1, 0);
    X509_set_issuer_name(*cert, X509_get_subject_name(*cert));
    assert_true(X509_sign(*cert, *key, EVP_sha256()) > 0);
}

static void write_pair(X509 *cert, EVP_PKEY *key)
{
    FILE *f = fopen(cert_path, "w");
    assert_non_null(f);
    PEM_write_X509(f, cert);
    fclose(f);
    f = fopen(key_path, "w");
    assert_non_null(f);
    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
}

static void test_reload_rules(void **state)
{
    tg_tls_store store;
    EVP_PKEY *k1, *k2;
    X509 *c1, *c2;
    time_t first = 0, now_after = 0;
    char err[512];

    mint(&k1, &c1, 10);
    mint(&k2, &c2, 20);
    assert_int_equal(tg_tls_store_init(&store, cert_path, key_path), 0);
    assert_false(tg_tls_store_loaded(&store, NULL));

    /* nothing there yet */
    unlink(cert_path);
    unlink(key_path);
    assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot open"));

    write_pair(c1, k1);
    assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), 0);
    assert_true(tg_tls_store_loaded(&store, &first));
    assert_true(first > time(NULL) + 9 * 86400 && first <= time(NULL) + 10 * 86400 + 5);

    /* each broken state is refused and the first pair kept */
    static const struct {
        const char *what;
        int which;                 /* 0: cert file, 1: key file */
        const char *text;
        const char *err_part;
    } broken[] = {
        {"garbage cert", 0, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "no PEM certificate"},
        {"empty cert", 0, "", "empty"},
        {"garbage key", 1, "not a key\n", "no PEM private key"},
    };
    for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
        write_pair(c1, k1);
        write_text(broken[i].which ? key_path : cert_path, broken[i].text, strlen(broken[i].text));
        assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), -1);
        if (!strstr(err, broken[i].err_part))
            fail_msg("%s: error \"%s\"", broken[i].what, err);
        assert_true(tg_tls_store_loaded(&store, &now_after));
        assert_true(now_after == first);
    }
    /* a cert with somebody else's key */
    write_pair(c2, k1);
    assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "does not match"));
    /* oversized file */
    {
        size_t big = TG_TLS_MAX_FILE + 10;
        char *junk = calloc(1, big);
        memset(junk, 'A', big);
        write_text(cert_path, junk, big);
        free(junk);
        assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "over 1 MiB"));
    }
    tg_tls_store_loaded(&store, &now_after);
    assert_true(now_after == first);

    /* a new good pair replaces it */
    write_pair(c2, k2);
    assert_int_equal(tg_tls_store_reload(&store, err, sizeof(err)), 0);
    tg_tls_store_loaded(&store, &now_after);
    assert_true(now_after > first + 9 * 86400);

    /* and the server context takes it */
    SSL_CTX *ctx = tg_tls_server_ctx(&store, 1);
    assert_non_null(ctx);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
    assert_true(SSL_CTX_get_options(ctx) & SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_free(ctx);

    tg_tls_store_dispose(&store);
    X509_free(c1);
    X509_free(c2);
    EVP_PKEY_free(k1);
    EVP_PKEY_free(k2);
}

static int setup(void **state)
{
    if (!mkdtemp(dir))
        return -1;
    snprintf(cert_path, sizeof(cert_path), "%s/tls.crt", dir);
    snprintf(key_path, sizeof(key_path), "%s/tls.key", dir);
    return 0;
}

static int teardown(void **state)
{
    unlink(cert_path);
    unlink(key_path);
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reload_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
