/* cmd_online.c - the commands that talk to clusters (PROTOCOL.md 8, liqoctl
 * parity): create nonce, get nonce, generate tenant (online), generate
 * identity, authenticate, unauthenticate. Each is a short sequence of the
 * steps in flows.c; this file parses flags and orders the steps.
 *
 * --cluster-id is the id of the cluster the (local) kubeconfig points at,
 * --remote-cluster-id the other one's. Where a command has a kubeconfig for
 * a cluster whose id was not given, the id comes from that cluster's
 * clusterid ConfigMap, as liqoctl finds it (clusterid.c); the flag wins. */
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
    F_PUBKEY_FORMAT = 1u << 10,  /* --public-key-format */
    F_REMOTE_NS = 1u << 11,      /* --remote-namespace (the remote cluster's Liqo namespace) */
};

typedef struct online_opts {
    const char *kubeconfig, *context, *remote_kubeconfig, *remote_context;
    const char *install_ns, *cluster_id, *remote_id, *nonce, *nonce_file, *remote_tenant_ns;
    const char *remote_ns;
    long timeout_ms;
    int as_json, wait;
    tg_pubkey_format pubkey_format;
    char cluster_id_buf[TG_CLUSTERID_MAX + 1], remote_id_buf[TG_CLUSTERID_MAX + 1];
} online_opts;

#define COMMON_HELP                                                                              \
    "  --kubeconfig FILE        kubeconfig of this cluster (':'-list; default $KUBECONFIG,\n"     \
    "                           then ~/.kube/config), as kubectl reads it\n"                      \
    "  --context NAME           kubeconfig context (default: current-context)\n"

#define REMOTE_HELP                                                                              \
    "  --remote-kubeconfig FILE kubeconfig of the other cluster (required)\n"                     \
    "  --remote-context NAME    its context (default: its current-context)\n"

#define PUBKEY_HELP                                                                              \
    "  --public-key-format raw|pem  how the Tenant carries an Ed25519 key: raw 32\n"             \
    "                           bytes (default; every Liqo provider reads it) or PEM\n"          \
    "                           (Liqo 1.0.2+). RSA and ECDSA keys are always PEM and\n"          \
    "                           need a Liqo 1.0.3+ provider\n"

#define IDS_HELP                                                                                 \
    "  --cluster-id ID          the consumer (local) cluster's id (default: its\n"              \
    "                           clusterid ConfigMap, see `install`)\n"                          \
    "  --remote-cluster-id ID   the provider (remote) cluster's id (default: the\n"             \
    "                           provider's clusterid ConfigMap)\n"

#define EXIT_HELP                                                                                \
    "\nExit status: 0 done, 1 failed (refused, forbidden, missing CRD or object),\n"              \
    "2 usage or local error, 3 cluster unreachable, 4 timed out.\n"

static int check_id(const char *cmd, const char *usage, const char *flag, const char *id)
{
    if (id == NULL)
        return cli_usage_error(cmd, usage, "%s is required", flag);
    return cli_cluster_id_arg(cmd, usage, flag, id);
}

/* Parse argv with the flags in allowed; 0, CLI_HELP_SHOWN, or an exit code.
 * All the online commands share one table, so a flag that another of them
 * takes is refused as not applying here rather than as unknown. */
static int parse(const char *cmd, const char *usage, unsigned allowed, unsigned required,
                 int argc, char **argv, online_opts *o)
{
    const char *output = "yaml", *timeout = NULL, *pubkey_format = NULL;
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
        { "remote-tenant-namespace", required_argument, 'T',
          TAKES(F_REMOTE_TENANT_NS, &o->remote_tenant_ns), NULL },
        { "public-key-format", required_argument, 'P', TAKES(F_PUBKEY_FORMAT, &pubkey_format), NULL },
        { "remote-namespace", required_argument, 'S', TAKES(F_REMOTE_NS, &o->remote_ns), NULL },
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
        (rc = cli_pubkey_format_arg(cmd, usage, pubkey_format, &o->pubkey_format)) != 0)
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

/* The ids the command needs but was not given: the local cluster's always,
 * the remote one's when remote is not NULL, each from its cluster's clusterid
 * ConfigMap (in --namespace / --remote-namespace). 0 or an exit code. */
static int discover_ids(cli_flow *f, online_opts *o, cli_cluster *local, cli_cluster *remote)
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

/* The one cluster of a single-cluster command; progress goes to stderr, as
 * stdout carries the result. 0, or the exit code after the message. */
