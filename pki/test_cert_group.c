/* test_cert_group.c - the per-certificate group's form and ownership rules
 * (cert_group.h), as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "pki/cert_group.h"
#include "pki/keys.h"
#include "pki/name_owner.h"

#define ID "3114c478-173d-4344-8f01-eb21efb95aea"
#define HEX "0123456789abcdef0123456789abcdef"
#define G(id, hex) TG_CERT_GROUP_PREFIX id ":" hex

static void test_parse(void **state)
{
    static const struct { const char *group; int ok; const char *id; } rows[] = {
        {G(ID, HEX), 1, ID},
        {G("mypool-0123456789ab", HEX), 1, "mypool-0123456789ab"},
        {G("", HEX), 0, NULL},                                   /* no identity */
        {G(ID, "0123456789ABCDEF0123456789abcdef"), 0, NULL},    /* upper-case hex */
        {G(ID, "0123456789abcdef0123456789abcde"), 0, NULL},     /* 31 hex */
        {G(ID, HEX "0"), 0, NULL},                               /* 33 hex */
        {G(ID, "0123456789abcdef0123456789abcdeg"), 0, NULL},    /* not hex */
        {G("a:b", HEX), 0, NULL},                                /* ':' in the identity */
        {G("a/b", HEX), 0, NULL},                                /* '/' in the identity */
        {G("a b", HEX), 0, NULL},                                /* space */
        {TG_CERT_GROUP_PREFIX ID, 0, NULL},                      /* no hex */
        {"TenantGate.io/cert:" ID ":" HEX, 0, NULL},             /* other case */
        {ID, 0, NULL},
        {"", 0, NULL},
        {NULL, 0, NULL},
    };
    char id[254], hex[33], why[128];

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        why[0] = '\0';
        int r = tg_cert_group_parse(rows[i].group, id, sizeof(id), hex, sizeof(hex), why, sizeof(why));
        assert_int_equal(r, rows[i].ok ? 0 : -1);
        if (rows[i].ok) {
            assert_string_equal(id, rows[i].id);
            assert_string_equal(hex, HEX);
        } else {
            assert_true(strncmp(why, "expected ", 9) == 0);
        }
    }
}

static void test_make(void **state)
{
    char a[TG_CERT_GROUP_MAX], b[TG_CERT_GROUP_MAX], id[254], hex[33], why[128], small[20];

    (void)state;
    assert_int_equal(tg_cert_group_make(ID, a, sizeof(a)), 0);
    assert_int_equal(tg_cert_group_make(ID, b, sizeof(b)), 0);
    assert_string_not_equal(a, b);   /* a renewal never reuses a group */
    assert_int_equal(tg_cert_group_parse(a, id, sizeof(id), hex, sizeof(hex), why, sizeof(why)), 0);
    assert_string_equal(id, ID);
    assert_int_equal(tg_cert_group_make("", a, sizeof(a)), -1);
    assert_int_equal(tg_cert_group_make("a:b", a, sizeof(a)), -1);
    assert_int_equal(tg_cert_group_make(NULL, a, sizeof(a)), -1);
    assert_int_equal(tg_cert_group_make(ID, small, sizeof(small)), -1);
}

static void test_key(void **state)
{
    char key[TG_CERT_GROUP_KEY_MAX];

    (void)state;
    assert_int_equal(tg_cert_group_key(G(ID, HEX), key), 0);
    assert_string_equal(key, ID "." HEX);
    assert_int_equal(tg_cert_group_key(ID, key), -1);
}

static void test_decide(void **state)
{
    static const struct {
        const char *group, *identity;
        tg_cert_group_state st;
        tg_reason reason;
    } rows[] = {
        {G(ID, HEX), ID, {0, 0}, TG_ACCEPTED},
        {G(ID, HEX), "other-cluster", {0, 0}, TG_NAME_RESERVED},   /* another identity's group */
        {G(ID, HEX), NULL, {0, 0}, TG_NAME_RESERVED},
        {G(ID, "xyz"), ID, {0, 0}, TG_NAME_RESERVED},               /* malformed */
        {G(ID, HEX), ID, {1, 0}, TG_NAME_BOUND},                    /* bound to a live certificate */
        {G(ID, HEX), ID, {0, 1}, TG_NAME_REVOKED},                  /* revoked: never bound again */
        {G(ID, HEX), ID, {1, 1}, TG_NAME_REVOKED},
    };
    tg_verdict v;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tg_verdict_init(&v);
        int r = tg_cert_group_decide(rows[i].group, rows[i].identity, &rows[i].st, &v);
        assert_int_equal(v.reason, rows[i].reason);
        assert_int_equal(r, rows[i].reason == TG_ACCEPTED ? 0 : -1);
        if (rows[i].reason != TG_ACCEPTED) {
            assert_int_equal(v.code, 403);
            assert_non_null(strstr(v.message, "expected "));
        }
    }
    assert_string_equal(tg_reason_name(TG_NAME_BOUND), "NameBound");
    assert_string_equal(tg_reason_name(TG_NAME_REVOKED), "NameRevoked");
}

