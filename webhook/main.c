/* main.c - tenantgate-webhook: flags, then the server. */
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "common/flags.h"
#include "common/log.h"
#include "kube/clusterid.h"
#include "pki/tenant.h"
#include "webhook/kube_lookup.h"
#include "webhook/routes.h"
#include "webhook/server.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenantgate-webhook --cert FILE --key FILE [options]\n"
            "\n"
            "Validating and mutating admission webhook for Liqo Tenants.\n"
            "\n"
            "  --cert FILE               serving certificate (PEM, leaf first); reloaded on change\n"
            "  --key FILE                its private key (PEM)\n"
            "  --listen ADDR:PORT        HTTPS address (default 0.0.0.0:8443; [::]:8443 for IPv6)\n"
            "  --metrics-listen ADDR:PORT  plain HTTP /healthz /readyz /metrics (default 0.0.0.0:8080;\n"
            "                            \"off\" to disable)\n"
            "  --kubeconfig FILE         API access (default: in-cluster service account)\n"
            "  --threads N               worker threads (default: number of cores)\n"
            "  --allow-no-handshake      accept authzPolicy TolerateNoHandshake (off by default)\n"
            "  --cluster-id ID           this cluster's id (default: read from Liqo's clusterid ConfigMap\n"
            "                            in --namespace); slices naming it are its own local ones\n"
            "  --namespace NS            where that ConfigMap is (default liqo)\n"
            "  --local-slice-writers LIST  who may write this cluster's own local ResourceSlices in a\n"
            "                            tenant namespace: users, and group:<name> (default\n"
            "                            group:system:masters,group:system:serviceaccounts:<namespace>)\n"
            "  --default-resource-slice-class-enabled[=true|false]  false: refuse replicated slices of\n"
            "                            the default class (DefaultResourceSliceClassDisabled), as Liqo's\n"
            "                            flag of that name (default true)\n"
            "  --slice-policy-configmap NS/NAME  the ResourceSlice policy ConfigMap whose tenant.<id>\n"
            "                            keys limit each consumer (ClassNotAllowed, TenantPolicyExceeded;\n"
            "                            default <namespace>/tenantgate-resourceslice-policy, as the\n"
            "                            signer's; \"off\": no consumer policy)\n"
            "  --shutdown-grace SECONDS  on SIGTERM, wait this long for in-flight requests (default 10)\n"
            "  --request-timeout SECONDS  bound on a new connection's TLS handshake and first request,\n"
            "                            a request's arrival from its first byte, a stalled HTTP/2\n"
            "                            stream (default 10)\n"
            "  --idle-timeout SECONDS    how long a connection may wait for its next request (default\n"
            "                            120: longer than kube-apiserver keeps an idle one, 90)\n"
            "  --max-connections N       open HTTPS connections (default 1000); past it the oldest one\n"
            "                            without a request yet is closed for the newcomer, and only when\n"
            "                            every one has had a request is the newcomer closed\n"
            "  --max-connections-per-peer N  open HTTPS connections from one source address (default\n"
            "                            250; 0: no cap); past it new ones from that address are closed\n"
            "  --cert-check-interval SECONDS  periodic check of the cert files (default 10)\n"
            "  --http2                   also serve HTTP/2: h2 by ALPN, or its preface on a connection\n"
            "                            without ALPN h2 (off by default: then a preface is refused\n"
            "                            and the connection closed; see docs/webhook.md)\n"
            "  --no-http2                offer only http/1.1 (the default; kept for old manifests)\n"
            "  --log-level LEVEL         debug, info, warn, error (default info)\n"
            "  -h, --help\n");
}

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

