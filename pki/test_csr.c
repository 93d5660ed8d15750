/* test_csr.c - building the CSR and PROTOCOL.md 5 steps 7-10 over hostile ones. */
#include "test_helpers.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>

#include "pki/csr.h"
#include "pki/csr_check.h"
#include "pki/keys.h"

#define ID "cl01"
#define HEX "0123456789abcdef0123456789abcdef"
#define CG(id) "O=tenantgate.io/cert:" id ":" HEX

static const tg_key_type all_types[] = {TG_KEY_ED25519, TG_KEY_RSA2048, TG_KEY_ECDSA_P256};

/* tg_csr_build output: accepted, and holds exactly O=liqo.io, CN=<id>, in that
 * order, with no attributes, verifying with the key. */
static void test_build_and_check(void **state)
{
    for (size_t i = 0; i < sizeof(all_types) / sizeof(all_types[0]); i++) {
        EVP_PKEY *key = tg_key_generate(all_types[i]);
        size_t pem_len = 0, spki_len;
        char *pem = tg_csr_build(key, ID, &pem_len);
        unsigned char *spki = th_spki(key, &spki_len);
        X509_REQ *req = NULL;
        X509_NAME *subject;
        tg_verdict v;

        assert_non_null(pem);
        assert_int_equal(strlen(pem), pem_len);
        assert_int_equal(strncmp(pem, "-----BEGIN CERTIFICATE REQUEST-----\n", 36), 0);
        tg_verdict_init(&v);
        assert_int_equal(tg_csr_check((const unsigned char *)pem, pem_len, ID, spki, spki_len, &v, &req), 0);
        assert_int_equal(v.reason, TG_ACCEPTED);
        assert_non_null(req);

        subject = X509_REQ_get_subject_name(req);
        assert_int_equal(X509_NAME_entry_count(subject), 2);
        assert_int_equal(OBJ_obj2nid(X509_NAME_ENTRY_get_object(X509_NAME_get_entry(subject, 0))),
                         NID_organizationName);
        assert_int_equal(OBJ_obj2nid(X509_NAME_ENTRY_get_object(X509_NAME_get_entry(subject, 1))), NID_commonName);
        assert_int_equal(X509_REQ_get_attr_count(req), 0);
        assert_int_equal(X509_REQ_get_version(req), 0);
        assert_int_equal(X509_REQ_verify(req, key), 1);
        assert_int_equal(EVP_PKEY_eq(X509_REQ_get0_pubkey(req), key), 1);
        if (all_types[i] == TG_KEY_ED25519)
            assert_int_equal(X509_REQ_get_signature_nid(req), NID_ED25519);
        else if (all_types[i] == TG_KEY_RSA2048)
            assert_int_equal(X509_REQ_get_signature_nid(req), NID_sha256WithRSAEncryption);
        else
            assert_int_equal(X509_REQ_get_signature_nid(req), NID_ecdsa_with_SHA256);

        X509_REQ_free(req);
        OPENSSL_free(spki);
        free(pem);
        EVP_PKEY_free(key);
    }
}

/* No key to compare (any_key: a TolerateNoHandshake Tenant's slice, tenantgate-auth):
 * every --key-type passes, a key below step 4's policy is refused as for spec.publicKey,
 * and a key the Tenant declared is not judged again. */
static void test_any_key_strength(void **state)
{
    static const struct {
        const char *alg, *param;
        size_t rsa_bits;
        tg_reason reason;
    } cases[] = {
        {"ED25519", NULL, 0, TG_ACCEPTED},      {"RSA", NULL, 2048, TG_ACCEPTED},
        {"EC", "P-256", 0, TG_ACCEPTED},        {"EC", "P-384", 0, TG_ACCEPTED},
        {"RSA", NULL, 1024, TG_WEAK_KEY},       {"EC", "secp256k1", 0, TG_WEAK_KEY},
        {"EC", "P-521", 0, TG_WEAK_KEY},
    };
    tg_csr_subject want = {.cn = ID, .org = TG_CSR_ORGANIZATION, .any_key = 1};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key = cases[i].rsa_bits ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", cases[i].rsa_bits)
                        : cases[i].param  ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", cases[i].param)
                                          : EVP_PKEY_Q_keygen(NULL, NULL, cases[i].alg);
        size_t len = 0;
        char *pem;
        tg_verdict v;

        assert_non_null(key);
        assert_non_null(pem = tg_csr_build(key, ID, &len));
        tg_verdict_init(&v);
        tg_csr_check_subject((const unsigned char *)pem, len, &want, NULL, 0, NULL, &v, NULL);
        print_message("%s %s %zu -> %s: %s\n", cases[i].alg, cases[i].param ? cases[i].param : "",
                      cases[i].rsa_bits, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        if (v.reason != TG_ACCEPTED)
            assert_non_null(strstr(v.message, "the CSR's key: expected"));
        free(pem);
        EVP_PKEY_free(key);
    }
}

