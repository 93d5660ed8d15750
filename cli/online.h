/* online.h - what the online commands (create/get nonce, generate tenant and
 * identity, authenticate, unauthenticate) share.
 *
 * Two halves:
 *  - pure logic (objects.c, apierr.c): the Kubernetes objects the flows
 *    create, reading them back, durations, progress lines, and turning an API
 *    answer into a message a person can act on. No I/O; unit tested.
 *  - cluster access (kubectx.c, flow*.c): one API client per cluster, run
 *    synchronously, and the steps of PROTOCOL.md 1 built on it.
 *
 * Names and labels are PROTOCOL.md 3's. */
#ifndef TG_CLI_ONLINE_H
#define TG_CLI_ONLINE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <uv.h>

#include "cli.h"
#include "kube/client.h"
#include "kube/clusterid.h"
#include "kube/kubeconfig.h"

/* Exit codes beyond cli.h's 0/1/2, so scripts can tell failures apart. */
enum {
    TG_EXIT_UNREACHABLE = 3,   /* no answer from an API server (network, TLS, kubeconfig server) */
    TG_EXIT_TIMEOUT = 4,       /* a step did not finish within --timeout */
};

#define CLI_DEFAULT_INSTALL_NS "liqo"
#define CLI_DEFAULT_TIMEOUT_MS (2L * 60 * 1000)
#define CLI_KEYS_SECRET "authentication-keys"
#define CLI_NONCE_SECRET "liqo-nonce"
#define CLI_SIGNED_NONCE_SECRET "liqo-signed-nonce"
#define CLI_LABEL_TENANT_NS "liqo.io/tenant-namespace"
#define CLI_LABEL_REMOTE_ID "liqo.io/remote-cluster-id"
#define CLI_LABEL_NONCE "liqo.io/nonce"
#define CLI_LABEL_SIGNED_NONCE "liqo.io/signed-nonce"
#define CLI_AUTH_API "/apis/authentication.liqo.io/v1beta1"
#define CLI_FIELD_MANAGER "kubectl-tenantgate"

/* --- objects.c (pure) ---------------------------------------------------- */

/* "liqo-tenant-<id>" into buf; -1 when it does not fit. */
int cli_tenant_namespace_name(char *buf, size_t len, const char *remote_id);

/* Namespace liqo-tenant-<remote_id> with both tenant labels. */
json_object *cli_tenant_namespace_object(const char *remote_id);

/* The provider's empty, labelled liqo-nonce Secret (the signer fills it). */
json_object *cli_nonce_secret_object(const char *ns, const char *remote_id);

/* The consumer's liqo-signed-nonce Secret carrying data.nonce (the signer adds
 * data.signedNonce). */
json_object *cli_signed_nonce_secret_object(const char *ns, const char *remote_id, const char *nonce);

/* data[key] of a Secret, base64-decoded, NUL-terminated; NULL when absent,
 * empty or not valid base64. The caller frees (cli_free_secret for secrets). */
unsigned char *cli_secret_data(json_object *secret, const char *key, size_t *len);

/* Where a Tenant's signing stands, from its status. */
typedef enum cli_tenant_state {
    CLI_TENANT_PENDING = 0,    /* no certificate for this spec yet */
    CLI_TENANT_READY,          /* status.tenantNamespace set, and status.authParams.signedCRT
                                * certifies spec.publicKey (not an older key's certificate) */
    CLI_TENANT_REJECTED,       /* the signer refused this version of the Tenant (an Event) */
} cli_tenant_state;

/* READY or PENDING (always PENDING while the Tenant is being deleted: its
 * certificate is the last peering's). Tenant status carries no verdict (Liqo's controllers
 * rewrite status from a type without conditions): a refusal is an Event. */
cli_tenant_state cli_tenant_status(json_object *tenant);

/* 1 when events (an EventList) hold tenantgate-signer's Warning about this
 * Tenant at its current resourceVersion; its "reason: message" into why. */
int cli_tenant_refusal(json_object *tenant, json_object *events, char *why, size_t why_len);

