/* test_keys.c - key generation, the authentication-keys formats, and the two
 * forms of spec.publicKey with the strength policy. */
#include "test_helpers.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/rsa.h>
#include <openssl/err.h>

#include "pki/keys.h"

static void test_key_type_parse(void **state)
{
    static const struct {
        const char *name;
        int rc;
        tg_key_type type;
    } cases[] = {
        {"ed25519", 0, TG_KEY_ED25519}, {"rsa2048", 0, TG_KEY_RSA2048}, {"ecdsa-p256", 0, TG_KEY_ECDSA_P256},
        /* one spelling everywhere: the old keygen names and near misses are refused */
        {"rsa", -1, 0},                 {"ecdsa", -1, 0},              {"RSA2048", -1, 0},
        {"rsa4096", -1, 0},             {"ecdsa-p384", -1, 0},         {"", -1, 0},
        {"ED25519x", -1, 0},            {"dsa", -1, 0},
    };
    tg_key_type t;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        t = (tg_key_type)99;
        assert_int_equal(tg_key_type_parse(cases[i].name, &t), cases[i].rc);
        if (cases[i].rc == 0) {
            assert_int_equal(t, cases[i].type);
            assert_string_equal(tg_key_type_name(t), cases[i].name);
        }
    }
    assert_int_equal(tg_key_type_parse(NULL, &t), -1);
}

/* generate -> PKCS#8 PEM -> parse back -> same key; PKIX PEM -> spec.publicKey. */
static void test_generate_round_trip(void **state)
{
    static const struct {
        tg_key_type type;
        int base_id;
        int bits;
    } cases[] = {
        {TG_KEY_ED25519, EVP_PKEY_ED25519, 256},
        {TG_KEY_RSA2048, EVP_PKEY_RSA, 2048},
        {TG_KEY_ECDSA_P256, EVP_PKEY_EC, 256},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key = tg_key_generate(cases[i].type), *back, *pub;
        size_t priv_len = 0, pub_len = 0, der_len = 0, der2_len = 0;
        char *priv_pem, *pub_pem;
        unsigned char *der, *der2;
        int was_raw = -1;
        tg_verdict v;

        tg_key_type seen = (tg_key_type)99;

        assert_non_null(key);
        assert_int_equal(EVP_PKEY_get_base_id(key), cases[i].base_id);
        assert_int_equal(EVP_PKEY_get_bits(key), cases[i].bits);
        assert_int_equal(tg_key_type_of(key, &seen), 0);
        assert_int_equal(seen, cases[i].type);

        priv_pem = tg_key_private_pem(key, &priv_len);
        assert_non_null(priv_pem);
        assert_int_equal(strlen(priv_pem), priv_len);
        assert_non_null(strstr(priv_pem, "-----BEGIN PRIVATE KEY-----\n"));   /* PKCS#8, unencrypted */
        back = tg_key_private_from_pem(priv_pem, priv_len);
        assert_non_null(back);
        assert_int_equal(EVP_PKEY_eq(key, back), 1);

        pub_pem = tg_key_public_pem(key, &pub_len);
        assert_non_null(pub_pem);
        assert_int_equal(strncmp(pub_pem, "-----BEGIN PUBLIC KEY-----\n", 27), 0);
        tg_verdict_init(&v);
        pub = tg_public_key_parse((const unsigned char *)pub_pem, pub_len, &was_raw, &v);
        assert_non_null(pub);
        assert_int_equal(was_raw, 0);
        assert_int_equal(EVP_PKEY_eq(key, pub), 1);

        der = tg_key_public_der(key, &der_len);
        der2 = tg_key_public_der(pub, &der2_len);
        assert_non_null(der);
        assert_int_equal(der_len, der2_len);
        assert_memory_equal(der, der2, der_len);

        free(der);
        free(der2);
        free(priv_pem);
        free(pub_pem);
        EVP_PKEY_free(pub);
        EVP_PKEY_free(back);
        EVP_PKEY_free(key);
    }
}

