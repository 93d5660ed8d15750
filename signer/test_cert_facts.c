/* test_cert_facts.c - the memo reads a certificate and a CSR as parsing them
 * would, and a second look at the same texts parses nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kube/base64.h"
#include "signer/cert_facts.h"

#define GROUP TG_CERT_GROUP_PREFIX "slice-a-0123456789ab:0123456789abcdef0123456789abcdef"

static EVP_PKEY *ed25519(void)
{
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);

    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_int_equal(EVP_PKEY_keygen(ctx, &k), 1);
    EVP_PKEY_CTX_free(ctx);
    return k;
}

static char *b64_of_bio(BIO *b)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    char *out = tg_base64_encode((const unsigned char *)data, (size_t)n, NULL);

    BIO_free(b);
    return out;
}

static void subject(X509_NAME *name, const char *group)
{
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"slice-a-0123456789ab", -1, -1, 0);
    /* UTF8String as given: a group is longer than the 64 characters
     * OpenSSL's string table allows an O, which Kubernetes does not limit */
    if (group)
        assert_int_equal(X509_NAME_add_entry_by_txt(name, "O", V_ASN1_UTF8STRING, (const unsigned char *)group, -1, -1, 0), 1);
}

/* base64 PEM of a CSR for key */
static char *csr_b64(EVP_PKEY *key)
{
    X509_REQ *req = X509_REQ_new();
    BIO *b = BIO_new(BIO_s_mem());

    subject(X509_REQ_get_subject_name(req), GROUP);
    X509_REQ_set_pubkey(req, key);
    assert_true(X509_REQ_sign(req, key, NULL) > 0);
    PEM_write_bio_X509_REQ(b, req);
    X509_REQ_free(req);
    return b64_of_bio(b);
}

/* base64 PEM of a certificate for key, valid [now - 60, now + valid_s), self-signed */
static char *cert_b64(EVP_PKEY *key, const char *group, long valid_s)
{
    X509 *x = X509_new();
    BIO *b = BIO_new(BIO_s_mem());

    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), valid_s);
    subject(X509_get_subject_name(x), group);
    X509_set_issuer_name(x, X509_get_subject_name(x));
    X509_set_pubkey(x, key);
    assert_true(X509_sign(x, key, NULL) > 0);
    PEM_write_bio_X509(b, x);
    X509_free(x);
    return b64_of_bio(b);
}

/* A P-256 key whose public point is written compressed or not. */
static EVP_PKEY *p256(const char *point_format)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");

    assert_non_null(k);
    assert_int_equal(EVP_PKEY_set_utf8_string_param(k, "point-format", point_format), 1);
    return k;
}

typedef struct fixture {
    EVP_PKEY *key, *other, *ec;
    char *csr, *other_csr, *cert, *plain_cert;
    char *ec_csr, *ec_cert;   /* one EC key: the CSR's point compressed, the certificate's not */
    tg_cert_memo *memo;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    f->key = ed25519();
    f->other = ed25519();
    f->csr = csr_b64(f->key);
    f->other_csr = csr_b64(f->other);
    f->cert = cert_b64(f->key, GROUP, 3600);
    f->plain_cert = cert_b64(f->key, NULL, 3600);
    f->ec = p256("compressed");
    f->ec_csr = csr_b64(f->ec);
    assert_int_equal(EVP_PKEY_set_utf8_string_param(f->ec, "point-format", "uncompressed"), 1);
    f->ec_cert = cert_b64(f->ec, GROUP, 3600);
    f->memo = tg_cert_memo_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    EVP_PKEY_free(f->key);
    EVP_PKEY_free(f->other);
    EVP_PKEY_free(f->ec);
    free(f->ec_csr);
    free(f->ec_cert);
    free(f->csr);
    free(f->other_csr);
    free(f->cert);
    free(f->plain_cert);
    tg_cert_memo_free(f->memo);
    free(f);
    return 0;
}

/* One row: a certificate against a CSR, and what must be read of them. */
typedef struct facts_case {
    const char *what;
    int cert, csr;             /* 0: fixture's own; 1: the other (a certificate without group; another key's CSR); 2: garbage;
                                * 3: the EC key's (the same key in two encodings) */
    int parses, certifies, group_rc;
} facts_case;

