/* test_slice.c - a ResourceSlice's user name and CSR: Liqo's documented
 * vector, building, and the hostile requests the check must refuse. */
#include "test_helpers.h"

#include "pki/cert_group.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/slice.h"

#define CONSUMER "wispy-firefly"
#define SLICE "mypool"
/* Liqo's docs show the Quota of slice mypool from consumer wispy-firefly as
 * mypool-c34af51dd912: sha256("wispy-firefly") starts c34af51dd912. */
#define USER SLICE "-c34af51dd912"
#define HEX "0123456789abcdef0123456789abcdef"
#define CG(id) "O=tenantgate.io/cert:" id ":" HEX

static void test_user_name(void **state)
{
    static const struct {
        const char *name, *consumer, *want;
        size_t out_len;
    } cases[] = {
        {SLICE, CONSUMER, USER, TG_SLICE_USER_MAX},
        {"a", CONSUMER, "a-c34af51dd912", 15},              /* exactly fits */
        {"a", CONSUMER, NULL, 14},                          /* one short */
        {"", CONSUMER, NULL, TG_SLICE_USER_MAX},
        {SLICE, "", NULL, TG_SLICE_USER_MAX},
        {NULL, CONSUMER, NULL, TG_SLICE_USER_MAX},
        {SLICE, NULL, NULL, TG_SLICE_USER_MAX},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[TG_SLICE_USER_MAX] = "";
        int rc = tg_slice_user_name(cases[i].name, cases[i].consumer, out, cases[i].out_len);
        if (cases[i].want) {
            assert_int_equal(rc, 0);
            assert_string_equal(out, cases[i].want);
        } else {
            assert_int_equal(rc, -1);
        }
    }
}

/* Issue 36, finding 7: why admission compares slice users with cluster ids.
 * A short slice name gives a user that is also a valid cluster id, that is
 * a name some consumer's ControlPlane identity could have; a long or dotted
 * one cannot be. */
static void test_user_name_can_be_a_cluster_id(void **state)
{
    static const struct {
        const char *name;
        int cluster_id;
    } cases[] = {
        {SLICE, 1}, {"a", 1}, {"rs-2", 1}, {"pool.eu", 0},
        {"a-very-long-slice-name-that-leaves-no-room-for-the-hash-x", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[TG_SLICE_USER_MAX];
        assert_int_equal(tg_slice_user_name(cases[i].name, CONSUMER, out, sizeof(out)), 0);
        if (tg_cluster_id_valid(out) != cases[i].cluster_id)
            fail_msg("%s: tg_cluster_id_valid(\"%s\") != %d", cases[i].name, out, cases[i].cluster_id);
    }
}

static tg_bytes bytes_of(char *s)
{
    return (tg_bytes){.data = (unsigned char *)s, .len = strlen(s)};
}

/* Built for every key type: accepted against the PEM and (Ed25519) raw forms
 * of the Tenant key, and it carries exactly O=<consumer>, CN=<user>. */
static void test_build_and_check(void **state)
{
    static const tg_key_type types[] = {TG_KEY_ED25519, TG_KEY_RSA2048, TG_KEY_ECDSA_P256};

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        EVP_PKEY *key = tg_key_generate(types[i]);
        size_t len = 0;
        char *pem = tg_slice_csr_build(key, SLICE, CONSUMER, &len), *pub = tg_key_public_pem(key, NULL);
        tg_bytes csr = bytes_of(pem), tkey = bytes_of(pub);
        tg_verdict v;
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        X509_REQ *req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        char cn[64], o[64];

        assert_non_null(req);
        X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req), NID_commonName, cn, sizeof(cn));
        X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req), NID_organizationName, o, sizeof(o));
        assert_string_equal(cn, USER);
        assert_string_equal(o, CONSUMER);
        tg_verdict_init(&v);
        assert_int_equal(tg_slice_csr_check(&csr, SLICE, CONSUMER, &tkey, &v), 0);
        assert_int_equal(v.reason, TG_ACCEPTED);
        if (types[i] == TG_KEY_ED25519) {
            unsigned char raw[32];
            size_t raw_len = sizeof(raw);
            tg_bytes rkey = {.data = raw, .len = raw_len};
            assert_true(EVP_PKEY_get_raw_public_key(key, raw, &raw_len));
            assert_int_equal(tg_slice_csr_check(&csr, SLICE, CONSUMER, &rkey, &v), 0);
        }
        X509_REQ_free(req);
        BIO_free(bio);
        OPENSSL_free(pub);
        free(pem);
        EVP_PKEY_free(key);
    }
    assert_null(tg_slice_csr_build(NULL, SLICE, CONSUMER, NULL));
}

/* A revocable slice's CSR: the slice user's group and no O=<consumer>,
 * read back by tg_csr_cert_group and accepted by the check. */
