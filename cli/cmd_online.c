/* cmd_online.c - the commands that talk to clusters (SPEC.md 8, liqoctl
 * parity): create nonce, get nonce, generate tenant (online), generate
 * identity, authenticate, unauthenticate. Each is a short sequence of the
 * steps in flows.c; this file parses flags and orders the steps.
 *
 * Cluster ids are explicit: --cluster-id is the id of the cluster the
 * (local) kubeconfig points at, --remote-cluster-id the other one's. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "online.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/tenant.h"

/* Which flags a command takes. */
enum {
    F_KUBECONFIG = 1u << 0,     /* --kubeconfig, --context */
    F_REMOTE = 1u << 1,         /* --remote-kubeconfig, --remote-context */
    F_NAMESPACE = 1u << 2,      /* --namespace (install namespace) */
    F_CLUSTER_ID = 1u << 3,
    F_REMOTE_ID = 1u << 4,
    F_NONCE = 1u << 5,          /* --nonce, --nonce-file */
    F_OUTPUT = 1u << 6,
    F_TIMEOUT = 1u << 7,
    F_WAIT = 1u << 8,
    F_REMOTE_TENANT_NS = 1u << 9,
};

#define HELP_SHOWN (-100)

typedef struct online_opts {
    const char *kubeconfig, *context, *remote_kubeconfig, *remote_context;
    const char *install_ns, *cluster_id, *remote_id, *nonce, *nonce_file, *remote_tenant_ns;
    long timeout_ms;
    int as_json, wait;
} online_opts;

#define COMMON_HELP                                                                              \
    "  --kubeconfig FILE        kubeconfig of this cluster (':'-list; default $KUBECONFIG,\n"     \
    "                           then ~/.kube/config), as kubectl reads it\n"                      \
    "  --context NAME           kubeconfig context (default: current-context)\n"

#define REMOTE_HELP                                                                              \
    "  --remote-kubeconfig FILE kubeconfig of the other cluster (required)\n"                     \
    "  --remote-context NAME    its context (default: its current-context)\n"

#define EXIT_HELP                                                                                \
    "\nExit status: 0 done, 1 failed (refused, forbidden, missing CRD or object),\n"              \
    "2 usage or local error, 3 cluster unreachable, 4 timed out.\n"

static int check_id(const char *cmd, const char *usage, const char *flag, const char *id)
{
    if (id == NULL)
        return cli_usage_error(cmd, usage, "%s is required", flag);
    if (!tg_cluster_id_valid(id))
        return cli_usage_error(cmd, usage, "%s: expected at most 63 characters of [a-z0-9-], "
                               "starting and ending alphanumeric, found \"%.64s\"", flag, id);
    return 0;
}

