/* cmd_install.c - `install`: record this cluster's id where Liqo would keep
 * it (PROTOCOL.md 3), on a cluster without Liqo, so that the other commands,
 * tenantgate-signer and liqoctl all find it without --cluster-id. */
#include <string.h>

#include "cli.h"
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " install --cluster-id ID [OPTIONS]\n"
    "\n"
    "Create the namespace (default liqo) and in it the ConfigMap\n"
    TG_CLUSTERID_CONFIGMAP " labelled " TG_CLUSTERID_LABEL "=" TG_CLUSTERID_LABEL_VALUE "\n"
    "with data." TG_CLUSTERID_KEY "=ID, as Liqo's installer does. Run it again and it\n"
    "changes nothing; it refuses to change an id that is already recorded.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          this cluster's id\n"
    "  -n, --namespace NS       Liqo's namespace (default liqo)\n"
    "  --kubeconfig FILE        kubeconfig of this cluster (':'-list; default $KUBECONFIG,\n"
    "                           then ~/.kube/config), as kubectl reads it\n"
    "  --context NAME           kubeconfig context (default: current-context)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Exit status: 0 done (or already so), 1 refused or failed, 2 usage or local\n"
    "error, 3 cluster unreachable.\n";

int cmd_install(int argc, char **argv)
{
    const char *cmd = "install";
    const char *kubeconfig = NULL, *context = NULL, *ns = CLI_DEFAULT_INSTALL_NS, *id = NULL;
    const cli_option options[] = {
        { "kubeconfig", required_argument, 'K', &kubeconfig, NULL },
        { "context", required_argument, 'C', &context, NULL },
        { "namespace", required_argument, 'n', &ns, NULL },
        { "cluster-id", required_argument, 'c', &id, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    cli_cluster c;
    cli_flow f;
    int rc = cli_parse_options(cmd, usage, "n:", options, argc, argv);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (id == NULL)
        return cli_usage_error(cmd, usage, "--cluster-id is required");
    if ((rc = cli_cluster_id_arg(cmd, usage, "--cluster-id", id)) != 0)
        return rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, kubeconfig, context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stderr, CLI_DEFAULT_TIMEOUT_MS);
    cli_flow_bind(&f, &c);
    rc = cli_install_cluster_id(&f, &c, ns, id);
    cli_cluster_close(&c);
    return rc;
}
