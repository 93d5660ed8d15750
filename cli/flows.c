/* flows.c - the steps of the authentication flow (PROTOCOL.md 1), each one API
 * exchange or one wait, reporting what it did or exactly why it stopped.
 *
 * Waits poll: the CLI runs for seconds, and a GET every 250 ms is simpler and
 * as prompt as a watch for that. Every wait names what it waits for and who
 * should do it, so a timeout tells the user which service is missing. */
#include "online.h"
#include "slice.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/yaml.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"

#define POLL_MS 250
#define NOT_YET (-1)        /* a poll loop's look found nothing final */
#define GROUP "authentication.liqo.io"

long cli_now_ms(void)
{
    return (long)(uv_hrtime() / 1000000u);
}

void cli_flow_init(cli_flow *f, const char *cmd, FILE *progress, long timeout_ms)
{
    f->cmd = cmd;
    f->progress = progress;
    f->timeout_ms = timeout_ms;
    f->deadline_ms = cli_now_ms() + timeout_ms;
}

void cli_flow_bind(const cli_flow *f, cli_cluster *c)
{
    c->deadline_ms = f->deadline_ms;
}

void cli_flow_step(cli_flow *f, const char *scope, const char *msg)
{
    char line[512];

    cli_progress_format(line, sizeof(line), scope, msg);
    fputs(line, f->progress);
    fflush(f->progress);
}

static int vfail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int vfail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s %s: ", TG_CLI_NAME, f->cmd);
    if (c != NULL && c->scope != NULL)
        fprintf(stderr, "(%s) ", c->scope);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return rc;
}

int cli_flow_fail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(f, c, rc, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_flow_api_fail(cli_flow *f, const cli_cluster *c, const cli_api_call *call, long status,
                      const char *raw, const char *transport_err)
{
    char msg[2048];
    cli_api_call full = *call;
    int rc;

    full.scope = c->scope;
    full.server = c->cfg.server;
    rc = cli_api_error(msg, sizeof(msg), &full, status, raw, transport_err);
    /* No answer in what was left of --timeout is the command's timeout, not
     * a dead server. */
    if (status < 0 && c->out_of_time) {
        char d[32];

        cli_format_duration(d, sizeof(d), f->timeout_ms);
        return cli_flow_fail(f, c, TG_EXIT_TIMEOUT, "timed out after %s waiting for an answer: %s",
                             d, msg);
    }
    return cli_flow_fail(f, c, rc, "%s", msg);
}

static int poll_again(cli_flow *f, const cli_cluster *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Between two looks at what a step waits for: sleep one poll period and
 * return 0; past the deadline, say what was awaited (fmt: whom, to do what)
 * and return TG_EXIT_TIMEOUT. */
static int poll_again(cli_flow *f, const cli_cluster *c, const char *fmt, ...)
{
    char what[512], d[32];
    va_list ap;

    if (cli_now_ms() < f->deadline_ms) {
        uv_sleep(POLL_MS);
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    cli_format_duration(d, sizeof(d), f->timeout_ms);
    return cli_flow_fail(f, c, TG_EXIT_TIMEOUT, "timed out after %s waiting for %s", d, what);
}

int cli_require_resources(cli_flow *f, cli_cluster *c, const char *resources)
{
    cli_api_call call = { .verb = "get", .resource = "resources", .group = GROUP };
    char terr[256], want[256];
    json_object *doc = NULL, *list;
    char *raw = NULL;
    long st = cli_cluster_call(c, "GET", CLI_AUTH_API, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr,
                               sizeof(terr));
    int rc = 0;

    if (st == 404) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED,
                           "the API server %s does not serve %s/v1beta1: the tenantgate "
                           "CustomResourceDefinitions (%s) are not installed "
                           "(kubectl apply -k manifests/crds)", c->cfg.server, GROUP, resources);
        goto out;
    }
    if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        goto out;
    }
    list = tg_json_path(doc, "resources", NULL);
    snprintf(want, sizeof(want), "%s", resources);
    for (char *save = NULL, *r = strtok_r(want, ",", &save); r != NULL; r = strtok_r(NULL, ",", &save)) {
        int found = 0;

        for (size_t i = 0; list != NULL && i < json_object_array_length(list); i++) {
            const char *name = tg_json_string(json_object_array_get_idx(list, i), "name");

            if (name != NULL && strcmp(name, r) == 0)
                found = 1;
        }
        if (!found) {
            rc = cli_flow_fail(f, c, TG_EXIT_REJECTED,
                               "the API server %s does not serve %s.%s: its "
                               "CustomResourceDefinition is not installed "
                               "(kubectl apply -k manifests/crds)", c->cfg.server, r, GROUP);
            goto out;
        }
    }
out:
    json_object_put(doc);
    free(raw);
    return rc;
}

