/* main.c - tenantgate-auth: flags, the API client, the token Secret, then
 * the server (server.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <uv.h>

#include "auth/btoken_record.h"
#include "auth/server.h"
#include "common/flag_table.h"
#include "common/flags.h"
#include "common/log.h"
#include "kube/clusterid.h"
#include "kube/kubeconfig.h"
#include "pki/bootstrap_token.h"
#include "pki/tenant.h"

#define MAX_SECONDS_MS 3600000ULL

/* The CSR's expirationSeconds. Without it kube-controller-manager signs for
 * its --cluster-signing-duration (365 days): a consumer that started over
 * with a new key would keep its old certificate's rights that long (issue
 * 44, finding 6). Above 7 days is refused rather than capped, so the
 * lifetime is what the flag says; 600 is the API server's minimum. */
#define MIN_EXPIRATION_S 600L
#define MAX_EXPIRATION_S 604800L

typedef struct settings {
    tg_auth_server_config cfg;
    char listen_host[256], metrics_host[256];
    const char *kubeconfig, *ns, *token_ns, *ca_file, *auth;
    long rate, burst, free_failures, expiration, max_nonces;
} settings;

enum {
    OPT_CERT, OPT_KEY, OPT_LISTEN, OPT_METRICS, OPT_KUBECONFIG, OPT_NS, OPT_CID, OPT_CNAME, OPT_URL, OPT_CA,
    OPT_AUTH, OPT_ROLE, OPT_EXPIRATION, OPT_CERT_WAIT, OPT_TOKEN_CHECK, OPT_REQ_TIMEOUT, OPT_MAX_CONNS,
    OPT_MAX_PEER, OPT_RATE, OPT_BURST, OPT_FREE_FAIL, OPT_BACKOFF_BASE, OPT_BACKOFF_MAX, OPT_GRACE, OPT_CHECK,
    OPT_LOG_LEVEL, OPT_ANY_ID, OPT_TOKEN_NS, OPT_MAX_NONCES,
};

