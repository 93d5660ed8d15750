/* main.c - tenantgate-webhook: flags, then the server. */
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "common/flag_table.h"
#include "common/flags.h"
#include "common/log.h"
#include "kube/clusterid.h"
#include "pki/tenant.h"
#include "webhook/kube_lookup.h"
#include "webhook/routes.h"
#include "webhook/server.h"

/* The values the flags set (take_flag); main() starts from the defaults. */
typedef struct settings {
    tg_server_config cfg;
    char listen_host[256], metrics_host[256];
    const char *kubeconfig, *cluster_id, *namespace_, *writers_flag, *slice_policy;
} settings;

enum {
    OPT_CERT, OPT_KEY, OPT_LISTEN, OPT_METRICS, OPT_KUBECONFIG, OPT_THREADS, OPT_ALLOW_NH, OPT_CLUSTER_ID,
    OPT_NAMESPACE, OPT_LOCAL_WRITERS, OPT_DEFAULT_CLASS, OPT_SLICE_POLICY, OPT_GRACE, OPT_REQ_TIMEOUT,
    OPT_IDLE_TIMEOUT, OPT_MAX_CONNS, OPT_MAX_PEER_CONNS, OPT_CHECK, OPT_H2, OPT_NO_H2, OPT_LOG_LEVEL,
};

#define REQ TG_FLAG_REQUIRED
static const tg_flag flags[] = {
    {"cert", REQ, "FILE", OPT_CERT, "serving certificate (PEM, leaf first); reloaded on change", NULL},
    {"key", REQ, "FILE", OPT_KEY, "its private key (PEM)", NULL},
    {"listen", REQ, "ADDR:PORT", OPT_LISTEN, "HTTPS address (default 0.0.0.0:8443; [::]:8443 for IPv6)", NULL},
    {"metrics-listen", REQ, "ADDR:PORT", OPT_METRICS,
     "plain HTTP /healthz /readyz /metrics (default 0.0.0.0:8080;\n\"off\" to disable)", NULL},
    {"kubeconfig", REQ, "FILE", OPT_KUBECONFIG, "API access (default: in-cluster service account)", NULL},
    {"threads", REQ, "N", OPT_THREADS, "worker threads (default: number of cores)", "expected 1 to 256"},
    {"allow-no-handshake", TG_FLAG_NONE, NULL, OPT_ALLOW_NH, "accept authzPolicy TolerateNoHandshake (off by default)",
     NULL},
    {"cluster-id", REQ, "ID", OPT_CLUSTER_ID,
     "this cluster's id (default: read from Liqo's clusterid ConfigMap\nin --namespace); slices naming it are its "
     "own local ones", NULL},
    {"namespace", REQ, "NS", OPT_NAMESPACE, "where that ConfigMap is (default liqo)", NULL},
    {"local-slice-writers", REQ, "LIST", OPT_LOCAL_WRITERS,
     "who may write this cluster's own local ResourceSlices in a\ntenant namespace: users, and group:<name> "
     "(default\ngroup:system:masters,group:system:serviceaccounts:<namespace>)", NULL},
    {"default-resource-slice-class-enabled", TG_FLAG_OPTIONAL, "true|false", OPT_DEFAULT_CLASS,
     "false: refuse replicated slices of\nthe default class (DefaultResourceSliceClassDisabled), as Liqo's\n"
     "flag of that name (default true)", "expected true or false"},
    {"slice-policy-configmap", REQ, "NS/NAME", OPT_SLICE_POLICY,
     "the ResourceSlice policy ConfigMap whose tenant.<id>\nkeys limit each consumer (ClassNotAllowed, "
     "TenantPolicyExceeded;\ndefault <namespace>/tenantgate-resourceslice-policy, as the\nsigner's; \"off\": no "
     "consumer policy)", "expected NS/NAME or off"},
    {"shutdown-grace", REQ, "SECONDS", OPT_GRACE, "on SIGTERM, wait this long for in-flight requests (default 10)",
     "expected 0 to 3600 seconds"},
    {"request-timeout", REQ, "SECONDS", OPT_REQ_TIMEOUT,
     "bound on a new connection's TLS handshake and first request,\na request's arrival from its first byte, a "
     "stalled HTTP/2\nstream (default 10)", "expected 0.1 to 3600 seconds"},
    {"idle-timeout", REQ, "SECONDS", OPT_IDLE_TIMEOUT,
     "how long a connection may wait for its next request (default\n120: longer than kube-apiserver keeps an idle "
     "one, 90)", "expected 0.1 to 3600 seconds"},
    {"max-connections", REQ, "N", OPT_MAX_CONNS,
     "open HTTPS connections (default 1000); past it the oldest one\nwithout a request yet is closed for the "
     "newcomer, and only when\nevery one has had a request is the newcomer closed", "expected 1 to 1000000"},
    {"max-connections-per-peer", REQ, "N", OPT_MAX_PEER_CONNS,
     "open HTTPS connections from one source address (default\n250; 0: no cap); past it new ones from that "
     "address are closed", "expected 0 to 1000000"},
    {"cert-check-interval", REQ, "SECONDS", OPT_CHECK, "periodic check of the cert files (default 10)",
     "expected 0.1 to 3600 seconds"},
    {"http2", TG_FLAG_NONE, NULL, OPT_H2,
     "also serve HTTP/2: h2 by ALPN, or its preface on a connection\nwithout ALPN h2 (off by default: then a "
     "preface is refused\nand the connection closed; see docs/webhook.md)", NULL},
    {"no-http2", TG_FLAG_NONE, NULL, OPT_NO_H2, "offer only http/1.1 (the default; kept for old manifests)", NULL},
    {"log-level", REQ, "LEVEL", OPT_LOG_LEVEL, "debug, info, warn, error (default info)", NULL},
};
#undef REQ