/* Parse argv with the flags in allowed; 0, HELP_SHOWN, or an exit code. */
static int parse(const char *cmd, const char *usage, unsigned allowed, unsigned required,
                 int argc, char **argv, online_opts *o)
{
    static const struct option options[] = {
        { "kubeconfig", required_argument, NULL, 'K' },
        { "context", required_argument, NULL, 'C' },
        { "remote-kubeconfig", required_argument, NULL, 'R' },
        { "remote-context", required_argument, NULL, 'X' },
        { "namespace", required_argument, NULL, 'n' },
        { "cluster-id", required_argument, NULL, 'c' },
        { "remote-cluster-id", required_argument, NULL, 'r' },
        { "nonce", required_argument, NULL, 'N' },
        { "nonce-file", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "timeout", required_argument, NULL, 't' },
        { "wait", no_argument, NULL, 'w' },
        { "remote-tenant-namespace", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const struct { int ch; unsigned flag; } owner[] = {
        { 'K', F_KUBECONFIG }, { 'C', F_KUBECONFIG }, { 'R', F_REMOTE }, { 'X', F_REMOTE },
        { 'n', F_NAMESPACE }, { 'c', F_CLUSTER_ID }, { 'r', F_REMOTE_ID }, { 'N', F_NONCE },
        { 'F', F_NONCE }, { 'o', F_OUTPUT }, { 't', F_TIMEOUT }, { 'w', F_WAIT },
        { 'T', F_REMOTE_TENANT_NS },
    };
    const char *output = "yaml", *timeout = NULL;
    int ch, rc;

    memset(o, 0, sizeof(*o));
    o->install_ns = CLI_DEFAULT_INSTALL_NS;
    o->timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    cli_getopt_reset();
    while ((ch = getopt_long(argc, argv, ":hn:o:", options, NULL)) != -1) {
        if (ch == 'h') {
            fputs(usage, stdout);
            return HELP_SHOWN;
        }
        if (ch == '?' || ch == ':')
            return cli_bad_option(cmd, usage, ch, argv);
        for (size_t i = 0; i < sizeof(owner) / sizeof(owner[0]); i++)
            if (owner[i].ch == ch && !(owner[i].flag & allowed))
                return cli_usage_error(cmd, usage, "option %s does not apply here",
                                       argv[optind - 1]);
        switch (ch) {
        case 'K': o->kubeconfig = optarg; break;
        case 'C': o->context = optarg; break;
        case 'R': o->remote_kubeconfig = optarg; break;
        case 'X': o->remote_context = optarg; break;
        case 'n': o->install_ns = optarg; break;
        case 'c': o->cluster_id = optarg; break;
        case 'r': o->remote_id = optarg; break;
        case 'N': o->nonce = optarg; break;
        case 'F': o->nonce_file = optarg; break;
        case 'o': output = optarg; break;
        case 't': timeout = optarg; break;
        case 'w': o->wait = 1; break;
        case 'T': o->remote_tenant_ns = optarg; break;
        default: break;
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, usage, "unexpected argument \"%s\"", argv[optind]);
    if (strcmp(output, "yaml") != 0 && strcmp(output, "json") != 0)
        return cli_usage_error(cmd, usage, "-o: expected yaml or json, found \"%s\"", output);
    o->as_json = strcmp(output, "json") == 0;
    if (timeout != NULL && (o->timeout_ms = cli_parse_duration(timeout)) < 0)
        return cli_usage_error(cmd, usage, "--timeout: expected a duration such as 30s, 2m or "
                               "1h (at most 24h), found \"%.32s\"", timeout);
    if ((required & F_CLUSTER_ID) && (rc = check_id(cmd, usage, "--cluster-id", o->cluster_id)))
        return rc;
    if ((required & F_REMOTE_ID) &&
        (rc = check_id(cmd, usage, "--remote-cluster-id", o->remote_id)))
        return rc;
    if ((required & F_REMOTE) && o->remote_kubeconfig == NULL)
        return cli_usage_error(cmd, usage, "--remote-kubeconfig is required");
    return 0;
}

/* --- create nonce / get nonce (provider) ----------------------------------- */

static const char create_nonce_usage[] =
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

static const char get_nonce_usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id CONSUMER_ID [OPTIONS]\n"
    "\n"
    "On the provider: print the nonce issued for CONSUMER_ID, alone on one line.\n"
    "\n"
    "Options:\n"
    "  --remote-cluster-id ID   the consumer cluster's id\n"
    COMMON_HELP
    "  -h, --help               show this help\n"
    EXIT_HELP;

static int create_nonce(int argc, char **argv)
{
    const char *cmd = "create nonce";
    char ns[128], nonce[TG_NONCE_TEXT_LEN + 1];
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = parse(cmd, create_nonce_usage, F_KUBECONFIG | F_REMOTE_ID | F_TIMEOUT, F_REMOTE_ID,
                   argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, o.kubeconfig, o.context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stderr, o.timeout_ms);
    if ((rc = cli_ensure_tenant_namespace(&f, &c, o.remote_id, ns, sizeof(ns))) == 0 &&
        (rc = cli_ensure_nonce_secret(&f, &c, ns, o.remote_id)) == 0) {
        cli_flow_step(&f, NULL, "Nonce created");
        if ((rc = cli_read_nonce(&f, &c, ns, 1, nonce)) == 0) {
            cli_flow_step(&f, NULL, "Nonce generated successfully");
            cli_flow_step(&f, NULL, "Nonce retrieved");
            printf("%s\n", nonce);
            OPENSSL_cleanse(nonce, sizeof(nonce));
            if (fflush(stdout) != 0)
                rc = cli_error(cmd, "cannot write to standard output");
        }
    }
    cli_cluster_close(&c);
    return rc;
}

static int get_nonce(int argc, char **argv)
{
    const char *cmd = "get nonce";
    char ns[128], nonce[TG_NONCE_TEXT_LEN + 1];
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = parse(cmd, get_nonce_usage, F_KUBECONFIG | F_REMOTE_ID, F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, o.kubeconfig, o.context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stderr, o.timeout_ms);
    rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 1, ns, sizeof(ns));
    if (rc == 0 && ns[0] == '\0')
        rc = cli_flow_fail(&f, &c, TG_EXIT_REJECTED, "no nonce for cluster %s: it has no tenant "
                           "namespace here (create one with `" TG_CLI_NAME " create nonce "
                           "--remote-cluster-id %s`)", o.remote_id, o.remote_id);
    if (rc == 0 && (rc = cli_read_nonce(&f, &c, ns, 0, nonce)) == 0) {
        printf("%s\n", nonce);
        OPENSSL_cleanse(nonce, sizeof(nonce));
        if (fflush(stdout) != 0)
            rc = cli_error(cmd, "cannot write to standard output");
    }
    cli_cluster_close(&c);
    return rc;
}

/* --- generate tenant (consumer) ------------------------------------------- */

/* The Tenant for nonce, from the consumer cluster c: ensures its tenant
 * namespace and signed-nonce Secret, waits for the signature, builds the CSR
 * with the cluster key. Prints progress with c->scope. */
static int consumer_tenant(cli_flow *f, cli_cluster *c, const char *install_ns,
                           const char *own_id, const char *provider_id, const char *nonce,
                           json_object **tenant)
{
    char ns[128];
    EVP_PKEY *key = NULL;
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    char *pub = NULL, *csr = NULL;
    int rc;

    *tenant = NULL;
    if ((rc = cli_cluster_key(f, c, install_ns, &key)) != 0)
        return rc;
    if ((rc = cli_ensure_tenant_namespace(f, c, provider_id, ns, sizeof(ns))) != 0)
        goto out;
    cli_flow_step(f, c->scope, "Tenant namespace correctly ensured");
    if ((rc = cli_ensure_signed_nonce_secret(f, c, ns, provider_id, nonce)) != 0)
        goto out;
    cli_flow_step(f, c->scope, "Signed nonce secret ensured");
    if ((rc = cli_wait_signed_nonce(f, c, ns, nonce, key, &sig, &sig_len)) != 0)
        goto out;
    cli_flow_step(f, c->scope, "Nonce is signed");
    cli_flow_step(f, c->scope, "Signed nonce retrieved");
    pub = tg_key_public_pem(key, NULL);
    csr = tg_csr_build(key, own_id, NULL);
    if (pub == NULL || csr == NULL ||
        (*tenant = tg_tenant_to_json(own_id, pub, csr, sig, sig_len)) == NULL) {
        rc = cli_flow_fail(f, c, TG_EXIT_USAGE, "cannot build the Tenant (public key or CSR)");
        goto out;
    }
    cli_flow_step(f, c->scope, "Tenant correctly generated");
out:
    free(pub);
    free(csr);
    free(sig);
    EVP_PKEY_free(key);
    return rc;
}

static const char generate_tenant_usage[] =
    "Usage: " TG_CLI_NAME " generate tenant --cluster-id CONSUMER_ID\n"
    "           --remote-cluster-id PROVIDER_ID (--nonce NONCE | --nonce-file FILE) [OPTIONS]\n"
    "       " TG_CLI_NAME " generate tenant --offline ...   (see --offline --help)\n"
    "\n"
    "On the consumer: ensure the tenant namespace liqo-tenant-PROVIDER_ID and the\n"
    "liqo-signed-nonce Secret, wait until tenantgate-signer signs the nonce, build\n"
    "a CSR for CN=CONSUMER_ID, O=liqo.io with the cluster key (read from the\n"
    "authentication-keys Secret: needs get on secrets there) and print the Tenant\n"
    "to apply on the provider. Progress goes to standard error.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          this (consumer) cluster's id\n"
    "  --remote-cluster-id ID   the provider cluster's id\n"
    "  --nonce NONCE            the nonce the provider issued (88 characters)\n"
    "  --nonce-file FILE        read it from FILE ('-' = standard input)\n"
    "  -n, --namespace NS       where authentication-keys lives (default liqo)\n"
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
    int rc = parse(cmd, generate_tenant_usage,
                   F_KUBECONFIG | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_NONCE | F_OUTPUT |
                       F_TIMEOUT,
                   F_CLUSTER_ID | F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_nonce_arg(cmd, generate_tenant_usage, o.nonce, o.nonce_file, nonce)) != 0)
        return rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, o.kubeconfig, o.context)) == 0) {
        cli_flow_init(&f, cmd, stderr, o.timeout_ms);
        rc = consumer_tenant(&f, &c, o.install_ns, o.cluster_id, o.remote_id, nonce, &tenant);
        cli_cluster_close(&c);
    }
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (rc == 0)
        rc = cli_print_object(cmd, tenant, o.as_json);
    json_object_put(tenant);
    return rc;
}