/* The ControlPlane Identity a provider hands its consumer (PROTOCOL.md 2, 3 and
 * the seed's example): name controlplane-<provider_id> in namespace
 * identity_ns on the consumer, label liqo.io/remote-cluster-id=<provider_id>,
 * spec.authParams copied from the Tenant's status (ca, signedCRT, apiServer,
 * proxyURL when set), spec.namespace = status.tenantNamespace. NULL with err
 * when the Tenant has no usable status. */
json_object *cli_identity_from_tenant(json_object *tenant, const char *provider_id,
                                      const char *identity_ns, char *err, size_t err_len);

/* "controlplane-<provider_id>" into buf; -1 when it does not fit. */
int cli_identity_name(char *buf, size_t len, const char *provider_id);

/* kubectl-style duration: "90s", "2m", "1h30m", "1.5m", or bare seconds "45".
 * Returns milliseconds (> 0), or -1 when malformed, zero or over 24 h. */
long cli_parse_duration(const char *text);

/* "2m0s"-style text of ms, as kubectl prints durations. */
void cli_format_duration(char *buf, size_t len, long ms);

/* One progress line as the seeds show them, newline included:
 *   scope NULL:   " INFO  Nonce created"
 *   scope "local": " INFO   (local) Tenant namespace correctly ensured" */
void cli_progress_format(char *buf, size_t len, const char *scope, const char *msg);

/* --- apierr.c (pure) ----------------------------------------------------- */

/* What went wrong with one API call, in words a person can act on. */
typedef struct cli_api_call {
    const char *scope;        /* "local", "remote" or NULL: which cluster */
    const char *server;       /* the API server URL */
    const char *verb;         /* "get", "create", "patch", "delete", "list" */
    const char *resource;     /* plural resource: "secrets", "tenants" */
    const char *group;        /* "" for the core group, else "authentication.liqo.io" */
    const char *namespace_;   /* or NULL for cluster-scoped */
    const char *name;         /* or NULL for collections */
} cli_api_call;

/* Fill msg for a failed call: status -1 (transport_err says why), 401, 403
 * (names the verb and resource), 404 of the resource type (the CRD is missing)
 * or of the object, a webhook that could not be called, anything else with
 * the API server's own message. Returns the exit code that fits
 * (TG_EXIT_UNREACHABLE for -1, else TG_EXIT_REJECTED). */
int cli_api_error(char *msg, size_t len, const cli_api_call *call, long status, const char *body,
                  const char *transport_err);

/* 1 when a 404 answer is about the resource type (no such API), not about one
 * object: non-JSON body, or a Status without details.name. */
int cli_api_type_missing(long status, const char *body);

/* How long to wait before asking again, in ms, or -1 when the answer is
 * final. The API server asks for a retry with 429 or 503, or with any 5xx
 * whose Status carries details.retryAfterSeconds (what it also sends as
 * Retry-After; tenantgate's webhook sets it while its caches sync): that many
 * seconds, at most CLI_RETRY_AFTER_MAX_S, else CLI_RETRY_DEFAULT_MS. As
 * client-go retries, so the CLI does not fail where kubectl would wait. */
#define CLI_RETRY_DEFAULT_MS 500
#define CLI_RETRY_AFTER_MAX_S 10
long cli_api_retry_after_ms(long status, const char *body);

/* --- callplan.c (pure) --------------------------------------------------- */

/* remaining_ms of a command without a deadline (the CLI's own tools). */
#define CLI_NO_DEADLINE LONG_MIN
/* One request waits at most this long for its answer... */
#define CLI_CALL_TIMEOUT_MS 20000L
/* ...or what is left of --timeout, but never less than this. */
#define CLI_CALL_MIN_TIMEOUT_MS 1000L
/* An answer that asks to come back is asked again at most this many times,
 * sleeping at most this long in all: an API server that keeps saying "come
 * back later" cannot hold a call for 10 x CLI_RETRY_AFTER_MAX_S. */
#define CLI_CALL_RETRIES 10
#define CLI_CALL_RETRY_BUDGET_MS 15000L

/* How long one request may wait for its answer, given what is left of the
 * command's --timeout (CLI_NO_DEADLINE: none). */
