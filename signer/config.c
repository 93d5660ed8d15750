/* config.c - tenantgate-signer's flags and the configuration they load (config.h). */
#include "signer/config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/flags.h"
#include "common/log.h"
#include "kube/clusterid.h"
#include "pki/bootstrap_token.h"
#include "pki/tenant.h"
#include "signer/approve_decide.h"
#include "signer/cluster_labels.h"
#include "signer/controller.h"
#include "signer/renewal.h"
#include "signer/slice_liqo_quota.h"

#define DEFAULT_SLICE_POLICY "tenantgate-resourceslice-policy"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenantgate-signer [--cluster-id ID] [options]\n"
            "\n"
            "CSR approval and signing, Tenant status, nonces, keys and Identity kubeconfigs.\n"
            "\n"
            "  --cluster-id ID            this cluster's id (default: CLUSTER_ID of the ConfigMap labelled\n"
            "                             app.kubernetes.io/name=clusterid-configmap in --namespace, as Liqo)\n"
            "  --kubeconfig FILE          API access (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
            "  --context NAME             kubeconfig context\n"
            "  --namespace NS             install namespace (default liqo)\n"
            "  --controllers LIST         comma list of keys,nonce,tenant,approver,signer,identity,noncesigner,\n"
            "                             resourceslice,renew,remoterenew,remoteresourceslice,replicator,\n"
            "                             authtoken,bootstrapgc\n"
            "                             (default all)\n"
            "  --api-server-url URL       status.authParams.apiServer (default: the kubeconfig's server)\n"
            "  --ca-file FILE             status.authParams.ca (default: the kubeconfig's CA)\n"
            "  --csr-expiration-seconds N expirationSeconds of CSRs (default 604800; 0: none; min 600)\n"
            "  --signer-name NAME         kubernetes.io/kube-apiserver-client (default) | tenantgate.io/identity\n"
            "  --ca-cert FILE --ca-key FILE  own-signer CA (with --signer-name tenantgate.io/identity)\n"
            "  --max-cert-lifetime SECONDS   own-signer clamp (default 604800; min 90)\n"
"  --leader-elect             act only while holding the Lease (15 s lease, 10 s renew deadline,\n"
            "                             2 s retry); a leader that loses it exits (status 3)\n"
            "  --leader-elect-lease-name NAME  (default tenantgate-signer)\n"
            "  --leader-elect-namespace NS     (default: --namespace)\n"
            "  --allow-no-handshake       accept TolerateNoHandshake Tenants (as the webhook's switch)\n"
            "  --key-type ed25519|rsa2048|ecdsa-p256  the keys the consumer makes: the cluster key\n"
            "                             (keys, when authentication-keys is missing; an existing key\n"
            "                             of another type is kept) and authtoken's (default ed25519;\n"
            "                             rsa2048 is Liqo's --tls-compatibility-mode)\n"
            "  --slice-policy-configmap NS/NAME  ResourceSlice class policy (default\n"
            "                             <namespace>/" DEFAULT_SLICE_POLICY "; \"off\": none)\n"
            "  --cluster-labels K=V,...   labels offered to consumers' virtual nodes (a slice's\n"
            "                             status.nodeLabels, as Liqo's flag of that name)\n"
            "  --nonce-rotation MODE      on-unpeer (default: deleting a Tenant replaces the nonce, so\n"
            "                             the old Tenant cannot be replayed; consumers re-sign, as\n"
            "                             kubectl tenantgate does) or keep (as Liqo: the tenant\n"
            "                             namespace keeps its nonce, so a Liqo consumer and liqoctl\n"
            "                             can authenticate again; replace mode sets it)\n"
            "  --token-namespace NS       where tenantgate-auth keeps its tokens (default\n"
            "                             tenantgate-tokens): bootstrapgc reads the bootstrap\n"
            "                             tokens by name, authtoken sends auth-token's as ours\n"
            "  --bootstrap-grace SECONDS  bootstrapgc deletes a namespace /v1/nonce made once no\n"
            "                             Tenant and no live token kept it that long (default 600)\n"
            "  --default-resource-slice-class-enabled[=true|false]  false: deny the Resources of default-class\n"
            "                             slices (DefaultResourceSliceClassDisabled), as Liqo's flag (default true)\n"
            "  --default-node-resources LIST  what a default-class slice is granted unless it asks, as\n"
            "                             Liqo's flag (default cpu=4,memory=8Gi,pods=110,ephemeral-storage=20Gi)\n"
            "  --enable-storage[=true|false]  offer the cluster's StorageClasses in status.storageClasses\n"
            "  --real-storage-class-name NAME  the one marked default there (default: the cluster's default)\n"
            "  --ingress-classes LIST     status.ingressClasses, as Liqo's flag: nginx;default,traefik\n"
            "  --load-balancer-classes LIST  status.loadBalancerClasses, as Liqo's flag: metallb;default\n"
            "  --quota-limits-enforcement None|Soft|Hard  spec.limitsEnforcement of the Liqo Quota\n"
            "                             made per accepted slice where Liqo's Quota CRD is served\n"
            "                             (as Liqo's --default-limits-enforcement; default None)\n"
            "  --renewal-grace-percent N  a certificate not renewed N %% of its lifetime after its\n"
            "                             renewal time is overdue: Identity condition RenewalOverdue,\n"
            "                             metric, log (0-30, default 10)\n"