int cli_find_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, int missing_ok,
                              char *ns, size_t ns_len)
{
    cli_api_call call = { .verb = "list", .resource = "namespaces", .group = "" };
    char sel[256], path[512], terr[256], conventional[128];
    char *esc, *raw = NULL;
    json_object *doc = NULL, *items;
    const char *found = NULL;
    size_t live = 0;
    long st;
    int rc = 0;

    snprintf(sel, sizeof(sel), CLI_LABEL_TENANT_NS "=true," CLI_LABEL_REMOTE_ID "=%s", remote_id);
    esc = tg_kube_escape(sel);
    if (esc == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces?labelSelector=%s", esc);
    free(esc);
    cli_tenant_namespace_name(conventional, sizeof(conventional), remote_id);
    ns[0] = '\0';
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        goto out;
    }
    items = tg_json_path(doc, "items", NULL);
    for (size_t i = 0; items != NULL && i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(it, "metadata", "name", NULL);

        /* A namespace being deleted is no home for new objects. */
        if (name == NULL || tg_json_path(it, "metadata", "deletionTimestamp", NULL) != NULL)
            continue;
        live++;
        if (found == NULL || strcmp(name, conventional) == 0)
            found = name;
    }
    if (live > 1 && strcmp(found, conventional) != 0) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "%zu namespaces carry the tenant labels of "
                           "cluster %s; keep one (kubectl get ns -l '%s')", live, remote_id, sel);
        goto out;
    }
    if (found != NULL)
        snprintf(ns, ns_len, "%s", found);
    else if (!missing_ok)
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "no tenant namespace for cluster %s (no "
                           "namespace labelled %s)", remote_id, sel);
out:
    json_object_put(doc);
    free(raw);
    return rc;
}