long cli_call_timeout_ms(long remaining_ms);

/* How long to sleep before asking again (delay_ms: cli_api_retry_after_ms's
 * answer), or -1 to report the answer now: it is final, the retries or their
 * sleep budget are spent, or the sleep would reach the deadline. */
long cli_call_retry_sleep_ms(long delay_ms, int retries_done, long slept_ms, long remaining_ms);

/* The line printed while the CLI waits to ask again: the status, the
 * server's message (its first line, at most 200 characters, control
 * characters shown as '?') and the wait. */
void cli_call_retry_note(char *buf, size_t len, long status, const char *body, long sleep_ms);

/* --- kubectx.c (cluster access) ----------------------------------------- */

typedef struct cli_cluster {
    const char *scope;        /* "local" / "remote"; NULL for single-cluster commands */
    uv_loop_t loop;
    int loop_ready;
    tg_kube_config cfg;
    int cfg_ready;
    tg_kube_client *client;
    const char *cmd;          /* for the lines printed while waiting to retry */
    long deadline_ms;         /* the command's (cli_now_ms clock), 0: none */
    int out_of_time;          /* the last call got no answer in what was left of it */
} cli_cluster;

/* Load the kubeconfig the kubectl way (kubeconfig: explicit ':'-list or NULL
 * for $KUBECONFIG / in-cluster / ~/.kube/config; context may be NULL) and
 * make a client. Returns 0, or an exit code after printing the problem. */
int cli_cluster_open(cli_cluster *c, const char *cmd, const char *scope, const char *kubeconfig,
                     const char *context);
void cli_cluster_close(cli_cluster *c);

/* One synchronous request. body (may be NULL) is sent as JSON, or as the
 * given content type. Returns the HTTP status (or -1 with transport_err),
 * *out the parsed JSON answer or NULL; *raw (if not NULL) the raw body. */
long cli_cluster_call(cli_cluster *c, const char *method, const char *path, json_object *body,
                      tg_kube_content_type ct, json_object **out, char **raw,
                      char *transport_err, size_t err_len);

/* --- flow.c and flow_*.c (a command's run, the steps) -------------------- */

/* What a running command needs to report and stop. */
typedef struct cli_flow {
    const char *cmd;          /* "authenticate", for error lines */
    FILE *progress;           /* where progress lines go */
    long deadline_ms;         /* uv_now-style monotonic deadline (cli_now_ms) */
    long timeout_ms;          /* the whole budget, for messages */
    int key_type;             /* --key-type: the tg_key_type the cluster key must be; -1: any */
} cli_flow;

long cli_now_ms(void);
void cli_flow_init(cli_flow *f, const char *cmd, FILE *progress, long timeout_ms);
/* The cluster's API calls end by the flow's deadline (callplan.c). */
void cli_flow_bind(const cli_flow *f, cli_cluster *c);
void cli_flow_step(cli_flow *f, const char *scope, const char *msg);

/* Print "kubectl-tenantgate CMD: (scope) message" and return rc. */
int cli_flow_fail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Report a failed API call (cli_api_error) and return its exit code. */
int cli_flow_api_fail(cli_flow *f, const cli_cluster *c, const cli_api_call *call, long status,
                      const char *raw, const char *transport_err);

/* Between two looks at what a step waits for: sleep one poll period and
 * return 0; past the deadline, say what was awaited (fmt: whom, to do what)
 * and return TG_EXIT_TIMEOUT. */
int cli_flow_poll_again(cli_flow *f, const cli_cluster *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What a poll loop's look returns while it has found nothing final. */
#define CLI_NOT_YET (-1)
#define CLI_AUTH_GROUP "authentication.liqo.io"

/* Each step returns 0 or an exit code after printing the problem
 * (flow_namespace.c, flow_secrets.c, flow_objects.c). */

/* The API group authentication.liqo.io/v1beta1 serves each of the
 * comma-separated plural resources (the CRDs are installed). */
int cli_require_resources(cli_flow *f, cli_cluster *c, const char *resources);

/* Find the tenant namespace of remote_id by its labels, or create
 * liqo-tenant-<remote_id> (labelling an existing unlabelled one). */
int cli_ensure_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, char *ns,
                                size_t ns_len);