/* --- generate identity (provider) ----------------------------------------- */

static const char generate_identity_usage[] =
    "Usage: " TG_CLI_NAME " generate identity --cluster-id PROVIDER_ID\n"
    "           --remote-cluster-id CONSUMER_ID [OPTIONS]\n"
    "\n"
    "On the provider: wait until tenantgate-signer has issued the consumer's\n"
    "certificate (Tenant status.authParams) and print the ControlPlane Identity\n"
    "controlplane-PROVIDER_ID to apply on the consumer.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          this (provider) cluster's id\n"
    "  --remote-cluster-id ID   the consumer cluster's id\n"
    "  --remote-tenant-namespace NS  the Identity's namespace on the consumer\n"
    "                           (default liqo-tenant-PROVIDER_ID)\n"
    COMMON_HELP
    "  --timeout DURATION       how long to wait for the Tenant status (default 2m)\n"
    "  -o, --output FMT         yaml (default) or json\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

/* The Identity for consumer remote_id from provider c. */
static int provider_identity(cli_flow *f, cli_cluster *c, const char *tenant_ns,
                             const char *provider_id, const char *remote_id,
                             const char *identity_ns, long generation, json_object **identity)
{
    char err[256], def_ns[128];
    json_object *tenant = NULL;
    int rc = cli_wait_tenant(f, c, tenant_ns, remote_id, generation, 1, &tenant);

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

int cli_generate_identity(int argc, char **argv)
{
    const char *cmd = "generate identity";
    char ns[128];
    json_object *identity = NULL;
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = parse(cmd, generate_identity_usage,
                   F_KUBECONFIG | F_CLUSTER_ID | F_REMOTE_ID | F_OUTPUT | F_TIMEOUT |
                       F_REMOTE_TENANT_NS,
                   F_CLUSTER_ID | F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, o.kubeconfig, o.context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stderr, o.timeout_ms);
    if ((rc = cli_require_resources(&f, &c, "tenants")) == 0 &&
        (rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 0, ns, sizeof(ns))) == 0)
        rc = provider_identity(&f, &c, ns, o.cluster_id, o.remote_id, o.remote_tenant_ns, 0,
                               &identity);
    cli_cluster_close(&c);
    if (rc == 0)
        rc = cli_print_object(cmd, identity, o.as_json);
    json_object_put(identity);
    return rc;
}