int main(int argc, char **argv)
{
    enum {
        OPT_CERT = 256, OPT_KEY, OPT_LISTEN, OPT_METRICS, OPT_KUBECONFIG, OPT_THREADS, OPT_ALLOW_NH, OPT_GRACE,
        OPT_CHECK, OPT_NO_H2, OPT_LOG_LEVEL, OPT_H2, OPT_REQ_TIMEOUT, OPT_IDLE_TIMEOUT, OPT_MAX_CONNS, OPT_MAX_PEER_CONNS,
        OPT_CLUSTER_ID, OPT_NAMESPACE, OPT_LOCAL_WRITERS, OPT_DEFAULT_CLASS, OPT_SLICE_POLICY,
    };
    static const struct option opts[] = {
        {"cert", required_argument, NULL, OPT_CERT},
        {"key", required_argument, NULL, OPT_KEY},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"metrics-listen", required_argument, NULL, OPT_METRICS},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"allow-no-handshake", no_argument, NULL, OPT_ALLOW_NH},
        {"shutdown-grace", required_argument, NULL, OPT_GRACE},
        {"cert-check-interval", required_argument, NULL, OPT_CHECK},
        {"no-http2", no_argument, NULL, OPT_NO_H2},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"http2", no_argument, NULL, OPT_H2},
        {"request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT},
        {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
        {"max-connections", required_argument, NULL, OPT_MAX_CONNS},
        {"max-connections-per-peer", required_argument, NULL, OPT_MAX_PEER_CONNS},
        {"cluster-id", required_argument, NULL, OPT_CLUSTER_ID},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"local-slice-writers", required_argument, NULL, OPT_LOCAL_WRITERS},
        {"default-resource-slice-class-enabled", optional_argument, NULL, OPT_DEFAULT_CLASS},
        {"slice-policy-configmap", required_argument, NULL, OPT_SLICE_POLICY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char listen_host[256] = "0.0.0.0", metrics_host[256] = "0.0.0.0", err[512];
    const char *kubeconfig = NULL;
    tg_server_config cfg = {
        .register_routes = tg_routes_register,
        .listen_host = listen_host,
        .listen_port = 8443,
        .metrics_host = metrics_host,
        .metrics_port = 8080,
        .threads = 0,
        .cert_check_ms = 10000,
        .shutdown_grace_ms = 10000,
        .request_timeout_ms = 10000,
        .idle_timeout_ms = 120000,
        .max_connections = 1000,
        .max_connections_per_peer = 250,
        .enable_h2 = 0,
    };
    const char *cluster_id = NULL, *namespace_ = TG_CLUSTERID_DEFAULT_NAMESPACE, *writers_flag = NULL;
    const char *slice_policy = NULL;
    char cluster_id_buf[TG_CLUSTERID_MAX + 1];
    tg_local_writers writers;
    tg_kube_lookup *kl = NULL;
    uv_loop_t *loop = uv_default_loop();
    tg_server *s;
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_CERT: cfg.cert_path = optarg; break;
        case OPT_KEY: cfg.key_path = optarg; break;
        case OPT_LISTEN:
            if (tg_flag_listen_addr(optarg, listen_host, sizeof(listen_host), &cfg.listen_port) != 0)
                goto bad;
            break;
        case OPT_METRICS:
            if (strcmp(optarg, "off") == 0)
                cfg.metrics_port = -1;
            else if (tg_flag_listen_addr(optarg, metrics_host, sizeof(metrics_host), &cfg.metrics_port) != 0)
                goto bad;
            break;
        case OPT_KUBECONFIG: kubeconfig = optarg; break;
        case OPT_THREADS: {
            long n;
            if (tg_flag_long(optarg, 1, 256, &n) != 0)
                goto bad;
            cfg.threads = (int)n;
            break;
        }
        case OPT_ALLOW_NH: cfg.allow_no_handshake = 1; break;
        case OPT_GRACE:
            if (tg_flag_seconds(optarg, 0, MAX_SECONDS_MS, &cfg.shutdown_grace_ms) != 0)
                goto bad;
            break;
        case OPT_CHECK:
            if (tg_flag_seconds(optarg, 100, MAX_SECONDS_MS, &cfg.cert_check_ms) != 0)
                goto bad;
            break;
        case OPT_NO_H2: cfg.enable_h2 = 0; break;
        case OPT_H2: cfg.enable_h2 = 1; break;
        case OPT_REQ_TIMEOUT:
            if (tg_flag_seconds(optarg, 100, MAX_SECONDS_MS, &cfg.request_timeout_ms) != 0)
                goto bad;
            break;
        case OPT_IDLE_TIMEOUT:
            if (tg_flag_seconds(optarg, 100, MAX_SECONDS_MS, &cfg.idle_timeout_ms) != 0)
                goto bad;
            break;
        case OPT_MAX_CONNS:
            if (tg_flag_long(optarg, 1, 1000000, &cfg.max_connections) != 0)
                goto bad;
            break;
        case OPT_MAX_PEER_CONNS:
            if (tg_flag_long(optarg, 0, 1000000, &cfg.max_connections_per_peer) != 0)
                goto bad;
            break;
        case OPT_LOG_LEVEL:
            if (tg_log_set_level_named(optarg) != 0)
                goto bad;
            break;
        case OPT_CLUSTER_ID:
            if (!tg_cluster_id_valid(optarg))
                goto bad;
            cluster_id = optarg;
            break;
        case OPT_NAMESPACE: namespace_ = optarg; break;
        case OPT_LOCAL_WRITERS: writers_flag = optarg; break;
        case OPT_DEFAULT_CLASS:
            /* a Go bool flag, as Liqo's: bare means true */
            if (!optarg || strcmp(optarg, "true") == 0)
                cfg.slice.default_class_disabled = 0;
            else if (strcmp(optarg, "false") == 0)
                cfg.slice.default_class_disabled = 1;
            else
                goto bad;
            break;
        case OPT_SLICE_POLICY:
            if (strcmp(optarg, "off") != 0 && !slice_policy_flag_ok(optarg))
                goto bad;
            slice_policy = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || !cfg.cert_path || !cfg.key_path) {
        fprintf(stderr, "tenantgate-webhook: --cert and --key are required\n");
        usage(stderr);
        return 2;
    }
    if (cfg.threads == 0)
        cfg.threads = (int)uv_available_parallelism();
    /* glibc gives each thread that allocates its own arena (up to 8 per
     * core), each with its own free lists and fragmentation: one per worker
     * is enough; the main loop (informers, metrics) shares. Measured with
     * --threads 1: 2 MB less RSS after load and with 1,000 connections. */
    mallopt(M_ARENA_MAX, cfg.threads);
    /* Fixed, so glibc does not raise it: after freeing a large mapped chunk it
     * would, and the next 3 MB bodies would come from the arenas and stay
     * there (fragmented) after the burst. Above it a buffer is its own
     * mapping, returned to the OS when freed. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    /* A peer that resets mid-write must not kill the process. */
    signal(SIGPIPE, SIG_IGN);

    kl = tg_kube_lookup_new(loop, kubeconfig, cfg.threads, err, sizeof(err));
    if (!kl) {
        tg_log(TG_LOG_ERROR, "cannot set up the Kubernetes client", TG_LOG_STR("error", err));
        return 1;
    }
    cfg.lookup = tg_kube_lookup_get(kl);
    cfg.live = tg_kube_lookup_live(kl);
    if (local_slice_opts(kl, cluster_id, namespace_, writers_flag, &writers, cluster_id_buf, &cfg.slice) != 0)
        return 2;
    if (watch_slice_policy(kl, slice_policy, namespace_) != 0)
        return 1;
    s = tg_server_new(loop, &cfg, err, sizeof(err));
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

bad:
    fprintf(stderr, "tenantgate-webhook: bad value for --%s: %s\n", opts[c - OPT_CERT].name, optarg);
    return 2;
}
