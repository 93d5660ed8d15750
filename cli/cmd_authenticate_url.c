/* cmd_authenticate_url.c - `authenticate --auth-url URL --token TOKEN`: the
 * handshake of PROTOCOL.md 1 with only the consumer's kubeconfig. The
 * provider's tenantgate-auth stands in for the provider kubeconfig
 * (docs/auth.md "v1 one-string peering"): POST /v1/nonce gives the nonce,
 * POST /v1/tenant creates the Tenant and answers it once signed. The
 * consumer's steps are authenticate's own (flow_*.c, handshake.c), and it
 * ends with the same ControlPlane Identity. */
#include "online_cmd.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "auth_client.h"
#include "kube/json.h"
#include "pki/bootstrap_token.h"
#include "pki/nonce.h"
#include "pki/tenant.h"

/* POST body to the auth server; 0 and *answer on want, else the exit code
 * after a line with the server's reason and message. */
static int auth_post(cli_flow *f, cli_cluster *a, const char *path, json_object *body, long want,
                     json_object **answer)
{
    char terr[256];
    char *raw = NULL;
    long st = cli_cluster_call(a, "POST", path, body, TG_KUBE_CT_JSON, answer, &raw, terr, sizeof(terr));
    const char *reason = *answer ? tg_json_string(*answer, "reason") : NULL;
    const char *msg = *answer ? tg_json_string(*answer, "message") : NULL;
    int rc = 0;

    if (st == want && *answer != NULL)
        goto out;
    if (st < 0)
        rc = cli_flow_fail(f, a, a->out_of_time ? TG_EXIT_TIMEOUT : TG_EXIT_UNREACHABLE,
                           "no answer from the auth server %s: %s", a->cfg.server, terr);
    else
        rc = cli_flow_fail(f, a, TG_EXIT_REJECTED, "the auth server refused POST %s (HTTP %ld): %s: %s", path, st,
                           reason ? reason : "no reason", msg ? msg : "(no message)");
    json_object_put(*answer);
    *answer = NULL;
out:
    if (raw != NULL)
        cli_free_secret(raw, strlen(raw));
    return rc;
}

static json_object *nonce_body(const char *token, const char *own_id)
{
    json_object *b = json_object_new_object();

    json_object_object_add(b, "token", json_object_new_string(token));
    json_object_object_add(b, "clusterID", json_object_new_string(own_id));
    return b;
}

/* The nonce and the provider's id from /v1/nonce. */
static int get_nonce(cli_flow *f, cli_cluster *a, const online_opts *o, char nonce[TG_NONCE_TEXT_LEN + 1],
                     char provider_id[TG_CLUSTERID_MAX + 1])
{
    json_object *body = nonce_body(o->token, o->cluster_id), *ans = NULL;
    int rc = auth_post(f, a, "/v1/nonce", body, 200, &ans);
    const char *n = ans ? tg_json_string(ans, "nonce") : NULL, *id = ans ? tg_json_string(ans, "clusterID") : NULL;

    json_object_put(body);
    if (rc != 0)
        return rc;
    if (!n || strlen(n) > TG_NONCE_TEXT_LEN || !id || strlen(id) > TG_CLUSTERID_MAX || !tg_cluster_id_valid(id))
        rc = cli_flow_fail(f, a, TG_EXIT_REJECTED, "the auth server's nonce answer lacks a nonce or a valid "
                           "clusterID");
    else if (strcmp(id, o->cluster_id) == 0)
        rc = cli_flow_fail(f, a, TG_EXIT_REJECTED, "the provider has this cluster's id %s: a cluster cannot "
                           "peer with itself", id);
    if (rc == 0) {
        strcpy(nonce, n);
        strcpy(provider_id, id);
    }
    json_object_put(ans);
    return rc;
}

/* The signed Tenant back from /v1/tenant (status filled by the signer). */
static int send_tenant(cli_flow *f, cli_cluster *a, const char *token, json_object *tenant, json_object **out)
{
    json_object *body = json_object_new_object(), *ans = NULL, *t;
    int rc;

    json_object_object_add(body, "token", json_object_new_string(token));
    json_object_object_add(body, "tenant", json_object_get(tenant));
    rc = auth_post(f, a, "/v1/tenant", body, 201, &ans);
    json_object_put(body);
    if (rc != 0)
        return rc;
    if (!(t = tg_json_path(ans, "tenant", NULL)) || cli_tenant_status(t) != CLI_TENANT_READY) {
        json_object_put(ans);
        return cli_flow_fail(f, a, TG_EXIT_REJECTED, "the auth server's answer holds no Tenant signed for this "
                             "cluster's key");
    }
    *out = json_object_get(t);
    json_object_put(ans);
    return 0;
}

/* The consumer's signed Tenant for provider_id's nonce (as authenticate). */
static int build_tenant(cli_flow *f, cli_cluster *local, const online_opts *o, const char *lns,
                        const char *provider_id, const char *nonce, json_object **tenant)
{
    EVP_PKEY *key = NULL;
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    int rc = cli_cluster_key(f, local, o->install_ns, &key);

    if (rc == 0)
        rc = cli_consumer_signature(f, local, lns, provider_id, nonce, key, &sig, &sig_len);
    if (rc == 0 &&
        (*tenant = cli_tenant_from_key(key, o->cluster_id, sig, sig_len, o->pubkey_format, o->revocable)) == NULL)
        rc = cli_flow_fail(f, local, TG_EXIT_USAGE, "cannot build the Tenant");
    free(sig);
    EVP_PKEY_free(key);
    if (rc == 0)
        cli_flow_step(f, local->scope, "Tenant correctly generated");
    return rc;
}

