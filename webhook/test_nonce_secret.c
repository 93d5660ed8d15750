/* test_nonce_secret.c - which Secret counts as a Tenant's nonce: a table of
 * Secret objects, as the informer or the live read hands them over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>

#include "kube/json.h"
#include "webhook/nonce_secret.h"

#define NS "liqo-tenant-cl01"
/* "a-nonce-text" in base64 */
#define GOOD_B64 "YS1ub25jZS10ZXh0"

typedef struct secret_case {
    const char *what;
    const char *json;              /* NULL: no Secret */
    tg_nonce_state want;
} secret_case;

#define SECRET(ns, name, labels, data)                                                                   \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"labels\":{" labels "}},\"data\":{" data \
    "}}"
#define LABELS_OK "\"liqo.io/nonce\":\"true\",\"liqo.io/remote-cluster-id\":\"cl01\""
#define DATA_OK "\"nonce\":\"" GOOD_B64 "\""

static const secret_case cases[] = {
    {"the tenant namespace's liqo-nonce", SECRET(NS, "liqo-nonce", LABELS_OK, DATA_OK), TG_NONCE_FOUND},
    {"none", NULL, TG_NONCE_ABSENT},
    /* the same labels elsewhere do not count */
    {"labelled Secret in default", SECRET("default", "liqo-nonce", LABELS_OK, DATA_OK), TG_NONCE_ABSENT},
    {"labelled Secret of another tenant namespace", SECRET("liqo-tenant-cl02", "liqo-nonce", LABELS_OK, DATA_OK),
     TG_NONCE_ABSENT},
    {"labelled Secret of another name", SECRET(NS, "rogue-nonce", LABELS_OK, DATA_OK), TG_NONCE_ABSENT},
    {"no namespace", "{\"metadata\":{\"name\":\"liqo-nonce\",\"labels\":{" LABELS_OK "}},\"data\":{" DATA_OK "}}",
     TG_NONCE_ABSENT},
    {"not an object", "[1,2]", TG_NONCE_ABSENT},
    /* the right Secret, but not a nonce for this cluster */
    {"no nonce label", SECRET(NS, "liqo-nonce", "\"liqo.io/remote-cluster-id\":\"cl01\"", DATA_OK),
     TG_NONCE_UNLABELLED},
    {"nonce label false", SECRET(NS, "liqo-nonce", "\"liqo.io/nonce\":\"false\",\"liqo.io/remote-cluster-id\":\"cl01\"",
                                 DATA_OK),
     TG_NONCE_UNLABELLED},
    {"labels not an object", "{\"metadata\":{\"name\":\"liqo-nonce\",\"namespace\":\"" NS "\",\"labels\":7}}",
     TG_NONCE_UNLABELLED},
    {"issued for another cluster", SECRET(NS, "liqo-nonce", "\"liqo.io/nonce\":\"true\",\"liqo.io/remote-cluster-id\":\"cl02\"",
                                          DATA_OK),
     TG_NONCE_OTHER_CLUSTER},
    {"no cluster label", SECRET(NS, "liqo-nonce", "\"liqo.io/nonce\":\"true\"", DATA_OK), TG_NONCE_OTHER_CLUSTER},
    /* data */
    {"no data.nonce", SECRET(NS, "liqo-nonce", LABELS_OK, ""), TG_NONCE_EMPTY},
    {"empty data.nonce", SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":\"\""), TG_NONCE_EMPTY},
    {"not base64", SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":\"*not-base64*\""), TG_NONCE_EMPTY},
    {"NUL inside", SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":\"YQBi\""), TG_NONCE_EMPTY},
    {"data.nonce a number", SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":5"), TG_NONCE_EMPTY},
};

static void test_nonce_secret_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const secret_case *c = &cases[i];
        json_object *obj = c->json ? tg_json_parse(c->json, strlen(c->json), NULL, 0) : NULL;
        char nonce[TG_LOOKUP_NONCE_MAX] = "";
        size_t len = 0;
        tg_nonce_state got;

        if (c->json && !obj)
            fail_msg("case \"%s\": fixture does not parse", c->what);
        got = tg_nonce_secret_read(obj, NS, "cl01", nonce, &len);
        if (got != c->want)
            fail_msg("case \"%s\": state %d, want %d", c->what, got, c->want);
        if (got == TG_NONCE_FOUND) {
            assert_int_equal(len, strlen("a-nonce-text"));
            assert_string_equal(nonce, "a-nonce-text");
        }
        json_object_put(obj);
    }
}

