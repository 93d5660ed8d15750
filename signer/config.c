/* config.c - tenantgate-signer's flags and the configuration they load (config.h). */
#include "signer/config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/flag_table.h"
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

enum {
    OPT_KUBECONFIG, OPT_CONTEXT, OPT_CLUSTER_ID, OPT_NAMESPACE, OPT_CONTROLLERS, OPT_API_SERVER, OPT_CA_FILE,
    OPT_CSR_EXPIRATION, OPT_SIGNER_NAME, OPT_OWN_CA_CERT, OPT_OWN_CA_KEY, OPT_MAX_CERT_LIFETIME,
    OPT_ALLOW_NO_HANDSHAKE, OPT_LOG_LEVEL, OPT_LEADER_ELECT, OPT_LEASE_NAME, OPT_LEASE_NAMESPACE,
    OPT_METRICS_LISTEN, OPT_WORKERS, OPT_SLICE_POLICY, OPT_CLUSTER_LABELS, OPT_NONCE_ROTATION,
    OPT_QUOTA_ENFORCEMENT, OPT_TOKEN_NAMESPACE, OPT_BOOTSTRAP_GRACE,
    OPT_DEFAULT_CLASS, OPT_DEFAULT_RESOURCES, OPT_ENABLE_STORAGE, OPT_REAL_STORAGE, OPT_INGRESS_CLASSES,
    OPT_LB_CLASSES, OPT_RENEWAL_GRACE, OPT_KEY_TYPE,
};