static const facts_case facts_cases[] = {
    {"its own CSR's certificate, with a group", 0, 0, 1, 1, 1},
    {"a certificate without a group", 1, 0, 1, 1, 0},
    {"another key's CSR", 0, 1, 1, 0, 1},
    {"a CSR that does not parse", 0, 2, 1, -1, 1},
    {"a certificate that does not parse", 2, 0, 0, 0, -1},
    {"the same EC key, compressed in the CSR", 3, 3, 1, 1, 1},
    {"an EC certificate against an Ed25519 CSR", 3, 0, 1, 0, 1},
};

static void test_facts_read_as_parsing_would(void **state)
{
    fixture *f = *state;
    time_t now = time(NULL);

    for (size_t i = 0; i < sizeof(facts_cases) / sizeof(facts_cases[0]); i++) {
        const facts_case *fc = &facts_cases[i];
        const char *cert = fc->cert == 0   ? f->cert
                           : fc->cert == 1 ? f->plain_cert
                           : fc->cert == 3 ? f->ec_cert
                                           : "bm90IGEgY2VydGlmaWNhdGU=";
        const char *csr = fc->csr == 0 ? f->csr : fc->csr == 1 ? f->other_csr : fc->csr == 3 ? f->ec_csr : "bm90IGEgQ1NS";

        for (int look = 0; look < 2; look++) {   /* parsed, then from the memo: the same */
            tg_cert_facts got;
            tg_cert_facts_get(f->memo, cert, csr, &got);
            print_message("%s, look %d: parses %d certifies %d group %d\n", fc->what, look, got.parses,
                          got.certifies_csr_key, got.group_rc);
            assert_int_equal(got.parses, fc->parses);
            assert_int_equal(got.certifies_csr_key, fc->certifies);
            assert_int_equal(got.group_rc, fc->group_rc);
            if (fc->parses) {
                assert_true(got.not_before <= now - 59 && got.not_before >= now - 61);
                assert_true(got.not_after >= now + 3599 && got.not_after <= now + 3601);
                assert_int_equal(got.group_not_after, (int64_t)got.not_after);
                assert_string_equal(got.cn, "slice-a-0123456789ab");
                assert_string_equal(got.group, fc->group_rc == 1 ? GROUP : "");
            }
        }
    }
}

static void test_a_second_look_parses_nothing(void **state)
{
    fixture *f = *state;
    tg_cert_facts a, b;
    unsigned long before;

    tg_cert_facts_get(f->memo, f->cert, f->csr, &a);
    assert_int_equal(tg_cert_memo_csr_parses(f->memo, f->csr), 1);
    before = tg_cert_memo_parses(f->memo);
    for (int i = 0; i < 10; i++) {
        tg_cert_facts_get(f->memo, f->cert, f->csr, &b);
        assert_int_equal(tg_cert_memo_csr_parses(f->memo, f->csr), 1);
    }
    assert_int_equal(tg_cert_memo_parses(f->memo), before);
    assert_memory_equal(&a, &b, sizeof(a));
    /* the same certificate against another CSR is another question */
    tg_cert_facts_get(f->memo, f->cert, f->other_csr, &b);
    assert_int_equal(b.certifies_csr_key, 0);
    assert_int_equal(tg_cert_memo_parses(f->memo), before + 1);
}

static void test_many_texts_replace_entries_but_never_mislead(void **state)
{
    fixture *f = *state;
    char junk[64];
    tg_cert_facts got;

    tg_cert_facts_get(f->memo, f->cert, f->csr, &got);
    for (int i = 0; i < 5000; i++) {   /* more than the memo holds */
        snprintf(junk, sizeof(junk), "bm90IGEgQ1NS%d", i);
        assert_int_equal(tg_cert_memo_csr_parses(f->memo, junk), 0);
    }
    assert_int_equal(tg_cert_memo_csr_parses(f->memo, f->csr), 1);
    tg_cert_facts_get(f->memo, f->cert, f->csr, &got);
    assert_int_equal(got.certifies_csr_key, 1);
    assert_int_equal(got.group_rc, 1);
}

static void test_no_memo_parses_every_time(void **state)
{
    fixture *f = *state;
    tg_cert_facts got;

    tg_cert_facts_get(NULL, f->cert, f->csr, &got);
    assert_int_equal(got.parses, 1);
    assert_int_equal(got.certifies_csr_key, 1);
    assert_int_equal(tg_cert_memo_csr_parses(NULL, f->csr), 1);
    assert_int_equal(tg_cert_memo_csr_parses(NULL, NULL), 0);
    tg_cert_facts_get(f->memo, NULL, f->csr, &got);
    assert_int_equal(got.parses, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_facts_read_as_parsing_would, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_second_look_parses_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_texts_replace_entries_but_never_mislead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_memo_parses_every_time, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
