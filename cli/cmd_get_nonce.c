/* cmd_get_nonce.c - `get nonce` (provider): the nonce already issued for a
 * consumer (PROTOCOL.md 4). */
#include "online_cmd.h"

#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id CONSUMER_ID [OPTIONS]\n"
    "\n"
    "On the provider: print the nonce issued for CONSUMER_ID, alone on one line.\n"
    "\n"
    "Options:\n"
    "  --remote-cluster-id ID   the consumer cluster's id\n"
    COMMON_HELP
    "  -h, --help               show this help\n"
    EXIT_HELP;

int cli_get_nonce(int argc, char **argv)
{
    const char *cmd = "get nonce";
    char ns[128], nonce[TG_NONCE_TEXT_LEN + 1];
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage, F_KUBECONFIG | F_REMOTE_ID, F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_online_open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 1, ns, sizeof(ns));
    if (rc == 0 && ns[0] == '\0')
        rc = cli_flow_fail(&f, &c, TG_EXIT_REJECTED, "no nonce for cluster %s: it has no tenant "
                           "namespace here (create one with `" TG_CLI_NAME " create nonce "
                           "--remote-cluster-id %s`)", o.remote_id, o.remote_id);
    if (rc == 0 && (rc = cli_read_nonce(&f, &c, ns, 0, nonce)) == 0)
        rc = cli_print_nonce(cmd, nonce);
    cli_cluster_close(&c);
    return rc;
}
