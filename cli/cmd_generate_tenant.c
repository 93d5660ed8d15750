/* cmd_generate_tenant.c - `generate tenant` online (consumer): the nonce
 * signed by the consumer's signer, the key read from the cluster, the Tenant
 * printed (PROTOCOL.md 1 step 2). --offline is cmd_generate.c's. */
#include "online_cmd.h"

#include <openssl/crypto.h>

#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " generate tenant --remote-cluster-id PROVIDER_ID\n"
    "           (--nonce NONCE | --nonce-file FILE) [--cluster-id CONSUMER_ID] [OPTIONS]\n"
    "       " TG_CLI_NAME " generate tenant --offline ...   (see --offline --help)\n"
    "\n"
    "On the consumer: ensure the tenant namespace liqo-tenant-PROVIDER_ID and the\n"
    "liqo-signed-nonce Secret, wait until tenantgate-signer signs the nonce, build\n"
    "a CSR for CN=CONSUMER_ID, O=liqo.io with the cluster key (read from the\n"
    "authentication-keys Secret: needs get on secrets there) and print the Tenant\n"
    "to apply on the provider. Progress goes to standard error.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          this (consumer) cluster's id (default: its clusterid\n"
    "                           ConfigMap, see `install`)\n"
    "  --remote-cluster-id ID   the provider cluster's id\n"
    "  --nonce NONCE            the nonce the provider issued (88 characters)\n"
    "  --nonce-file FILE        read it from FILE ('-' = standard input)\n"
    "  -n, --namespace NS       Liqo's namespace: authentication-keys and the\n"
    "                           clusterid ConfigMap (default liqo)\n"
    PUBKEY_HELP
    COMMON_HELP
    "  --timeout DURATION       how long to wait for the signer (default 2m)\n"
    "  -o, --output FMT         yaml (default) or json\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

int cli_generate_tenant_online(int argc, char **argv)
{
    const char *cmd = "generate tenant";
    char nonce[TG_NONCE_TEXT_LEN + 1];
    json_object *tenant = NULL;
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage,
                              F_KUBECONFIG | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_NONCE | F_OUTPUT |
                                  F_TIMEOUT | F_PUBKEY_FORMAT,
                              F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_nonce_arg(cmd, usage, o.nonce, o.nonce_file, nonce)) != 0)
        return rc;
    if ((rc = cli_online_open_one(cmd, &o, &c, &f)) == 0) {
        if ((rc = cli_online_discover_ids(&f, &o, &c, NULL)) == 0)
            rc = cli_consumer_tenant(&f, &c, o.install_ns, o.cluster_id, o.remote_id, nonce,
                                     o.pubkey_format, o.revocable, &tenant);
        cli_cluster_close(&c);
    }
    OPENSSL_cleanse(nonce, sizeof(nonce));
    return cli_print_result(cmd, rc, tenant, o.as_json);
}
