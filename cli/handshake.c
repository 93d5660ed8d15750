/* handshake.c - the two halves of the handshake that a single-cluster command
 * and authenticate share: the consumer's signed nonce and Tenant, the
 * provider's Identity (PROTOCOL.md 1). Built on the steps (flow_*.c). */
#include "online.h"

#include <stdlib.h>

#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"
#include "pki/keys.h"

int cli_consumer_signature(cli_flow *f, cli_cluster *c, const char *ns, const char *provider_id,
                           const char *nonce, EVP_PKEY *key, unsigned char **sig, size_t *sig_len)
{
    int rc = cli_ensure_signed_nonce_secret(f, c, ns, provider_id, nonce);

    if (rc != 0)
        return rc;
    cli_flow_step(f, c->scope, "Signed nonce secret ensured");
    if ((rc = cli_wait_signed_nonce(f, c, ns, nonce, key, sig, sig_len)) != 0)
        return rc;
    cli_flow_step(f, c->scope, "Nonce is signed");
    cli_flow_step(f, c->scope, "Signed nonce retrieved");
    return 0;
}

json_object *cli_tenant_from_key(EVP_PKEY *key, const char *own_id, const unsigned char *sig,
                                 size_t sig_len, tg_pubkey_format format, int revocable)
{
    size_t pub_len = 0;
    unsigned char *pub = tg_key_public_spec(key, format, &pub_len);
    char group[TG_CERT_GROUP_MAX];
    /* a fresh group each time: a new Tenant is a new certificate, revocable on its own */
    int grouped = revocable && tg_cert_group_make(own_id, group, sizeof(group)) == 0;
    char *csr = revocable && !grouped ? NULL
                                      : tg_csr_build_group(key, own_id, TG_CSR_ORGANIZATION, grouped ? group : NULL,
                                                           NULL);
    json_object *tenant = NULL;

    if (pub != NULL && csr != NULL)
        tenant = tg_tenant_to_json(own_id, pub, pub_len, csr, sig, sig_len);
    free(pub);
    free(csr);
    return tenant;
}

int cli_consumer_tenant(cli_flow *f, cli_cluster *c, const char *install_ns, const char *own_id,
                        const char *provider_id, const char *nonce, tg_pubkey_format format, int revocable,
                        json_object **tenant)
{
    char ns[128];
    EVP_PKEY *key = NULL;
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    int rc;

    *tenant = NULL;
    if ((rc = cli_cluster_key(f, c, install_ns, &key)) != 0)
        return rc;
    if ((rc = cli_ensure_tenant_namespace(f, c, provider_id, ns, sizeof(ns))) == 0) {
        cli_flow_step(f, c->scope, "Tenant namespace correctly ensured");
        rc = cli_consumer_signature(f, c, ns, provider_id, nonce, key, &sig, &sig_len);
    }
    if (rc == 0 && (*tenant = cli_tenant_from_key(key, own_id, sig, sig_len, format, revocable)) == NULL)
        rc = cli_flow_fail(f, c, TG_EXIT_USAGE, "cannot build the Tenant (public key or CSR)");
    if (rc == 0)
        cli_flow_step(f, c->scope, "Tenant correctly generated");
    free(sig);
    EVP_PKEY_free(key);
    return rc;
}

int cli_provider_identity(cli_flow *f, cli_cluster *c, const char *tenant_ns, const char *provider_id,
                          const char *remote_id, const char *identity_ns, json_object **identity)
{
    char err[256], def_ns[128];
    json_object *tenant = NULL;
    int rc = cli_wait_tenant(f, c, tenant_ns, remote_id, 1, &tenant);

    *identity = NULL;
    if (rc != 0)
        return rc;
    cli_flow_step(f, c->scope, "Tenant status is filled");
    if (identity_ns == NULL) {
        cli_tenant_namespace_name(def_ns, sizeof(def_ns), provider_id);
        identity_ns = def_ns;
    }
    *identity = cli_identity_from_tenant(tenant, provider_id, identity_ns, err, sizeof(err));
    json_object_put(tenant);
    if (*identity == NULL)
        return cli_flow_fail(f, c, TG_EXIT_REJECTED, "cannot build the Identity: %s", err);
    cli_flow_step(f, c->scope, "Identity correctly generated");
    return 0;
}