static void test_build_with_group(void **state)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    char group[TG_CERT_GROUP_MAX], out[TG_CERT_GROUP_MAX];
    size_t len = 0;
    char *pem, *pub = tg_key_public_pem(key, NULL);
    tg_bytes csr, tkey = bytes_of(pub);
    tg_verdict v;

    assert_int_equal(tg_cert_group_make(USER, group, sizeof(group)), 0);
    assert_non_null(pem = tg_slice_csr_build_group(key, SLICE, CONSUMER, group, &len));
    assert_int_equal(tg_csr_cert_group((const unsigned char *)pem, len, out, sizeof(out)), 1);
    assert_string_equal(out, group);
    {
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        X509_REQ *req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        X509_NAME *n = X509_REQ_get_subject_name(req);
        assert_int_equal(X509_NAME_entry_count(n), 2);
        assert_int_equal(X509_NAME_get_index_by_NID(n, NID_organizationName, -1), 0);
        X509_REQ_free(req);
        BIO_free(bio);
    }
    csr = bytes_of(pem);
    tg_verdict_init(&v);
    assert_int_equal(tg_slice_csr_check(&csr, SLICE, CONSUMER, &tkey, &v), 0);
    assert_int_equal(v.reason, TG_ACCEPTED);
    OPENSSL_free(pub);
    free(pem);
    EVP_PKEY_free(key);
}

typedef struct slice_case {
    const char *desc;
    th_csr_spec spec;
    const char *name;           /* the slice's metadata.name; NULL = SLICE */
    const char *consumer;       /* spec.consumerClusterID; NULL = CONSUMER */
    int other_key;              /* CSR under another key */
    int no_tenant_key;          /* Tenant is TolerateNoHandshake */
    const char *tenant_key;     /* this text as the Tenant's key instead */
    tg_reason reason;
    const char *found;
} slice_case;

static const slice_case cases[] = {
    {"good", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, NULL, 0, 0, NULL, TG_ACCEPTED, NULL},
    {"good, no-handshake Tenant, any key", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, NULL, 1, 1, NULL,
     TG_ACCEPTED, NULL},
    {"the ControlPlane CSR", {.subject = {"O=liqo.io", "CN=" CONSUMER}}, NULL, NULL, 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "found CN=" CONSUMER},
    {"CN of another slice", {.subject = {"O=" CONSUMER, "CN=" USER}}, "other", NULL, 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "found CN=" USER},
    {"hash of another consumer", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, "cool-firefly", 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "found CN=" USER},
    {"O=liqo.io", {.subject = {"O=liqo.io", "CN=" USER}}, NULL, NULL, 0, 0, NULL, TG_CSR_SUBJECT_MISMATCH,
     "found O=liqo.io"},
    {"O=system:masters too", {.subject = {"O=" CONSUMER, "O=system:masters", "CN=" USER}}, NULL, NULL, 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "found 2"},
    {"no O (Liqo panics)", {.subject = {"CN=" USER}}, NULL, NULL, 0, 0, NULL, TG_CSR_SUBJECT_MISMATCH, "found 0"},
    {"OU", {.subject = {"O=" CONSUMER, "OU=x", "CN=" USER}}, NULL, NULL, 0, 0, NULL, TG_CSR_FORBIDDEN_CONTENT,
     "found OU"},
    {"SAN", {.subject = {"O=" CONSUMER, "CN=" USER}, .extension = "subjectAltName=DNS:x"}, NULL, NULL, 0, 0, NULL,
     TG_CSR_FORBIDDEN_CONTENT, "subjectAltName"},
    {"challengePassword", {.subject = {"O=" CONSUMER, "CN=" USER}, .challenge_password = 1}, NULL, NULL, 0, 0, NULL,
     TG_CSR_FORBIDDEN_CONTENT, "challengePassword"},
    {"another key", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, NULL, 1, 0, NULL, TG_CSR_PUBLIC_KEY_MISMATCH,
     "Tenant of " CONSUMER},
    {"Tenant key unusable", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, NULL, 0, 0, "garbage",
     TG_CSR_PUBLIC_KEY_MISMATCH, "unusable"},
    {"no consumer", {.subject = {"O=" CONSUMER, "CN=" USER}}, NULL, "", 0, 0, NULL, TG_MALFORMED_RESOURCE_SLICE,
     "spec.consumerClusterID"},
    {"version 2", {.subject = {"O=" CONSUMER, "CN=" USER}, .version = 1}, NULL, NULL, 0, 0, NULL, TG_INVALID_CSR,
     "found 1"},
    /* a revocable slice (docs/revocation.md "Slices"): the slice user's own group, in place
     * of O=<consumer>, whose bindings would outlive a revocation */
    {"cert group", {.subject = {CG(USER), "CN=" USER}}, NULL, NULL, 0, 0, NULL, TG_ACCEPTED, NULL},
    {"cert group and O=consumer", {.subject = {"O=" CONSUMER, CG(USER), "CN=" USER}}, NULL, NULL, 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "in place of O=" CONSUMER},
    {"the consumer's cert group", {.subject = {CG(CONSUMER), "CN=" USER}}, NULL, NULL, 0, 0, NULL,
     TG_NAME_RESERVED, "another identity"},
    {"another slice's cert group", {.subject = {CG("other-c34af51dd912"), "CN=" USER}}, NULL, NULL, 0, 0, NULL,
     TG_NAME_RESERVED, "another identity"},
    {"two cert groups", {.subject = {CG(USER), CG(USER), "CN=" USER}}, NULL, NULL, 0, 0, NULL,
     TG_CSR_SUBJECT_MISMATCH, "at most one"},
    {"cert group, O=system:masters", {.subject = {CG(USER), "O=system:masters", "CN=" USER}}, NULL, NULL, 0, 0,
     NULL, TG_CSR_SUBJECT_MISMATCH, "found both"},
};

