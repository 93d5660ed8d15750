/* test_reasons.c - the one table of reason codes (reasons.def): every row
 * unique, each program's enum derived from it, and the docs of each program
 * listing every code it answers with, with its HTTP status. */
#include "test_helpers.h"

#include "auth/reason.h"
#include "pki/verdict.h"

typedef struct row {
    const char *id, *name, *meaning;
    int status, web, auth, signer;
} row;

#define TG_REASON(id, name, status, web, auth, signer, meaning) {#id, name, meaning, status, #web[0] == 'Y', #auth[0] == 'Y', #signer[0] == 'Y'},
static const row rows[] = {
#include "pki/reasons.def"
};
#undef TG_REASON
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void test_rows_unique(void **state)
{
    (void)state;
    for (size_t i = 0; i < NROWS; i++) {
        assert_true(rows[i].web || rows[i].auth || rows[i].signer);
        assert_true(rows[i].meaning[0] != '\0');
        for (size_t j = i + 1; j < NROWS; j++) {
            if (strcmp(rows[i].id, rows[j].id) == 0 || strcmp(rows[i].name, rows[j].name) == 0)
                fail_msg("rows %zu and %zu: both %s / %s", i, j, rows[i].id, rows[i].name);
        }
    }
}

/* The enums are the table's rows of their program, in order. */
static void test_enums_derived(void **state)
{
    int web = 0, auth = 0;

    (void)state;
    for (size_t i = 0; i < NROWS; i++) {
        if (rows[i].web || rows[i].signer) {
            assert_string_equal(tg_reason_name((tg_reason)web), rows[i].name);
            assert_int_equal(tg_reason_status((tg_reason)web), rows[i].status);
            web++;
        }
        auth += rows[i].auth;
    }
    assert_int_equal(web, TG_REASON_COUNT);
    assert_int_equal(auth, TG_AUTH_REASON_COUNT);
    assert_int_equal(TG_ACCEPTED, 0);
    assert_int_equal(TG_AUTH_ISSUED, 0);
    assert_string_equal(tg_reason_name(TG_REASON_COUNT), "Unknown");
}

/* A policy's refusal answers 403, a malformed object 400: tg_verdict_deny
 * takes the status from the table. */
static void test_deny_takes_the_table_status(void **state)
{
    tg_verdict v;

    (void)state;
    tg_verdict_init(&v);
    tg_verdict_deny(&v, TG_SLICE_TENANT_DRAINED, "x");
    assert_int_equal(v.code, 403);
    tg_verdict_deny(&v, TG_INVALID_CSR, "x");
    assert_int_equal(v.code, 400);
    tg_verdict_deny(&v, TG_NAME_OWNED, "x");
    assert_int_equal(v.code, 403);
}

static char *slurp(const char *rel)
{
    const char *dir = getenv("TG_SOURCE_DIR");
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir ? dir : ".", rel);
    return th_read_file(path, NULL);
}

/* A line of doc that names `name` (backquoted) and, when status is an HTTP
 * status, says it on the same line (a table row: | `Name` | 403 | ...). */
static int doc_lists(const char *doc, const char *name, int status)
{
    char quoted[80], code[16];
    const char *p = doc;

    snprintf(quoted, sizeof(quoted), "`%s`", name);
    snprintf(code, sizeof(code), " %d ", status);
    while ((p = strstr(p, quoted)) != NULL) {
        const char *bol = p, *eol = strchr(p, '\n');
        size_t len;
        char line[4096];

        while (bol > doc && bol[-1] != '\n')
            bol--;
        len = eol ? (size_t)(eol - bol) : strlen(bol);
        snprintf(line, sizeof(line), "%.*s", (int)len, bol);
        if (status == 0 || strstr(line, code))
            return 1;
        p += strlen(quoted);
    }
    return 0;
}

static void test_docs_list_every_code(void **state)
{
    char *protocol = slurp("docs/PROTOCOL.md"), *webhook = slurp("docs/webhook.md");
    char *auth = slurp("docs/auth.md"), *signer = slurp("docs/signer.md");
    int missing = 0;

    (void)state;
    for (size_t i = 0; i < NROWS; i++) {
        const row *r = &rows[i];
        if (r->web && !doc_lists(protocol, r->name, r->status) && !doc_lists(webhook, r->name, r->status))
            missing += !!printf("docs/PROTOCOL.md or docs/webhook.md: no row for `%s` | %d\n", r->name, r->status);
        if (r->auth && !doc_lists(auth, r->name, r->status))
            missing += !!printf("docs/auth.md: no row for `%s` | %d\n", r->name, r->status);
        if (r->signer && !doc_lists(protocol, r->name, 0) && !doc_lists(signer, r->name, 0))
            missing += !!printf("docs/PROTOCOL.md or docs/signer.md: no mention of `%s`\n", r->name);
    }
    free(protocol);
    free(webhook);
    free(auth);
    free(signer);
    assert_int_equal(missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_unique),
        cmocka_unit_test(test_enums_derived),
        cmocka_unit_test(test_deny_takes_the_table_status),
        cmocka_unit_test(test_docs_list_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