/* Longer than any nonce we accept: refused before decoding. */
static void test_oversized_nonce(void **state)
{
    char b64[2048], text[4096];
    json_object *obj;
    char nonce[TG_LOOKUP_NONCE_MAX];
    size_t len = 0;

    memset(b64, 'A', sizeof(b64) - 1);
    b64[sizeof(b64) - 1] = '\0';
    snprintf(text, sizeof(text), SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":\"%s\""), b64);
    obj = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(obj);
    assert_int_equal(tg_nonce_secret_read(obj, NS, "cl01", nonce, &len), TG_NONCE_EMPTY);
    json_object_put(obj);
}

/* The digest the cache keeps (sized to its nonce) reads as the Secret it was
 * made from, for every Secret of the right namespace and name. */
static void test_digest_reads_as_secret(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const secret_case *c = &cases[i];
        json_object *obj = c->json ? tg_json_parse(c->json, strlen(c->json), NULL, 0) : NULL;
        char want_nonce[TG_LOOKUP_NONCE_MAX] = "", got_nonce[TG_LOOKUP_NONCE_MAX] = "";
        size_t want_len = 0, got_len = 0;
        tg_nonce_digest *d;

        if (c->want == TG_NONCE_ABSENT) {
            json_object_put(obj);
            continue;
        }
        assert_non_null(obj);
        assert_int_equal(tg_nonce_secret_read(obj, NS, "cl01", want_nonce, &want_len), c->want);
        d = tg_nonce_digest_new(obj);
        assert_non_null(d);
        if (tg_nonce_digest_read(d, "cl01", got_nonce, &got_len) != c->want)
            fail_msg("case \"%s\": the digest reads differently", c->what);
        assert_int_equal(got_len, want_len);
        assert_string_equal(got_nonce, want_nonce);
        /* the nonce is kept whenever data.nonce decodes, nothing otherwise */
        assert_int_equal(d->len, d->data == TG_NONCE_FOUND ? strlen("a-nonce-text") : 0);
        tg_nonce_digest_free(d);
        json_object_put(obj);
    }
}

/* The longest nonce accepted (TG_LOOKUP_NONCE_MAX - 1 bytes) fits its digest
 * whole; one byte more is refused. Under ASan a digest one byte short fails. */
static void test_digest_longest_nonce(void **state)
{
    for (size_t n = TG_LOOKUP_NONCE_MAX - 1; n <= TG_LOOKUP_NONCE_MAX; n++) {
        char raw[TG_LOOKUP_NONCE_MAX + 1], b64[512], text[1024], nonce[TG_LOOKUP_NONCE_MAX];
        size_t len = 0;
        json_object *obj;
        tg_nonce_digest *d;

        memset(raw, 'n', n);
        assert_true(EVP_EncodeBlock((unsigned char *)b64, (unsigned char *)raw, (int)n) > 0);
        snprintf(text, sizeof(text), SECRET(NS, "liqo-nonce", LABELS_OK, "\"nonce\":\"%s\""), b64);
        assert_non_null(obj = tg_json_parse(text, strlen(text), NULL, 0));
        assert_non_null(d = tg_nonce_digest_new(obj));
        if (n < TG_LOOKUP_NONCE_MAX) {
            assert_int_equal(tg_nonce_digest_read(d, "cl01", nonce, &len), TG_NONCE_FOUND);
            assert_int_equal(len, n);
            assert_memory_equal(nonce, raw, n);
            assert_int_equal(nonce[n], '\0');
        } else {
            assert_int_equal(tg_nonce_digest_read(d, "cl01", nonce, &len), TG_NONCE_EMPTY);
            assert_int_equal(d->len, 0);
        }
        tg_nonce_digest_free(d);
        json_object_put(obj);
    }
}

/* Every state reads as the end of "expected ..., <found>". */
static void test_found_texts(void **state)
{
    const char *seen[5];

    for (int s = TG_NONCE_ABSENT; s <= TG_NONCE_EMPTY; s++) {
        seen[s] = tg_nonce_state_found((tg_nonce_state)s);
        assert_non_null(seen[s]);
        assert_int_equal(strncmp(seen[s], "found ", 6), 0);
        for (int o = 0; o < s; o++)
            assert_string_not_equal(seen[s], seen[o]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonce_secret_table),
        cmocka_unit_test(test_oversized_nonce),
        cmocka_unit_test(test_digest_reads_as_secret),
        cmocka_unit_test(test_digest_longest_nonce),
        cmocka_unit_test(test_found_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
