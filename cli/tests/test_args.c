/* test_args.c - the option loop every command runs (args.c): what is stored,
 * what is refused and with which words, and that it can run again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"

static const char usage[] = "Usage: t [OPTIONS]\n";

typedef struct parsed {
    const char *key, *file, *refused;
    int force;
    int rc;
    char out[512];     /* what was printed on stdout */
    char err[512];     /* what was printed on stderr */
} parsed;

/* Read back what fd-redirected output wrote into f. */
static void slurp(FILE *f, char *buf, size_t len)
{
    size_t n;

    rewind(f);
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
}

/* Run cli_parse_options on a copy of args (getopt permutes argv) with a
 * table of a value option, a short option, a switch and a refused option,
 * capturing stdout and stderr. */
static void run(parsed *p, const char *const *args)
{
    char *argv[16];
    int argc = 0;
    FILE *out = tmpfile(), *err = tmpfile();
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    const cli_option options[] = {
        { "key", required_argument, 'k', &p->key, NULL },
        { "filename", required_argument, 'f', &p->file, NULL },
        { "force", no_argument, 'F', NULL, &p->force },
        { "wait", no_argument, 'w', NULL, NULL },        /* known, not taken */
        { "context", required_argument, 'C', NULL, NULL },
        { NULL, 0, 0, NULL, NULL },
    };

    memset(p, 0, sizeof(*p));
    assert_non_null(out);
    assert_non_null(err);
    argv[argc++] = (char *)"t";
    for (; *args != NULL; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;

    fflush(stdout);
    fflush(stderr);
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    p->rc = cli_parse_options("t", usage, "f:", options, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    slurp(out, p->out, sizeof(p->out));
    slurp(err, p->err, sizeof(p->err));
    fclose(out);
    fclose(err);
}

static void test_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        int rc;
        const char *key, *file;
        int force;
        const char *err;       /* stderr's first line, or "" */
    } cases[] = {
        { { NULL }, 0, NULL, NULL, 0, "" },
        { { "--key", "k1", "--force", "-f", "x.yaml", NULL }, 0, "k1", "x.yaml", 1, "" },
        { { "--key=k2", "-fy.yaml", NULL }, 0, "k2", "y.yaml", 0, "" },
        { { "--filename", "a", "--filename", "b", NULL }, 0, NULL, "b", 0, "" },   /* last wins */
        { { "--fo", "--ke", "k3", NULL }, 0, "k3", NULL, 1, "" },                  /* abbreviations */
        { { "--key", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: option --key needs a value\n" },
        { { "-f", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: option -f needs a value\n" },
        { { "--bogus", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: unknown option --bogus\n" },
        { { "-x", NULL }, TG_EXIT_USAGE, NULL, NULL, 0, "kubectl-tenantgate t: unknown option -x\n" },
        { { "--wait", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: option --wait does not apply here\n" },
        { { "--context=c", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: option --context=c does not apply here\n" },
        { { "--key", "k", "extra", NULL }, TG_EXIT_USAGE, "k", NULL, 0,
          "kubectl-tenantgate t: unexpected argument \"extra\"\n" },
        { { "--", "--key", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: unexpected argument \"--key\"\n" },
        /* The first problem stops the loop: help after it is not shown. */
        { { "--bogus", "-h", NULL }, TG_EXIT_USAGE, NULL, NULL, 0,
          "kubectl-tenantgate t: unknown option --bogus\n" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        parsed p;

        run(&p, cases[i].args);
        if (p.rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (stderr %s)", i, p.rc, cases[i].rc, p.err);
        if (cases[i].rc == 0 || cases[i].key != NULL) {
            if (cases[i].key == NULL)
                assert_null(p.key);
            else
                assert_string_equal(p.key, cases[i].key);
        }
        if (cases[i].file == NULL)
            assert_null(p.file);
        else
            assert_string_equal(p.file, cases[i].file);
        assert_int_equal(p.force, cases[i].force);
        if (cases[i].err[0] == '\0') {
            assert_string_equal(p.err, "");
        } else {
            /* The message line, then the usage text. */
            assert_int_equal(strncmp(p.err, cases[i].err, strlen(cases[i].err)), 0);
            assert_string_equal(p.err + strlen(cases[i].err), usage);
        }
        assert_string_equal(p.out, "");
    }
}

static void test_help(void **state)
{
    (void)state;
    static const char *const forms[][3] = { { "-h", NULL }, { "--help", NULL }, { "--he", NULL },
                                            { "--key", "k", NULL } };
    int want[] = { CLI_HELP_SHOWN, CLI_HELP_SHOWN, CLI_HELP_SHOWN, 0 };

    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        parsed p;

        run(&p, forms[i]);
        assert_int_equal(p.rc, want[i]);
        /* On stdout, as it was asked for; nothing without -h. */
        assert_string_equal(p.out, want[i] == CLI_HELP_SHOWN ? usage : "");
        assert_string_equal(p.err, "");
    }
}

/* getopt keeps state between calls; each command's loop must start fresh. */
static void test_runs_again(void **state)
{
    (void)state;
    static const char *const first[] = { "--key", "a", "--bogus", NULL };
    static const char *const second[] = { "--key", "b", NULL };
    parsed p;

    run(&p, first);
    assert_int_equal(p.rc, TG_EXIT_USAGE);
    run(&p, second);
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.key, "b");
}

static void test_too_many_options(void **state)
{
    (void)state;
    cli_option big[40];
    char *argv[] = { (char *)"t", NULL };
    int flag = 0;

    for (size_t i = 0; i < 39; i++)
        big[i] = (cli_option){ "x", no_argument, 'a' + (int)(i % 20), NULL, &flag };
    big[39] = (cli_option){ NULL, 0, 0, NULL, NULL };
    assert_int_equal(cli_parse_options("t", usage, "", big, 1, argv), TG_EXIT_USAGE);
}

static void test_output_arg(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc, as_json;
    } cases[] = {
        { "yaml", 0, 0 }, { "json", 0, 1 }, { "JSON", TG_EXIT_USAGE, -1 },
        { "xml", TG_EXIT_USAGE, -1 }, { "", TG_EXIT_USAGE, -1 }, { "json ", TG_EXIT_USAGE, -1 },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int as_json = -1;

        assert_int_equal(cli_output_arg("t", usage, cases[i].text, &as_json), cases[i].rc);
        assert_int_equal(as_json, cases[i].as_json);     /* untouched when refused */
    }
}

/* --key-type: the one spelling of pki/keys.c, -1 when not given. */
static void test_key_type_arg(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc, type;
    } cases[] = {
        { NULL, 0, -1 },                          { "ed25519", 0, TG_KEY_ED25519 },
        { "rsa2048", 0, TG_KEY_RSA2048 },         { "ecdsa-p256", 0, TG_KEY_ECDSA_P256 },
        { "rsa", TG_EXIT_USAGE, -1 },             { "ecdsa", TG_EXIT_USAGE, -1 },
        { "RSA2048", TG_EXIT_USAGE, -1 },         { "", TG_EXIT_USAGE, -1 },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int type = 99;

        assert_int_equal(cli_key_type_arg("t", usage, cases[i].text, &type), cases[i].rc);
        assert_int_equal(type, cases[i].type);
    }
}

static void test_cluster_id_arg(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        int rc;
    } fixed[] = {
        { "cl01", 0 }, { "a", 0 }, { "a-b", 0 }, { "Bad_ID", TG_EXIT_USAGE },
        { "-a", TG_EXIT_USAGE }, { "a-", TG_EXIT_USAGE }, { "", TG_EXIT_USAGE },
    };
    char longest[64], too_long[65];

    memset(longest, 'a', 63);
    longest[63] = '\0';
    memset(too_long, 'a', 64);
    too_long[64] = '\0';

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        assert_int_equal(cli_cluster_id_arg("t", usage, "--cluster-id", fixed[i].id), fixed[i].rc);
    assert_int_equal(cli_cluster_id_arg("t", usage, "--cluster-id", longest), 0);
    assert_int_equal(cli_cluster_id_arg("t", usage, "--cluster-id", too_long), TG_EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_runs_again),
        cmocka_unit_test(test_too_many_options),
        cmocka_unit_test(test_output_arg),
        cmocka_unit_test(test_cluster_id_arg),
        cmocka_unit_test(test_key_type_arg),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