/* The form is reserved for every other use of a name (a cluster id, a token
 * identity, a slice user or group), in any case. */
static void test_reserved_elsewhere(void **state)
{
    static const char *const rows[] = {G(ID, HEX), "TENANTGATE.IO/CERT:x", TG_CERT_GROUP_PREFIX};
    char why[200];

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        why[0] = '\0';
        assert_true(tg_cert_group_is_form(rows[i]));
        assert_true(tg_name_reserved(rows[i], NULL, why, sizeof(why)));
        assert_true(strncmp(why, "expected ", 9) == 0);
    }
    assert_false(tg_cert_group_is_form("tenantgate.io/certs"));
}

static void test_record_needed(void **state)
{
    static const struct { int64_t not_after, now; int needed; } rows[] = {
        {1000, 999, 1}, {1000, 1000, 1}, {1000, 1001, 0}, {0, 5000, 1}, {-1, 5000, 1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(tg_cert_group_record_needed(rows[i].not_after, rows[i].now), rows[i].needed);
}

/* A self-signed certificate with subject orgs (NULL-ended) and CN, valid until not_after. */
static char *cert_with(const char *const *orgs, const char *cn, time_t not_after, size_t *len)
{
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    X509 *x = X509_new();
    X509_NAME *name = X509_get_subject_name(x);
    BIO *bio = BIO_new(BIO_s_mem());
    char *data, *out;
    long n;

    /* a type, not MBSTRING_*: a group is longer than X.520's 64 for O, which
     * OpenSSL's string table would enforce and Kubernetes (Go) does not */
    for (size_t i = 0; orgs[i]; i++)
        assert_true(X509_NAME_add_entry_by_NID(name, NID_organizationName, V_ASN1_UTF8STRING,
                                               (const unsigned char *)orgs[i], -1, -1, 0));
    assert_true(X509_NAME_add_entry_by_NID(name, NID_commonName, V_ASN1_UTF8STRING, (const unsigned char *)cn, -1,
                                           -1, 0));
    X509_set_issuer_name(x, name);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    ASN1_TIME_set(X509_getm_notAfter(x), not_after);
    X509_set_pubkey(x, key);
    assert_true(X509_sign(x, key, NULL) > 0);
    PEM_write_bio_X509(bio, x);
    n = BIO_get_mem_data(bio, &data);
    out = strndup(data, (size_t)n);
    *len = (size_t)n;
    BIO_free(bio);
    X509_free(x);
    EVP_PKEY_free(key);
    return out;
}

static void test_of_certificate(void **state)
{
    static const char *const with[] = {"liqo.io", G(ID, HEX), NULL};
    static const char *const without[] = {"liqo.io", NULL};
    static const char *const two[] = {G(ID, HEX), G(ID, "ffffffffffffffffffffffffffffffff"), NULL};
    char cn[256], group[TG_CERT_GROUP_MAX];
    int64_t na;
    size_t len;
    char *pem;

    (void)state;
    pem = cert_with(with, ID, 2000000000, &len);
    assert_int_equal(tg_cert_group_of_certificate(pem, len, cn, sizeof(cn), group, sizeof(group), &na), 1);
    assert_string_equal(cn, ID);
    assert_string_equal(group, G(ID, HEX));
    assert_int_equal(na, 2000000000);
    free(pem);
    pem = cert_with(without, ID, 2000000000, &len);
    assert_int_equal(tg_cert_group_of_certificate(pem, len, cn, sizeof(cn), group, sizeof(group), &na), 0);
    assert_string_equal(cn, ID);
    free(pem);
    pem = cert_with(two, ID, 2000000000, &len);
    assert_int_equal(tg_cert_group_of_certificate(pem, len, cn, sizeof(cn), group, sizeof(group), &na), -1);
    free(pem);
    assert_int_equal(tg_cert_group_of_certificate("junk", 4, cn, sizeof(cn), group, sizeof(group), &na), -1);
}

static void test_records(void **state)
{
    json_object *data = json_object_new_object();

    (void)state;
    json_object_object_add(data, ID "." HEX, json_object_new_string("2000000000"));
    json_object_object_add(data, "x.ffffffffffffffffffffffffffffffff", json_object_new_string("soon"));
    assert_true(tg_cert_group_revoked(data, G(ID, HEX)));
    assert_false(tg_cert_group_revoked(data, G(ID, "ffffffffffffffffffffffffffffffff")));
    assert_false(tg_cert_group_revoked(NULL, G(ID, HEX)));
    assert_false(tg_cert_group_revoked(data, "not a group"));
    assert_int_equal(tg_cert_group_record_not_after(data, ID "." HEX), 2000000000);
    assert_int_equal(tg_cert_group_record_not_after(data, "x.ffffffffffffffffffffffffffffffff"), 0);
    assert_int_equal(tg_cert_group_record_not_after(data, "absent"), 0);
    json_object_put(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),          cmocka_unit_test(test_make),
        cmocka_unit_test(test_key),            cmocka_unit_test(test_decide),
        cmocka_unit_test(test_reserved_elsewhere), cmocka_unit_test(test_record_needed),
        cmocka_unit_test(test_of_certificate), cmocka_unit_test(test_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