static int check_flags(const char *cmd, const char *usage, const online_opts *o)
{
    char why[128];
    tg_btoken t;
    int bad;

    if (o->remote_kubeconfig != NULL)
        return cli_usage_error(cmd, usage, "--auth-url and --remote-kubeconfig exclude each other");
    if (o->auth_url == NULL || o->token == NULL)
        return cli_usage_error(cmd, usage, "--auth-url and --token go together");
    if ((o->auth_ca_hash == NULL) == (o->auth_ca == NULL))
        return cli_usage_error(cmd, usage, "give one of --auth-ca-hash and --auth-ca: how to trust %s",
                               o->auth_url);
    if (strncmp(o->auth_url, "https://", 8) != 0)
        return cli_usage_error(cmd, usage, "--auth-url: expected https://HOST[:PORT]");
    bad = tg_btoken_parse(o->token, strlen(o->token), &t, why, sizeof(why)) != 0;
    OPENSSL_cleanse(&t, sizeof(t));
    if (bad)
        return cli_usage_error(cmd, usage, "--token: %s", why);
    return 0;
}

/* Trust, then open the auth server's client. */
static int open_auth(const char *cmd, const online_opts *o, cli_flow *f, cli_cluster *a)
{
    char err[512], *pem = NULL;
    size_t len = 0;
    int rc;

    rc = cli_auth_trust(o->auth_url, o->auth_ca, o->auth_ca_hash, o->timeout_ms, &pem, &len, err, sizeof(err));
    if (rc != 0)
        return cli_flow_fail(f, NULL, rc == -2 ? TG_EXIT_UNREACHABLE : o->auth_ca ? TG_EXIT_USAGE : TG_EXIT_REJECTED,
                             "(provider) %s", err);
    rc = cli_auth_open(a, cmd, o->auth_url, pem, len);
    free(pem);
    if (rc == 0)
        cli_flow_bind(f, a);
    return rc;
}

int cli_authenticate_url(const char *cmd, const char *usage, online_opts *o)
{
    char lns[128], secret[256], nonce[TG_NONCE_TEXT_LEN + 1] = "", provider_id[TG_CLUSTERID_MAX + 1];
    json_object *tenant = NULL, *signed_tenant = NULL, *identity = NULL;
    cli_cluster local, auth;
    cli_flow f;
    char err[256];
    int rc = check_flags(cmd, usage, o);

    if (rc != 0)
        return rc;
    if ((rc = cli_cluster_open(&local, cmd, "local", o->kubeconfig, o->context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, o->timeout_ms);
    f.key_type = o->key_type;
    cli_flow_bind(&f, &local);
    memset(&auth, 0, sizeof(auth));
    /* the provider's server first: a wrong hash changes nothing on the consumer */
    if ((rc = open_auth(cmd, o, &f, &auth)) != 0 || (rc = cli_online_discover_ids(&f, o, &local, NULL)) != 0 ||
        (rc = cli_require_resources(&f, &local, "identities")) != 0)
        goto out;
    if ((rc = get_nonce(&f, &auth, o, nonce, provider_id)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce retrieved");
    if ((rc = cli_ensure_tenant_namespace(&f, &local, provider_id, lns, sizeof(lns))) != 0)
        goto out;
    cli_flow_step(&f, "local", "Tenant namespace correctly ensured");
    if ((rc = build_tenant(&f, &local, o, lns, provider_id, nonce, &tenant)) != 0)
        goto out;
    if ((rc = send_tenant(&f, &auth, o->token, tenant, &signed_tenant)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Tenant correctly applied on provider cluster");
    cli_flow_step(&f, "remote", "Tenant status is filled");
    if (!(identity = cli_identity_from_tenant(signed_tenant, provider_id, lns, err, sizeof(err)))) {
        rc = cli_flow_fail(&f, &auth, TG_EXIT_REJECTED, "cannot build the Identity: %s", err);
        goto out;
    }
    cli_flow_step(&f, "remote", "Identity correctly generated");
    /* the last peering's Identity, still in its finalizer, would take this apply with it */
    if ((rc = cli_wait_not_terminating(&f, &local, "identities", lns,
                                       tg_json_path_string(identity, "metadata", "name", NULL))) != 0 ||
        (rc = cli_apply(&f, &local, "identities", identity, NULL)) != 0)
        goto out;
    cli_flow_step(&f, "local", "Identity correctly applied on consumer cluster");
    rc = cli_wait_identity(&f, &local, lns, tg_json_path_string(identity, "metadata", "name", NULL), secret,
                           sizeof(secret));
    if (rc == 0)
        cli_flow_step(&f, "local", "Identity status is filled");
out:
    OPENSSL_cleanse(nonce, sizeof(nonce));
    json_object_put(tenant);
    json_object_put(signed_tenant);
    json_object_put(identity);
    cli_cluster_close(&auth);
    cli_cluster_close(&local);
    return rc;
}