static int open_one(const char *cmd, const online_opts *o, cli_cluster *c, cli_flow *f)
{
    int rc = cli_cluster_open(c, cmd, NULL, o->kubeconfig, o->context);

    if (rc == 0) {
        cli_flow_init(f, cmd, stderr, o->timeout_ms);
        cli_flow_bind(f, c);
    }
    return rc;
}

/* The nonce alone on stdout, for a script to take; wiped afterwards. */
static int print_nonce(const char *cmd, char nonce[TG_NONCE_TEXT_LEN + 1])
{
    int rc = cli_print_line(cmd, nonce);

    OPENSSL_cleanse(nonce, TG_NONCE_TEXT_LEN + 1);
    return rc;
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
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    if ((rc = cli_ensure_tenant_namespace(&f, &c, o.remote_id, ns, sizeof(ns))) == 0 &&
        (rc = cli_ensure_nonce_secret(&f, &c, ns, o.remote_id)) == 0) {
        cli_flow_step(&f, NULL, "Nonce created");
        if ((rc = cli_read_nonce(&f, &c, ns, 1, nonce)) == 0) {
            cli_flow_step(&f, NULL, "Nonce generated successfully");
            cli_flow_step(&f, NULL, "Nonce retrieved");
            rc = print_nonce(cmd, nonce);
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
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 1, ns, sizeof(ns));
    if (rc == 0 && ns[0] == '\0')
        rc = cli_flow_fail(&f, &c, TG_EXIT_REJECTED, "no nonce for cluster %s: it has no tenant "
                           "namespace here (create one with `" TG_CLI_NAME " create nonce "
                           "--remote-cluster-id %s`)", o.remote_id, o.remote_id);
    if (rc == 0 && (rc = cli_read_nonce(&f, &c, ns, 0, nonce)) == 0)
        rc = print_nonce(cmd, nonce);
    cli_cluster_close(&c);
    return rc;
}

/* --- generate tenant (consumer) ------------------------------------------- */

/* The consumer's signature over nonce: ensure the signed-nonce Secret in ns,
 * then wait for the signer's answer, checked with the cluster key. *sig is
 * malloc'd. Prints progress with c->scope. */
static int consumer_signature(cli_flow *f, cli_cluster *c, const char *ns, const char *provider_id,
                              const char *nonce, EVP_PKEY *key, unsigned char **sig,
                              size_t *sig_len)
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

/* The Tenant of own_id: public key (in format) and CSR made with the cluster
 * key, sig the signer's signature of the nonce. NULL when a part cannot be built. */
static json_object *tenant_from_key(EVP_PKEY *key, const char *own_id, const unsigned char *sig,
                                    size_t sig_len, tg_pubkey_format format)
{
    size_t pub_len = 0;
    unsigned char *pub = tg_key_public_spec(key, format, &pub_len);
    char *csr = tg_csr_build(key, own_id, NULL);
    json_object *tenant = NULL;

    if (pub != NULL && csr != NULL)
        tenant = tg_tenant_to_json(own_id, pub, pub_len, csr, sig, sig_len);
    free(pub);
    free(csr);
    return tenant;
}

/* The Tenant for nonce, from the consumer cluster c: reads the cluster key
 * (first, so that a missing key changes nothing), ensures the tenant
 * namespace, gets the signature and builds the Tenant. Prints progress with
 * c->scope. */
static int consumer_tenant(cli_flow *f, cli_cluster *c, const char *install_ns,
                           const char *own_id, const char *provider_id, const char *nonce,
                           tg_pubkey_format format, json_object **tenant)
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
        rc = consumer_signature(f, c, ns, provider_id, nonce, key, &sig, &sig_len);
    }
    if (rc == 0 && (*tenant = tenant_from_key(key, own_id, sig, sig_len, format)) == NULL)
        rc = cli_flow_fail(f, c, TG_EXIT_USAGE, "cannot build the Tenant (public key or CSR)");
    if (rc == 0)
        cli_flow_step(f, c->scope, "Tenant correctly generated");
    free(sig);
    EVP_PKEY_free(key);
    return rc;
}

static const char generate_tenant_usage[] =
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
    int rc = parse(cmd, generate_tenant_usage,
                   F_KUBECONFIG | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_NONCE | F_OUTPUT |
                       F_TIMEOUT | F_PUBKEY_FORMAT,
                   F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_nonce_arg(cmd, generate_tenant_usage, o.nonce, o.nonce_file, nonce)) != 0)
        return rc;
    if ((rc = open_one(cmd, &o, &c, &f)) == 0) {
        if ((rc = discover_ids(&f, &o, &c, NULL)) == 0)
            rc = consumer_tenant(&f, &c, o.install_ns, o.cluster_id, o.remote_id, nonce,
                                 o.pubkey_format, &tenant);
        cli_cluster_close(&c);
    }
    OPENSSL_cleanse(nonce, sizeof(nonce));
    return cli_print_result(cmd, rc, tenant, o.as_json);
}

