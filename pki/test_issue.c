/* test_issue.c - own-signer certificates: every profile field, the clamp, and
 * that the result verifies against the CA as a TLS client certificate. */
#include "test_helpers.h"

#include <time.h>

#include <openssl/bn.h>
#include <openssl/objects.h>
#include <openssl/x509_vfy.h>

#include "pki/csr.h"
#include "pki/issue.h"
#include "pki/keys.h"

#define MAX_LIFETIME (30L * 24 * 3600)

static void add_ca_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;

    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    assert_non_null(ext);
    assert_true(X509_add_ext(cert, ext, -1));
    X509_EXTENSION_free(ext);
}

/* A self-signed CA valid for `days`, as PEM cert and PEM key. */
static int ca_without_ski;   /* make_ca leaves out the SKI extension */

static void make_ca(tg_key_type type, long days, int is_ca, char **cert_pem, size_t *cert_len, char **key_pem,
                    size_t *key_len)
{
    EVP_PKEY *key = tg_key_generate(type);
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    BIO *bio = BIO_new(BIO_s_mem());

    X509_set_version(cert, X509_VERSION_3);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"test operator CA", -1, -1, 0);
    X509_set_subject_name(cert, name);
    X509_set_issuer_name(cert, name);
    X509_NAME_free(name);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), days * 24 * 3600);
    X509_set_pubkey(cert, key);
    add_ca_ext(cert, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
    add_ca_ext(cert, NID_key_usage, is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
    if (!ca_without_ski)
        add_ca_ext(cert, NID_subject_key_identifier, "hash");
    assert_true(X509_sign(cert, key, type == TG_KEY_ED25519 ? NULL : EVP_sha256()) > 0);
    assert_true(PEM_write_bio_X509(bio, cert));
    *cert_pem = th_bio_string(bio, cert_len);
    *key_pem = tg_key_private_pem(key, key_len);
    X509_free(cert);
    EVP_PKEY_free(key);
}

static X509_REQ *approved_req(tg_key_type type, EVP_PKEY **key_out)
{
    EVP_PKEY *key = tg_key_generate(type);
    size_t len, spki_len;
    char *pem = tg_csr_build(key, "cl-consumer", &len);
    unsigned char *spki = th_spki(key, &spki_len);
    X509_REQ *req = NULL;
    tg_verdict v;

    tg_verdict_init(&v);
    assert_int_equal(tg_csr_check((const unsigned char *)pem, len, "cl-consumer", spki, spki_len, &v, &req), 0);
    free(pem);
    OPENSSL_free(spki);
    if (key_out)
        *key_out = key;
    else
        EVP_PKEY_free(key);
    return req;
}

static X509 *parse_cert(const char *pem, size_t len)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    assert_non_null(cert);
    return cert;
}

/* Seconds from `now` to an ASN1_TIME. */
static long offset_from(const ASN1_TIME *t, time_t now)
{
    ASN1_TIME *base = ASN1_TIME_set(NULL, now);
    int days, secs;

    assert_true(ASN1_TIME_diff(&days, &secs, base, t));
    ASN1_TIME_free(base);
    return (long)days * 86400 + secs;
}

static int verify_chain(X509 *ca, X509 *leaf)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok;

    X509_STORE_add_cert(store, ca);
    X509_STORE_CTX_init(ctx, store, leaf, NULL);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
    ok = X509_verify_cert(ctx);
    if (ok != 1)
        print_message("verify: %s\n", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return ok;
}