int cli_ensure_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, char *ns,
                                size_t ns_len)
{
    cli_api_call call = { .verb = "create", .resource = "namespaces", .group = "" };
    char terr[256], path[256];
    json_object *obj;
    char *raw = NULL;
    long st;
    int rc = cli_find_tenant_namespace(f, c, remote_id, 1, ns, ns_len);

    if (rc != 0 || ns[0] != '\0')
        return rc;
    obj = cli_tenant_namespace_object(remote_id);
    if (obj == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    cli_tenant_namespace_name(ns, ns_len, remote_id);
    call.name = ns;
    st = cli_cluster_call(c, "POST", "/api/v1/namespaces", obj, TG_KUBE_CT_JSON, NULL, &raw, terr,
                          sizeof(terr));
    if (st == 409) {
        /* It exists without the labels: label it, as the flow finds it by them. */
        json_object *patch = json_object_new_object(), *meta = json_object_new_object();

        free(raw);
        raw = NULL;
        json_object_object_add(meta, "labels",
                               json_object_get(tg_json_path(obj, "metadata", "labels", NULL)));
        json_object_object_add(patch, "metadata", meta);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
        call.verb = "patch";
        st = cli_cluster_call(c, "PATCH", path, patch, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr,
                              sizeof(terr));
        json_object_put(patch);
    }
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}

int cli_ensure_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns, const char *remote_id)
{
    cli_api_call call = { .verb = "create", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_NONCE_SECRET };
    char path[256], terr[256];
    json_object *obj = cli_nonce_secret_object(ns, remote_id);
    char *raw = NULL;
    long st;
    int rc = 0;

    if (obj == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
    st = cli_cluster_call(c, "POST", path, obj, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    if (st != 201 && st != 409)     /* 409: it exists, the nonce it has stays valid */
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}

/* GET a secret: status, parsed doc (caller puts), raw body wiped and freed. */
static long get_secret(cli_cluster *c, const char *ns, const char *name, json_object **doc,
                       char **raw_out, char *terr, size_t terr_len)
{
    char path[256];

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    return cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, doc, raw_out, terr, terr_len);
}

static void free_raw(char *raw)
{
    if (raw != NULL)
        cli_free_secret(raw, strlen(raw));
}

int cli_read_nonce(cli_flow *f, cli_cluster *c, const char *ns, int wait, char out[89])
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_NONCE_SECRET };
    char terr[256];
    int rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_secret(c, ns, CLI_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
        unsigned char *nonce = NULL;
        size_t len = 0;

        if (st == 200 && doc != NULL)
            nonce = cli_secret_data(doc, "nonce", &len);
        json_object_put(doc);
        if (st == 200 && nonce != NULL && tg_nonce_text_valid((char *)nonce, len)) {
            memcpy(out, nonce, TG_NONCE_TEXT_LEN);
            out[TG_NONCE_TEXT_LEN] = '\0';
            cli_free_secret(nonce, len);
            free_raw(raw);
            return 0;
        }
        if (nonce != NULL) {
            cli_free_secret(nonce, len);
            free_raw(raw);
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s holds a nonce that is not "
                                 "88 characters of padded base64", ns, CLI_NONCE_SECRET);
        }
        if (st != 200 && st != 404) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
            free_raw(raw);
            return rc;
        }
        free_raw(raw);
        if (!wait && st == 404)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no nonce: Secret %s/%s does not exist "
                                 "(create it with `" TG_CLI_NAME " create nonce`)", ns,
                                 CLI_NONCE_SECRET);
        if (!wait)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no nonce: Secret %s/%s has no data.nonce "
                                 "yet (is tenantgate-signer running with the nonce controller?)",
                                 ns, CLI_NONCE_SECRET);
        if ((rc = poll_again(f, c, "tenantgate-signer (nonce controller) to fill data.nonce "
                             "of Secret %s/%s (is the signer running on this cluster?)", ns,
                             CLI_NONCE_SECRET)) != 0)
            return rc;
    }
}

int cli_ensure_signed_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns,
                                   const char *remote_id, const char *nonce)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_SIGNED_NONCE_SECRET };
    char path[256], terr[256];
    json_object *doc = NULL, *obj = NULL;
    char *raw = NULL;
    unsigned char *have = NULL;
    size_t have_len = 0;
    long st = get_secret(c, ns, CLI_SIGNED_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    if (st == 200 && doc != NULL)
        have = cli_secret_data(doc, "nonce", &have_len);
    json_object_put(doc);
    free_raw(raw);
    raw = NULL;
    if (st == 200 && have != NULL && have_len == strlen(nonce) && memcmp(have, nonce, have_len) == 0)
        goto out;   /* already there for this nonce */
    if (st != 200 && st != 404) {
        rc = cli_flow_api_fail(f, c, &call, st, NULL, terr);
        goto out;
    }
    obj = cli_signed_nonce_secret_object(ns, remote_id, nonce);
    if (obj == NULL) {
        rc = cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
        goto out;
    }
    if (st == 404) {
        call.verb = "create";
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
        st = cli_cluster_call(c, "POST", path, obj, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    } else {
        /* Another nonce (a rotated one): replace it and drop the old signature,
         * so the signer signs the new one. */
        call.verb = "patch";
        json_object_object_add(tg_json_path(obj, "data", NULL), "signedNonce", NULL);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, CLI_SIGNED_NONCE_SECRET);
        st = cli_cluster_call(c, "PATCH", path, obj, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr,
                              sizeof(terr));
    }
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
out:
    if (have != NULL)
        cli_free_secret(have, have_len);
    json_object_put(obj);
    free_raw(raw);
    return rc;
}