/* --- generate identity (provider) ----------------------------------------- */

static const char generate_identity_usage[] =
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

/* The Identity for consumer remote_id from provider c. */
static int provider_identity(cli_flow *f, cli_cluster *c, const char *tenant_ns,
                             const char *provider_id, const char *remote_id,
                             const char *identity_ns, json_object **identity)
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

int cli_generate_identity(int argc, char **argv)
{
    const char *cmd = "generate identity";
    char ns[128];
    json_object *identity = NULL;
    online_opts o;
    cli_cluster c;
    cli_flow f;
    int rc = parse(cmd, generate_identity_usage,
                   F_KUBECONFIG | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_OUTPUT | F_TIMEOUT |
                       F_REMOTE_TENANT_NS,
                   F_REMOTE_ID, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_one(cmd, &o, &c, &f)) != 0)
        return rc;
    if ((rc = discover_ids(&f, &o, &c, NULL)) == 0 &&
        (rc = cli_require_resources(&f, &c, "tenants")) == 0 &&
        (rc = cli_find_tenant_namespace(&f, &c, o.remote_id, 0, ns, sizeof(ns))) == 0)
        rc = provider_identity(&f, &c, ns, o.cluster_id, o.remote_id, o.remote_tenant_ns,
                               &identity);
    cli_cluster_close(&c);
    return cli_print_result(cmd, rc, identity, o.as_json);
}

/* --- authenticate / unauthenticate (both clusters) ------------------------ */

static const char authenticate_usage[] =
    "Usage: " TG_CLI_NAME " authenticate --remote-kubeconfig FILE\n"
    "           [--cluster-id CONSUMER_ID] [--remote-cluster-id PROVIDER_ID] [OPTIONS]\n"
    "\n"
    "From the consumer, with access to both clusters: the whole handshake. The\n"
    "(local) cluster is the consumer (--kubeconfig), the (remote) one the provider\n"
    "(--remote-kubeconfig). Nonce on the provider, signed nonce and Tenant on the\n"
    "consumer, Tenant applied on the provider, Identity applied on the consumer;\n"
    "one progress line per step. tenantgate-signer must run on both clusters.\n"
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
    "  --timeout DURATION       for the whole handshake (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

/* Both clusters of authenticate / unauthenticate; their progress lines are
 * the result and go to stdout. 0, or the exit code after the message. */
static int open_both(const char *cmd, const online_opts *o, cli_cluster *local, cli_cluster *remote,
                     cli_flow *f)
{
    int rc = cli_cluster_open(local, cmd, "local", o->kubeconfig, o->context);

    if (rc != 0)
        return rc;
    if ((rc = cli_cluster_open(remote, cmd, "remote", o->remote_kubeconfig, o->remote_context)) != 0)
        cli_cluster_close(local);
    else {
        cli_flow_init(f, cmd, stdout, o->timeout_ms);
        cli_flow_bind(f, local);
        cli_flow_bind(f, remote);
    }
    return rc;
}

static void close_both(cli_cluster *local, cli_cluster *remote)
{
    cli_cluster_close(local);
    cli_cluster_close(remote);
}