/* --shutdown-grace and the other durations: at most an hour. */
#define MAX_SECONDS_MS 3600000ULL

/* The default trusted writers of local slices: the cluster's administrators
 * and the service accounts of the install namespace (Liqo, tenantgate). */
static void default_writers(const char *ns, char *buf, size_t len)
{
    snprintf(buf, len, "group:system:masters,group:system:serviceaccounts:%s", ns);
}

/* What slice_decide.h needs to tell this cluster's own local slices from a
 * consumer's: its id (the flag, else Liqo's ConfigMap) and who may write
 * them. An unknown id is logged and fails closed (slice_decide.h). */
static int local_slice_opts(tg_kube_lookup *kl, const char *flag_id, const char *ns, const char *writers_flag,
                            tg_local_writers *writers, char id[TG_CLUSTERID_MAX + 1], tg_slice_opts *out)
{
    char list[512], why[512];

    if (!writers_flag)
        default_writers(ns, list, sizeof(list));
    if (tg_local_writers_parse(writers_flag ? writers_flag : list, writers, why, sizeof(why)) != 0) {
        fprintf(stderr, "tenantgate-webhook: bad value for --local-slice-writers: %s\n", why);
        return -1;
    }
    out->local_writers = writers;
    if (flag_id) {
        out->cluster_id = flag_id;
    } else if (tg_kube_lookup_cluster_id(kl, ns, id, TG_CLUSTERID_MAX + 1, why, sizeof(why)) == 0) {
        out->cluster_id = id;
        tg_log(TG_LOG_INFO, "cluster id read from the clusterid ConfigMap", TG_LOG_STR("cluster_id", id),
               TG_LOG_STR("namespace", ns));
    } else {
        out->cluster_id = NULL;
        tg_log(TG_LOG_WARN, "no cluster id (give --cluster-id): every liqo.io/replication=true slice in a tenant "
                            "namespace counts as this cluster's own, for trusted local-slice writers only",
               TG_LOG_STR("namespace", ns), TG_LOG_STR("error", why));
    }
    tg_log(TG_LOG_INFO, "local slices", TG_LOG_STR("cluster_id", out->cluster_id ? out->cluster_id : ""),
           TG_LOG_STR("writers", writers_flag ? writers_flag : list));
    return 0;
}