/* --- authenticate / unauthenticate (both clusters) ------------------------ */

static const char authenticate_usage[] =
    "Usage: " TG_CLI_NAME " authenticate --cluster-id CONSUMER_ID\n"
    "           --remote-kubeconfig FILE --remote-cluster-id PROVIDER_ID [OPTIONS]\n"
    "\n"
    "From the consumer, with access to both clusters: the whole handshake. The\n"
    "(local) cluster is the consumer (--kubeconfig), the (remote) one the provider\n"
    "(--remote-kubeconfig). Nonce on the provider, signed nonce and Tenant on the\n"
    "consumer, Tenant applied on the provider, Identity applied on the consumer;\n"
    "one progress line per step. tenantgate-signer must run on both clusters.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          the consumer (local) cluster's id\n"
    "  --remote-cluster-id ID   the provider (remote) cluster's id\n"
    COMMON_HELP
    REMOTE_HELP
    "  -n, --namespace NS       consumer's install namespace (authentication-keys;\n"
    "                           default liqo)\n"
    "  --timeout DURATION       for the whole handshake (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

static int open_both(const char *cmd, const online_opts *o, cli_cluster *local, cli_cluster *remote)
{
    int rc = cli_cluster_open(local, cmd, "local", o->kubeconfig, o->context);

    if (rc != 0)
        return rc;
    if ((rc = cli_cluster_open(remote, cmd, "remote", o->remote_kubeconfig, o->remote_context)) != 0)
        cli_cluster_close(local);
    return rc;
}

