/* cmd_preflight.c - `kubectl tenantgate preflight`: run by the consumer's
 * admin before peering, it asks both sides what a peering will need and
 * prints one line per check (PASS, WARN, FAIL, SKIP), then the verdict
 * (docs/cli.md "Preflight before peering"). A check that cannot be made is
 * SKIP, never PASS; only a FAIL makes the verdict "not ready". */
#include "preflight_run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#define CMD "preflight"

static const char usage[] =
    "Usage: " TG_CLI_NAME " preflight (--provider-kubeconfig FILE | --token-line LINE) [options]\n"
    "\n"
    "Before peering, from the consumer: can this pair peer? One line per check,\n"
    "PASS, WARN, FAIL or SKIP (could not be checked), then the verdict.\n"
    "\n"
    "  --kubeconfig FILE          the consumer's kubeconfig (default: as kubectl)\n"
    "  --context NAME             its context\n"
    "  --provider-kubeconfig FILE a kubeconfig for the provider (e.g. a peering\n"
    "                             user's); every check runs\n"
    "  --provider-context NAME    its context\n"
    "  --token-line LINE          or the one string `create token --auth-url` printed:\n"
    "                             the auth server, its pinned CA and clock only (the\n"
    "                             token is not spent); the provider's checks are SKIP\n"
    "  --key-type TYPE            ed25519 (default), rsa2048 or ecdsa-p256: the key\n"
    "                             the provider's API server must take for client\n"
    "                             certificates\n"
    "  --max-skew DURATION        clock skew between the clusters that fails (default\n"
    "                             60s; above 5s warns)\n"
    "  --cluster-id ID            the consumer's id (default: its clusterid ConfigMap)\n"
    "  --remote-cluster-id ID     the provider's id (default: its ConfigMap or the\n"
    "                             auth server's /ids)\n"
    "  -n, --namespace NS         Liqo's namespace on both sides (default liqo)\n"
    "  --timeout DURATION         bound on the whole run (default 2m)\n"
    "\n"
    "Checks: api-consumer, api-provider | auth-server, key-type, clock-skew,\n"
    "csr-signer, crds-consumer, crds-provider, crd-versions, liqo-version,\n"
    "rights-consumer, rights-provider.\n"
    "\n"
    "Exit status: 0 ready (no FAIL), 1 not ready, 2 usage or local error,\n"
    "3 a cluster or the auth server unreachable.\n";

typedef struct pf_args {
    const char *kubeconfig, *context, *provider_kubeconfig, *provider_context, *token_line;
    const char *key_type, *max_skew, *cluster_id, *remote_id, *ns, *timeout;
    long timeout_ms;
} pf_args;