static void test_two_keys_differ(void **state)
{
    EVP_PKEY *a = tg_key_generate(TG_KEY_ED25519), *b = tg_key_generate(TG_KEY_ED25519);

    assert_int_equal(EVP_PKEY_eq(a, b), 0);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

static void test_private_pem_garbage(void **state)
{
    static const char *const cases[] = {
        "",
        "not a key",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA4v2OKH2tl3m47NRm8jn/5WCFWViCigOHx4LFaMxfQWw=\n-----END PUBLIC KEY-----\n",
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_null(tg_key_private_from_pem(cases[i], strlen(cases[i])));
    assert_null(tg_key_private_from_pem(NULL, 10));
}

/* An encrypted key must fail, not prompt for a passphrase on the terminal. */
static void test_private_pem_encrypted(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem;
    size_t len;

    assert_true(PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_128_cbc(), "pw", 2, NULL, NULL));
    pem = th_bio_string(bio, &len);
    assert_null(tg_key_private_from_pem(pem, len));
    free(pem);
    EVP_PKEY_free(key);
}

static void test_raw_public_key(void **state)
{
    unsigned char raw[32];
    size_t raw_len = sizeof(raw);
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519), *pub;
    int was_raw = 0;
    tg_verdict v;

    assert_true(EVP_PKEY_get_raw_public_key(key, raw, &raw_len));
    tg_verdict_init(&v);
    pub = tg_public_key_parse(raw, sizeof(raw), &was_raw, &v);
    assert_non_null(pub);
    assert_int_equal(was_raw, 1);
    assert_int_equal(EVP_PKEY_eq(key, pub), 1);
    assert_int_equal(v.reason, TG_ACCEPTED);
    EVP_PKEY_free(pub);
    EVP_PKEY_free(key);
}

/* The form a Tenant gets: raw 32 bytes only for Ed25519 asked raw; every
 * result parses back to the same key. */
static void test_public_key_spec_forms(void **state)
{
    static const struct {
        tg_key_type type;
        tg_pubkey_format format;
        int raw;
    } cases[] = {
        {TG_KEY_ED25519, TG_PUBKEY_RAW, 1},   {TG_KEY_ED25519, TG_PUBKEY_PEM, 0},
        {TG_KEY_ECDSA_P256, TG_PUBKEY_RAW, 0}, {TG_KEY_ECDSA_P256, TG_PUBKEY_PEM, 0},
        {TG_KEY_RSA2048, TG_PUBKEY_RAW, 0},   {TG_KEY_RSA2048, TG_PUBKEY_PEM, 0},
    };
    tg_pubkey_format f;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key = tg_key_generate(cases[i].type), *back;
        size_t len = 0;
        unsigned char *spec = tg_key_public_spec(key, cases[i].format, &len);
        int was_raw = -1;
        tg_verdict v;

        assert_non_null(spec);
        if (cases[i].raw)
            assert_int_equal(len, 32);
        else
            assert_memory_equal(spec, "-----BEGIN PUBLIC KEY-----", 26);
        tg_verdict_init(&v);
        back = tg_public_key_parse(spec, len, &was_raw, &v);
        assert_non_null(back);
        assert_int_equal(was_raw, cases[i].raw);
        assert_int_equal(EVP_PKEY_eq(key, back), 1);
        EVP_PKEY_free(back);
        free(spec);
        EVP_PKEY_free(key);
    }
    assert_null(tg_key_public_spec(NULL, TG_PUBKEY_RAW, NULL));
    assert_int_equal(tg_pubkey_format_parse("raw", &f), 0);
    assert_int_equal(f, TG_PUBKEY_RAW);
    assert_int_equal(tg_pubkey_format_parse("pem", &f), 0);
    assert_int_equal(f, TG_PUBKEY_PEM);
    assert_int_equal(tg_pubkey_format_parse("PEM", &f), -1);
    assert_int_equal(tg_pubkey_format_parse(NULL, &f), -1);
}