/* The signer's default: the ConfigMap of the per-class policy, in the install namespace. */
#define DEFAULT_SLICE_POLICY "tenantgate-resourceslice-policy"

/* NS/NAME, both non-empty, one "/". */
static int slice_policy_flag_ok(const char *arg)
{
    const char *slash = strchr(arg, '/');
    return slash && slash != arg && slash[1] && !strchr(slash + 1, '/') && (size_t)(slash - arg) < 64 &&
           strlen(slash + 1) < 254;
}

/* The consumers' own slice policy (--slice-policy-configmap; NULL: the default). */
static int watch_slice_policy(tg_kube_lookup *kl, const char *flag, const char *namespace_)
{
    char ns[64], err[256];
    const char *name = DEFAULT_SLICE_POLICY;

    if (flag && strcmp(flag, "off") == 0) {
        tg_log_msg(TG_LOG_INFO, "no consumer slice policy (--slice-policy-configmap off)");
        return 0;
    }
    snprintf(ns, sizeof(ns), "%s", namespace_);
    if (flag) {
        snprintf(ns, sizeof(ns), "%.*s", (int)(strchr(flag, '/') - flag), flag);
        name = strchr(flag, '/') + 1;
    }
    if (tg_kube_lookup_watch_slice_policy(kl, ns, name, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot watch the slice policy ConfigMap", TG_LOG_STR("error", err));
        return -1;
    }
    return 0;
}

/* One flag into st: 0, or -1 when its value is bad. */
static int take_flag(void *ctx, int id, const char *v)
{
    settings *st = ctx;
    tg_server_config *cfg = &st->cfg;

    switch (id) {
    case OPT_CERT: cfg->cert_path = v; return 0;
    case OPT_KEY: cfg->key_path = v; return 0;
    case OPT_LISTEN: return tg_flag_listen_addr(v, st->listen_host, sizeof(st->listen_host), &cfg->listen_port);
    case OPT_METRICS:
        return tg_flag_listen_addr_or_off(v, st->metrics_host, sizeof(st->metrics_host), &cfg->metrics_port);
    case OPT_KUBECONFIG: st->kubeconfig = v; return 0;
    case OPT_THREADS: {
        long n;
        if (tg_flag_long(v, 1, 256, &n) != 0)
            return -1;
        cfg->threads = (int)n;
        return 0;
    }
    case OPT_ALLOW_NH: cfg->allow_no_handshake = 1; return 0;
    case OPT_GRACE: return tg_flag_seconds(v, 0, MAX_SECONDS_MS, &cfg->shutdown_grace_ms);
    case OPT_CHECK: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->cert_check_ms);
    case OPT_NO_H2: cfg->enable_h2 = 0; return 0;
    case OPT_H2: cfg->enable_h2 = 1; return 0;
    case OPT_REQ_TIMEOUT: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->request_timeout_ms);
    case OPT_IDLE_TIMEOUT: return tg_flag_seconds(v, 100, MAX_SECONDS_MS, &cfg->idle_timeout_ms);
    case OPT_MAX_CONNS: return tg_flag_long(v, 1, 1000000, &cfg->max_connections);
    case OPT_MAX_PEER_CONNS: return tg_flag_long(v, 0, 1000000, &cfg->max_connections_per_peer);
    case OPT_LOG_LEVEL: return tg_log_set_level_named(v);
    case OPT_CLUSTER_ID: st->cluster_id = v; return tg_cluster_id_valid(v) ? 0 : -1;
    case OPT_NAMESPACE: st->namespace_ = v; return 0;
    case OPT_LOCAL_WRITERS: st->writers_flag = v; return 0;
    case OPT_DEFAULT_CLASS:
        /* a Go bool flag, as Liqo's: bare means true */
        if (!v || strcmp(v, "true") == 0)
            return cfg->slice.default_class_disabled = 0, 0;
        if (strcmp(v, "false") == 0)
            return cfg->slice.default_class_disabled = 1, 0;
        return -1;
    case OPT_SLICE_POLICY: st->slice_policy = v; return strcmp(v, "off") == 0 || slice_policy_flag_ok(v) ? 0 : -1;
    }
    return -1;
}

