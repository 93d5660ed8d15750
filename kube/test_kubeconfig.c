/* test_kubeconfig.c - kubeconfig files (single, merged, -data and file
 * forms, contexts) and the in-cluster loader, on files the test writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/kubeconfig.h"

static char dir[256];

static void write_file(const char *name, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static const char *in_dir(const char *name)
{
    static char path[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
    return path[i];
}

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/tg-kubeconfig-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    write_file("ca.pem", "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n");
    write_file("client.pem", "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n");
    write_file("client.key", "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n");
    write_file("token", "  tok-from-file\n");
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char base_kubeconfig[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: kind-provider\n"
    "clusters:\n"
    "- name: kind-provider\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority: ca.pem\n"
    "- name: insecure\n"
    "  cluster:\n"
    "    server: https://10.1.2.3:6443\n"
    "    insecure-skip-tls-verify: true\n"
    "    proxy-url: http://proxy:3128\n"
    "contexts:\n"
    "- name: kind-provider\n"
    "  context:\n"
    "    cluster: kind-provider\n"
    "    user: cert-files\n"
    "    namespace: liqo\n"
    "- name: data\n"
    "  context: {cluster: kind-provider, user: cert-data}\n"
    "- name: tokens\n"
    "  context: {cluster: insecure, user: tokens}\n"
    "- name: static-token\n"
    "  context: {cluster: insecure, user: static-token}\n"
    "users:\n"
    "- name: cert-files\n"
    "  user:\n"
    "    client-certificate: client.pem\n"
    "    client-key: client.key\n"
    "- name: cert-data\n"
    "  user:\n"
    /* base64 of "CERTDATA" and "KEYDATA"; the -data form wins over the file */
    "    client-certificate-data: Q0VSVERBVEE=\n"
    "    client-key-data: S0VZREFUQQ==\n"
    "    client-key: missing.key\n"
    "- name: tokens\n"
    "  user:\n"
    "    token: static\n"
    "    tokenFile: token\n"
    "- name: static-token\n"
    "  user:\n"
    "    token: abc.def\n";