/* spec.publicKey PEM of a key produced by OpenSSL. */
static char *pubkey_pem(EVP_PKEY *key, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio_PUBKEY(bio, key));
    return th_bio_string(bio, len);
}

/* Keys OpenSSL can make but the protocol must refuse, and the reason. */
static void test_public_key_policy(void **state)
{
    static const struct {
        const char *desc;
        const char *alg;
        const char *param;   /* curve name, or NULL */
        size_t rsa_bits;
        tg_reason reason;
        const char *found;   /* in the message */
        int type;            /* tg_key_type_of, or -1: none of the three --key-type values */
    } cases[] = {
        {"RSA-1024", "RSA", NULL, 1024, TG_WEAK_KEY, "found 1024 bits", -1},
        {"RSA-2048", "RSA", NULL, 2048, TG_ACCEPTED, NULL, TG_KEY_RSA2048},
        {"RSA-3072", "RSA", NULL, 3072, TG_ACCEPTED, NULL, -1},
        {"P-256", "EC", "P-256", 0, TG_ACCEPTED, NULL, TG_KEY_ECDSA_P256},
        {"P-384", "EC", "P-384", 0, TG_ACCEPTED, NULL, -1},
        {"P-521", "EC", "P-521", 0, TG_WEAK_KEY, "secp521r1", -1},
        {"secp256k1", "EC", "secp256k1", 0, TG_WEAK_KEY, "secp256k1", -1},
        {"Ed25519", "ED25519", NULL, 0, TG_ACCEPTED, NULL, TG_KEY_ED25519},
        {"Ed448", "ED448", NULL, 0, TG_INVALID_PUBLIC_KEY, "ED448", -1},
        {"X25519", "X25519", NULL, 0, TG_INVALID_PUBLIC_KEY, "X25519", -1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key, *pub;
        char *pem;
        size_t len;
        int was_raw = -1;
        tg_verdict v, direct;
        tg_key_type seen;

        if (cases[i].rsa_bits)
            key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", cases[i].rsa_bits);
        else if (cases[i].param)
            key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", cases[i].param);
        else
            key = EVP_PKEY_Q_keygen(NULL, NULL, cases[i].alg);
        assert_non_null(key);
        /* the same policy on a key met elsewhere (a CSR's), named as the caller says */
        tg_verdict_init(&direct);
        assert_int_equal(tg_key_check_strength(key, "the CSR's key", &direct),
                         cases[i].reason == TG_ACCEPTED ? 0 : -1);
        assert_int_equal(direct.reason, cases[i].reason);
        if (cases[i].reason != TG_ACCEPTED)
            assert_non_null(strstr(direct.message, "the CSR's key: expected"));
        assert_int_equal(tg_key_type_of(key, &seen), cases[i].type < 0 ? -1 : 0);
        if (cases[i].type >= 0)
            assert_int_equal(seen, cases[i].type);
        pem = pubkey_pem(key, &len);
        tg_verdict_init(&v);
        pub = tg_public_key_parse((const unsigned char *)pem, len, &was_raw, &v);
        print_message("%s -> %s: %s\n", cases[i].desc, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        if (cases[i].reason == TG_ACCEPTED) {
            assert_non_null(pub);
            assert_int_equal(EVP_PKEY_eq(key, pub), 1);
        } else {
            assert_null(pub);
            assert_non_null(strstr(v.message, "expected"));
            assert_non_null(strstr(v.message, cases[i].found));
        }
        EVP_PKEY_free(pub);
        EVP_PKEY_free(key);
        free(pem);
    }
}

/* EC parameters spelled out instead of a named curve: refused as weak. */
static void test_public_key_explicit_curve(void **state)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), *pub;
    char *pem;
    size_t len;
    int was_raw;
    tg_verdict v;

    assert_true(EVP_PKEY_set_utf8_string_param(key, OSSL_PKEY_PARAM_EC_ENCODING, OSSL_PKEY_EC_ENCODING_EXPLICIT));
    pem = pubkey_pem(key, &len);
    tg_verdict_init(&v);
    pub = tg_public_key_parse((const unsigned char *)pem, len, &was_raw, &v);
    assert_null(pub);
    assert_int_equal(v.reason, TG_WEAK_KEY);
    assert_non_null(strstr(v.message, "explicit"));
    free(pem);
    EVP_PKEY_free(key);
}

