/* test_remote_pool.c - a kubeconfig Secret is data written by whoever may
 * write Secrets: the remote client refuses one that would make the signer
 * read a file of its own host (a token file, a certificate or key path) and
 * send it to the server the Secret names, and builds one from inline
 * credentials. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "signer/remote_pool.h"

#define KC_HEAD                                                                                        \
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"                                               \
    "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n"                              \
    "    certificate-authority-data: " CA_B64 "\n"                                                     \
    "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"                                  \
    "users:\n- name: u\n  user:\n"
/* any PEM-looking CA: the client is only built, never connected */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1BQT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

#define TOKEN_FILE "/tmp/tg-test-remote-pool-token"

typedef struct pool_case {
    const char *what;
    const char *user;       /* the user stanza's fields */
    int ok;
} pool_case;

static const pool_case cases[] = {
    {"inline token", "    token: abc\n", 1},
    /* a file that exists here, as the signer's own ServiceAccount token does in a Pod */
    {"token file of this host", "    tokenFile: " TOKEN_FILE "\n", 0},
    {"client certificate path", "    client-certificate: /etc/kubernetes/pki/admin.crt\n"
                                "    client-key: /etc/kubernetes/pki/admin.key\n", 0},
    {"relative key path", "    client-certificate: a.crt\n    client-key: a.key\n", 0},
};

static void test_kubeconfig_files_are_refused(void **state)
{
    FILE *f = fopen(TOKEN_FILE, "w");

    (void)state;
    assert_non_null(f);
    fputs("token-of-this-host\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_remote_pool *p = tg_remote_pool_new();
        tg_remote_client c;
        char kc[2048], err[256] = "";
        int n = snprintf(kc, sizeof(kc), "%s%s", KC_HEAD, cases[i].user);
        int rc;

        assert_non_null(p);
        memset(&c, 0, sizeof(c));
        rc = tg_remote_pool_take(p, "liqo-tenant-p/kubeconfig-controlplane-p", kc, (size_t)n, &c, err,
                                 sizeof(err));
        if (cases[i].ok != (rc == 0))
            fail_msg("%s: take returned %d (%s)", cases[i].what, rc, err);
        if (rc == 0) {
            assert_non_null(c.api);
            tg_remote_pool_give(p, &c);
        } else {
            assert_true(err[0] != '\0');
            assert_null(strstr(err, "abc"));
        }
        tg_remote_pool_free(p);
    }
    remove(TOKEN_FILE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_files_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