static void test_issue_profile(void **state)
{
    static const struct {
        tg_key_type ca_type, leaf_type;
        int sig_nid;
        int key_encipherment;
    } cases[] = {
        {TG_KEY_ED25519, TG_KEY_ED25519, NID_ED25519, 0},
        {TG_KEY_ED25519, TG_KEY_RSA2048, NID_ED25519, 1},
        {TG_KEY_RSA2048, TG_KEY_ECDSA_P256, NID_sha256WithRSAEncryption, 0},
        {TG_KEY_RSA2048, TG_KEY_RSA2048, NID_sha256WithRSAEncryption, 1},
        {TG_KEY_ECDSA_P256, TG_KEY_ED25519, NID_ecdsa_with_SHA256, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *ca_pem, *ca_key_pem, *pem, err[256] = "";
        size_t ca_len, ca_key_len, pem_len = 0;
        tg_ca ca;
        EVP_PKEY *leaf_key;
        X509_REQ *req = approved_req(cases[i].leaf_type, &leaf_key);
        time_t now = time(NULL);
        X509 *cert;
        const ASN1_OCTET_STRING *ca_ski, *ski;
        const ASN1_OCTET_STRING *aki_keyid;
        AUTHORITY_KEYID *aki;
        BASIC_CONSTRAINTS *bc;
        EXTENDED_KEY_USAGE *eku;
        BIGNUM *serial;
        int crit;

        make_ca(cases[i].ca_type, 365, 1, &ca_pem, &ca_len, &ca_key_pem, &ca_key_len);
        assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, MAX_LIFETIME), 0);
        pem = tg_issue_client_cert(&ca, req, 3600, now, &pem_len, err, sizeof(err));
        if (pem == NULL)
            fail_msg("issue: %s", err);
        assert_int_equal(strlen(pem), pem_len);
        cert = parse_cert(pem, pem_len);

        assert_int_equal(X509_get_version(cert), X509_VERSION_3);
        assert_int_equal(X509_get_signature_nid(cert), cases[i].sig_nid);
        assert_int_equal(X509_NAME_cmp(X509_get_subject_name(cert), X509_REQ_get_subject_name(req)), 0);
        assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(cert), X509_get_subject_name(ca.cert)), 0);
        assert_int_equal(EVP_PKEY_eq(X509_get0_pubkey(cert), leaf_key), 1);

        /* KU: digitalSignature (+keyEncipherment for RSA), critical, nothing else. */
        assert_true(X509_get_extension_flags(cert) & EXFLAG_KUSAGE);
        assert_int_equal(X509_get_key_usage(cert),
                         KU_DIGITAL_SIGNATURE | (cases[i].key_encipherment ? KU_KEY_ENCIPHERMENT : 0));
        assert_int_equal(X509_EXTENSION_get_critical(X509_get_ext(cert, X509_get_ext_by_NID(cert, NID_key_usage, -1))), 1);
        /* EKU: clientAuth only. */
        eku = X509_get_ext_d2i(cert, NID_ext_key_usage, &crit, NULL);
        assert_non_null(eku);
        assert_int_equal(sk_ASN1_OBJECT_num(eku), 1);
        assert_int_equal(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, 0)), NID_client_auth);
        EXTENDED_KEY_USAGE_free(eku);
        /* basicConstraints CA:FALSE, critical. */
        bc = X509_get_ext_d2i(cert, NID_basic_constraints, &crit, NULL);
        assert_non_null(bc);
        assert_int_equal(bc->ca, 0);
        assert_int_equal(crit, 1);
        BASIC_CONSTRAINTS_free(bc);
        assert_int_equal(X509_check_ca(cert), 0);
        /* AKI keyid == the CA's SKI; our own SKI present. */
        ca_ski = X509_get0_subject_key_id(ca.cert);
        assert_non_null(ca_ski);
        aki = X509_get_ext_d2i(cert, NID_authority_key_identifier, &crit, NULL);
        assert_non_null(aki);
        aki_keyid = aki->keyid;
        assert_non_null(aki_keyid);
        assert_int_equal(ASN1_OCTET_STRING_cmp(aki_keyid, ca_ski), 0);
        AUTHORITY_KEYID_free(aki);
        ski = X509_get0_subject_key_id(cert);
        assert_non_null(ski);
        assert_int_not_equal(ASN1_OCTET_STRING_cmp(ski, ca_ski), 0);
        /* Serial: positive, 128 bits. */
        serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), NULL);
        assert_false(BN_is_negative(serial));
        assert_int_equal(BN_num_bits(serial), 128);
        BN_free(serial);
        /* Validity: backdated 5 minutes, lifetime as requested. */
        assert_int_equal(offset_from(X509_get0_notBefore(cert), now), -TG_ISSUE_BACKDATE_SECONDS);
        assert_int_equal(offset_from(X509_get0_notAfter(cert), now), 3600);
        /* A TLS client certificate of this CA. */
        assert_int_equal(verify_chain(ca.cert, cert), 1);

        X509_free(cert);
        free(pem);
        X509_REQ_free(req);
        EVP_PKEY_free(leaf_key);
        tg_ca_clear(&ca);
        free(ca_pem);
        free(ca_key_pem);
    }
}