/* Malformed spec.publicKey text: InvalidPublicKey, with what was found. */
static void test_public_key_malformed(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    size_t good_len;
    char *good = tg_key_public_pem(key, &good_len);
    char *cert_label, *trail, *lead, *twice, *truncated, *headers, *crlf;
    struct {
        const char *desc;
        const char *data;
        size_t len;
        const char *found;
    } cases[16];
    size_t n = 0;

    /* The same key DER under another label. */
    {
        size_t der_len;
        unsigned char *der = tg_key_public_der(key, &der_len);
        cert_label = th_pem("CERTIFICATE", der, (long)der_len, NULL);
        free(der);
    }
    trail = th_cat(good, "trailing", NULL);
    lead = th_cat("hello\n", good, NULL);
    twice = th_cat(good, good, NULL);
    truncated = strndup(good, good_len - 30);
    headers = th_cat("-----BEGIN PUBLIC KEY-----\nProc-Type: 4,ENCRYPTED\n\n", strchr(good, '\n') + 1, NULL);
    crlf = th_cat("\r\n  ", good, NULL);   /* whitespace around it is fine */

    cases[n++] = (typeof(cases[0])){"empty", "", 0, "nothing"};
    cases[n++] = (typeof(cases[0])){"31 bytes", "0123456789012345678901234567890", 31, "no PEM block"};
    cases[n++] = (typeof(cases[0])){"33 bytes", "012345678901234567890123456789012", 33, "no PEM block"};
    cases[n++] = (typeof(cases[0])){"whitespace", " \n\t ", 4, "only whitespace"};
    cases[n++] = (typeof(cases[0])){"wrong label", cert_label, strlen(cert_label), "\"CERTIFICATE\""};
    cases[n++] = (typeof(cases[0])){"trailing", trail, strlen(trail), "text after the END line"};
    cases[n++] = (typeof(cases[0])){"leading", lead, strlen(lead), "text before the BEGIN line"};
    cases[n++] = (typeof(cases[0])){"two blocks", twice, strlen(twice), "a second PEM block"};
    cases[n++] = (typeof(cases[0])){"truncated", truncated, strlen(truncated), "does not decode"};
    cases[n++] = (typeof(cases[0])){"headers", headers, strlen(headers), "PEM headers"};

    for (size_t i = 0; i < n; i++) {
        int was_raw = -1;
        tg_verdict v;
        EVP_PKEY *pub;

        tg_verdict_init(&v);
        pub = tg_public_key_parse((const unsigned char *)cases[i].data, cases[i].len, &was_raw, &v);
        print_message("%s -> %s: %s\n", cases[i].desc, tg_reason_name(v.reason), v.message);
        assert_null(pub);
        assert_int_equal(v.reason, TG_INVALID_PUBLIC_KEY);
        assert_int_equal(v.code, 400);
        assert_non_null(strstr(v.message, cases[i].found));
        assert_null(strchr(v.message, '\n'));
    }
    {
        int was_raw;
        tg_verdict v;
        EVP_PKEY *pub;

        tg_verdict_init(&v);
        pub = tg_public_key_parse((const unsigned char *)crlf, strlen(crlf), &was_raw, &v);
        assert_non_null(pub);
        EVP_PKEY_free(pub);
    }
    free(cert_label);
    free(trail);
    free(lead);
    free(twice);
    free(truncated);
    free(headers);
    free(crlf);
    free(good);
    EVP_PKEY_free(key);
}