int cli_wait_signed_nonce(cli_flow *f, cli_cluster *c, const char *ns, const char *nonce,
                          EVP_PKEY *key, unsigned char **sig, size_t *sig_len)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_SIGNED_NONCE_SECRET };
    char terr[256];
    int stale = 0, rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_secret(c, ns, CLI_SIGNED_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
        unsigned char *have = NULL, *s = NULL;
        size_t have_len = 0, s_len = 0;

        if (st == 200 && doc != NULL) {
            have = cli_secret_data(doc, "nonce", &have_len);
            s = cli_secret_data(doc, "signedNonce", &s_len);
        }
        json_object_put(doc);
        if (st != 200 && st != 404) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
            free_raw(raw);
            free(s);
            if (have)
                cli_free_secret(have, have_len);
            return rc;
        }
        free_raw(raw);
        if (have != NULL && s != NULL && have_len == strlen(nonce) &&
            memcmp(have, nonce, have_len) == 0) {
            /* Only a signature this cluster's key makes over this nonce will
             * pass the provider's webhook: check it before handing it on. */
            if (tg_nonce_verify(key, nonce, strlen(nonce), s, s_len) == 1) {
                cli_free_secret(have, have_len);
                *sig = s;
                *sig_len = s_len;
                return 0;
            }
            stale = 1;
        }
        free(s);
        if (have)
            cli_free_secret(have, have_len);
        if ((rc = poll_again(f, c, "tenantgate-signer (noncesigner controller) to fill "
                             "data.signedNonce of Secret %s/%s%s (is the signer running on this "
                             "cluster?)", ns, CLI_SIGNED_NONCE_SECRET,
                             stale ? " with a signature by the key in authentication-keys" : ""))
            != 0)
            return rc;
    }
}

int cli_cluster_key(cli_flow *f, cli_cluster *c, const char *install_ns, EVP_PKEY **key)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "",
                          .namespace_ = install_ns, .name = CLI_KEYS_SECRET };
    char terr[256];
    json_object *doc = NULL;
    char *raw = NULL;
    unsigned char *pem = NULL;
    size_t len = 0;
    long st = get_secret(c, install_ns, CLI_KEYS_SECRET, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    *key = NULL;
    if (st == 404 && !cli_api_type_missing(st, raw)) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s not found: it holds this "
                           "cluster's keys and tenantgate-signer (keys controller) creates it at "
                           "its first start; is the signer installed here (or give --namespace)?",
                           install_ns, CLI_KEYS_SECRET);
    } else if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    } else if ((pem = cli_secret_data(doc, "privateKey", &len)) == NULL ||
               (*key = tg_key_private_from_pem((char *)pem, len)) == NULL) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s has no usable data.privateKey "
                           "(PEM PKCS#8)", install_ns, CLI_KEYS_SECRET);
    }
    if (pem != NULL)
        cli_free_secret(pem, len);
    json_object_put(doc);
    free_raw(raw);
    return rc;
}

/* /apis/authentication.liqo.io/v1beta1/namespaces/NS/RESOURCE[/NAME] */
static void auth_path(char *buf, size_t len, const char *resource, const char *ns, const char *name)
{
    snprintf(buf, len, CLI_AUTH_API "/namespaces/%s/%s%s%s", ns, resource, name ? "/" : "",
             name ? name : "");
}

/* GET an authentication.liqo.io object, or the collection when name is NULL:
 * status, *doc parsed (when doc is not NULL; caller puts), *raw the body
 * (caller frees). */
static long get_auth_object(cli_cluster *c, const char *resource, const char *ns, const char *name,
                            json_object **doc, char **raw, char *terr, size_t terr_len)
{
    char path[512];

    auth_path(path, sizeof(path), resource, ns, name);
    return cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, doc, raw, terr, terr_len);
}

int cli_apply(cli_flow *f, cli_cluster *c, const char *resource, json_object *obj, long *generation)
{
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    cli_api_call call = { .verb = "patch", .resource = resource, .group = GROUP, .namespace_ = ns,
                          .name = name };
    char path[512], terr[256];
    json_object *doc = NULL, *g;
    char *raw = NULL;
    long st;
    int rc = 0;

    if (ns == NULL || name == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "the %s has no metadata.name or namespace", resource);
    auth_path(path, sizeof(path), resource, ns, name);
    strncat(path, "?fieldManager=" CLI_FIELD_MANAGER "&force=true", sizeof(path) - strlen(path) - 1);
    st = cli_cluster_call(c, "PATCH", path, obj, TG_KUBE_CT_APPLY, &doc, &raw, terr, sizeof(terr));
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    else if (generation != NULL)
        *generation = json_object_object_get_ex(doc, "metadata", &g) &&
                              json_object_object_get_ex(g, "generation", &g)
                          ? (long)json_object_get_int64(g)
                          : 0;
    json_object_put(doc);
    free(raw);
    return rc;
}