void pf_line(pf_ctx *c, pf_result r, const char *check, const char *fmt, ...)
{
    va_list ap;

    pf_tally_add(&c->tally, r);
    printf("%s %s: ", pf_result_name(r), check);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static int check_id(const char *flag, const char *id, char out[TG_CLUSTERID_MAX + 1])
{
    int rc;

    if (id == NULL)
        return 0;
    if ((rc = cli_cluster_id_arg(CMD, usage, flag, id)) == 0)
        snprintf(out, TG_CLUSTERID_MAX + 1, "%s", id);
    return rc;
}

static int parse(int argc, char **argv, pf_args *a, pf_ctx *c)
{
    const cli_option options[] = {
        { "kubeconfig", required_argument, 'K', &a->kubeconfig, NULL },
        { "context", required_argument, 'C', &a->context, NULL },
        { "provider-kubeconfig", required_argument, 'P', &a->provider_kubeconfig, NULL },
        { "provider-context", required_argument, 'X', &a->provider_context, NULL },
        { "token-line", required_argument, 'L', &a->token_line, NULL },
        { "key-type", required_argument, 'k', &a->key_type, NULL },
        { "max-skew", required_argument, 'S', &a->max_skew, NULL },
        { "cluster-id", required_argument, 'c', &a->cluster_id, NULL },
        { "remote-cluster-id", required_argument, 'r', &a->remote_id, NULL },
        { "namespace", required_argument, 'n', &a->ns, NULL },
        { "timeout", required_argument, 't', &a->timeout, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    char why[256];
    long skew_ms;
    int rc;

    if ((rc = cli_parse_options(CMD, usage, "n:", options, argc, argv)) != 0)
        return rc;
    if ((a->provider_kubeconfig == NULL) == (a->token_line == NULL))
        return cli_usage_error(CMD, usage, "give one of --provider-kubeconfig and --token-line");
    if (a->key_type != NULL && tg_key_type_parse(a->key_type, &c->key_type) != 0)
        return cli_key_type_error(CMD, usage, a->key_type);
    if (a->max_skew != NULL && (skew_ms = cli_parse_duration(a->max_skew)) < 0)
        return cli_usage_error(CMD, usage, "--max-skew: expected a duration such as 30s or 2m, found \"%.32s\"",
                               a->max_skew);
    c->fail_s = a->max_skew ? skew_ms / 1000 : PF_SKEW_FAIL_S;
    c->warn_s = c->fail_s < PF_SKEW_WARN_S ? c->fail_s : PF_SKEW_WARN_S;
    if (a->timeout != NULL && (a->timeout_ms = cli_parse_duration(a->timeout)) < 0)
        return cli_usage_error(CMD, usage, "--timeout: expected a duration such as 30s, 2m or 1h (at most "
                               "24h), found \"%.32s\"", a->timeout);
    if ((rc = check_id("--cluster-id", a->cluster_id, c->consumer_id)) != 0 ||
        (rc = check_id("--remote-cluster-id", a->remote_id, c->provider_id)) != 0)
        return rc;
    if (a->token_line != NULL && pf_token_line_parse(a->token_line, &c->line, why, sizeof(why)) != 0)
        return cli_usage_error(CMD, usage, "--token-line: %s", why);
    return 0;
}

/* An id not given, from the cluster's ConfigMap; none found leaves it empty
 * (the checks that need it say SKIP). */
static void discover_id(pf_ctx *c, cli_cluster *cl, const char *flag, char id[TG_CLUSTERID_MAX + 1])
{
    if (id[0] == '\0' && cli_discover_cluster_id(&c->flow, cl, c->install_ns, flag, id) != 0)
        id[0] = '\0';
}

static int reach(pf_ctx *c, const char *check, cli_cluster *cl, int *ok, long *skew_s, long timeout_ms)
{
    int rc = pf_read_clock(c, check, &cl->cfg, ok, skew_s, timeout_ms);

    if (rc == 0)
        pf_line(c, PF_PASS, check, "%s answers", cl->cfg.server);
    return rc;
}

/* The checks, in order; an unreachable side ends the run (exit 3). */
static int run_checks(pf_ctx *c, long timeout_ms)
{
    long probe_ms = timeout_ms < CLI_CALL_TIMEOUT_MS ? timeout_ms : CLI_CALL_TIMEOUT_MS;
    int rc;

    if ((rc = reach(c, "api-consumer", &c->consumer, &c->consumer_clock_ok, &c->consumer_skew_s, probe_ms)) != 0)
        return rc;
    if (c->have_provider) {
        c->provider_clock_from = "API server";
        if ((rc = reach(c, "api-provider", &c->provider, &c->provider_clock_ok, &c->provider_skew_s,
                        probe_ms)) != 0)
            return rc;
    } else if ((rc = pf_check_auth_server(c, probe_ms)) != 0)
        return rc;
    discover_id(c, &c->consumer, "--cluster-id", c->consumer_id);
    if (c->have_provider)
        discover_id(c, &c->provider, "--remote-cluster-id", c->provider_id);
    pf_check_key_type(c, probe_ms);
    pf_check_skew(c);
    pf_check_csr_signer(c);
    pf_check_versions(c);
    pf_check_rights(c);
    return 0;
}

static int open_clusters(pf_ctx *c, const pf_args *a)
{
    int rc = cli_cluster_open(&c->consumer, CMD, "consumer", a->kubeconfig, a->context);

    if (rc != 0 || a->provider_kubeconfig == NULL)
        return rc;
    if ((rc = cli_cluster_open(&c->provider, CMD, "provider", a->provider_kubeconfig, a->provider_context)) != 0)
        cli_cluster_close(&c->consumer);
    else
        c->have_provider = 1;
    return rc;
}

int cmd_preflight(int argc, char **argv)
{
    pf_args a = { .timeout_ms = CLI_DEFAULT_TIMEOUT_MS };
    pf_ctx c;
    char verdict[64];
    int rc;

    memset(&c, 0, sizeof(c));
    c.key_type = TG_KEY_ED25519;
    if ((rc = parse(argc, argv, &a, &c)) != 0)
        goto out;
    c.install_ns = a.ns ? a.ns : CLI_DEFAULT_INSTALL_NS;
    if ((rc = open_clusters(&c, &a)) != 0)
        goto out;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cli_flow_init(&c.flow, CMD, stderr, a.timeout_ms);
    cli_flow_bind(&c.flow, &c.consumer);
    if (c.have_provider)
        cli_flow_bind(&c.flow, &c.provider);
    rc = run_checks(&c, a.timeout_ms);
    if (rc == 0)
        rc = pf_verdict(&c.tally, verdict, sizeof(verdict));
    else
        snprintf(verdict, sizeof(verdict), "verdict: not ready (unreachable)");
    printf("%s\n", verdict);
    cli_cluster_close(&c.consumer);
    if (c.have_provider)
        cli_cluster_close(&c.provider);
out:
    pf_token_line_free(&c.line);
    free(c.auth_ca_pem);
    return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
}