/* tg_csr_build_group writes the group as a second O, accepted for its own
 * cluster id and read back by tg_csr_cert_group; a plain CSR has none. */
static void test_build_with_group(void **state)
{
    const char *group = "tenantgate.io/cert:" ID ":" HEX;
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    size_t pem_len = 0, spki_len;
    char *pem = tg_csr_build_group(key, ID, TG_CSR_ORGANIZATION, group, &pem_len);
    char *plain = tg_csr_build(key, ID, NULL);
    unsigned char *spki = th_spki(key, &spki_len);
    char out[300];
    tg_verdict v;

    (void)state;
    assert_non_null(pem);
    tg_verdict_init(&v);
    assert_int_equal(tg_csr_check((const unsigned char *)pem, pem_len, ID, spki, spki_len, &v, NULL), 0);
    assert_int_equal(tg_csr_cert_group((const unsigned char *)pem, pem_len, out, sizeof(out)), 1);
    assert_string_equal(out, group);
    assert_int_equal(tg_csr_cert_group((const unsigned char *)plain, strlen(plain), out, sizeof(out)), 0);
    assert_string_equal(out, "");
    assert_int_equal(tg_csr_cert_group((const unsigned char *)"x", 1, out, sizeof(out)), -1);
    tg_verdict_init(&v);
    assert_int_equal(tg_csr_check((const unsigned char *)pem, pem_len, "cl02", spki, spki_len, &v, NULL), -1);
    OPENSSL_free(spki);
    free(plain);
    free(pem);
    EVP_PKEY_free(key);
}

static void test_build_rejects_bad_input(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);

    assert_null(tg_csr_build(NULL, ID, NULL));
    assert_null(tg_csr_build(key, NULL, NULL));
    assert_null(tg_csr_build(key, "", NULL));
    EVP_PKEY_free(key);
}

/* Hostile requests built with OpenSSL, each with the reason it must get. */
typedef struct csr_case {
    const char *desc;
    th_csr_spec spec;
    int other_key;          /* the CSR carries (and is signed by) another key */
    tg_reason reason;
    const char *found;      /* substring of the message */
} csr_case;

