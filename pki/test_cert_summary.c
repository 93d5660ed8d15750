/* test_cert_summary.c - a certificate's summary reads what OpenSSL's own
 * parse of it says (d2i_X509: validity, subject, its key's encoding),
 * for each key type, with and without groups and extensions, and the
 * block PEM_read_bio_X509 would pick. */
#define _GNU_SOURCE   /* timegm */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "pki/cert_group.h"
#include "pki/cert_summary.h"
#include "pki/keys.h"

#define ID "3114c478-173d-4344-8f01-eb21efb95aea"
#define HEX "0123456789abcdef0123456789abcdef"
#define G(id, hex) TG_CERT_GROUP_PREFIX id ":" hex

typedef struct cert_case {
    const char *what;
    tg_key_type key;
    const char *orgs[3];
    int extensions;
    const char *before, *after;   /* text around the PEM block */
} cert_case;

static const cert_case cases[] = {
    {"Ed25519, with a group", TG_KEY_ED25519, {"liqo.io", G(ID, HEX)}, 0, "", ""},
    {"Ed25519, no group", TG_KEY_ED25519, {"liqo.io"}, 0, "", ""},
    {"two groups", TG_KEY_ED25519, {G(ID, HEX), G(ID, "ffffffffffffffffffffffffffffffff")}, 0, "", ""},
    {"ECDSA P-256, v3 extensions", TG_KEY_ECDSA_P256, {G(ID, HEX)}, 1, "", ""},
    {"RSA 2048, v3 extensions", TG_KEY_RSA2048, {"liqo.io"}, 1, "", ""},
    {"text before, a chain after", TG_KEY_ED25519, {G(ID, HEX)}, 1, "subject=x\n", "self"},
};

/* A self-signed certificate as the case says, valid until 2,000,000,000. */
static X509 *make(const cert_case *c)
{
    EVP_PKEY *key = tg_key_generate(c->key);
    X509 *x = X509_new();
    X509_NAME *name = X509_get_subject_name(x);
    X509V3_CTX ctx;

    for (size_t i = 0; c->orgs[i]; i++)
        assert_true(X509_NAME_add_entry_by_NID(name, NID_organizationName, V_ASN1_UTF8STRING,
                                               (const unsigned char *)c->orgs[i], -1, -1, 0));
    assert_true(X509_NAME_add_entry_by_NID(name, NID_commonName, V_ASN1_UTF8STRING, (const unsigned char *)ID, -1,
                                           -1, 0));
    X509_set_issuer_name(x, name);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 42);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    ASN1_TIME_set(X509_getm_notAfter(x), 2000000000);
    X509_set_pubkey(x, key);
    if (c->extensions) {
        X509_set_version(x, 2);
        X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
        X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_ext_key_usage, "clientAuth");
        assert_non_null(ext);
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    assert_true(X509_sign(x, key, NULL) > 0);
    EVP_PKEY_free(key);
    return x;
}

/* before, the PEM of x, and after ("self": x's PEM once more, a chain). */
static char *pem_of(X509 *x, const cert_case *c, size_t *len)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data, *out;
    long n;

    BIO_puts(b, c->before);
    PEM_write_bio_X509(b, x);
    if (strcmp(c->after, "self") == 0) {
        X509 *other = make(&cases[0]);
        PEM_write_bio_X509(b, other);
        X509_free(other);
    } else {
        BIO_puts(b, c->after);
    }
    n = BIO_get_mem_data(b, &data);
    out = strndup(data, (size_t)n);
    *len = (size_t)n;
    BIO_free(b);
    return out;
}

/* What d2i_X509's subject says: the first CN, and the group-form Os
 * (1 one, 0 none, -1 several). */
static int subject_of(X509 *x, char *cn, size_t cn_len, char *group, size_t group_len)
{
    X509_NAME *name = X509_get_subject_name(x);
    int count = 0;

    if (X509_NAME_get_text_by_NID(name, NID_commonName, cn, (int)cn_len) < 0)
        cn[0] = '\0';
    group[0] = '\0';
    for (int i = 0; i < X509_NAME_entry_count(name); i++)
        count += tg_cert_group_name_entry(X509_NAME_get_entry(name, i), group, group_len);
    return count > 1 ? -1 : count;
}

static void test_reads_as_openssl_does(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        X509 *x = make(&cases[i]);
        size_t len;
        char *pem = pem_of(x, &cases[i], &len);
        BIO *b = BIO_new_mem_buf(pem, (int)len);
        X509 *parsed = PEM_read_bio_X509(b, NULL, NULL, NULL);
        char cn[256], group[TG_CERT_GROUP_MAX];
        time_t na = 0;
        unsigned char *spki = NULL;
        int spki_len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(parsed), &spki);
        int rc = subject_of(parsed, cn, sizeof(cn), group, sizeof(group));
        tg_cert_summary s;
        struct tm tm;

        assert_int_equal(ASN1_TIME_to_tm(X509_get0_notAfter(parsed), &tm), 1);
        na = timegm(&tm);

        print_message("%s\n", cases[i].what);
        assert_int_equal(tg_cert_summary_read(pem, len, &s), 0);
        assert_int_equal(s.group_rc, rc);
        assert_string_equal(s.cn, cn);
        if (rc != -1)
            assert_string_equal(s.group, group);
        assert_int_equal(s.not_after, na);
        assert_int_equal((int64_t)s.not_after, 2000000000);
        assert_true(s.not_before < time(NULL) && s.not_before > time(NULL) - 120);
        assert_int_equal(s.spki_len, (size_t)spki_len);
        assert_memory_equal(s.spki, spki, (size_t)spki_len);
        tg_cert_summary_clear(&s);
        OPENSSL_free(spki);
        X509_free(parsed);
        BIO_free(b);
        free(pem);
        X509_free(x);
    }
}

static void test_unreadable(void **state)
{
    static const char *const texts[] = {
        "", "junk",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
    };
    tg_cert_summary s;

    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        assert_int_equal(tg_cert_summary_read(texts[i], strlen(texts[i]), &s), -1);
        assert_null(s.spki);
        assert_int_equal(s.not_after, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_as_openssl_does),
        cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