/* Find it without creating: 0 and ns, or an exit code (not found is an error
 * unless missing_ok, which returns 0 with ns = ""). */
int cli_find_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, int missing_ok,
                              char *ns, size_t ns_len);

/* Provider: create the labelled liqo-nonce Secret (an existing one is kept). */
int cli_ensure_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns, const char *remote_id);

/* Provider: wait until the signer filled data.nonce (wait=0: read once; an
 * absent secret or empty nonce is then an error). out gets the 88 characters. */
int cli_read_nonce(cli_flow *f, cli_cluster *c, const char *ns, int wait, char out[89]);

/* Consumer: create liqo-signed-nonce for nonce, or reset an existing one that
 * carries another nonce (its signedNonce is dropped so the signer re-signs). */
int cli_ensure_signed_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns,
                                   const char *remote_id, const char *nonce);

/* Consumer: wait until the signer's signedNonce verifies over nonce with the
 * cluster key. *sig is malloc'd. */
int cli_wait_signed_nonce(cli_flow *f, cli_cluster *c, const char *ns, const char *nonce,
                          EVP_PKEY *key, unsigned char **sig, size_t *sig_len);

/* Consumer: the cluster private key from Secret install_ns/authentication-keys. */
int cli_cluster_key(cli_flow *f, cli_cluster *c, const char *install_ns, EVP_PKEY **key);

/* Server-side apply obj (its metadata names where) with our field manager.
 * *generation gets the applied object's metadata.generation (may be NULL). */
int cli_apply(cli_flow *f, cli_cluster *c, const char *resource, json_object *obj, long *generation);

/* Provider: wait (wait=0: read once) for the Tenant's status; *out the Tenant. */
int cli_wait_tenant(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                    int wait, json_object **out);

/* Consumer: wait for Identity status.kubeconfigSecretRef.name. */
int cli_wait_identity(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                      char *secret, size_t secret_len);

/* Wait while ns/name of resource is being deleted (an unpeering that did not
 * wait): until it is gone, so what comes next is not applied onto it and
 * lost with it. Absent or live: 0 at once. */
int cli_wait_not_terminating(cli_flow *f, cli_cluster *c, const char *resource, const char *ns,
                             const char *name);

/* cli_delete's how: CLI_DELETE_WAIT polls until the object is gone;
 * CLI_DELETE_DEPENDENTS_FIRST asks for foreground propagation, so it is gone
 * only after what it owns (an Identity's Renew, whose replicator finalizer
 * deletes the copy on the provider). */
#define CLI_DELETE_WAIT 1
#define CLI_DELETE_DEPENDENTS_FIRST 2

/* Delete one object of authentication.liqo.io (absent is fine). */
int cli_delete(cli_flow *f, cli_cluster *c, const char *resource, const char *ns, const char *name,
               int how, int *existed);

/* Consumer: wait until ResourceSlice ns/name has a condition of type
 * ("Authentication" or "Resources"); *denied, and why ("Reason: message"),
 * when its status is Denied. */
int cli_wait_slice(cli_flow *f, cli_cluster *c, const char *ns, const char *name, const char *type,
                   char *why, size_t why_len, int *denied);

/* The number of ResourceSlices in ns (0 when the CRD is absent). */
int cli_count_resourceslices(cli_flow *f, cli_cluster *c, const char *ns, int *count);

/* --- clusterid.c (the cluster id ConfigMap) ------------------------------ */

/* This cluster's id from its clusterid ConfigMap in ns (liqoctl's lookup),
 * for when flag (e.g. "--cluster-id") was not given. No ConfigMap is a usage
 * error that names the flag and `install`; several, or a bad id, exit 1. */
int cli_discover_cluster_id(cli_flow *f, cli_cluster *c, const char *ns, const char *flag,
                            char id[TG_CLUSTERID_MAX + 1]);

/* `install`: namespace ns and the clusterid ConfigMap holding id, unless it
 * holds id already. Refuses to change a different id, to add a second
 * ConfigMap, or to overwrite an unlabelled one of the same name. */