"  --metrics-listen ADDR:PORT plain HTTP /healthz /readyz /metrics (default 0.0.0.0:8080; \"off\")\n"
            "  --workers N                reconcile threads, 1-32 (default 8)\n"
            "  --log-level LEVEL          debug, info, warn, error (default info)\n"
            "  -h, --help\n");
}

enum {
    OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_CLUSTER_ID, OPT_NAMESPACE, OPT_CONTROLLERS, OPT_API_SERVER, OPT_CA_FILE,
    OPT_CSR_EXPIRATION, OPT_SIGNER_NAME, OPT_OWN_CA_CERT, OPT_OWN_CA_KEY, OPT_MAX_CERT_LIFETIME,
    OPT_ALLOW_NO_HANDSHAKE, OPT_LOG_LEVEL, OPT_LEADER_ELECT, OPT_LEASE_NAME, OPT_LEASE_NAMESPACE,
    OPT_METRICS_LISTEN, OPT_WORKERS, OPT_SLICE_POLICY, OPT_CLUSTER_LABELS, OPT_NONCE_ROTATION,
    OPT_QUOTA_ENFORCEMENT, OPT_TOKEN_NAMESPACE, OPT_BOOTSTRAP_GRACE,
    OPT_DEFAULT_CLASS, OPT_DEFAULT_RESOURCES, OPT_ENABLE_STORAGE, OPT_REAL_STORAGE, OPT_INGRESS_CLASSES,
    OPT_LB_CLASSES, OPT_RENEWAL_GRACE, OPT_KEY_TYPE,
};