/* 1 when tenantgate-signer refused this version of the Tenant (its Event);
 * an unreadable event list (no rights, say) counts as no refusal. */
static int tenant_refused(cli_cluster *c, json_object *tenant, char *why, size_t why_len)
{
    const char *ns = tg_json_path_string(tenant, "metadata", "namespace", NULL);
    const char *uid = tg_json_path_string(tenant, "metadata", "uid", NULL);
    char path[512], terr[256];
    json_object *events = NULL;
    char *raw = NULL;
    int refused = 0;

    if (ns == NULL || uid == NULL)
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.uid%%3D%s", ns, uid);
    if (cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &events, &raw, terr, sizeof(terr)) == 200)
        refused = cli_tenant_refusal(tenant, events, why, why_len);
    json_object_put(events);
    free(raw);
    return refused;
}

int cli_wait_tenant(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                    int wait, json_object **out)
{
    cli_api_call call = { .verb = "get", .resource = "tenants", .group = GROUP, .namespace_ = ns,
                          .name = name };
    char terr[256], why[1024];
    int rc;

    *out = NULL;
    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_auth_object(c, "tenants", ns, name, &doc, &raw, terr, sizeof(terr));
        int notfound = st == 404 && !cli_api_type_missing(st, raw);

        rc = NOT_YET;
        if (st == 200 && doc != NULL) {
            if (cli_tenant_status(doc) == CLI_TENANT_READY) {
                *out = doc;             /* handed over, not put below */
                doc = NULL;
                rc = 0;
            } else if (tenant_refused(c, doc, why, sizeof(why))) {
                rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Tenant %s/%s was not authenticated "
                                   "by tenantgate-signer: %s", ns, name, why);
            }
        } else if (!notfound) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        }
        json_object_put(doc);
        free(raw);
        if (rc != NOT_YET)
            return rc;
        if (notfound && !wait)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no Tenant %s in namespace %s: apply the "
                                 "consumer's Tenant first (kubectl apply -f tenant.yaml)", name, ns);
        if (notfound)
            rc = poll_again(f, c, "Tenant %s in namespace %s to exist (apply the consumer's "
                            "Tenant first: kubectl apply -f tenant.yaml)", name, ns);
        else
            rc = poll_again(f, c, "tenantgate-signer (tenant, approver and signer controllers) "
                            "to fill status.authParams of Tenant %s/%s (is the signer running on "
                            "this cluster? a CSR still pending: kubectl get csr)", ns, name);
        if (rc != 0)
            return rc;
    }
}

/* What a wait looks for in the object: 1 when it is there (done), 0 not yet. */
typedef int (*object_look)(json_object *doc, void *ctx);

/* GET ns/name of resource until look says done; what names what is awaited
 * in the timeout message. */
static int wait_object(cli_flow *f, cli_cluster *c, const char *resource, const char *ns, const char *name,
                       object_look look, void *ctx, const char *what)
{
    cli_api_call call = { .verb = "get", .resource = resource, .group = GROUP, .namespace_ = ns,
                          .name = name };
    char terr[256];
    int rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_auth_object(c, resource, ns, name, &doc, &raw, terr, sizeof(terr));

        rc = NOT_YET;
        if (st != 200)
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        else if (doc != NULL && look(doc, ctx))
            rc = 0;
        json_object_put(doc);
        free(raw);
        if (rc != NOT_YET)
            return rc;
        if ((rc = poll_again(f, c, "%s", what)) != 0)
            return rc;
    }
}

typedef struct secret_ref {
    char *secret;
    size_t len;
} secret_ref;

static int look_secret_ref(json_object *doc, void *ctx)
{
    secret_ref *r = ctx;
    const char *ref = tg_json_path_string(doc, "status", "kubeconfigSecretRef", "name", NULL);

    if (ref == NULL || *ref == '\0')
        return 0;
    snprintf(r->secret, r->len, "%s", ref);
    return 1;
}