int cli_install_cluster_id(cli_flow *f, cli_cluster *c, const char *ns, const char *id);

/* --- flow.c (the printed result) ----------------------------------------- */

/* Print obj as YAML (default) or JSON on stdout. */
int cli_print_object(const char *cmd, json_object *obj, int as_json);

/* The last step of a command that prints a document: when rc is 0, print obj
 * (cli_print_object) and return what that returns, else return rc. obj (may
 * be NULL) is put either way. */
int cli_print_result(const char *cmd, int rc, json_object *obj, int as_json);

/* --- handshake.c (the consumer's Tenant, the provider's Identity) -------- */

/* The consumer's signature over nonce: ensure the signed-nonce Secret in ns,
 * then wait for the signer's answer, checked with the cluster key. *sig is
 * malloc'd. Prints progress with c->scope. */
int cli_consumer_signature(cli_flow *f, cli_cluster *c, const char *ns, const char *provider_id,
                           const char *nonce, EVP_PKEY *key, unsigned char **sig, size_t *sig_len);

/* The Tenant of own_id: public key (in format) and CSR made with the cluster
 * key, sig the signer's signature of the nonce; revocable: the CSR carries a
 * fresh per-certificate group (pki/cert_group.h). NULL when a part cannot be built. */
json_object *cli_tenant_from_key(EVP_PKEY *key, const char *own_id, const unsigned char *sig,
                                 size_t sig_len, tg_pubkey_format format, int revocable);

/* The Tenant for nonce, from the consumer cluster c: reads the cluster key
 * (first, so that a missing key changes nothing), ensures the tenant
 * namespace, gets the signature and builds the Tenant. Prints progress with
 * c->scope. */
int cli_consumer_tenant(cli_flow *f, cli_cluster *c, const char *install_ns, const char *own_id,
                        const char *provider_id, const char *nonce, tg_pubkey_format format, int revocable,
                        json_object **tenant);

/* The Identity for consumer remote_id from provider c: waits for the Tenant's
 * status, then builds it for identity_ns (NULL: liqo-tenant-PROVIDER_ID). */
int cli_provider_identity(cli_flow *f, cli_cluster *c, const char *tenant_ns, const char *provider_id,
                          const char *remote_id, const char *identity_ns, json_object **identity);

/* --- the online commands' resources (cmd_*.c) ---------------------------- */

/* `generate tenant` without --offline (cmd_generate.c hands it over). */
int cli_generate_tenant_online(int argc, char **argv);   /* cmd_generate_tenant.c */
int cli_generate_identity(int argc, char **argv);        /* cmd_generate_identity.c */
int cli_create_nonce(int argc, char **argv);             /* cmd_create_nonce.c */
int cli_get_nonce(int argc, char **argv);                /* cmd_get_nonce.c */

/* resource_verb.c: verb RESOURCE ...: the resources a verb takes, each named
 * by kubectl's spellings (singular, plural, short), in a table ended by a NULL
 * run; argv[0] is the verb, the chosen run gets argv from the resource word. */
typedef struct cli_resource {
    const char *words[4];
    int (*run)(int argc, char **argv);
} cli_resource;

int cli_resource_verb(const char *verb, const char *usage, const cli_resource *resources, int argc,
                      char **argv);

#define CLI_NONCE_WORDS { "nonce", "nonces" }
#define CLI_SLICE_WORDS { "resourceslice", "resourceslices", "rslice", "rs" }
#define CLI_TOKEN_WORDS { "token", "tokens" }

/* --- cmd_token.c: bootstrap tokens on the provider (docs/cli.md) ---------- */

int cli_token_create(int argc, char **argv);
int cli_token_get(int argc, char **argv);
int cli_token_delete(int argc, char **argv);

/* --- cmd_slice.c --------------------------------------------------------- */

/* create / get / delete resourceslice (argv[0] is the resource word). */
int cli_slice_create(int argc, char **argv);
int cli_slice_get(int argc, char **argv);
int cli_slice_delete(int argc, char **argv);

#endif
