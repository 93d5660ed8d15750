/* cmd_create_nonce.c - `create nonce` (provider): the tenant namespace and
 * its nonce Secret, then the nonce the signer puts in it (PROTOCOL.md 4). */
#include "online_cmd.h"

#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " create nonce --remote-cluster-id CONSUMER_ID [OPTIONS]\n"
    "\n"
    "On the provider: ensure the tenant namespace liqo-tenant-CONSUMER_ID and its\n"
    "liqo-nonce Secret, wait until tenantgate-signer fills the nonce, and print it\n"
    "on standard output (progress goes to standard error). Hand the nonce to the\n"
    "consumer's administrator for `generate tenant`.\n"
    "\n"
    "Options:\n"
    "  --remote-cluster-id ID   the consumer cluster's id\n"
    COMMON_HELP
    "  --timeout DURATION       how long to wait for the signer (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

int cli_create_nonce(int argc, char **argv)
{
    const char *cmd = "create nonce";
    char ns[128], nonce[TG_NONCE_TEXT_LEN + 1];
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage, F_KUBECONFIG | F_REMOTE_ID | F_TIMEOUT, F_REMOTE_ID,
                              argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_online_open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    if ((rc = cli_ensure_tenant_namespace(&f, &c, o.remote_id, ns, sizeof(ns))) == 0 &&
        (rc = cli_ensure_nonce_secret(&f, &c, ns, o.remote_id)) == 0) {
        cli_flow_step(&f, NULL, "Nonce created");
        if ((rc = cli_read_nonce(&f, &c, ns, 1, nonce)) == 0) {
            cli_flow_step(&f, NULL, "Nonce generated successfully");
            cli_flow_step(&f, NULL, "Nonce retrieved");
            rc = cli_print_nonce(cmd, nonce);
        }
    }
    cli_cluster_close(&c);
    return rc;
}