/* Two certificates never share a serial. */
static void test_serials_differ(void **state)
{
    char *ca_pem, *ca_key_pem, *a, *b, err[128];
    size_t ca_len, ca_key_len, a_len, b_len;
    tg_ca ca;
    X509_REQ *req = approved_req(TG_KEY_ED25519, NULL);
    X509 *ca_cert, *cb;

    make_ca(TG_KEY_ED25519, 365, 1, &ca_pem, &ca_len, &ca_key_pem, &ca_key_len);
    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, MAX_LIFETIME), 0);
    a = tg_issue_client_cert(&ca, req, 0, time(NULL), &a_len, err, sizeof(err));
    b = tg_issue_client_cert(&ca, req, 0, time(NULL), &b_len, err, sizeof(err));
    ca_cert = parse_cert(a, a_len);
    cb = parse_cert(b, b_len);
    assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(ca_cert), X509_get0_serialNumber(cb)), 0);
    X509_free(ca_cert);
    X509_free(cb);
    free(a);
    free(b);
    X509_REQ_free(req);
    tg_ca_clear(&ca);
    free(ca_pem);
    free(ca_key_pem);
}

/* NotAfter = now + min(requested, max), never beyond the CA. */
static void test_lifetime_clamp(void **state)
{
    static const struct {
        long ca_days;
        long max;
        long requested;
        long expect;
    } cases[] = {
        {365, MAX_LIFETIME, 3600, 3600},
        {365, MAX_LIFETIME, 0, MAX_LIFETIME},                  /* 0: the maximum */
        {365, MAX_LIFETIME, -5, MAX_LIFETIME},
        {365, MAX_LIFETIME, MAX_LIFETIME + 1, MAX_LIFETIME},   /* clamped */
        {365, MAX_LIFETIME, 10L * 365 * 86400, MAX_LIFETIME},
        {365, 600, 3600, 600},
        {1, 7L * 86400, 0, -1},                                /* CA ends first: its NotAfter */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *ca_pem, *ca_key_pem, *pem, err[128];
        size_t ca_len, ca_key_len, pem_len;
        tg_ca ca;
        X509_REQ *req = approved_req(TG_KEY_ED25519, NULL);
        time_t now = time(NULL);
        X509 *cert;

        make_ca(TG_KEY_ED25519, cases[i].ca_days, 1, &ca_pem, &ca_len, &ca_key_pem, &ca_key_len);
        assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, cases[i].max), 0);
        pem = tg_issue_client_cert(&ca, req, cases[i].requested, now, &pem_len, err, sizeof(err));
        assert_non_null(pem);
        cert = parse_cert(pem, pem_len);
        if (cases[i].expect >= 0)
            assert_int_equal(offset_from(X509_get0_notAfter(cert), now), cases[i].expect);
        else
            assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(cert), X509_get0_notAfter(ca.cert)), 0);
        assert_int_equal(offset_from(X509_get0_notBefore(cert), now), -TG_ISSUE_BACKDATE_SECONDS);
        X509_free(cert);
        free(pem);
        X509_REQ_free(req);
        tg_ca_clear(&ca);
        free(ca_pem);
        free(ca_key_pem);
    }
}