static void test_hostile(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const slice_case *c = &cases[i];
        EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519), *other = tg_key_generate(TG_KEY_ED25519);
        EVP_PKEY *signer = c->other_key ? other : key;
        char *pem = th_build_csr_pem(signer, signer, &c->spec, NULL);
        char *pub = tg_key_public_pem(key, NULL), *bad = strdup(c->tenant_key ? c->tenant_key : "");
        tg_bytes csr = bytes_of(pem), tkey = c->tenant_key ? bytes_of(bad) : bytes_of(pub);
        tg_verdict v;
        int rc;

        tg_verdict_init(&v);
        rc = tg_slice_csr_check(&csr, c->name ? c->name : SLICE, c->consumer ? c->consumer : CONSUMER,
                                c->no_tenant_key ? NULL : &tkey, &v);
        print_message("%-36s -> %s: %s\n", c->desc, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, c->reason);
        assert_int_equal(rc, c->reason == TG_ACCEPTED ? 0 : -1);
        if (c->found)
            assert_non_null(strstr(v.message, c->found));
        free(bad);
        OPENSSL_free(pub);
        free(pem);
        EVP_PKEY_free(other);
        EVP_PKEY_free(key);
    }
}

/* Not one PEM block: the same step-7 refusals as a Tenant's CSR. */
static void test_not_a_csr(void **state)
{
    static const char *const texts[] = {"", "hello", "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n"};
    tg_verdict v;

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        tg_bytes csr = {.data = (unsigned char *)texts[i], .len = strlen(texts[i])};
        tg_verdict_init(&v);
        assert_int_equal(tg_slice_csr_check(&csr, SLICE, CONSUMER, NULL, &v), -1);
        assert_int_equal(v.reason, TG_INVALID_CSR);
    }
    tg_verdict_init(&v);
    assert_int_equal(tg_slice_csr_check(NULL, SLICE, CONSUMER, NULL, &v), -1);
    assert_int_equal(v.reason, TG_INVALID_CSR);
}

/* --default-resource-slice-class-enabled: the default class is "default" or
 * none (Liqo's ResourceSliceClassDefault and ResourceSliceClassUnknown). */
static void test_class_check(void **state)
{
    static const struct {
        const char *class_;
        int enabled;
        const char *reason, *found;
    } classes[] = {
        {"default", 1, "Accepted", NULL},
        {NULL, 1, "Accepted", NULL},
        {"default", 0, "DefaultResourceSliceClassDisabled", "found \"default\": the default ResourceSlice class"},
        {"", 0, "DefaultResourceSliceClassDisabled", "found none (the default class)"},
        {NULL, 0, "DefaultResourceSliceClassDisabled", "found none (the default class)"},
        {"gpu", 0, "Accepted", NULL},
        {"Default", 0, "Accepted", NULL},   /* class names are exact, as Liqo compares them */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        tg_verdict v;
        tg_verdict_init(&v);
        int rc = tg_slice_class_check(classes[i].class_, classes[i].enabled, &v);
        assert_string_equal(tg_reason_name(v.reason), classes[i].reason);
        assert_int_equal(rc, classes[i].found ? -1 : 0);
        if (classes[i].found) {
            assert_int_equal(v.code, 403);
            if (!strstr(v.message, classes[i].found) || !strstr(v.message, "expected a class the provider offers"))
                fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, v.message, classes[i].found);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_name),
        cmocka_unit_test(test_user_name_can_be_a_cluster_id),
        cmocka_unit_test(test_build_and_check),
        cmocka_unit_test(test_build_with_group),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_not_a_csr),
        cmocka_unit_test(test_class_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