#define REQ TG_FLAG_REQUIRED
static const tg_flag flags[] = {
    {"cert", REQ, "FILE", OPT_CERT, "serving certificate (PEM); reloaded on change", NULL},
    {"key", REQ, "FILE", OPT_KEY, "its private key (PEM)", NULL},
    {"listen", REQ, "ADDR:PORT", OPT_LISTEN, "HTTPS address (default 0.0.0.0:8443)", NULL},
    {"metrics-listen", REQ, "ADDR:PORT", OPT_METRICS, "/healthz /readyz /metrics (default 0.0.0.0:8081; \"off\")",
     NULL},
    {"kubeconfig", REQ, "FILE", OPT_KUBECONFIG, "API access (default: in-cluster service account)", NULL},
    {"namespace", REQ, "NS", OPT_NS, "the cluster id's namespace (default liqo)", NULL},
    {"token-namespace", REQ, "NS", OPT_TOKEN_NS,
     "the peering token's Secret auth-token, and where `kubectl\ntenantgate create token` keeps the bootstrap "
     "tokens of POST\n/v1/*: a namespace of their own, since the server may create\nand read Secrets there "
     "(default tenantgate-tokens)", NULL},
    {"max-nonces-per-token", REQ, "N", OPT_MAX_NONCES,
     "tenant namespaces one reusable bootstrap token may make\nthrough /v1/nonce (default 3; a single-use one: 1)",
     NULL},
    {"cluster-id", REQ, "ID", OPT_CID, "this cluster's id (default: Liqo's cluster-id ConfigMap in NS)", NULL},
    {"cluster-name", REQ, "NAME", OPT_CNAME, "answered by GET /ids (default: the cluster id)", NULL},
    {"api-server-url", REQ, "URL", OPT_URL,
     "the API server address consumers are given (default: the\nkubeconfig's, useless to another cluster when "
     "in-cluster)", "expected https://..."},
    {"api-server-ca", REQ, "FILE", OPT_CA, "its CA bundle, given to consumers (default: the kubeconfig's)", NULL},
    {"authentication", REQ, "on|off", OPT_AUTH,
     "off accepts any token; refused unless given explicitly as\n\"off\", and logged at every request (default on)",
     "expected on or off"},
    {"any-cluster-id", TG_FLAG_NONE, NULL, OPT_ANY_ID,
     "sign any cluster id of [a-z0-9-] (default: only UUIDs, as\nLiqo v0.10 makes them; the id becomes a user name)",
     NULL},
    {"consumer-cluster-role", REQ, "NAME", OPT_ROLE,
     "bound to the consumer in liqo-tenant-<id>\n(default tenantgate-remote-consumer)", NULL},
    {"csr-expiration-seconds", REQ, "N", OPT_EXPIRATION,
     "the certificate's lifetime, 600 to 604800 (default 604800,\n7 days: a certificate outlives a \"start over\" "
     "by at most that)", "expected 600 to 604800 seconds (at most 7 days)"},
    {"certificate-wait", REQ, "SECONDS", OPT_CERT_WAIT, "how long to wait for kube-controller-manager (default 30)",
     NULL},
    {"token-check-interval", REQ, "SECONDS", OPT_TOKEN_CHECK, "re-read of the token Secret (default 30)", NULL},
    {"request-timeout", REQ, "SECONDS", OPT_REQ_TIMEOUT, "TLS handshake, and a request's arrival (default 10)", NULL},
    {"max-connections", REQ, "N", OPT_MAX_CONNS, "open connections (default 256)", NULL},
    {"max-connections-per-peer", REQ, "N", OPT_MAX_PEER, "of them from one address (default 16; 0: no cap)", NULL},
    {"rate", REQ, "N", OPT_RATE, "requests a second per address (default 1)", NULL},
    {"burst", REQ, "N", OPT_BURST, "the burst of them (default 10)", NULL},
    {"free-failures", REQ, "N", OPT_FREE_FAIL, "failures per address before the back-off (default 3)", NULL},
    {"backoff-base", REQ, "SECONDS", OPT_BACKOFF_BASE, "the first back-off (default 2)", NULL},
    {"backoff-max", REQ, "SECONDS", OPT_BACKOFF_MAX, "the longest back-off (default 600)", NULL},
    {"shutdown-grace", REQ, "SECONDS", OPT_GRACE, "issuances under way may finish (default 10)", NULL},
    {"cert-check-interval", REQ, "SECONDS", OPT_CHECK, "periodic check of the cert files (default 10)", NULL},
    {"log-level", REQ, "LEVEL", OPT_LOG_LEVEL, "debug, info, warn, error (default info)", NULL},
};
#undef REQ

static uint64_t token_check_ms = 30000;

