/* cmd_authenticate.c - `authenticate` (consumer, with access to both
 * clusters): the whole handshake of PROTOCOL.md 1, one progress line a step. */
#include "online_cmd.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "kube/json.h"
#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " authenticate --remote-kubeconfig FILE\n"
    "           [--cluster-id CONSUMER_ID] [--remote-cluster-id PROVIDER_ID] [OPTIONS]\n"
    "       " TG_CLI_NAME " authenticate --auth-url URL --token ID.SECRET\n"
    "           (--auth-ca-hash sha256:HEX | --auth-ca FILE) [OPTIONS]\n"
    "\n"
    "From the consumer, with access to both clusters: the whole handshake. The\n"
    "(local) cluster is the consumer (--kubeconfig), the (remote) one the provider\n"
    "(--remote-kubeconfig). Nonce on the provider, signed nonce and Tenant on the\n"
    "consumer, Tenant applied on the provider, Identity applied on the consumer;\n"
    "one progress line per step. tenantgate-signer must run on both clusters.\n"
    "\n"
    "With --auth-url instead, only the consumer's kubeconfig: the provider's\n"
    "tenantgate-auth hands out the nonce and creates the Tenant for whoever holds\n"
    "a bootstrap token (`create token` on the provider prints this command line).\n"
    "\n"
    "Options:\n"
    IDS_HELP
    COMMON_HELP
    REMOTE_HELP
    "  -n, --namespace NS       consumer's Liqo namespace (authentication-keys, the\n"
    "                           clusterid ConfigMap; default liqo)\n"
    "  --remote-namespace NS    provider's Liqo namespace (its clusterid ConfigMap;\n"
    "                           default liqo)\n"
    PUBKEY_HELP
    "  --auth-url URL           the provider's tenantgate-auth (https://...)\n"
    "  --token ID.SECRET        a bootstrap token of the provider\n"
    "  --auth-ca-hash sha256:HEX  trust the auth server whose chain holds a\n"
    "                           certificate with this public key (SPKI) hash\n"
    "  --auth-ca FILE           or trust the CA certificate(s) in FILE\n"
    "  --timeout DURATION       for the whole handshake (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

/* The nonce read, signed by the consumer and put in a Tenant, and the Tenant
 * applied on the provider. A nonce can be replaced while the consumer signs it
 * (the signer rotates it when the last peering's Tenant goes): read again just
 * before the apply, and sign the new one, a few times at most. */
static int signed_tenant_applied(cli_flow *f, const online_opts *o, cli_cluster *local, cli_cluster *remote,
                                 const char *lns, const char *rns, char nonce[TG_NONCE_TEXT_LEN + 1])
{
    char now[TG_NONCE_TEXT_LEN + 1];
    json_object *tenant = NULL;
    EVP_PKEY *key = NULL;
    int rc, attempt;

    if ((rc = cli_read_nonce(f, remote, rns, 1, nonce)) != 0)
        return rc;
    cli_flow_step(f, "remote", "Nonce generated successfully");
    cli_flow_step(f, "remote", "Nonce retrieved");
    if ((rc = cli_cluster_key(f, local, o->install_ns, &key)) != 0)
        return rc;
    for (attempt = 0;; attempt++) {
        unsigned char *sig = NULL;
        size_t sig_len = 0;

        rc = cli_consumer_signature(f, local, lns, o->remote_id, nonce, key, &sig, &sig_len);
        if (rc == 0 &&
            (tenant = cli_tenant_from_key(key, o->cluster_id, sig, sig_len, o->pubkey_format, o->revocable)) == NULL)
            rc = cli_flow_fail(f, local, TG_EXIT_USAGE, "cannot build the Tenant");
        free(sig);
        if (rc == 0)
            rc = cli_read_nonce(f, remote, rns, 1, now);
        if (rc != 0 || strcmp(now, nonce) == 0 || attempt == 2)
            break;
        json_object_put(tenant);
        tenant = NULL;
        memcpy(nonce, now, sizeof(now));
    }
    EVP_PKEY_free(key);
    OPENSSL_cleanse(now, sizeof(now));
    if (rc == 0) {
        cli_flow_step(f, "local", "Tenant correctly generated");
        /* The provider's tenant namespace may not be the conventional name. */
        json_object_object_add(tg_json_path(tenant, "metadata", NULL), "namespace", json_object_new_string(rns));
        rc = cli_apply(f, remote, "tenants", tenant, NULL);
    }
    json_object_put(tenant);
    return rc;
}