static const struct option options[] = {
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"cluster-id", required_argument, NULL, OPT_CLUSTER_ID},
    {"namespace", required_argument, NULL, OPT_NAMESPACE},
    {"controllers", required_argument, NULL, OPT_CONTROLLERS},
    {"api-server-url", required_argument, NULL, OPT_API_SERVER},
    {"ca-file", required_argument, NULL, OPT_CA_FILE},
    {"csr-expiration-seconds", required_argument, NULL, OPT_CSR_EXPIRATION},
    {"signer-name", required_argument, NULL, OPT_SIGNER_NAME},
    {"ca-cert", required_argument, NULL, OPT_OWN_CA_CERT},
    {"ca-key", required_argument, NULL, OPT_OWN_CA_KEY},
    {"max-cert-lifetime", required_argument, NULL, OPT_MAX_CERT_LIFETIME},
    {"allow-no-handshake", no_argument, NULL, OPT_ALLOW_NO_HANDSHAKE},
    {"leader-elect", no_argument, NULL, OPT_LEADER_ELECT},
    {"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
    {"leader-elect-lease-name", required_argument, NULL, OPT_LEASE_NAME},
    {"leader-elect-namespace", required_argument, NULL, OPT_LEASE_NAMESPACE},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"slice-policy-configmap", required_argument, NULL, OPT_SLICE_POLICY},
    {"cluster-labels", required_argument, NULL, OPT_CLUSTER_LABELS},
    {"nonce-rotation", required_argument, NULL, OPT_NONCE_ROTATION},
    {"quota-limits-enforcement", required_argument, NULL, OPT_QUOTA_ENFORCEMENT},
    {"token-namespace", required_argument, NULL, OPT_TOKEN_NAMESPACE},
    {"bootstrap-grace", required_argument, NULL, OPT_BOOTSTRAP_GRACE},
    {"default-resource-slice-class-enabled", optional_argument, NULL, OPT_DEFAULT_CLASS},
    {"default-node-resources", required_argument, NULL, OPT_DEFAULT_RESOURCES},
    {"enable-storage", optional_argument, NULL, OPT_ENABLE_STORAGE},
    {"real-storage-class-name", required_argument, NULL, OPT_REAL_STORAGE},
    {"ingress-classes", required_argument, NULL, OPT_INGRESS_CLASSES},
    {"load-balancer-classes", required_argument, NULL, OPT_LB_CLASSES},
    {"renewal-grace-percent", required_argument, NULL, OPT_RENEWAL_GRACE},
    {"key-type", required_argument, NULL, OPT_KEY_TYPE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* NS/NAME with a namespace that fits f->slice_policy_ns, or "off". */
static int slice_policy_ok(const char *arg, const tg_signer_flags *f)
{
    const char *slash = strchr(arg, '/');

    return strcmp(arg, "off") == 0 ||
           (slash && slash != arg && (size_t)(slash - arg) < sizeof(f->slice_policy_ns) && slash[1] &&
            !strchr(slash + 1, '/') && strlen(slash + 1) <= 253);
}

/* A Go bool flag, as Liqo's: bare means true. 0, or -1 (with why) for another value. */
static int bool_flag(const char *name, const char *arg, int *out)
{
    if (!arg || strcmp(arg, "true") == 0)
        return *out = 1, 0;
    if (strcmp(arg, "false") == 0)
        return *out = 0, 0;
    fprintf(stderr, "tenantgate-signer: --%s: expected true or false, found \"%.64s\"\n", name, arg);
    return -1;
}

/* Liqo's provider switches for ResourceSlices (slice_resources.h, slice_offer.h),
 * parsed once here; 0, or -1 after saying why. */
static int take_slice_flag(int c, const char *arg, tg_signer *s)
{
    json_object **list = c == OPT_INGRESS_CLASSES ? &s->slice_offer.ingress_classes
                                                  : &s->slice_offer.load_balancer_classes;
    char err[256];
    int on = 1;

    switch (c) {
    case OPT_DEFAULT_CLASS:
        if (bool_flag("default-resource-slice-class-enabled", arg, &on) != 0)
            return -1;
        s->slice_provider.default_class_disabled = !on;
        return 0;
    case OPT_ENABLE_STORAGE: return bool_flag("enable-storage", arg, &s->slice_offer.enable_storage);
    case OPT_REAL_STORAGE: s->slice_offer.real_storage_class = arg; return 0;
    case OPT_DEFAULT_RESOURCES:
        json_object_put(s->slice_provider.defaults);
        if ((s->slice_provider.defaults = tg_slice_defaults_parse(arg, err, sizeof(err))))
            return 0;
        fprintf(stderr, "tenantgate-signer: --default-node-resources: %s\n", err);
        return -1;
    }
    json_object_put(*list);
    if ((*list = tg_slice_class_list_parse(arg, c == OPT_INGRESS_CLASSES ? "ingressClassName" : "loadBalancerClassName",
                                           err, sizeof(err))))
        return 0;
    fprintf(stderr, "tenantgate-signer: --%s: %s\n",
            c == OPT_INGRESS_CLASSES ? "ingress-classes" : "load-balancer-classes", err);
    return -1;
}

/* One flag with its value; 0, or -1 when the value is bad. */
static int take_flag(int c, const char *arg, tg_signer *s, tg_signer_flags *f, const char **slice_policy,
                     const char **cluster_labels)
{
    switch (c) {
    case OPT_KUBECONFIG: f->kubeconfig = arg; return 0;
    case OPT_CONTEXT: f->context = arg; return 0;
    case OPT_CLUSTER_ID: s->cluster_id = arg; return 0;
    case OPT_NAMESPACE: s->namespace_ = arg; return 0;
    case OPT_CONTROLLERS: return tg_controllers_parse(arg, &s->controllers);
    case OPT_API_SERVER: f->api_server = arg; return 0;
    case OPT_CA_FILE: f->ca_file = arg; return 0;
    case OPT_WORKERS: return tg_flag_long(arg, 1, TG_SIGNER_MAX_WORKERS, &f->workers);
    case OPT_CSR_EXPIRATION:
        return tg_flag_long(arg, 0, 10L * 365 * 86400, &s->csr_expiration_s) != 0 ||
                       (s->csr_expiration_s > 0 && s->csr_expiration_s < 600)
                   ? -1
                   : 0;
    case OPT_SIGNER_NAME:
        if (strcmp(arg, TG_SIGNER_NAME_KUBE) != 0 && strcmp(arg, TG_SIGNER_NAME_OWN) != 0)
            return -1;
        s->signer_name = arg;
        return 0;
    case OPT_OWN_CA_CERT: f->own_ca_cert = arg; return 0;
    case OPT_OWN_CA_KEY: f->own_ca_key = arg; return 0;
    case OPT_MAX_CERT_LIFETIME:
        /* shorter certificates would be due for renewal as soon as issued
         * (NotBefore is backdated 5 min; see renewal.h) */
        return tg_flag_long(arg, 90, 10L * 365 * 86400, &f->max_cert_lifetime_s);
    case OPT_ALLOW_NO_HANDSHAKE: s->allow_no_handshake = 1; return 0;
    case OPT_KEY_TYPE:
        if (tg_key_type_parse(arg, &s->key_type) != 0) {
            fprintf(stderr, "tenantgate-signer: --key-type: expected ed25519, rsa2048 or ecdsa-p256, found \"%.64s\"\n",
                    arg);
            return -1;
        }
        return 0;
    case OPT_LEADER_ELECT: f->leader_elect = 1; return 0;
    case OPT_METRICS_LISTEN:
        if (strcmp(arg, "off") == 0) {
            f->metrics_port = -1;
            return 0;
        }
        return tg_flag_listen_addr(arg, f->metrics_host, sizeof(f->metrics_host), &f->metrics_port);
    case OPT_LEASE_NAME: f->lease_name = arg; return 0;
    case OPT_SLICE_POLICY:
        *slice_policy = arg;
        return slice_policy_ok(arg, f) ? 0 : -1;
    case OPT_LEASE_NAMESPACE: f->lease_ns = arg; return 0;
    case OPT_CLUSTER_LABELS: *cluster_labels = arg; return 0;
    case OPT_NONCE_ROTATION:
        if (strcmp(arg, "keep") != 0 && strcmp(arg, "on-unpeer") != 0) {
            fprintf(stderr, "tenantgate-signer: --nonce-rotation: expected keep or on-unpeer, found \"%.64s\"\n", arg);
            return -1;
        }
        s->rotate_nonce_on_unpeer = strcmp(arg, "on-unpeer") == 0;
        return 0;
    case OPT_QUOTA_ENFORCEMENT:
        if (!tg_liqo_quota_enforcement_valid(arg)) {
            fprintf(stderr, "tenantgate-signer: --quota-limits-enforcement: expected None, Soft or Hard, found "
                            "\"%.64s\"\n", arg);
            return -1;
        }
        s->quota_limits_enforcement = arg;
        return 0;
    case OPT_LOG_LEVEL: return tg_log_set_level_named(arg);
    case OPT_TOKEN_NAMESPACE: s->token_ns = arg; return 0;
    case OPT_BOOTSTRAP_GRACE: return tg_flag_long(arg, 0, 30L * 86400, &s->bootstrap_grace_s);
    case OPT_DEFAULT_CLASS: case OPT_DEFAULT_RESOURCES: case OPT_ENABLE_STORAGE: case OPT_REAL_STORAGE:
    case OPT_INGRESS_CLASSES: case OPT_LB_CLASSES:
        return take_slice_flag(c, arg, s);
    case OPT_RENEWAL_GRACE: {
        long pct;
        if (tg_flag_long(arg, 0, TG_RENEWAL_GRACE_PCT_MAX, &pct) != 0)
            return -1;
        s->renewal_grace_pct = (int)pct;
        return 0;
    }
    }
    return -1;
}

/* The flags' combinations; the exit status 2 when they do not go together, else -1. */
static int check_flags(tg_signer *s, tg_signer_flags *f, const char *slice_policy, const char *cluster_labels)
{
    char label_err[256];

    if (s->cluster_id && !tg_cluster_id_valid(s->cluster_id)) {
        fprintf(stderr, "tenantgate-signer: --cluster-id must be a valid cluster id\n");
        usage(stderr);
        return 2;
    }
    if (!f->own_ca_cert != !f->own_ca_key) {
        fprintf(stderr, "tenantgate-signer: --ca-cert and --ca-key go together\n");
        return 2;
    }
    if (f->own_ca_cert && strcmp(s->signer_name, TG_SIGNER_NAME_OWN) != 0) {
        fprintf(stderr, "tenantgate-signer: --ca-cert needs --signer-name %s\n", TG_SIGNER_NAME_OWN);
        return 2;
    }
    if (cluster_labels && *cluster_labels &&
        !(s->node_labels = tg_cluster_labels_parse(cluster_labels, label_err, sizeof(label_err)))) {
        fprintf(stderr, "tenantgate-signer: --cluster-labels: %s\n", label_err);
        return 2;
    }
    if (!slice_policy) {
        s->slice_policy_ns = s->namespace_;
        s->slice_policy_name = DEFAULT_SLICE_POLICY;
    } else if (strcmp(slice_policy, "off") != 0) {
        const char *slash = strchr(slice_policy, '/');
        snprintf(f->slice_policy_ns, sizeof(f->slice_policy_ns), "%.*s", (int)(slash - slice_policy), slice_policy);
        s->slice_policy_ns = f->slice_policy_ns;
        s->slice_policy_name = slash + 1;
    }
    return -1;
}

int tg_signer_flags_parse(int argc, char **argv, tg_signer *s, tg_signer_flags *f)
{
    const char *slice_policy = NULL, *cluster_labels = NULL;
    int c;

    f->workers = TG_SIGNER_DEFAULT_WORKERS;
    f->lease_name = "tenantgate-signer";
    f->max_cert_lifetime_s = 604800;           /* 7 days (issue 36 #9) */
    snprintf(f->metrics_host, sizeof(f->metrics_host), "0.0.0.0");
    f->metrics_port = 8080;
    s->namespace_ = "liqo";
    s->controllers = TG_CTL_ALL;
    s->signer_name = TG_SIGNER_NAME_KUBE;
    s->csr_expiration_s = 604800;   /* 7 days, renewed at 2/3 (issue 36 #9) */
    s->rotate_nonce_on_unpeer = 1;  /* a deleted Tenant cannot be replayed; keep: Liqo consumers */
    s->token_ns = TG_BTOKEN_NAMESPACE;
    s->bootstrap_grace_s = 600;
    s->renewal_grace_pct = TG_RENEWAL_GRACE_PCT_DEFAULT;
    s->key_type = TG_KEY_ED25519;   /* Liqo's default; rsa2048 is its --tls-compatibility-mode */
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == '?') {
            usage(stderr);
            return 2;
        }
        if (take_flag(c, optarg, s, f, &slice_policy, &cluster_labels) != 0) {
            fprintf(stderr, "tenantgate-signer: bad value for an option: %s\n", optarg ? optarg : "");
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "tenantgate-signer: unexpected argument: %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return check_flags(s, f, slice_policy, cluster_labels);
}

static int load_file(const char *path, char **buf, size_t *len)
{
    char err[256];

    if (tg_kube_read_file(path, 1u << 20, buf, len, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot read file", TG_LOG_STR("error", err));
        return -1;
    }
    return 0;
}

/* The own signer's CA from --ca-cert/--ca-key; the key bytes are cleansed. */
static int load_own_ca(tg_signer *s, const tg_signer_flags *f)
{
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    int r;

    if (load_file(f->own_ca_cert, &cert, &cert_len) != 0 || load_file(f->own_ca_key, &key, &key_len) != 0) {
        free(cert);
        return -1;
    }
    r = tg_ca_load(&s->own_ca, cert, cert_len, key, key_len, f->max_cert_lifetime_s);
    OPENSSL_cleanse(key, key_len);
    free(key);
    free(cert);
    if (r != 0)
        tg_log(TG_LOG_ERROR, "cannot load the own-signer CA", TG_LOG_STR("file", f->own_ca_cert));
    return r != 0 ? -1 : 0;
}

int tg_signer_config_load(tg_signer *s, const tg_signer_flags *f)
{
    char err[512];

    if (tg_kube_config_load(&s->cfg, f->kubeconfig, f->context, err, sizeof(err)) != 0) {
        tg_log(TG_LOG_ERROR, "cannot load the kubeconfig", TG_LOG_STR("error", err));
        return -1;
    }
    if (f->own_ca_cert && load_own_ca(s, f) != 0)
        return -1;
    if (!(s->api_server = strdup(f->api_server ? f->api_server : s->cfg.server)))
        return -1;
    if (f->ca_file)
        return load_file(f->ca_file, &s->ca_pem, &s->ca_len);
    if (s->cfg.ca) {
        if (!(s->ca_pem = malloc(s->cfg.ca_len + 1)))
            return -1;
        memcpy(s->ca_pem, s->cfg.ca, s->cfg.ca_len);
        s->ca_pem[s->cfg.ca_len] = '\0';
        s->ca_len = s->cfg.ca_len;
    }
    return 0;
}