static void test_client_cert_files(void **state)
{
    write_file("config", base_kubeconfig);
    tg_kube_config cfg;
    char err[512];
    const char *paths[] = {in_dir("config")};
    if (tg_kube_config_load_files(&cfg, paths, 1, NULL, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");   /* trailing '/' dropped */
    assert_string_equal(cfg.context, "kind-provider");
    assert_string_equal(cfg.namespace, "liqo");
    assert_non_null(strstr(cfg.ca, "\nCA\n"));
    assert_int_equal(cfg.ca_len, strlen(cfg.ca));
    assert_non_null(strstr(cfg.cert, "CLIENT"));
    assert_non_null(strstr(cfg.key, "KEY"));
    assert_null(cfg.token);
    assert_false(cfg.insecure_skip_tls_verify);
    tg_kube_config_free(&cfg);
}

static void test_data_wins_and_context_override(void **state)
{
    write_file("config", base_kubeconfig);
    tg_kube_config cfg;
    char err[512];
    const char *paths[] = {in_dir("config")};
    if (tg_kube_config_load_files(&cfg, paths, 1, "data", err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.context, "data");
    assert_null(cfg.namespace);
    assert_int_equal(cfg.cert_len, 8);
    assert_memory_equal(cfg.cert, "CERTDATA", 8);
    assert_int_equal(cfg.key_len, 7);
    assert_memory_equal(cfg.key, "KEYDATA", 7);
    tg_kube_config_free(&cfg);
}

static void test_tokens_and_insecure(void **state)
{
    write_file("config", base_kubeconfig);
    tg_kube_config cfg;
    char err[512];
    const char *paths[] = {in_dir("config")};
    if (tg_kube_config_load_files(&cfg, paths, 1, "tokens", err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.token, "tok-from-file");   /* the file wins, trimmed */
    assert_string_equal(cfg.token_file, in_dir("token"));
    assert_true(cfg.insecure_skip_tls_verify);
    assert_null(cfg.ca);
    assert_string_equal(cfg.proxy_url, "http://proxy:3128");
    tg_kube_config_free(&cfg);

    if (tg_kube_config_load_files(&cfg, paths, 1, "static-token", err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.token, "abc.def");
    assert_null(cfg.token_file);
    tg_kube_config_free(&cfg);
}

/* kubectl's rule: for each name, and for current-context, the first file wins. */
static void test_merge_first_file_wins(void **state)
{
    write_file("one",
               "current-context: from-one\n"
               "clusters:\n"
               "- name: shared\n"
               "  cluster: {server: 'https://one:1'}\n");
    write_file("two",
               "current-context: from-two\n"
               "clusters:\n"
               "- name: shared\n"
               "  cluster: {server: 'https://two:2'}\n"
               "- name: only-two\n"
               "  cluster: {server: 'https://two-only:3'}\n"
               "contexts:\n"
               "- name: from-one\n"
               "  context: {cluster: shared, user: u}\n"
               "- name: from-two\n"
               "  context: {cluster: only-two}\n"
               "users:\n"
               "- name: u\n"
               "  user: {token: from-two-token}\n");
    tg_kube_config cfg;
    char err[512];
    const char *paths[] = {in_dir("one"), "", in_dir("two")};   /* empty entries are skipped */
    if (tg_kube_config_load_files(&cfg, paths, 3, NULL, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.context, "from-one");
    assert_string_equal(cfg.server, "https://one:1");
    assert_string_equal(cfg.token, "from-two-token");
    tg_kube_config_free(&cfg);

    if (tg_kube_config_load_files(&cfg, paths, 3, "from-two", err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.server, "https://two-only:3");
    assert_null(cfg.token);
    tg_kube_config_free(&cfg);

    /* The same through $KUBECONFIG. */
    char env[1200];
    snprintf(env, sizeof(env), "%s::%s", in_dir("two"), in_dir("one"));
    setenv("KUBECONFIG", env, 1);
    int rc = tg_kube_config_load(&cfg, NULL, NULL, err, sizeof(err));
    unsetenv("KUBECONFIG");
    if (rc != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.context, "from-two");
    assert_string_equal(cfg.server, "https://two-only:3");
    tg_kube_config_free(&cfg);
}

static void test_json_kubeconfig(void **state)
{
    const char json[] = "{\"current-context\":\"c\",\"clusters\":[{\"name\":\"k\",\"cluster\":{\"server\":"
                        "\"http://127.0.0.1:8080\"}}],\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"k\"}}]}";
    tg_kube_config cfg;
    char err[512];
    if (tg_kube_config_parse(&cfg, json, sizeof(json) - 1, NULL, NULL, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.server, "http://127.0.0.1:8080");
    tg_kube_config_free(&cfg);
}

/* Each broken kubeconfig fails with a message naming the problem. */
static void test_errors(void **state)
{
    static const struct {
        const char *context, *text, *want;
    } cases[] = {
        {NULL, "clusters: []\n", "no current-context"},
        {"nope", "current-context: x\n", "context \"nope\" not found"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n", "cluster \"k\" not found"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {user: u}\n", "names no cluster"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n", "user \"u\" not found"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {certificate-authority-data: QUJD}\n", "has no server"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'ftp://x'}\n", "not an http(s) URL"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: 'not base64!'}\n",
         "\"certificate-authority-data\" is not valid base64"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority: /nonexistent/ca.pem}\n",
         "/nonexistent/ca.pem"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: 'yes'}\n",
         "must be true or false"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: true, "
               "certificate-authority-data: QUJD}\n", "not allowed"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n"
               "users:\n- name: u\n  user: {client-certificate-data: QUJD}\n", "needs a client key"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n"
               "users:\n- name: u\n  user: {exec: {command: aws}}\n", "exec credential plugins are not supported"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
               "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n"
               "users:\n- name: u\n  user: {tokenFile: /nonexistent/token}\n", "/nonexistent/token"},
        {NULL, "current-context: c\ncontexts: {c: 1}\n", "\"contexts\" must be a list"},
        {NULL, "current-context: c\ncontexts:\n- name: c\n", "has no \"context\" mapping"},
        {NULL, "current-context: [a]\n", "must be a string"},
        {NULL, "- a\n- b\n", "expected a mapping"},
        {NULL, "a: [\n", "kubeconfig:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_kube_config cfg;
        char err[512] = "";
        int rc = tg_kube_config_parse(&cfg, cases[i].text, strlen(cases[i].text), dir, cases[i].context,
                                      err, sizeof(err));
        if (rc != -1)
            fail_msg("case %zu accepted", i);
        if (strstr(err, cases[i].want) == NULL)
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, cases[i].want);
        assert_null(cfg.server);   /* nothing half-filled is left behind */
    }
}

static void test_missing_files(void **state)
{
    tg_kube_config cfg;
    char err[512];
    const char *paths[] = {"/nonexistent/kubeconfig"};
    assert_int_equal(tg_kube_config_load_files(&cfg, paths, 1, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
    assert_int_equal(tg_kube_config_load(&cfg, "/nonexistent/a:/nonexistent/b", NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/a"));
    const char *empty[] = {""};
    assert_int_equal(tg_kube_config_load_files(&cfg, empty, 1, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no kubeconfig"));
    /* A directory is not a kubeconfig. */
    paths[0] = dir;
    assert_int_equal(tg_kube_config_load_files(&cfg, paths, 1, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a regular file"));
}

static void test_in_cluster(void **state)
{
    char sa[512];
    snprintf(sa, sizeof(sa), "%s/sa", dir);
    assert_int_equal(mkdir(sa, 0700), 0);
    write_file("sa/token", "eyJhbGciOiJSUzI1NiJ9.payload.sig\n");
    write_file("sa/ca.crt", "-----BEGIN CERTIFICATE-----\nCLUSTERCA\n-----END CERTIFICATE-----\n");
    write_file("sa/namespace", "liqo");

    tg_kube_config cfg;
    char err[512];
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(tg_kube_config_in_cluster(&cfg, sa, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));

    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    if (tg_kube_config_in_cluster(&cfg, sa, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.token, "eyJhbGciOiJSUzI1NiJ9.payload.sig");
    assert_string_equal(cfg.token_file, in_dir("sa/token"));
    assert_non_null(strstr(cfg.ca, "CLUSTERCA"));
    assert_string_equal(cfg.namespace, "liqo");
    tg_kube_config_free(&cfg);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(tg_kube_config_in_cluster(&cfg, sa, err, sizeof(err)), 0);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    tg_kube_config_free(&cfg);

    setenv("KUBERNETES_SERVICE_PORT", "443/x", 1);
    assert_int_equal(tg_kube_config_in_cluster(&cfg, sa, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a port"));
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);

    /* The token is re-read from this file by the client: an empty file is an error, not "". */
    write_file("sa/token", " \n");
    assert_int_equal(tg_kube_config_in_cluster(&cfg, sa, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty"));
    write_file("sa/token", "rotated\n");
    char *tok;
    assert_int_equal(tg_kube_read_token(in_dir("sa/token"), &tok, err, sizeof(err)), 0);
    assert_string_equal(tok, "rotated");
    free(tok);

    /* Without a kubeconfig anywhere, the loader picks in-cluster when the env says so. */
    unsetenv("KUBECONFIG");
    if (access(TG_KUBE_SA_DIR, F_OK) != 0) {   /* not when the tests themselves run in a pod */
        assert_int_equal(tg_kube_config_load(&cfg, NULL, NULL, err, sizeof(err)), -1);
        assert_non_null(strstr(err, TG_KUBE_SA_DIR));   /* it tried the in-cluster mount */
    }
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_cert_files),
        cmocka_unit_test(test_data_wins_and_context_override),
        cmocka_unit_test(test_tokens_and_insecure),
        cmocka_unit_test(test_merge_first_file_wins),
        cmocka_unit_test(test_json_kubeconfig),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_files),
        cmocka_unit_test(test_in_cluster),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