static const csr_case csr_cases[] = {
    {"good", {.subject = {"O=liqo.io", "CN=" ID}}, 0, TG_ACCEPTED, NULL},
    {"good, CN first", {.subject = {"CN=" ID, "O=liqo.io"}}, 0, TG_ACCEPTED, NULL},
    {"extra OU", {.subject = {"O=liqo.io", "OU=admins", "CN=" ID}}, 0, TG_CSR_FORBIDDEN_CONTENT, "found OU"},
    {"extra C", {.subject = {"C=IT", "O=liqo.io", "CN=" ID}}, 0, TG_CSR_FORBIDDEN_CONTENT, "found C"},
    {"SAN extension", {.subject = {"O=liqo.io", "CN=" ID}, .extension = "subjectAltName=DNS:kubernetes.default"}, 0,
     TG_CSR_FORBIDDEN_CONTENT, "found subjectAltName"},
    {"basicConstraints CA", {.subject = {"O=liqo.io", "CN=" ID}, .extension = "basicConstraints=critical,CA:TRUE"}, 0,
     TG_CSR_FORBIDDEN_CONTENT, "found basicConstraints"},
    {"challengePassword", {.subject = {"O=liqo.io", "CN=" ID}, .challenge_password = 1}, 0, TG_CSR_FORBIDDEN_CONTENT,
     "found challengePassword"},
    {"two CNs", {.subject = {"O=liqo.io", "CN=" ID, "CN=admin"}}, 0, TG_CSR_SUBJECT_MISMATCH, "found 2"},
    {"no CN", {.subject = {"O=liqo.io"}}, 0, TG_CSR_SUBJECT_MISMATCH, "found 0"},
    {"CN of another cluster", {.subject = {"O=liqo.io", "CN=cl02"}}, 0, TG_CSR_SUBJECT_MISMATCH, "found CN=cl02"},
    {"CN prefix", {.subject = {"O=liqo.io", "CN=" ID "x"}}, 0, TG_CSR_SUBJECT_MISMATCH, "found CN=cl01x"},
    {"no O", {.subject = {"CN=" ID}}, 0, TG_CSR_SUBJECT_MISMATCH, "O=liqo.io in the subject, found 0"},
    {"O=other", {.subject = {"O=system:masters", "CN=" ID}}, 0, TG_CSR_SUBJECT_MISMATCH, "found O=system:masters"},
    {"two Os", {.subject = {"O=liqo.io", "O=system:masters", "CN=" ID}}, 0, TG_CSR_SUBJECT_MISMATCH, "found 2"},
    {"empty subject", {.subject = {NULL}}, 0, TG_CSR_SUBJECT_MISMATCH, "found 0"},
    {"other key", {.subject = {"O=liqo.io", "CN=" ID}}, 1, TG_CSR_PUBLIC_KEY_MISMATCH, "different"},
    /* Order: step 8 before 9 before 10. */
    {"OU and wrong CN", {.subject = {"O=liqo.io", "OU=x", "CN=cl02"}}, 0, TG_CSR_FORBIDDEN_CONTENT, "found OU"},
    {"wrong CN and other key", {.subject = {"O=liqo.io", "CN=cl02"}}, 1, TG_CSR_SUBJECT_MISMATCH, "cl02"},
    {"SAN and other key", {.subject = {"O=liqo.io", "CN=" ID}, .extension = "subjectAltName=DNS:x"}, 1, TG_CSR_FORBIDDEN_CONTENT, "subjectAltName"},
    {"version 2", {.subject = {"O=liqo.io", "CN=" ID}, .version = 1}, 0, TG_INVALID_CSR, "found 1"},
    /* the per-certificate group (pki/cert_group.h): at most one, the CN's own */
    {"cert group", {.subject = {"O=liqo.io", CG(ID), "CN=" ID}}, 0, TG_ACCEPTED, NULL},
    {"cert group first", {.subject = {CG(ID), "O=liqo.io", "CN=" ID}}, 0, TG_ACCEPTED, NULL},
    {"cert group alone", {.subject = {CG(ID), "CN=" ID}}, 0, TG_CSR_SUBJECT_MISMATCH,
     "O=liqo.io in the subject, found 0"},
    {"another id's cert group", {.subject = {"O=liqo.io", CG("cl02"), "CN=" ID}}, 0, TG_NAME_RESERVED,
     "another identity"},
    {"two cert groups",
     {.subject = {"O=liqo.io", CG(ID), "O=tenantgate.io/cert:cl01:ffffffffffffffffffffffffffffffff", "CN=" ID}}, 0,
     TG_CSR_SUBJECT_MISMATCH, "at most one"},
    {"short cert group", {.subject = {"O=liqo.io", "O=tenantgate.io/cert:cl01:abc", "CN=" ID}}, 0, TG_NAME_RESERVED,
     "lowercase hex"},
    {"cert group in caps", {.subject = {"O=liqo.io", "O=TENANTGATE.IO/CERT:cl01:" HEX, "CN=" ID}}, 0,
     TG_NAME_RESERVED, "expected"},
};

static void check_case(const csr_case *c, tg_key_type type)
{
    EVP_PKEY *key = tg_key_generate(type), *other = tg_key_generate(type);
    EVP_PKEY *csr_key = c->other_key ? other : key;
    size_t pem_len, spki_len;
    char *pem = th_build_csr_pem(csr_key, csr_key, &c->spec, &pem_len);
    unsigned char *spki = th_spki(key, &spki_len);
    X509_REQ *req = (X509_REQ *)1;
    tg_verdict v;
    int rc;

    tg_verdict_init(&v);
    rc = tg_csr_check((const unsigned char *)pem, pem_len, ID, spki, spki_len, &v, &req);
    print_message("%-24s -> %s: %s\n", c->desc, tg_reason_name(v.reason), v.message);
    assert_int_equal(v.reason, c->reason);
    assert_int_equal(rc, c->reason == TG_ACCEPTED ? 0 : -1);
    if (c->reason == TG_ACCEPTED) {
        assert_non_null(req);
        X509_REQ_free(req);
    } else {
        assert_null(req);
        assert_int_equal(v.code, c->reason == TG_NAME_RESERVED ? 403 : 400);
        assert_non_null(strstr(v.message, "expected"));
        assert_non_null(strstr(v.message, c->found));
    }
    OPENSSL_free(spki);
    free(pem);
    EVP_PKEY_free(other);
    EVP_PKEY_free(key);
}