static const tg_flag_program program = {
    .name = "tenantgate-webhook",
    .synopsis = "--cert FILE --key FILE [options]",
    .about = "Validating and mutating admission webhook for Liqo Tenants.",
    .flags = flags,
    .nflags = sizeof(flags) / sizeof(flags[0]),
    .take = take_flag,
};

int main(int argc, char **argv)
{
    settings st = {
        .cfg = {
            .register_routes = tg_routes_register,
            .listen_port = 8443,
            .metrics_port = 8080,
            .threads = 0,
            .cert_check_ms = 10000,
            .shutdown_grace_ms = 10000,
            .request_timeout_ms = 10000,
            .idle_timeout_ms = 120000,
            .max_connections = 1000,
            .max_connections_per_peer = 250,
            .enable_h2 = 0,
        },
        .listen_host = "0.0.0.0",
        .metrics_host = "0.0.0.0",
        .namespace_ = TG_CLUSTERID_DEFAULT_NAMESPACE,
    };
    char err[512], cluster_id_buf[TG_CLUSTERID_MAX + 1];
    tg_local_writers writers;
    tg_kube_lookup *kl = NULL;
    uv_loop_t *loop = uv_default_loop();
    tg_server *s;
    int status;

    if ((status = tg_flags_parse(&program, argc, argv, &st)) >= 0)
        return status;
    st.cfg.listen_host = st.listen_host;
    st.cfg.metrics_host = st.metrics_host;
    if (!st.cfg.cert_path || !st.cfg.key_path) {
        fprintf(stderr, "tenantgate-webhook: --cert and --key are required\n");
        tg_flags_usage(&program, stderr);
        return 2;
    }
    if (st.cfg.threads == 0)
        st.cfg.threads = (int)uv_available_parallelism();
    /* glibc gives each thread that allocates its own arena (up to 8 per
     * core), each with its own free lists and fragmentation: one per worker
     * is enough; the main loop (informers, metrics) shares. Measured with
     * --threads 1: 2 MB less RSS after load and with 1,000 connections. */
    mallopt(M_ARENA_MAX, st.cfg.threads);
    /* Fixed, so glibc does not raise it: after freeing a large mapped chunk it
     * would, and the next 3 MB bodies would come from the arenas and stay
     * there (fragmented) after the burst. Above it a buffer is its own
     * mapping, returned to the OS when freed. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    /* A peer that resets mid-write must not kill the process. */
    signal(SIGPIPE, SIG_IGN);

    kl = tg_kube_lookup_new(loop, st.kubeconfig, st.cfg.threads, err, sizeof(err));
    if (!kl) {
        tg_log(TG_LOG_ERROR, "cannot set up the Kubernetes client", TG_LOG_STR("error", err));
        return 1;
    }
    st.cfg.lookup = tg_kube_lookup_get(kl);
    st.cfg.live = tg_kube_lookup_live(kl);
    if (local_slice_opts(kl, st.cluster_id, st.namespace_, st.writers_flag, &writers, cluster_id_buf, &st.cfg.slice) != 0)
        return 2;
    if (watch_slice_policy(kl, st.slice_policy, st.namespace_) != 0)
        return 1;
    s = tg_server_new(loop, &st.cfg, err, sizeof(err));
    if (!s) {
        tg_log(TG_LOG_ERROR, "cannot start", TG_LOG_STR("error", err));
        return 1;
    }
    if (tg_server_start(s, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot start", TG_LOG_STR("error", err));
        return 1;
    }
    if (tg_server_free(s) == 0)
        tg_kube_lookup_free(kl);
    return 0;

}