int cli_wait_identity(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                      char *secret, size_t secret_len)
{
    secret_ref r = { secret, secret_len };
    char what[512];

    snprintf(what, sizeof(what), "tenantgate-signer (identity controller) to fill "
             "status.kubeconfigSecretRef of Identity %s/%s (is the signer running on this cluster?)",
             ns, name);
    return wait_object(f, c, "identities", ns, name, look_secret_ref, &r, what);
}

typedef struct slice_look {
    const char *type;
    char *why;
    size_t why_len;
    int *denied;
} slice_look;

static int look_slice(json_object *doc, void *ctx)
{
    slice_look *l = ctx;
    cli_slice_state s = cli_slice_condition(doc, l->type, l->why, l->why_len);

    *l->denied = s == CLI_SLICE_DENIED;
    return s != CLI_SLICE_PENDING;
}

int cli_wait_slice(cli_flow *f, cli_cluster *c, const char *ns, const char *name, const char *type,
                   char *why, size_t why_len, int *denied)
{
    slice_look l = { type, why, why_len, denied };
    char what[512];

    *denied = 0;
    snprintf(what, sizeof(what), "the provider's verdict on ResourceSlice %s/%s (condition %s; are "
             "tenantgate-signer and the replication running?)", ns, name, type);
    return wait_object(f, c, "resourceslices", ns, name, look_slice, &l, what);
}

int cli_delete(cli_flow *f, cli_cluster *c, const char *resource, const char *ns, const char *name,
               int wait, int *existed)
{
    cli_api_call call = { .verb = "delete", .resource = resource, .group = GROUP, .namespace_ = ns,
                          .name = name };
    char path[512], terr[256];
    char *raw = NULL;
    long st;
    int rc = 0;

    auth_path(path, sizeof(path), resource, ns, name);
    st = cli_cluster_call(c, "DELETE", path, NULL, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    *existed = st == 200 || st == 202;
    if (!*existed && !(st == 404 && !cli_api_type_missing(st, raw)))
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    free(raw);
    if (rc != 0 || !*existed || !wait)
        return rc;
    call.verb = "get";
    for (;;) {
        raw = NULL;
        st = get_auth_object(c, resource, ns, name, NULL, &raw, terr, sizeof(terr));
        rc = NOT_YET;
        if (st == 404)
            rc = 0;
        else if (st != 200)
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        free(raw);
        if (rc != NOT_YET)
            return rc;
        if ((rc = poll_again(f, c, "%s %s/%s to be gone (its finalizer is removed by "
                             "tenantgate-signer: is it running?)", resource, ns, name)) != 0)
            return rc;
    }
}

int cli_count_resourceslices(cli_flow *f, cli_cluster *c, const char *ns, int *count)
{
    cli_api_call call = { .verb = "list", .resource = "resourceslices", .group = GROUP,
                          .namespace_ = ns };
    char terr[256];
    json_object *doc = NULL, *items;
    char *raw = NULL;
    long st = get_auth_object(c, "resourceslices", ns, NULL, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    *count = 0;
    if (st == 200 && doc != NULL) {
        items = tg_json_path(doc, "items", NULL);
        *count = items ? (int)json_object_array_length(items) : 0;
    } else if (!cli_api_type_missing(st, raw)) {   /* no ResourceSlice CRD: none can remain */
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    }
    json_object_put(doc);
    free(raw);
    return rc;
}

int cli_print_object(const char *cmd, json_object *obj, int as_json)
{
    size_t len = 0;
    char *yaml = NULL;
    const char *text;
    int bad;

    if (as_json) {
        text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE);
        bad = text == NULL || printf("%s\n", text) < 0;
    } else {
        yaml = tg_yaml_emit(obj, &len);
        bad = yaml == NULL || fwrite(yaml, 1, len, stdout) != len;
        free(yaml);
    }
    if (bad || fflush(stdout) != 0)
        return cli_error(cmd, "cannot write the document to standard output");
    return TG_EXIT_OK;
}

int cli_print_result(const char *cmd, int rc, json_object *obj, int as_json)
{
    if (rc == 0)
        rc = cli_print_object(cmd, obj, as_json);
    json_object_put(obj);
    return rc;
}