/* One flag into st: 0, or -1 when its value is bad. */
static int take_flag(void *ctx, int id, const char *v)
{
    settings *st = ctx;
    tg_auth_server_config *cfg = &st->cfg;

    switch (id) {
    case OPT_CERT: cfg->cert_path = v; return 0;
    case OPT_KEY: cfg->key_path = v; return 0;
    case OPT_LISTEN: return tg_flag_listen_addr(v, st->listen_host, sizeof(st->listen_host), &cfg->listen_port);
    case OPT_METRICS:
        return tg_flag_listen_addr_or_off(v, st->metrics_host, sizeof(st->metrics_host), &cfg->metrics_port);
    case OPT_KUBECONFIG: st->kubeconfig = v; return 0;
    case OPT_NS: st->ns = v; return 0;
    case OPT_TOKEN_NS: st->token_ns = v; return 0;
    case OPT_MAX_NONCES: return tg_flag_long(v, 1, TG_AUTH_BTOKEN_MAX_NONCES, &st->max_nonces);
    case OPT_CID: cfg->cluster_id = v; return tg_cluster_id_valid(v) ? 0 : -1;
    case OPT_CNAME: cfg->cluster_name = v; return 0;
    case OPT_URL: cfg->api_server_url = v; return strncmp(v, "https://", 8) == 0 ? 0 : -1;
    case OPT_CA: st->ca_file = v; return 0;
    case OPT_AUTH: st->auth = v; return strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ? 0 : -1;
    case OPT_ROLE: cfg->issue.cluster_role = v; return 0;
    case OPT_EXPIRATION: return tg_flag_long(v, MIN_EXPIRATION_S, MAX_EXPIRATION_S, &st->expiration);
    case OPT_CERT_WAIT: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->issue.cert_wait_ms);
    case OPT_TOKEN_CHECK: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &token_check_ms);
    case OPT_REQ_TIMEOUT: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->request_timeout_ms);
    case OPT_MAX_CONNS: return tg_flag_long(v, 1, 1000000, &cfg->max_connections);
    case OPT_MAX_PEER: return tg_flag_long(v, 0, 1000000, &cfg->max_connections_per_peer);
    case OPT_RATE: return tg_flag_long(v, 1, 100000, &st->rate);
    case OPT_BURST: return tg_flag_long(v, 1, 100000, &st->burst);
    case OPT_FREE_FAIL: return tg_flag_long(v, 0, 1000, &st->free_failures);
    case OPT_BACKOFF_BASE: return tg_flag_seconds(v, 0, MAX_SECONDS_MS, &cfg->limits.fail_base_ms);
    case OPT_BACKOFF_MAX: return tg_flag_seconds(v, 0, 24 * MAX_SECONDS_MS, &cfg->limits.fail_max_ms);
    case OPT_GRACE: return tg_flag_seconds(v, 0, MAX_SECONDS_MS, &cfg->shutdown_grace_ms);
    case OPT_CHECK: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->cert_check_ms);
    case OPT_LOG_LEVEL: return tg_log_set_level_named(v);
    case OPT_ANY_ID: cfg->any_cluster_id = 1; return 0;
    }
    return -1;
}

static const tg_flag_program program = {
    .name = "tenantgate-auth",
    .synopsis = "--cert FILE --key FILE --api-server-url URL [options]",
    .about = "Liqo's authentication server (v0.10 wire format): a consumer that shows this cluster's\n"
             "peering token (Secret <token namespace>/auth-token) gets a client certificate. docs/auth.md.",
    .flags = flags,
    .nflags = sizeof(flags) / sizeof(flags[0]),
    .take = take_flag,
};

/* How long /v1/nonce and /v1/tenant wait for the signer. */
#define V1_WAIT_MS 60000

/* The API client, and what the kubeconfig says consumers should reach. */
static tg_kube_client *kube_setup(settings *st, uv_loop_t *loop, tg_kube_config *kc, char *err, size_t err_len)
{
    tg_kube_client *c;

    if (tg_kube_config_load(kc, st->kubeconfig, NULL, err, err_len) != 0 ||
        !(c = tg_kube_client_new(loop, kc, err, err_len)))
        return NULL;
    if (!st->cfg.api_server_url)
        st->cfg.api_server_url = kc->server;
    if (st->ca_file) {
        char *ca = NULL;
        if (tg_kube_read_file(st->ca_file, 1 << 20, &ca, &st->cfg.api_server_ca_len, err, err_len) != 0)
            return NULL;
        st->cfg.api_server_ca = ca;
    } else {
        st->cfg.api_server_ca = kc->ca;
        st->cfg.api_server_ca_len = kc->ca_len;
    }
    return c;
}

static int cluster_id_setup(settings *st, tg_kube_client *c, char id[TG_CLUSTERID_MAX + 1])
{
    long status;
    char why[256];

    if (st->cfg.cluster_id)
        return 0;
    if (tg_cluster_id_discover(c, st->ns, id, &status, why, sizeof(why)) != TG_CLUSTER_ID_FOUND) {
        tg_log(TG_LOG_ERROR, "no cluster id: give --cluster-id", TG_LOG_STR("why", why));
        return -1;
    }
    st->cfg.cluster_id = id;
    return 0;
}

/* Close what is ours and let the loop finish the closes; a loop that still
 * has work after that (a stuck peer) is left to the exit. */