static void test_hostile_csrs_ed25519(void **state)
{
    for (size_t i = 0; i < sizeof(csr_cases) / sizeof(csr_cases[0]); i++)
        check_case(&csr_cases[i], TG_KEY_ED25519);
}

static void test_hostile_csrs_ecdsa(void **state)
{
    for (size_t i = 0; i < sizeof(csr_cases) / sizeof(csr_cases[0]); i++)
        check_case(&csr_cases[i], TG_KEY_ECDSA_P256);
}

static void test_hostile_csrs_rsa(void **state)
{
    /* RSA keygen is slow: the cases that exercise the key type. */
    static const size_t picks[] = {0, 2, 4, 9, 15, 17};
    for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++)
        check_case(&csr_cases[picks[i]], TG_KEY_RSA2048);
}

/* Damage to the PEM text or the DER: step 7, InvalidCSR. */
static void test_invalid_csr_encodings(void **state)
{
    static const th_csr_spec good = {.subject = {"O=liqo.io", "CN=" ID}};
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    X509_REQ *req = th_build_req(key, key, &good);
    size_t pem_len, spki_len;
    char *pem = th_req_pem(req, &pem_len);
    unsigned char *spki = th_spki(key, &spki_len);
    long der_len;
    unsigned char *der = th_req_der(req, &der_len);
    char *trailing = th_cat(pem, "junk\n", NULL), *leading = th_cat("junk\n", pem, NULL);
    char *twice = th_cat(pem, pem, NULL), *ws = th_cat(pem, "\n\n  \t\r\n", NULL);
    char *wrong_label = th_pem("CERTIFICATE", der, der_len, NULL);
    char *truncated_der = th_pem("CERTIFICATE REQUEST", der, der_len - 10, NULL);
    char *truncated_pem = strndup(pem, pem_len - 40);
    char *bad_sig, *extra_der;
    unsigned char *der2 = malloc((size_t)der_len + 2);
    struct {
        const char *desc;
        const char *text;
        size_t len;
        tg_reason reason;
        const char *found;
    } cases[16];
    size_t n = 0;

    memcpy(der2, der, (size_t)der_len);
    der2[der_len - 1] ^= 0x01;   /* the last byte is inside the signature */
    bad_sig = th_pem("CERTIFICATE REQUEST", der2, der_len, NULL);
    der2[der_len - 1] ^= 0x01;
    der2[der_len] = 0x05;        /* DER NULL after the request */
    der2[der_len + 1] = 0x00;
    extra_der = th_pem("CERTIFICATE REQUEST", der2, der_len + 2, NULL);

    cases[n++] = (typeof(cases[0])){"as built", pem, pem_len, TG_ACCEPTED, NULL};
    cases[n++] = (typeof(cases[0])){"trailing whitespace", ws, strlen(ws), TG_ACCEPTED, NULL};
    cases[n++] = (typeof(cases[0])){"trailing text", trailing, strlen(trailing), TG_INVALID_CSR, "after the END"};
    cases[n++] = (typeof(cases[0])){"leading text", leading, strlen(leading), TG_INVALID_CSR, "before the BEGIN"};
    cases[n++] = (typeof(cases[0])){"two blocks", twice, strlen(twice), TG_INVALID_CSR, "second PEM block"};
    cases[n++] = (typeof(cases[0])){"wrong label", wrong_label, strlen(wrong_label), TG_INVALID_CSR,
                                    "\"CERTIFICATE\" block"};
    cases[n++] = (typeof(cases[0])){"truncated DER", truncated_der, strlen(truncated_der), TG_INVALID_CSR,
                                    "do not parse"};
    cases[n++] = (typeof(cases[0])){"truncated PEM", truncated_pem, strlen(truncated_pem), TG_INVALID_CSR,
                                    "does not decode"};
    cases[n++] = (typeof(cases[0])){"flipped signature", bad_sig, strlen(bad_sig), TG_INVALID_CSR,
                                    "does not verify"};
    cases[n++] = (typeof(cases[0])){"DER after the request", extra_der, strlen(extra_der), TG_INVALID_CSR,
                                    "trailing bytes"};
    cases[n++] = (typeof(cases[0])){"empty", "", 0, TG_INVALID_CSR, "nothing"};
    cases[n++] = (typeof(cases[0])){"not PEM", "hello", 5, TG_INVALID_CSR, "no PEM block"};

    for (size_t i = 0; i < n; i++) {
        tg_verdict v;

        tg_verdict_init(&v);
        tg_csr_check((const unsigned char *)cases[i].text, cases[i].len, ID, spki, spki_len, &v, NULL);
        print_message("%-22s -> %s: %s\n", cases[i].desc, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        if (cases[i].found)
            assert_non_null(strstr(v.message, cases[i].found));
    }

    free(der2);
    free(bad_sig);
    free(extra_der);
    free(truncated_pem);
    free(truncated_der);
    free(wrong_label);
    free(twice);
    free(ws);
    free(leading);
    free(trailing);
    OPENSSL_free(der);
    OPENSSL_free(spki);
    free(pem);
    X509_REQ_free(req);
    EVP_PKEY_free(key);
}

/* A bad self-signature is reported before a key mismatch (7 before 10), and
 * before forbidden content (7 before 8), whatever the key. */
static void test_bad_signature_comes_first(void **state)
{
    static const th_csr_spec forbidden = {.subject = {"O=liqo.io", "OU=x", "CN=" ID}};
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519), *other = tg_key_generate(TG_KEY_ED25519);
    size_t spki_len;
    unsigned char *spki = th_spki(key, &spki_len);
    EVP_PKEY *carried[] = {key, other};

    for (size_t i = 0; i < 2; i++) {
        /* Carries `carried[i]` but is signed by a third key. */
        EVP_PKEY *signer = tg_key_generate(TG_KEY_ED25519);
        size_t len;
        char *pem = th_build_csr_pem(carried[i], signer, &forbidden, &len);
        tg_verdict v;

        tg_verdict_init(&v);
        assert_int_equal(tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL), -1);
        assert_int_equal(v.reason, TG_INVALID_CSR);
        free(pem);
        EVP_PKEY_free(signer);
    }
    OPENSSL_free(spki);
    EVP_PKEY_free(other);
    EVP_PKEY_free(key);
}

