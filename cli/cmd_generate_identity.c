/* cmd_generate_identity.c - `generate identity` (provider): once the signer
 * has issued the consumer's certificate, the Identity to apply on the
 * consumer (PROTOCOL.md 1 step 4). */
#include "online_cmd.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " generate identity --remote-cluster-id CONSUMER_ID\n"
    "           [--cluster-id PROVIDER_ID] [OPTIONS]\n"
    "\n"
    "On the provider: wait until tenantgate-signer has issued the consumer's\n"
    "certificate (Tenant status.authParams) and print the ControlPlane Identity\n"
    "controlplane-PROVIDER_ID to apply on the consumer.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          this (provider) cluster's id (default: its clusterid\n"
    "                           ConfigMap, see `install`)\n"
    "  --remote-cluster-id ID   the consumer cluster's id\n"
    "  -n, --namespace NS       Liqo's namespace, for the clusterid ConfigMap\n"
    "                           (default liqo)\n"
    "  --remote-tenant-namespace NS  the Identity's namespace on the consumer\n"
    "                           (default liqo-tenant-PROVIDER_ID)\n"
    COMMON_HELP
    "  --timeout DURATION       how long to wait for the Tenant status (default 2m)\n"
    "  -o, --output FMT         yaml (default) or json\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

int cli_generate_identity(int argc, char **argv)
{
    const char *cmd = "generate identity";
    char ns[128];
    json_object *identity = NULL;
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage,
                              F_KUBECONFIG | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_OUTPUT | F_TIMEOUT |
                                  F_REMOTE_TENANT_NS,
                              F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_online_open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    if ((rc = cli_online_discover_ids(&f, &o, &c, NULL)) == 0 &&
        (rc = cli_require_resources(&f, &c, "tenants")) == 0 &&
        (rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 0, ns, sizeof(ns))) == 0)
        rc = cli_provider_identity(&f, &c, ns, o.cluster_id, o.remote_id, o.remote_tenant_ns,
                                   &identity);
    cli_cluster_close(&c);
    return cli_print_result(cmd, rc, identity, o.as_json);
}
