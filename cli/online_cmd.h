/* online_cmd.h - what the online commands' cmd_*.c files share: one flag
 * table (a flag another online command takes is refused as not applying, not
 * as unknown), the ids found in the clusters, and opening one or both
 * clusters.
 *
 * --cluster-id is the id of the cluster the (local) kubeconfig points at,
 * --remote-cluster-id the other one's. Where a command has a kubeconfig for
 * a cluster whose id was not given, the id comes from that cluster's
 * clusterid ConfigMap, as liqoctl finds it (clusterid.c); the flag wins. */
#ifndef TG_CLI_ONLINE_CMD_H
#define TG_CLI_ONLINE_CMD_H

#include "online.h"

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
    F_AUTH_URL = 1u << 12,       /* --auth-url, --token, --auth-ca-hash, --auth-ca */
    F_FORCE = 1u << 13,          /* --force, --provider-side (unauthenticate) */
};

typedef struct online_opts {
    const char *kubeconfig, *context, *remote_kubeconfig, *remote_context;
    const char *install_ns, *cluster_id, *remote_id, *nonce, *nonce_file, *remote_tenant_ns;
    const char *remote_ns;
    const char *auth_url, *token, *auth_ca_hash, *auth_ca;
    long timeout_ms;
    int as_json, wait, force, provider_side;
    tg_pubkey_format pubkey_format;
    int key_type;                        /* --key-type, -1 when not given */
    int revocable;                       /* --revocable: a per-certificate group in the CSR */
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
    "  --key-type ed25519|rsa2048|ecdsa-p256  the type this cluster's key (Secret\n"             \
    "                           authentication-keys) must have; refused when it holds\n"        \
    "                           another (it is never replaced). Default: any\n"                 \
    "  --public-key-format raw|pem  how the Tenant carries an Ed25519 key: raw 32\n"             \
    "                           bytes (default; every Liqo provider reads it) or PEM\n"          \
    "                           (Liqo 1.0.2+). RSA and ECDSA keys are always PEM and\n"          \
    "                           need a Liqo 1.0.3+ provider\n"                                 \
    "  --revocable              put a fresh per-certificate group in the CSR, so the\n"         \
    "                           provider can revoke this certificate alone (`revoke`;\n"      \
    "                           a tenantgate provider in standalone or replace mode)\n"

#define IDS_HELP                                                                                 \
    "  --cluster-id ID          the consumer (local) cluster's id (default: its\n"              \
    "                           clusterid ConfigMap, see `install`)\n"                          \
    "  --remote-cluster-id ID   the provider (remote) cluster's id (default: the\n"             \
    "                           provider's clusterid ConfigMap)\n"

#define EXIT_HELP                                                                                \
    "\nExit status: 0 done, 1 failed (refused, forbidden, missing CRD or object),\n"              \
    "2 usage or local error, 3 cluster unreachable, 4 timed out.\n"

/* Parse argv with the flags in allowed (required: those that must be given);
 * 0, CLI_HELP_SHOWN, or an exit code after the message. */
int cli_online_parse(const char *cmd, const char *usage, unsigned allowed, unsigned required,
                     int argc, char **argv, online_opts *o);

/* The ids the command needs but was not given: the local cluster's always,
 * the remote one's when remote is not NULL, each from its cluster's clusterid
 * ConfigMap (in --namespace / --remote-namespace). 0 or an exit code. */
int cli_online_discover_ids(cli_flow *f, online_opts *o, cli_cluster *local, cli_cluster *remote);

/* The one cluster of a single-cluster command; progress goes to stderr, as
 * stdout carries the result. 0, or the exit code after the message. */
int cli_online_open_one(const char *cmd, const online_opts *o, cli_cluster *c, cli_flow *f);

/* Both clusters of authenticate / unauthenticate; their progress lines are
 * the result and go to stdout. 0, or the exit code after the message. */
int cli_online_open_both(const char *cmd, const online_opts *o, cli_cluster *local,
                         cli_cluster *remote, cli_flow *f);
void cli_online_close_both(cli_cluster *local, cli_cluster *remote);

/* authenticate --auth-url (cmd_authenticate_url.c): the handshake through
 * the provider's tenantgate-auth with the consumer's kubeconfig only. */
int cli_authenticate_url(const char *cmd, const char *usage, online_opts *o);

/* unauthenticate --force and --provider-side (cmd_unauthenticate_force.c):
 * clear one side of a peering whose other side is gone; o->remote_id is set. */
int cli_unauthenticate_force(const char *cmd, online_opts *o);
int cli_unauthenticate_provider_side(const char *cmd, online_opts *o);

#endif
