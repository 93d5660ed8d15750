/* test_cert_group.c - the per-certificate group's form and ownership rules
 * (cert_group.h), as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pki/cert_group.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),          cmocka_unit_test(test_make),
        cmocka_unit_test(test_key),            cmocka_unit_test(test_decide),
        cmocka_unit_test(test_reserved_elsewhere), cmocka_unit_test(test_record_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