/* Structurally valid PEM whose DER is not a key, or a key with bad material. */
static void test_public_key_bad_der(void **state)
{
    static const unsigned char not_spki[] = {0x30, 0x03, 0x02, 0x01, 0x00};
    /* Ed25519 SPKI with a 31-byte key. */
    static const unsigned char short_ed[] = {0x30, 0x29, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x20, 0x00,
                                             1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                             17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    static const struct {
        const unsigned char *der;
        long len;
        const char *found;
    } cases[] = {
        {not_spki, sizeof(not_spki), "do not parse"},
        {short_ed, sizeof(short_ed), "invalid key material"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len;
        char *pem = th_pem("PUBLIC KEY", cases[i].der, cases[i].len, &len);
        int was_raw;
        tg_verdict v;

        tg_verdict_init(&v);
        assert_null(tg_public_key_parse((const unsigned char *)pem, len, &was_raw, &v));
        assert_int_equal(v.reason, TG_INVALID_PUBLIC_KEY);
        assert_non_null(strstr(v.message, cases[i].found));
        free(pem);
    }
}

static EVP_PKEY *rsa_with_exponent(unsigned long e)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *bn = BN_new();
    EVP_PKEY *key = NULL;

    assert_true(BN_set_word(bn, e));
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048), 1);
    assert_int_equal(EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, bn), 1);
    assert_int_equal(EVP_PKEY_keygen(ctx, &key), 1);
    BN_free(bn);
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* RSA exponents: Go's limit (below 2^31) keeps each verify cheap. */
static void test_public_key_rsa_exponent(void **state)
{
    static const struct {
        unsigned long e;
        tg_reason reason;
    } cases[] = {
        {65537, TG_ACCEPTED},
        {2147483647UL, TG_ACCEPTED},            /* 2^31 - 1 */
        {4294967297UL, TG_INVALID_PUBLIC_KEY},  /* 2^32 + 1 */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key = rsa_with_exponent(cases[i].e), *pub;
        size_t len;
        char *pem = tg_key_public_pem(key, &len);
        int was_raw;
        tg_verdict v;

        tg_verdict_init(&v);
        pub = tg_public_key_parse((const unsigned char *)pem, len, &was_raw, &v);
        print_message("e=%lu -> %s: %s\n", cases[i].e, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        assert_int_equal(pub != NULL, cases[i].reason == TG_ACCEPTED);
        if (pub == NULL)
            assert_non_null(strstr(v.message, "2^31"));
        EVP_PKEY_free(pub);
        EVP_PKEY_free(key);
        free(pem);
    }
}

/* An EC point that is not on the curve is not a key. */
static void test_public_key_ec_point_off_curve(void **state)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(key, &der);
    size_t len;
    char *pem;
    int was_raw;
    tg_verdict v;

    der[n - 1] ^= 0x01;   /* last byte of the y coordinate */
    pem = th_pem("PUBLIC KEY", der, n, &len);
    tg_verdict_init(&v);
    assert_null(tg_public_key_parse((const unsigned char *)pem, len, &was_raw, &v));
    assert_int_equal(v.reason, TG_INVALID_PUBLIC_KEY);
    free(pem);
    OPENSSL_free(der);
    EVP_PKEY_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_type_parse),
        cmocka_unit_test(test_generate_round_trip),
        cmocka_unit_test(test_two_keys_differ),
        cmocka_unit_test(test_private_pem_garbage),
        cmocka_unit_test(test_private_pem_encrypted),
        cmocka_unit_test(test_raw_public_key),
        cmocka_unit_test(test_public_key_spec_forms),
        cmocka_unit_test(test_public_key_policy),
        cmocka_unit_test(test_public_key_explicit_curve),
        cmocka_unit_test(test_public_key_malformed),
        cmocka_unit_test(test_public_key_bad_der),
        cmocka_unit_test(test_public_key_ec_point_off_curve),
        cmocka_unit_test(test_public_key_rsa_exponent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