/* The Ed25519 self-signature is checked by libsodium over the received bytes
 * (pki/csr.c): every variant of the signature fields OpenSSL's
 * ASN1_item_verify refuses is refused there too, and the untouched CSR
 * accepted by both. One difference, on purpose: OpenSSL 3.0 ignores the
 * parameters of the Ed25519 signature algorithm; RFC 8410 says they MUST be
 * absent (Go's crypto/x509 refuses them too), and so do we. */
enum sig_variant { SIG_AS_BUILT, SIG_ALG_NULL_PARAMS, SIG_ALG_RSA, SIG_UNUSED_BITS, SIG_SHORT, SIG_FLIPPED };

static void mutate_signature(X509_REQ *req, enum sig_variant variant)
{
    const ASN1_BIT_STRING *csig;
    const X509_ALGOR *calg;
    ASN1_BIT_STRING *sig;
    X509_ALGOR *alg;
    unsigned char copy[64];

    X509_REQ_get0_signature(req, &csig, &calg);
    sig = (ASN1_BIT_STRING *)csig;
    alg = (X509_ALGOR *)calg;
    assert_int_equal(ASN1_STRING_length(sig), 64);
    memcpy(copy, ASN1_STRING_get0_data(sig), 64);
    switch (variant) {
    case SIG_AS_BUILT:
        break;
    case SIG_ALG_NULL_PARAMS:
        assert_int_equal(X509_ALGOR_set0(alg, OBJ_nid2obj(NID_ED25519), V_ASN1_NULL, NULL), 1);
        break;
    case SIG_ALG_RSA:
        assert_int_equal(X509_ALGOR_set0(alg, OBJ_nid2obj(NID_sha256WithRSAEncryption), V_ASN1_NULL, NULL), 1);
        break;
    case SIG_UNUSED_BITS:
        sig->flags = (sig->flags & ~0x07L) | ASN1_STRING_FLAG_BITS_LEFT | 1;
        break;
    case SIG_SHORT:
        assert_int_equal(ASN1_BIT_STRING_set(sig, copy, 63), 1);
        break;
    case SIG_FLIPPED:
        copy[40] ^= 0x01;
        assert_int_equal(ASN1_BIT_STRING_set(sig, copy, 64), 1);
        break;
    }
}