static void teardown(tg_auth_server *s, tg_auth_token_secret *token, tg_kube_client *c, uv_loop_t *loop)
{
    if (s && tg_auth_server_close(s) != 0)
        return;
    if (token)
        tg_auth_token_secret_stop(token);
    tg_kube_client_free(c);
    for (int i = 0; i < 100 && uv_run(loop, UV_RUN_NOWAIT) != 0; i++)
        ;
    if (s)
        tg_auth_server_free(s);
}

static int run(settings *st)
{
    uv_loop_t *loop = uv_default_loop();
    tg_kube_config kc = {0};
    tg_auth_token_secret token, *tokenp = NULL;
    tg_kube_client *c;
    tg_auth_server *s;
    char err[512], id[TG_CLUSTERID_MAX + 1];
    int rc = 0;

    if (!(c = kube_setup(st, loop, &kc, err, sizeof(err)))) {
        tg_log(TG_LOG_ERROR, "cannot set up the Kubernetes client", TG_LOG_STR("error", err));
        return 1;
    }
    if (cluster_id_setup(st, c, id) != 0)
        return 1;
    if (!st->cfg.cluster_name)
        st->cfg.cluster_name = st->cfg.cluster_id;
    st->cfg.kube = c;
    st->cfg.v1 = (tg_auth_v1_config){.token_ns = st->token_ns, .provider_id = st->cfg.cluster_id,
                                     .api_server_url = st->cfg.api_server_url, .api_server_ca = st->cfg.api_server_ca,
                                     .api_server_ca_len = st->cfg.api_server_ca_len, .wait_ms = V1_WAIT_MS,
                                     .poll_ms = 250, .max_nonces = (int)st->max_nonces};
    st->cfg.authentication_disabled = st->auth && strcmp(st->auth, "off") == 0;
    if (!st->cfg.authentication_disabled) {
        /* the token namespace: the server may create Secrets there and nowhere else */
        tg_auth_token_secret_start(&token, c, st->token_ns, token_check_ms);
        st->cfg.token = tokenp = &token;
    }
    if (!(s = tg_auth_server_new(loop, &st->cfg, err, sizeof(err))) || tg_auth_server_start(s, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot start", TG_LOG_STR("error", err));
        return 1;                  /* start-up failure: the OS takes the rest */
    }
    teardown(s, tokenp, c, loop);
    if (st->ca_file)
        free((char *)st->cfg.api_server_ca);
    tg_kube_config_free(&kc);
    return rc;
}

int main(int argc, char **argv)
{
    settings st = {
        .cfg = {.listen_port = 8443, .metrics_port = 8081, .cert_check_ms = 10000, .request_timeout_ms = 10000,
                .shutdown_grace_ms = 10000, .max_connections = 256, .max_connections_per_peer = 16,
                .limits = {.fail_base_ms = 2000, .fail_max_ms = 600000, .sources = 4096},
                .issue = {.cluster_role = "tenantgate-remote-consumer", .cert_wait_ms = 30000, .poll_ms = 250}},
        .listen_host = "0.0.0.0", .metrics_host = "0.0.0.0", .ns = "liqo", .token_ns = TG_BTOKEN_NAMESPACE, .rate = 1, .burst = 10,
        .free_failures = 3, .max_nonces = 3, .expiration = MAX_EXPIRATION_S,
    };
    int status;

    if ((status = tg_flags_parse(&program, argc, argv, &st)) >= 0)
        return status;
    if (!st.cfg.cert_path || !st.cfg.key_path) {
        fprintf(stderr, "tenantgate-auth: --cert and --key are required\n");
        tg_flags_usage(&program, stderr);
        return 2;
    }
    if (sodium_init() < 0) {
        fprintf(stderr, "tenantgate-auth: libsodium cannot start\n");
        return 1;
    }
    st.cfg.listen_host = st.listen_host;
    st.cfg.metrics_host = st.metrics_host;
    st.cfg.limits.rate_per_s = (double)st.rate;
    st.cfg.limits.burst = (double)st.burst;
    st.cfg.limits.free_failures = (unsigned)st.free_failures;
    st.cfg.issue.expiration_s = st.expiration;
    st.cfg.issue.records_namespace = st.ns;
    signal(SIGPIPE, SIG_IGN);
    return run(&st);
}