#define REQ TG_FLAG_REQUIRED
static const tg_flag flags[] = {
    {"cluster-id", REQ, "ID", OPT_CLUSTER_ID,
     "this cluster's id (default: CLUSTER_ID of the ConfigMap labelled\n"
     "app.kubernetes.io/name=clusterid-configmap in --namespace, as Liqo)", NULL},
    {"kubeconfig", REQ, "FILE", OPT_KUBECONFIG, "API access (default: $KUBECONFIG, in-cluster, ~/.kube/config)", NULL},
    {"context", REQ, "NAME", OPT_CONTEXT, "kubeconfig context", NULL},
    {"namespace", REQ, "NS", OPT_NAMESPACE, "install namespace (default liqo)", NULL},
    {"controllers", REQ, "LIST", OPT_CONTROLLERS,
     "comma list of keys,nonce,tenant,approver,signer,identity,noncesigner,\n"
     "resourceslice,renew,remoterenew,remoteresourceslice,replicator,\nauthtoken,bootstrapgc\n(default all)",
     "expected a comma list of the controllers above"},
    {"api-server-url", REQ, "URL", OPT_API_SERVER, "status.authParams.apiServer (default: the kubeconfig's server)",
     NULL},
    {"ca-file", REQ, "FILE", OPT_CA_FILE, "status.authParams.ca (default: the kubeconfig's CA)", NULL},
    {"csr-expiration-seconds", REQ, "N", OPT_CSR_EXPIRATION,
     "expirationSeconds of CSRs (default 604800; 0: none; min 600)", "expected 0, or 600 to 315360000"},
    {"signer-name", REQ, "NAME", OPT_SIGNER_NAME,
     "kubernetes.io/kube-apiserver-client (default) | tenantgate.io/identity",
     "expected kubernetes.io/kube-apiserver-client or tenantgate.io/identity"},
    {"ca-cert", REQ, "FILE", OPT_OWN_CA_CERT, "own-signer CA (with --signer-name tenantgate.io/identity)", NULL},
    {"ca-key", REQ, "FILE", OPT_OWN_CA_KEY, "its private key", NULL},
    {"max-cert-lifetime", REQ, "SECONDS", OPT_MAX_CERT_LIFETIME, "own-signer clamp (default 604800; min 90)",
     "expected 90 to 315360000"},
    {"leader-elect", TG_FLAG_NONE, NULL, OPT_LEADER_ELECT,
     "act only while holding the Lease (15 s lease, 10 s renew deadline,\n"
     "2 s retry); a leader that loses it exits (status 3)", NULL},
    {"leader-elect-lease-name", REQ, "NAME", OPT_LEASE_NAME, "(default tenantgate-signer)", NULL},
    {"leader-elect-namespace", REQ, "NS", OPT_LEASE_NAMESPACE, "(default: --namespace)", NULL},
    {"allow-no-handshake", TG_FLAG_NONE, NULL, OPT_ALLOW_NO_HANDSHAKE,
     "accept TolerateNoHandshake Tenants (as the webhook's switch)", NULL},
    {"key-type", REQ, "ed25519|rsa2048|ecdsa-p256", OPT_KEY_TYPE,
     "the keys the consumer makes: the cluster key\n"
     "(keys, when authentication-keys is missing; an existing key\n"
     "of another type is kept) and authtoken's (default ed25519;\n"
     "rsa2048 is Liqo's --tls-compatibility-mode)", "expected ed25519, rsa2048 or ecdsa-p256"},
    {"slice-policy-configmap", REQ, "NS/NAME", OPT_SLICE_POLICY,
     "ResourceSlice class policy (default\n<namespace>/" DEFAULT_SLICE_POLICY "; \"off\": none)",
     "expected NS/NAME or off"},
    {"cluster-labels", REQ, "K=V,...", OPT_CLUSTER_LABELS,
     "labels offered to consumers' virtual nodes (a slice's\nstatus.nodeLabels, as Liqo's flag of that name)", NULL},
    {"nonce-rotation", REQ, "MODE", OPT_NONCE_ROTATION,
     "on-unpeer (default: deleting a Tenant replaces the nonce, so\n"
     "the old Tenant cannot be replayed; consumers re-sign, as\n"
     "kubectl tenantgate does) or keep (as Liqo: the tenant\n"
     "namespace keeps its nonce, so a Liqo consumer and liqoctl\n"
     "can authenticate again; replace mode sets it)", "expected keep or on-unpeer"},
    {"token-namespace", REQ, "NS", OPT_TOKEN_NAMESPACE,
     "where tenantgate-auth keeps its tokens (default\n"
     "tenantgate-tokens): bootstrapgc reads the bootstrap\n"
     "tokens by name, authtoken sends auth-token's as ours", NULL},
    {"bootstrap-grace", REQ, "SECONDS", OPT_BOOTSTRAP_GRACE,
     "bootstrapgc deletes a namespace /v1/nonce made once no\n"
     "Tenant and no live token kept it that long (default 600)", "expected 0 to 2592000"},
    {"default-resource-slice-class-enabled", TG_FLAG_OPTIONAL, "true|false", OPT_DEFAULT_CLASS,
     "false: deny the Resources of default-class\n"
     "slices (DefaultResourceSliceClassDisabled), as Liqo's flag (default true)", "expected true or false"},
    {"default-node-resources", REQ, "LIST", OPT_DEFAULT_RESOURCES,
     "what a default-class slice is granted unless it asks, as\n"
     "Liqo's flag (default cpu=4,memory=8Gi,pods=110,ephemeral-storage=20Gi)", NULL},
    {"enable-storage", TG_FLAG_OPTIONAL, "true|false", OPT_ENABLE_STORAGE,
     "offer the cluster's StorageClasses in status.storageClasses", "expected true or false"},
    {"real-storage-class-name", REQ, "NAME", OPT_REAL_STORAGE,
     "the one marked default there (default: the cluster's default)", NULL},
    {"ingress-classes", REQ, "LIST", OPT_INGRESS_CLASSES, "status.ingressClasses, as Liqo's flag: nginx;default,traefik",
     NULL},
    {"load-balancer-classes", REQ, "LIST", OPT_LB_CLASSES,
     "status.loadBalancerClasses, as Liqo's flag: metallb;default", NULL},
    {"quota-limits-enforcement", REQ, "None|Soft|Hard", OPT_QUOTA_ENFORCEMENT,
     "spec.limitsEnforcement of the Liqo Quota\n"
     "made per accepted slice where Liqo's Quota CRD is served\n"
     "(as Liqo's --default-limits-enforcement; default None)", "expected None, Soft or Hard"},
    {"renewal-grace-percent", REQ, "N", OPT_RENEWAL_GRACE,
     "a certificate not renewed N % of its lifetime after its\n"
     "renewal time is overdue: Identity condition RenewalOverdue,\nmetric, log (0-30, default 10)",
     "expected 0 to 30"},
    {"metrics-listen", REQ, "ADDR:PORT", OPT_METRICS_LISTEN,
     "plain HTTP /healthz /readyz /metrics (default 0.0.0.0:8080; \"off\")", NULL},
    {"workers", REQ, "N", OPT_WORKERS, "reconcile threads, 1-32 (default 8)", "expected 1 to 32"},
    {"log-level", REQ, "LEVEL", OPT_LOG_LEVEL, "debug, info, warn, error (default info)", NULL},
};
#undef REQ