static void test_ed25519_signature_fields(void **state)
{
    static const struct {
        enum sig_variant variant;
        const char *name;
        int openssl, accepted;
    } cases[] = {
        {SIG_AS_BUILT, "as built", 1, 1},
        {SIG_ALG_NULL_PARAMS, "Ed25519 with NULL parameters", 1, 0},
        {SIG_ALG_RSA, "sha256WithRSAEncryption over an Ed25519 key", 0, 0},
        {SIG_UNUSED_BITS, "signature BIT STRING with an unused bit", 0, 0},
        {SIG_SHORT, "63-byte signature", 0, 0},
        {SIG_FLIPPED, "one bit of S flipped", 0, 0},
    };
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    size_t spki_len;
    unsigned char *spki = th_spki(key, &spki_len);
    char *built = tg_csr_build(key, ID, NULL);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        BIO *bio = BIO_new_mem_buf(built, -1);
        X509_REQ *req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL), *again;
        size_t len;
        char *pem;
        tg_verdict v;

        print_message("%s\n", cases[i].name);
        assert_non_null(req);
        mutate_signature(req, cases[i].variant);
        pem = th_req_pem(req, &len);
        BIO_free(bio);
        bio = BIO_new_mem_buf(pem, (int)len);
        again = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        assert_non_null(again);
        assert_int_equal(X509_REQ_verify(again, key) == 1, cases[i].openssl);
        ERR_clear_error();
        tg_verdict_init(&v);
        assert_int_equal(tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL) == 0,
                         cases[i].accepted);
        if (!cases[i].accepted)
            assert_int_equal(v.reason, TG_INVALID_CSR);
        X509_REQ_free(again);
        X509_REQ_free(req);
        BIO_free(bio);
        free(pem);
    }
    free(built);
    OPENSSL_free(spki);
    EVP_PKEY_free(key);
}

/* A CSR key of an algorithm the Tenant can't have (Ed448) still gets its
 * self-signature checked and then the key mismatch reported. */
static void test_foreign_algorithm_csr(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519), *ed448 = EVP_PKEY_Q_keygen(NULL, NULL, "ED448");
    size_t len, spki_len;
    X509_REQ *req = X509_REQ_new();
    X509_NAME *name = X509_NAME_new();
    unsigned char *spki = th_spki(key, &spki_len);
    char *pem;
    tg_verdict v;

    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"liqo.io", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)ID, -1, -1, 0);
    X509_REQ_set_subject_name(req, name);
    X509_REQ_set_pubkey(req, ed448);
    assert_true(X509_REQ_sign(req, ed448, NULL) > 0);
    pem = th_req_pem(req, &len);
    tg_verdict_init(&v);
    assert_int_equal(tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL), -1);
    print_message("%s: %s\n", tg_reason_name(v.reason), v.message);
    assert_int_equal(v.reason, TG_CSR_PUBLIC_KEY_MISMATCH);
    assert_non_null(strstr(v.message, "ED448"));

    free(pem);
    OPENSSL_free(spki);
    X509_NAME_free(name);
    X509_REQ_free(req);
    EVP_PKEY_free(ed448);
    EVP_PKEY_free(key);
}

/* A subject with several attributes in one RDN (O=liqo.io+CN=cl01) is read
 * attribute by attribute like any other. */
