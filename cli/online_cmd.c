/* online_cmd.c - the flag table and cluster opening of the online commands
 * (online_cmd.h). */
#include "online_cmd.h"

#include <string.h>

static int check_id(const char *cmd, const char *usage, const char *flag, const char *id)
{
    if (id == NULL)
        return cli_usage_error(cmd, usage, "%s is required", flag);
    return cli_cluster_id_arg(cmd, usage, flag, id);
}

int cli_online_parse(const char *cmd, const char *usage, unsigned allowed, unsigned required,
                     int argc, char **argv, online_opts *o)
{
    const char *output = "yaml", *timeout = NULL, *pubkey_format = NULL, *key_type = NULL;
    /* Where a flag of group g goes; NULL (refused) when the command lacks g. */
#define TAKES(g, dest) ((allowed & (g)) ? (dest) : NULL)
    const cli_option options[] = {
        { "kubeconfig", required_argument, 'K', TAKES(F_KUBECONFIG, &o->kubeconfig), NULL },
        { "context", required_argument, 'C', TAKES(F_KUBECONFIG, &o->context), NULL },
        { "remote-kubeconfig", required_argument, 'R', TAKES(F_REMOTE, &o->remote_kubeconfig),
          NULL },
        { "remote-context", required_argument, 'X', TAKES(F_REMOTE, &o->remote_context), NULL },
        { "namespace", required_argument, 'n', TAKES(F_NAMESPACE, &o->install_ns), NULL },
        { "cluster-id", required_argument, 'c', TAKES(F_CLUSTER_ID, &o->cluster_id), NULL },
        { "remote-cluster-id", required_argument, 'r', TAKES(F_REMOTE_ID, &o->remote_id), NULL },
        { "nonce", required_argument, 'N', TAKES(F_NONCE, &o->nonce), NULL },
        { "nonce-file", required_argument, 'F', TAKES(F_NONCE, &o->nonce_file), NULL },
        { "output", required_argument, 'o', TAKES(F_OUTPUT, &output), NULL },
        { "timeout", required_argument, 't', TAKES(F_TIMEOUT, &timeout), NULL },
        { "wait", no_argument, 'w', NULL, TAKES(F_WAIT, &o->wait) },
        { "force", no_argument, 'f', NULL, TAKES(F_FORCE, &o->force) },
        { "provider-side", no_argument, 'p', NULL, TAKES(F_FORCE, &o->provider_side) },
        { "remote-tenant-namespace", required_argument, 'T',
          TAKES(F_REMOTE_TENANT_NS, &o->remote_tenant_ns), NULL },
        { "public-key-format", required_argument, 'P', TAKES(F_PUBKEY_FORMAT, &pubkey_format), NULL },
        { "key-type", required_argument, 'Y', TAKES(F_PUBKEY_FORMAT, &key_type), NULL },
        { "revocable", no_argument, 'G', NULL, TAKES(F_PUBKEY_FORMAT, &o->revocable) },
        { "remote-namespace", required_argument, 'S', TAKES(F_REMOTE_NS, &o->remote_ns), NULL },
        { "auth-url", required_argument, 'U', TAKES(F_AUTH_URL, &o->auth_url), NULL },
        { "token", required_argument, 'k', TAKES(F_AUTH_URL, &o->token), NULL },
        { "auth-ca-hash", required_argument, 'H', TAKES(F_AUTH_URL, &o->auth_ca_hash), NULL },
        { "auth-ca", required_argument, 'A', TAKES(F_AUTH_URL, &o->auth_ca), NULL },
        { NULL, 0, 0, NULL, NULL },
    };
#undef TAKES
    int rc;

    memset(o, 0, sizeof(*o));
    o->install_ns = CLI_DEFAULT_INSTALL_NS;
    o->remote_ns = CLI_DEFAULT_INSTALL_NS;
    o->timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    if ((rc = cli_parse_options(cmd, usage, "n:o:", options, argc, argv)) != 0 ||
        (rc = cli_output_arg(cmd, usage, output, &o->as_json)) != 0 ||
        (rc = cli_pubkey_format_arg(cmd, usage, pubkey_format, &o->pubkey_format)) != 0 ||
        (rc = cli_key_type_arg(cmd, usage, key_type, &o->key_type)) != 0)
        return rc;
    if (timeout != NULL && (o->timeout_ms = cli_parse_duration(timeout)) < 0)
        return cli_usage_error(cmd, usage, "--timeout: expected a duration such as 30s, 2m or "
                               "1h (at most 24h), found \"%.32s\"", timeout);
    /* An id not required here is found in its cluster when it is not given. */
    if (((required & F_CLUSTER_ID) || o->cluster_id != NULL) &&
        (rc = check_id(cmd, usage, "--cluster-id", o->cluster_id)))
        return rc;
    if (((required & F_REMOTE_ID) || o->remote_id != NULL) &&
        (rc = check_id(cmd, usage, "--remote-cluster-id", o->remote_id)))
        return rc;
    if ((required & F_REMOTE) && o->remote_kubeconfig == NULL)
        return cli_usage_error(cmd, usage, "--remote-kubeconfig is required");
    return 0;
}

int cli_online_discover_ids(cli_flow *f, online_opts *o, cli_cluster *local, cli_cluster *remote)
{
    int rc;

    if (o->cluster_id == NULL) {
        if ((rc = cli_discover_cluster_id(f, local, o->install_ns, "--cluster-id",
                                          o->cluster_id_buf)) != 0)
            return rc;
        o->cluster_id = o->cluster_id_buf;
    }
    if (remote != NULL && o->remote_id == NULL) {
        if ((rc = cli_discover_cluster_id(f, remote, o->remote_ns, "--remote-cluster-id",
                                          o->remote_id_buf)) != 0)
            return rc;
        o->remote_id = o->remote_id_buf;
    }
    return 0;
}

int cli_online_open_one(const char *cmd, const online_opts *o, cli_cluster *c, cli_flow *f)
{
    int rc = cli_cluster_open(c, cmd, NULL, o->kubeconfig, o->context);

    if (rc == 0) {
        cli_flow_init(f, cmd, stderr, o->timeout_ms);
        f->key_type = o->key_type;
        cli_flow_bind(f, c);
    }
    return rc;
}

int cli_online_open_both(const char *cmd, const online_opts *o, cli_cluster *local,
                         cli_cluster *remote, cli_flow *f)
{
    int rc = cli_cluster_open(local, cmd, "local", o->kubeconfig, o->context);

    if (rc != 0)
        return rc;
    if ((rc = cli_cluster_open(remote, cmd, "remote", o->remote_kubeconfig, o->remote_context)) != 0)
        cli_cluster_close(local);
    else {
        cli_flow_init(f, cmd, stdout, o->timeout_ms);
        f->key_type = o->key_type;
        cli_flow_bind(f, local);
        cli_flow_bind(f, remote);
    }
    return rc;
}

void cli_online_close_both(cli_cluster *local, cli_cluster *remote)
{
    cli_cluster_close(local);
    cli_cluster_close(remote);
}