int cmd_authenticate(int argc, char **argv)
{
    const char *cmd = "authenticate";
    char lns[128], rns[128], nonce[TG_NONCE_TEXT_LEN + 1], secret[256];
    json_object *tenant = NULL, *identity = NULL;
    const char *idname;
    online_opts o;
    cli_cluster local, remote;
    cli_flow f;
    int rc = cli_online_parse(cmd, usage,
                              F_KUBECONFIG | F_REMOTE | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT |
                                  F_PUBKEY_FORMAT | F_REMOTE_NS | F_AUTH_URL,
                              0, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.auth_url != NULL || o.token != NULL || o.auth_ca_hash != NULL || o.auth_ca != NULL)
        return cli_authenticate_url(cmd, usage, &o);
    if (o.remote_kubeconfig == NULL)
        return cli_usage_error(cmd, usage, "--remote-kubeconfig (or --auth-url and --token) is required");
    if (o.cluster_id != NULL && o.remote_id != NULL && strcmp(o.cluster_id, o.remote_id) == 0)
        return cli_usage_error(cmd, usage, "--cluster-id and --remote-cluster-id must differ");
    if ((rc = cli_online_open_both(cmd, &o, &local, &remote, &f)) != 0)
        return rc;
    nonce[0] = '\0';
    if ((rc = cli_online_discover_ids(&f, &o, &local, &remote)) != 0)
        goto out;
    if (strcmp(o.cluster_id, o.remote_id) == 0) {
        rc = cli_flow_fail(&f, NULL, TG_EXIT_REJECTED, "both clusters have the id %s: a cluster "
                           "cannot peer with itself", o.cluster_id);
        goto out;
    }
    /* Fail before changing anything when either side lacks the CRDs. */
    if ((rc = cli_require_resources(&f, &local, "identities")) != 0 ||
        (rc = cli_require_resources(&f, &remote, "tenants")) != 0)
        goto out;
    if ((rc = cli_ensure_tenant_namespace(&f, &local, o.remote_id, lns, sizeof(lns))) != 0)
        goto out;
    cli_flow_step(&f, "local", "Tenant namespace correctly ensured");
    if ((rc = cli_ensure_tenant_namespace(&f, &remote, o.cluster_id, rns, sizeof(rns))) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Tenant namespace correctly ensured");
    /* Right after an unauthenticate the last peering's Tenant and Identity
     * may still be in their finalizers: the Tenant's rotates the nonce, and
     * an apply onto either would go with it. Wait for them to go first. */
    cli_identity_name(secret, sizeof(secret), o.remote_id);
    if ((rc = cli_wait_not_terminating(&f, &remote, "tenants", rns, o.cluster_id)) != 0 ||
        (rc = cli_wait_not_terminating(&f, &local, "identities", lns, secret)) != 0)
        goto out;
    if ((rc = cli_ensure_nonce_secret(&f, &remote, rns, o.cluster_id)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce secret ensured");
    if ((rc = signed_tenant_applied(&f, &o, &local, &remote, lns, rns, nonce)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Tenant correctly applied on provider cluster");
    if ((rc = cli_provider_identity(&f, &remote, rns, o.remote_id, o.cluster_id, lns, &identity)) != 0)
        goto out;
    if ((rc = cli_apply(&f, &local, "identities", identity, NULL)) != 0)
        goto out;
    cli_flow_step(&f, "local", "Identity correctly applied on consumer cluster");
    idname = tg_json_path_string(identity, "metadata", "name", NULL);
    if ((rc = cli_wait_identity(&f, &local, lns, idname, secret, sizeof(secret))) != 0)
        goto out;
    cli_flow_step(&f, "local", "Identity status is filled");
out:
    OPENSSL_cleanse(nonce, sizeof(nonce));
    json_object_put(tenant);
    json_object_put(identity);
    cli_online_close_both(&local, &remote);
    return rc;
}