static void test_multi_valued_rdn(void **state)
{
    static const struct {
        const char *second_field;
        const char *second_value;
        tg_reason reason;
    } cases[] = {
        {"CN", ID, TG_ACCEPTED},
        {"OU", "x", TG_CSR_FORBIDDEN_CONTENT},
        {"CN", "cl02", TG_CSR_SUBJECT_MISMATCH},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
        X509_REQ *req = X509_REQ_new();
        X509_NAME *name = X509_NAME_new();
        size_t len, spki_len;
        unsigned char *spki = th_spki(key, &spki_len);
        char *pem;
        tg_verdict v;

        assert_true(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"liqo.io", -1, -1, 0));
        if (strcmp(cases[i].second_field, "OU") == 0)
            assert_true(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)ID, -1, -1, 0));
        /* set = -1: into the RDN of the entry before it. */
        assert_true(X509_NAME_add_entry_by_txt(name, cases[i].second_field, MBSTRING_ASC,
                                               (const unsigned char *)cases[i].second_value, -1, -1, -1));
        X509_REQ_set_subject_name(req, name);
        X509_REQ_set_pubkey(req, key);
        assert_true(X509_REQ_sign(req, key, NULL) > 0);
        pem = th_req_pem(req, &len);
        tg_verdict_init(&v);
        tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL);
        print_message("%s=%s -> %s: %s\n", cases[i].second_field, cases[i].second_value, tg_reason_name(v.reason),
                      v.message);
        assert_int_equal(v.reason, cases[i].reason);
        free(pem);
        OPENSSL_free(spki);
        X509_NAME_free(name);
        X509_REQ_free(req);
        EVP_PKEY_free(key);
    }
}

/* A CSR key whose RSA exponent would make its self-signature check as costly
 * as a private-key operation is refused before it is used (step 7). */
static void test_rsa_huge_exponent_csr(void **state)
{
    static const th_csr_spec good = {.subject = {"O=liqo.io", "CN=" ID}};
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *rsa = NULL, *key = tg_key_generate(TG_KEY_ED25519);
    BIGNUM *e = BN_new();
    size_t len, spki_len;
    unsigned char *spki = th_spki(key, &spki_len);
    char *pem;
    tg_verdict v;

    assert_true(BN_set_word(e, 4294967297UL));   /* 2^32 + 1 */
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048), 1);
    assert_int_equal(EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e), 1);
    assert_int_equal(EVP_PKEY_keygen(ctx, &rsa), 1);
    pem = th_build_csr_pem(rsa, rsa, &good, &len);
    tg_verdict_init(&v);
    tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL);
    print_message("%s: %s\n", tg_reason_name(v.reason), v.message);
    assert_int_equal(v.reason, TG_INVALID_CSR);
    assert_non_null(strstr(v.message, "2^31"));
    free(pem);
    OPENSSL_free(spki);
    BN_free(e);
    EVP_PKEY_free(rsa);
    EVP_PKEY_free(key);
    EVP_PKEY_CTX_free(ctx);
}

/* Untrusted subject values are shown truncated and on one line. */
static void test_message_sanitized(void **state)
{
    char cn[400];
    const char *subject_cn;
    th_csr_spec spec = {.subject = {"O=liqo.io", NULL}};
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    size_t len, spki_len;
    unsigned char *spki = th_spki(key, &spki_len);
    char *pem;
    tg_verdict v;

    memcpy(cn, "CN=", 3);
    memset(cn + 3, 'a', 60);
    memcpy(cn + 63, "\n\x1b[31mred", 10);
    memset(cn + 73, 'b', 200);
    cn[273] = '\0';
    subject_cn = cn;
    spec.subject[1] = subject_cn;
    pem = th_build_csr_pem(key, key, &spec, &len);
    tg_verdict_init(&v);
    tg_csr_check((const unsigned char *)pem, len, ID, spki, spki_len, &v, NULL);
    assert_int_equal(v.reason, TG_CSR_SUBJECT_MISMATCH);
    assert_null(strchr(v.message, '\n'));
    assert_null(strchr(v.message, '\x1b'));
    assert_null(strstr(v.message, "bbbbbbbbbb"));   /* cut before the tail */
    assert_non_null(strstr(v.message, "..."));
    free(pem);
    OPENSSL_free(spki);
    EVP_PKEY_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_check),
        cmocka_unit_test(test_build_rejects_bad_input),
        cmocka_unit_test(test_build_with_group),
        cmocka_unit_test(test_hostile_csrs_ed25519),
        cmocka_unit_test(test_hostile_csrs_ecdsa),
        cmocka_unit_test(test_hostile_csrs_rsa),
        cmocka_unit_test(test_invalid_csr_encodings),
        cmocka_unit_test(test_bad_signature_comes_first),
        cmocka_unit_test(test_foreign_algorithm_csr),
        cmocka_unit_test(test_ed25519_signature_fields),
        cmocka_unit_test(test_multi_valued_rdn),
        cmocka_unit_test(test_rsa_huge_exponent_csr),
        cmocka_unit_test(test_message_sanitized),
        cmocka_unit_test(test_any_key_strength),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
