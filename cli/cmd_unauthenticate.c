/* cmd_unauthenticate.c - `unauthenticate`: undo authenticate, the Identity
 * on the consumer and the Tenant on the provider, while no ResourceSlice
 * remains. --force and --provider-side, for a peering whose other side is
 * gone, are in cmd_unauthenticate_force.c. */
#include "online_cmd.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " unauthenticate --remote-kubeconfig FILE\n"
    "           [--cluster-id CONSUMER_ID] [--remote-cluster-id PROVIDER_ID] [OPTIONS]\n"
    "       " TG_CLI_NAME " unauthenticate --force --remote-cluster-id PROVIDER_ID\n"
    "           [--remote-kubeconfig FILE] [OPTIONS]                 (on the consumer)\n"
    "       " TG_CLI_NAME " unauthenticate --provider-side --remote-cluster-id CONSUMER_ID\n"
    "           [OPTIONS]                                            (on the provider)\n"
    "\n"
    "Undo `authenticate`: delete the Identity controlplane-PROVIDER_ID on the\n"
    "consumer (local) and the Tenant CONSUMER_ID on the provider (remote), so the\n"
    "consumer loses its access. Refused while ResourceSlices remain in either\n"
    "tenant namespace.\n"
    "\n"
    "--force, for a provider that is gone: deletes the consumer's tenant namespace\n"
    "liqo-tenant-PROVIDER_ID with its ResourceSlices, Identities, Renews,\n"
    "NamespaceMaps and kubeconfig Secrets, taking off the replicator's finalizers\n"
    "that wait for the provider; tries the provider once (20s) and prints one line\n"
    "per object left there. Exit 0 once the consumer's side is clear.\n"
    "--provider-side, on the provider: deletes the Tenant of CONSUMER_ID (its\n"
    "finalizer removed when tenantgate-signer has not released it within 30s), the\n"
    "consumer's CSRs and ClusterRoleBinding, and its tenant namespace.\n"
    "\n"
    "Options:\n"
    IDS_HELP
    COMMON_HELP
    REMOTE_HELP
    "  -n, --namespace NS       consumer's Liqo namespace (default liqo)\n"
    "  --remote-namespace NS    provider's Liqo namespace (default liqo)\n"
    "  --wait                   wait until both are gone, the Identity's dependents first\n"
    "  --force                  clear the consumer's side without the provider\n"
    "  --provider-side          clear the provider's side of consumer --remote-cluster-id\n"
    "  --timeout DURATION       for --wait (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

int cmd_unauthenticate(int argc, char **argv)
{
    const char *cmd = "unauthenticate";
    char lns[128], rns[128], idname[128];
    int lcount = 0, rcount = 0, existed = 0;
    online_opts o;
    cli_cluster local, remote;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage,
                              F_KUBECONFIG | F_REMOTE | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT |
                                  F_WAIT | F_REMOTE_NS | F_FORCE,
                              0, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.force && o.provider_side)
        return cli_usage_error(cmd, usage, "--force and --provider-side: choose one (the consumer's "
                               "side or the provider's)");
    if ((o.force || o.provider_side) && o.remote_id == NULL)
        return cli_usage_error(cmd, usage, "%s needs --remote-cluster-id: %s", o.force ? "--force" : "--provider-side",
                               o.force ? "the provider's id (a provider that is gone cannot say it)"
                                       : "the consumer's id");
    if (o.force)
        return cli_unauthenticate_force(cmd, &o);
    if (o.provider_side)
        return cli_unauthenticate_provider_side(cmd, &o);
    if (o.remote_kubeconfig == NULL)
        return cli_usage_error(cmd, usage, "--remote-kubeconfig is required (without it: --force)");
    if ((rc = cli_online_open_both(cmd, &o, &local, &remote, &f)) != 0)
        return rc;
    if ((rc = cli_online_discover_ids(&f, &o, &local, &remote)) != 0)
        goto out;
    cli_identity_name(idname, sizeof(idname), o.remote_id);
    if ((rc = cli_require_resources(&f, &local, "identities")) != 0 ||
        (rc = cli_require_resources(&f, &remote, "tenants")) != 0 ||
        (rc = cli_find_tenant_namespace(&f, &local, o.remote_id, 1, lns, sizeof(lns))) != 0 ||
        (rc = cli_find_tenant_namespace(&f, &remote, o.cluster_id, 1, rns, sizeof(rns))) != 0)
        goto out;
    if ((lns[0] && (rc = cli_count_resourceslices(&f, &local, lns, &lcount)) != 0) ||
        (rns[0] && (rc = cli_count_resourceslices(&f, &remote, rns, &rcount)) != 0))
        goto out;
    if (lcount > 0 || rcount > 0) {
        rc = cli_flow_fail(&f, lcount > 0 ? &local : &remote, TG_EXIT_REJECTED,
                           "%d ResourceSlice(s) remain in namespace %s: release them first "
                           "(kubectl get resourceslices.authentication.liqo.io -n %s)",
                           lcount > 0 ? lcount : rcount,
                           lcount > 0 ? lns : rns, lcount > 0 ? lns : rns);
        goto out;
    }
    if (lns[0]) {
        /* With --wait its Renew goes first, and with it the Renew's copy on
         * the provider, while the Tenant still grants the delete. */
        if ((rc = cli_delete(&f, &local, "identities", lns, idname,
                             o.wait ? CLI_DELETE_WAIT | CLI_DELETE_DEPENDENTS_FIRST : 0, &existed)) != 0)
            goto out;
        cli_flow_step(&f, "local", existed ? "Identity deleted" : "Identity already absent");
    } else {
        cli_flow_step(&f, "local", "Identity already absent (no tenant namespace)");
    }
    if (rns[0]) {
        if ((rc = cli_delete(&f, &remote, "tenants", rns, o.cluster_id, o.wait ? CLI_DELETE_WAIT : 0, &existed)) != 0)
            goto out;
        cli_flow_step(&f, "remote", existed ? "Tenant deleted" : "Tenant already absent");
    } else {
        cli_flow_step(&f, "remote", "Tenant already absent (no tenant namespace)");
    }
out:
    cli_online_close_both(&local, &remote);
    return rc;
}