static int authenticate(int argc, char **argv)
{
    const char *cmd = "authenticate";
    char lns[128], rns[128], nonce[TG_NONCE_TEXT_LEN + 1], secret[256];
    json_object *tenant = NULL, *identity = NULL;
    const char *idname;
    long generation = 0;
    online_opts o;
    cli_cluster local, remote;
    cli_flow f;
    int rc = parse(cmd, authenticate_usage,
                   F_KUBECONFIG | F_REMOTE | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT,
                   F_CLUSTER_ID | F_REMOTE_ID | F_REMOTE, argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if (strcmp(o.cluster_id, o.remote_id) == 0)
        return cli_usage_error(cmd, authenticate_usage,
                               "--cluster-id and --remote-cluster-id must differ");
    if ((rc = open_both(cmd, &o, &local, &remote)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, o.timeout_ms);
    nonce[0] = '\0';
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
    if ((rc = cli_ensure_nonce_secret(&f, &remote, rns, o.cluster_id)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce secret ensured");
    if ((rc = cli_read_nonce(&f, &remote, rns, 1, nonce)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce generated successfully");
    cli_flow_step(&f, "remote", "Nonce retrieved");
    /* consumer_tenant re-finds lns by its labels and prints its own steps;
     * the namespace line was printed above in the seed's order. */
    {
        EVP_PKEY *key = NULL;
        unsigned char *sig = NULL;
        size_t sig_len = 0;
        char *pub = NULL, *csr = NULL;

        if ((rc = cli_cluster_key(&f, &local, o.install_ns, &key)) != 0)
            goto out;
        if ((rc = cli_ensure_signed_nonce_secret(&f, &local, lns, o.remote_id, nonce)) == 0) {
            cli_flow_step(&f, "local", "Signed nonce secret ensured");
            rc = cli_wait_signed_nonce(&f, &local, lns, nonce, key, &sig, &sig_len);
        }
        if (rc == 0) {
            cli_flow_step(&f, "local", "Nonce is signed");
            cli_flow_step(&f, "local", "Signed nonce retrieved");
            pub = tg_key_public_pem(key, NULL);
            csr = tg_csr_build(key, o.cluster_id, NULL);
            if (pub == NULL || csr == NULL ||
                (tenant = tg_tenant_to_json(o.cluster_id, pub, csr, sig, sig_len)) == NULL)
                rc = cli_flow_fail(&f, &local, TG_EXIT_USAGE, "cannot build the Tenant");
        }
        free(pub);
        free(csr);
        free(sig);
        EVP_PKEY_free(key);
        if (rc != 0)
            goto out;
    }
    cli_flow_step(&f, "local", "Tenant correctly generated");
    /* The provider's tenant namespace may not be the conventional name. */
    json_object_object_add(tg_json_path(tenant, "metadata", NULL), "namespace",
                           json_object_new_string(rns));
    if ((rc = cli_apply(&f, &remote, "tenants", tenant, &generation)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Tenant correctly applied on provider cluster");
    if ((rc = provider_identity(&f, &remote, rns, o.remote_id, o.cluster_id, lns, generation,
                                &identity)) != 0)
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
    cli_cluster_close(&local);
    cli_cluster_close(&remote);
    return rc;
}

static const char unauthenticate_usage[] =
    "Usage: " TG_CLI_NAME " unauthenticate --cluster-id CONSUMER_ID\n"
    "           --remote-kubeconfig FILE --remote-cluster-id PROVIDER_ID [OPTIONS]\n"
    "\n"
    "Undo `authenticate`: delete the Identity controlplane-PROVIDER_ID on the\n"
    "consumer (local) and the Tenant CONSUMER_ID on the provider (remote), so the\n"
    "consumer loses its access. Refused while ResourceSlices remain in either\n"
    "tenant namespace.\n"
    "\n"
    "Options:\n"
    "  --cluster-id ID          the consumer (local) cluster's id\n"
    "  --remote-cluster-id ID   the provider (remote) cluster's id\n"
    COMMON_HELP
    REMOTE_HELP
    "  --wait                   wait until both objects are gone\n"
    "  --timeout DURATION       for --wait (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

static int unauthenticate(int argc, char **argv)
{
    const char *cmd = "unauthenticate";
    char lns[128], rns[128], idname[128];
    int lcount = 0, rcount = 0, existed = 0;
    online_opts o;
    cli_cluster local, remote;
    cli_flow f;
    int rc = parse(cmd, unauthenticate_usage,
                   F_KUBECONFIG | F_REMOTE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT | F_WAIT,
                   F_CLUSTER_ID | F_REMOTE_ID | F_REMOTE, argc, argv, &o);

    if (rc != 0)
        return rc == HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_both(cmd, &o, &local, &remote)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, o.timeout_ms);
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
                           "(kubectl get resourceslices -n %s)", lcount > 0 ? lcount : rcount,
                           lcount > 0 ? lns : rns, lcount > 0 ? lns : rns);
        goto out;
    }
    if (lns[0]) {
        if ((rc = cli_delete(&f, &local, "identities", lns, idname, o.wait, &existed)) != 0)
            goto out;
        cli_flow_step(&f, "local", existed ? "Identity deleted" : "Identity already absent");
    } else {
        cli_flow_step(&f, "local", "Identity already absent (no tenant namespace)");
    }
    if (rns[0]) {
        if ((rc = cli_delete(&f, &remote, "tenants", rns, o.cluster_id, o.wait, &existed)) != 0)
            goto out;
        cli_flow_step(&f, "remote", existed ? "Tenant deleted" : "Tenant already absent");
    } else {
        cli_flow_step(&f, "remote", "Tenant already absent (no tenant namespace)");
    }
out:
    cli_cluster_close(&local);
    cli_cluster_close(&remote);
    return rc;
}

/* --- the verbs ------------------------------------------------------------ */

static const char create_usage[] =
    "Usage: " TG_CLI_NAME " create nonce --remote-cluster-id ID [OPTIONS]\n";
static const char get_usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id ID [OPTIONS]\n";

static int one_resource(const char *verb, const char *usage, int (*run)(int, char **), int argc,
                        char **argv)
{
    if (argc < 2)
        return cli_usage_error(verb, usage, "no resource given (nonce)");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return TG_EXIT_OK;
    }
    if (strcmp(argv[1], "nonce") != 0)
        return cli_usage_error(verb, usage, "unknown resource \"%s\"", argv[1]);
    return run(argc - 1, argv + 1);
}

int cmd_create(int argc, char **argv)
{
    return one_resource("create", create_usage, create_nonce, argc, argv);
}

int cmd_get(int argc, char **argv)
{
    return one_resource("get", get_usage, get_nonce, argc, argv);
}

int cmd_authenticate(int argc, char **argv)
{
    return authenticate(argc, argv);
}

int cmd_unauthenticate(int argc, char **argv)
{
    return unauthenticate(argc, argv);
}