/* NS/NAME with a namespace that fits f->slice_policy_ns, or "off". */
static int slice_policy_ok(const char *arg, const tg_signer_flags *f)
{
    const char *slash = strchr(arg, '/');

    return strcmp(arg, "off") == 0 ||
           (slash && slash != arg && (size_t)(slash - arg) < sizeof(f->slice_policy_ns) && slash[1] &&
            !strchr(slash + 1, '/') && strlen(slash + 1) <= 253);
}

/* A Go bool flag, as Liqo's: bare means true. 0, or -1 for another value. */
static int bool_flag(const char *arg, int *out)
{
    if (!arg || strcmp(arg, "true") == 0)
        return *out = 1, 0;
    if (strcmp(arg, "false") == 0)
        return *out = 0, 0;
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
        if (bool_flag(arg, &on) != 0)
            return -1;
        s->slice_provider.default_class_disabled = !on;
        return 0;
    case OPT_ENABLE_STORAGE: return bool_flag(arg, &s->slice_offer.enable_storage);
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

/* What the flags go into: the signer, its start-up flags, and two values
 * check_flags() reads once all are taken. */
typedef struct parse_ctx {
    tg_signer *s;
    tg_signer_flags *f;
    const char *slice_policy, *cluster_labels;
} parse_ctx;

/* One flag with its value; 0, or -1 when the value is bad. */
static int take_flag(void *ctx, int c, const char *arg)
{
    parse_ctx *p = ctx;
    tg_signer *s = p->s;
    tg_signer_flags *f = p->f;

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
        return tg_key_type_parse(arg, &s->key_type);
    case OPT_LEADER_ELECT: f->leader_elect = 1; return 0;
    case OPT_METRICS_LISTEN:
        return tg_flag_listen_addr_or_off(arg, f->metrics_host, sizeof(f->metrics_host), &f->metrics_port);
    case OPT_LEASE_NAME: f->lease_name = arg; return 0;
    case OPT_SLICE_POLICY:
        p->slice_policy = arg;
        return slice_policy_ok(arg, f) ? 0 : -1;
    case OPT_LEASE_NAMESPACE: f->lease_ns = arg; return 0;
    case OPT_CLUSTER_LABELS: p->cluster_labels = arg; return 0;
    case OPT_NONCE_ROTATION:
        if (strcmp(arg, "keep") != 0 && strcmp(arg, "on-unpeer") != 0)
            return -1;
        s->rotate_nonce_on_unpeer = strcmp(arg, "on-unpeer") == 0;
        return 0;
    case OPT_QUOTA_ENFORCEMENT:
        if (!tg_liqo_quota_enforcement_valid(arg))
            return -1;
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

static const tg_flag_program program = {
    .name = "tenantgate-signer",
    .synopsis = "[--cluster-id ID] [options]",
    .about = "CSR approval and signing, Tenant status, nonces, keys and Identity kubeconfigs.",
    .flags = flags,
    .nflags = sizeof(flags) / sizeof(flags[0]),
    .take = take_flag,
};

/* The flags' combinations; the exit status 2 when they do not go together, else -1. */
static int check_flags(tg_signer *s, tg_signer_flags *f, const char *slice_policy, const char *cluster_labels)
{
    char label_err[256];

    if (s->cluster_id && !tg_cluster_id_valid(s->cluster_id)) {
        fprintf(stderr, "tenantgate-signer: --cluster-id must be a valid cluster id\n");
        tg_flags_usage(&program, stderr);
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
    parse_ctx p = {.s = s, .f = f};
    int status;

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
    if ((status = tg_flags_parse(&program, argc, argv, &p)) >= 0)
        return status;
    return check_flags(s, f, p.slice_policy, p.cluster_labels);
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