static int authenticate(int argc, char **argv)
{
    const char *cmd = "authenticate";
    char lns[128], rns[128], nonce[TG_NONCE_TEXT_LEN + 1], secret[256];
    json_object *tenant = NULL, *identity = NULL;
    const char *idname;
    online_opts o;
    cli_cluster local, remote;
    cli_flow f;
    int rc = parse(cmd, authenticate_usage,
                   F_KUBECONFIG | F_REMOTE | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT |
                       F_PUBKEY_FORMAT | F_REMOTE_NS,
                   F_REMOTE, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.cluster_id != NULL && o.remote_id != NULL && strcmp(o.cluster_id, o.remote_id) == 0)
        return cli_usage_error(cmd, authenticate_usage,
                               "--cluster-id and --remote-cluster-id must differ");
    if ((rc = open_both(cmd, &o, &local, &remote, &f)) != 0)
        return rc;
    nonce[0] = '\0';
    if ((rc = discover_ids(&f, &o, &local, &remote)) != 0)
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
    if ((rc = cli_ensure_nonce_secret(&f, &remote, rns, o.cluster_id)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce secret ensured");
    if ((rc = cli_read_nonce(&f, &remote, rns, 1, nonce)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Nonce generated successfully");
    cli_flow_step(&f, "remote", "Nonce retrieved");
    /* Not consumer_tenant: the seed's order puts the consumer's namespace
     * line first (above), so only the signature and the build are left. */
    {
        EVP_PKEY *key = NULL;
        unsigned char *sig = NULL;
        size_t sig_len = 0;

        if ((rc = cli_cluster_key(&f, &local, o.install_ns, &key)) != 0)
            goto out;
        rc = consumer_signature(&f, &local, lns, o.remote_id, nonce, key, &sig, &sig_len);
        if (rc == 0 &&
            (tenant = tenant_from_key(key, o.cluster_id, sig, sig_len, o.pubkey_format)) == NULL)
            rc = cli_flow_fail(&f, &local, TG_EXIT_USAGE, "cannot build the Tenant");
        free(sig);
        EVP_PKEY_free(key);
        if (rc != 0)
            goto out;
    }
    cli_flow_step(&f, "local", "Tenant correctly generated");
    /* The provider's tenant namespace may not be the conventional name. */
    json_object_object_add(tg_json_path(tenant, "metadata", NULL), "namespace",
                           json_object_new_string(rns));
    if ((rc = cli_apply(&f, &remote, "tenants", tenant, NULL)) != 0)
        goto out;
    cli_flow_step(&f, "remote", "Tenant correctly applied on provider cluster");
    if ((rc = provider_identity(&f, &remote, rns, o.remote_id, o.cluster_id, lns, &identity)) != 0)
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
    close_both(&local, &remote);
    return rc;
}

static const char unauthenticate_usage[] =
    "Usage: " TG_CLI_NAME " unauthenticate --remote-kubeconfig FILE\n"
    "           [--cluster-id CONSUMER_ID] [--remote-cluster-id PROVIDER_ID] [OPTIONS]\n"
    "\n"
    "Undo `authenticate`: delete the Identity controlplane-PROVIDER_ID on the\n"
    "consumer (local) and the Tenant CONSUMER_ID on the provider (remote), so the\n"
    "consumer loses its access. Refused while ResourceSlices remain in either\n"
    "tenant namespace.\n"
    "\n"
    "Options:\n"
    IDS_HELP
    COMMON_HELP
    REMOTE_HELP
    "  -n, --namespace NS       consumer's Liqo namespace (default liqo)\n"
    "  --remote-namespace NS    provider's Liqo namespace (default liqo)\n"
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
                   F_KUBECONFIG | F_REMOTE | F_NAMESPACE | F_CLUSTER_ID | F_REMOTE_ID | F_TIMEOUT |
                       F_WAIT | F_REMOTE_NS,
                   F_REMOTE, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_both(cmd, &o, &local, &remote, &f)) != 0)
        return rc;
    if ((rc = discover_ids(&f, &o, &local, &remote)) != 0)
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
    close_both(&local, &remote);
    return rc;
}

/* --- the verbs ------------------------------------------------------------ */

static const char create_usage[] =
    "Usage: " TG_CLI_NAME " create nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " create resourceslice NAME --remote-cluster-id ID [OPTIONS]\n";
static const char get_usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " get resourceslice [NAME] --remote-cluster-id ID [OPTIONS]\n";
static const char delete_usage[] =
    "Usage: " TG_CLI_NAME " delete resourceslice NAME --remote-cluster-id ID [OPTIONS]\n";

/* verb RESOURCE ...: nonce (run_nonce, NULL when the verb has none) or a
 * ResourceSlice (run_slice). */
static int one_resource(const char *verb, const char *usage, int (*run_nonce)(int, char **),
                        int (*run_slice)(int, char **), int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(verb, usage, "no resource given (%sresourceslice)", run_nonce ? "nonce, " : "");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return TG_EXIT_OK;
    }
    if (run_nonce != NULL && strcmp(argv[1], "nonce") == 0)
        return run_nonce(argc - 1, argv + 1);
    if (cli_is_slice_word(argv[1]))
        return run_slice(argc - 1, argv + 1);
    return cli_usage_error(verb, usage, "unknown resource \"%s\"", argv[1]);
}

int cmd_create(int argc, char **argv)
{
    return one_resource("create", create_usage, create_nonce, cli_slice_create, argc, argv);
}

int cmd_get(int argc, char **argv)
{
    return one_resource("get", get_usage, get_nonce, cli_slice_get, argc, argv);
}

int cmd_delete(int argc, char **argv)
{
    return one_resource("delete", delete_usage, NULL, cli_slice_delete, argc, argv);
}

int cmd_authenticate(int argc, char **argv)
{
    return authenticate(argc, argv);
}

int cmd_unauthenticate(int argc, char **argv)
{
    return unauthenticate(argc, argv);
}