/* A CA without SKI still gets an AKI: SHA-1 of its public key (RFC 5280 4.2.1.2). */
static void test_ca_without_ski(void **state)
{
    char *ca_pem, *ca_key_pem, *pem, err[256] = "";
    size_t ca_len, ca_key_len, pem_len;
    unsigned char hash[EVP_MAX_MD_SIZE];
    unsigned int hash_len;
    tg_ca ca;
    X509_REQ *req = approved_req(TG_KEY_ED25519, NULL);
    X509 *cert;
    AUTHORITY_KEYID *aki;

    ca_without_ski = 1;
    make_ca(TG_KEY_ED25519, 365, 1, &ca_pem, &ca_len, &ca_key_pem, &ca_key_len);
    ca_without_ski = 0;
    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, MAX_LIFETIME), 0);
    assert_null(X509_get0_subject_key_id(ca.cert));
    pem = tg_issue_client_cert(&ca, req, 0, time(NULL), &pem_len, err, sizeof(err));
    if (pem == NULL)
        fail_msg("issue: %s", err);
    cert = parse_cert(pem, pem_len);
    aki = X509_get_ext_d2i(cert, NID_authority_key_identifier, NULL, NULL);
    assert_non_null(aki);
    assert_true(X509_pubkey_digest(ca.cert, EVP_sha1(), hash, &hash_len));
    assert_int_equal(ASN1_STRING_length(aki->keyid), hash_len);
    assert_memory_equal(ASN1_STRING_get0_data(aki->keyid), hash, hash_len);
    assert_int_equal(verify_chain(ca.cert, cert), 1);
    AUTHORITY_KEYID_free(aki);
    X509_free(cert);
    free(pem);
    X509_REQ_free(req);
    tg_ca_clear(&ca);
    free(ca_pem);
    free(ca_key_pem);
}

static void test_ca_load_errors(void **state)
{
    char *ca_pem, *ca_key_pem, *other_pem, *other_key_pem, *leaf_pem, *leaf_key_pem;
    size_t ca_len, ca_key_len, other_len, other_key_len, leaf_len, leaf_key_len;
    tg_ca ca;

    make_ca(TG_KEY_ED25519, 365, 1, &ca_pem, &ca_len, &ca_key_pem, &ca_key_len);
    make_ca(TG_KEY_ED25519, 365, 1, &other_pem, &other_len, &other_key_pem, &other_key_len);
    make_ca(TG_KEY_ED25519, 365, 0, &leaf_pem, &leaf_len, &leaf_key_pem, &leaf_key_len);

    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, 60), 0);
    tg_ca_clear(&ca);
    /* Key of another CA. */
    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, other_key_pem, other_key_len, 60), -1);
    assert_null(ca.cert);
    /* Not a CA. */
    assert_int_equal(tg_ca_load(&ca, leaf_pem, leaf_len, leaf_key_pem, leaf_key_len, 60), -1);
    /* No lifetime. */
    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, ca_key_pem, ca_key_len, 0), -1);
    /* Garbage. */
    assert_int_equal(tg_ca_load(&ca, "x", 1, ca_key_pem, ca_key_len, 60), -1);
    assert_int_equal(tg_ca_load(&ca, ca_pem, ca_len, "x", 1, 60), -1);
    assert_null(ca.key);

    free(ca_pem);
    free(ca_key_pem);
    free(other_pem);
    free(other_key_pem);
    free(leaf_pem);
    free(leaf_key_pem);
}

static void test_issue_bad_input(void **state)
{
    char err[128] = "";
    tg_ca empty = {0};

    assert_null(tg_issue_client_cert(&empty, NULL, 0, time(NULL), NULL, err, sizeof(err)));
    assert_non_null(strstr(err, "expected"));
    assert_null(tg_issue_client_cert(NULL, NULL, 0, time(NULL), NULL, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_profile),
        cmocka_unit_test(test_serials_differ),
        cmocka_unit_test(test_lifetime_clamp),
        cmocka_unit_test(test_ca_without_ski),
        cmocka_unit_test(test_ca_load_errors),
        cmocka_unit_test(test_issue_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
