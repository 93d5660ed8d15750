/* consumer_authtoken.c - the consumer side of Liqo's first token flow
 * (docs/auth.md "Consumer side"): a Secret in the install namespace labelled
 * discovery.liqo.io/auth-token and discovery.liqo.io/cluster-id=<provider>
 * holds the provider's token; this controller makes a key of --key-type and a CSR
 * (CN = our cluster id, O = liqo.io; with annotation tenantgate.io/revocable
 * "true" also O = a fresh per-certificate group, docs/revocation.md), posts them with the token to the
 * provider's authentication server (annotation tenantgate.io/auth-url, TLS
 * verified against the PEM in tenantgate.io/auth-ca), and stores key,
 * certificate, API server URL, CA and a kubeconfig in the Secret
 * remote-identity-<provider>. The status goes into the token Secret's
 * annotations.
 *
 * Restart-safe: the key is written to the result Secret before the first
 * request, so a Pending procedure resumes with the same key, and a complete
 * result Secret is never requested again (nor replaced). The result Secret
 * has no owner: deleting the token Secret keeps the identity, which the
 * provider issues once. Neither the key nor the token is ever logged. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/tenant.h"
#include "signer/auth_token_plan.h"

#define SECRETS "/api/v1/namespaces/%s/secrets"
#define AUTH_PATH "/identity/certificate"

/* What one reconcile works with; the secret parts are cleansed at the end. */
typedef struct auth_job {
    const char *ns, *name, *pid;
    char *token;                 /* the provider's token; secret */
    size_t token_len;
    char *own_token;             /* this cluster's token (originClusterToken); secret */
    size_t own_len;
    char digest[17];
    char result[320];            /* remote-identity-<pid> */
    json_object *result_sec;     /* the live result Secret, or NULL */
    char *key_pem;               /* secret */
    size_t key_len;
    int revocable;               /* annotation tenantgate.io/revocable "true" */
} auth_job;

/* 1 when two reasons start with the same code (the text before ':'). */
static int same_code(const char *a, const char *b)
{
    size_t n = strcspn(a, ":");

    return strncmp(a, b, n) == 0 && (b[n] == ':' || b[n] == '\0') && strcspn(b, ":") == n;
}

/* Merge patch of the token Secret's status annotations; denied: the digest
 * of the denied token, or NULL to clear it. Only when something changes, so
 * the watch event of our own write finds nothing more to do: while Pending,
 * only a new reason code counts (a timeout's message changes every time,
 * and each write would queue the key again past the back-off). */
static long write_status(tg_api *api, json_object *tok, const auth_job *j, tg_auth_status st, const char *reason,
                         const char *denied)
{
    json_object *ann = tg_json_path(tok, "metadata", "annotations", NULL);
    const char *cur_st = ann ? tg_json_string(ann, TG_ANN_AUTH_STATUS) : NULL;
    const char *cur_reason = ann ? tg_json_string(ann, TG_ANN_AUTH_REASON) : NULL;
    const char *cur_denied = ann ? tg_json_string(ann, TG_ANN_AUTH_DENIED_TOKEN) : NULL;
    json_object *patch, *meta, *a;
    char path[1024], err[512];
    long rc;

    if (cur_st && strcmp(cur_st, tg_auth_status_name(st)) == 0 && cur_reason &&
        (st == TG_AUTH_PENDING ? same_code(cur_reason, reason) : strcmp(cur_reason, reason) == 0) &&
        (denied ? cur_denied && strcmp(cur_denied, denied) == 0 : !cur_denied))
        return 200;
    patch = json_object_new_object();
    meta = json_object_new_object();
    a = json_object_new_object();
    json_object_object_add(a, TG_ANN_AUTH_STATUS, rc_jstr(tg_auth_status_name(st)));
    json_object_object_add(a, TG_ANN_AUTH_REASON, rc_jstr(reason));
    json_object_object_add(a, TG_ANN_AUTH_DENIED_TOKEN, denied ? rc_jstr(denied) : NULL);
    json_object_object_add(meta, "annotations", a);
    json_object_object_add(patch, "metadata", meta);
    snprintf(path, sizeof(path), SECRETS "/%s", j->ns, j->name);
    rc = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, sizeof(err));
    json_object_put(patch);
    if (rc != 200) {
        tg_log(TG_LOG_WARN, "auth token status not written", TG_LOG_STR("namespace", j->ns),
               TG_LOG_STR("secret", j->name), TG_LOG_STR("error", err));
        return rc;
    }
    tg_log(TG_LOG_INFO, "auth token status", TG_LOG_STR("namespace", j->ns), TG_LOG_STR("secret", j->name),
           TG_LOG_STR("provider", j->pid), TG_LOG_STR("status", tg_auth_status_name(st)),
           TG_LOG_STR("reason", reason));
    return rc;
}

/* 1 when the result Secret holds a whole identity. */
static int result_complete(json_object *sec)
{
    json_object *data = sec ? tg_json_path(sec, "data", NULL) : NULL;

    return data && tg_json_string(data, "certificate") && tg_json_string(data, "kubeconfig") &&
           tg_json_string(data, "private.key");
}

/* The result Secret holding only the new key: written before the request,
 * so a restart resumes with it. 201, or the status (409: someone else made
 * it, read it again). */
static long create_result_with_key(tg_signer *s, tg_api *api, auth_job *j, char *err, size_t err_len)
{
    EVP_PKEY *k = tg_key_generate(s->key_type);
    json_object *sec, *meta, *labels, *data;
    char path[1024], *b64;
    long rc;

    if (!k || !(j->key_pem = tg_key_private_pem(k, &j->key_len))) {
        EVP_PKEY_free(k);
        snprintf(err, err_len, "%s key generation failed", tg_key_type_name(s->key_type));
        return -1;
    }
    EVP_PKEY_free(k);
    sec = json_object_new_object();
    meta = json_object_new_object();
    labels = json_object_new_object();
    data = json_object_new_object();
    json_object_object_add(sec, "apiVersion", rc_jstr("v1"));
    json_object_object_add(sec, "kind", rc_jstr("Secret"));
    json_object_object_add(meta, "name", rc_jstr(j->result));
    json_object_object_add(meta, "namespace", rc_jstr(j->ns));
    json_object_object_add(labels, TG_LABEL_AUTH_IDENTITY, rc_jstr("true"));
    json_object_object_add(labels, TG_LABEL_AUTH_CLUSTER_ID, rc_jstr(j->pid));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(sec, "metadata", meta);
    b64 = tg_base64_encode((unsigned char *)j->key_pem, j->key_len, NULL);
    json_object_object_add(data, "private.key", rc_jstr(b64));
    rc_free_secret(b64, b64 ? strlen(b64) : 0);
    json_object_object_add(sec, "data", data);
    snprintf(path, sizeof(path), SECRETS, j->ns);
    rc = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, sec, NULL, err, err_len);
    json_object_put(sec);
    return rc;
}

/* The key of a Pending procedure (of any --key-type: the flag may have
 * changed since), or a new one of --key-type. 0, 1 (made it: read again),
 * or -1 with err. */
static int ensure_key(tg_signer *s, tg_api *api, auth_job *j, char *err, size_t err_len)
{
    unsigned char *pem = j->result_sec ? rc_secret_data(j->result_sec, "private.key", &j->key_len) : NULL;
    long rc;

    if (pem) {
        EVP_PKEY *k = tg_key_private_from_pem((char *)pem, j->key_len);
        tg_key_type type;
        if (k && tg_key_type_of(k, &type) == 0) {
            EVP_PKEY_free(k);
            j->key_pem = (char *)pem;
            return 0;
        }
        EVP_PKEY_free(k);
        rc_free_secret(pem, j->key_len);
        snprintf(err, err_len, "Secret %s holds no Ed25519, RSA-2048 or ECDSA P-256 private.key: "
                 "delete it to start again", j->result);
        return -1;
    }
    if (j->result_sec) {
        snprintf(err, err_len, "Secret %s exists without private.key: delete it to start again", j->result);
        return -1;
    }
    rc = create_result_with_key(s, api, j, err, err_len);
    return rc == 201 ? 0 : -1;
}

/* Liqo v0.10.3's request body (docs/auth.md "Wire format"): the provider's
 * token is the destinationClusterToken it checks, ours the origin. */
static json_object *request_body(tg_signer *s, const auth_job *j, const char *csr_pem, size_t csr_len)
{
    char *csr_b64 = tg_base64_encode((const unsigned char *)csr_pem, csr_len, NULL);
    json_object *body = csr_b64 ? tg_auth_identity_request(s->cluster_id, s->cluster_id, j->own_token, j->own_len,
                                                           j->token, j->token_len, csr_b64)
                                : NULL;

    free(csr_b64);
    return body;
}

/* Liqo's CSR, or with a fresh group drawn for this request: a group is one
 * request's, so a retry after a lost answer draws another (the provider
 * binds the one of the CSR it signed). NULL on error. */
static char *identity_csr(tg_signer *s, const auth_job *j, EVP_PKEY *k, size_t *len)
{
    char group[TG_CERT_GROUP_MAX];

    if (!j->revocable)
        return tg_csr_build(k, s->cluster_id, len);
    if (tg_cert_group_make(s->cluster_id, group, sizeof(group)) != 0)
        return NULL;
    return tg_csr_build_group(k, s->cluster_id, TG_CSR_ORGANIZATION, group, len);
}

/* POST token and CSR to the provider's auth server. The HTTP status, or -1
 * with err; *answer on 2xx. */
static long post_identity(tg_signer *s, const auth_job *j, const char *url, const char *ca, json_object **answer,
                          char *err, size_t err_len)
{
    EVP_PKEY *k = tg_key_private_from_pem(j->key_pem, j->key_len);
    tg_kube_config cfg = {.server = (char *)url, .ca = (char *)ca, .ca_len = strlen(ca)};
    size_t csr_len = 0;
    char *csr = k ? identity_csr(s, j, k, &csr_len) : NULL;
    json_object *body = NULL;
    tg_api *remote = NULL;
    long rc = -1;

    EVP_PKEY_free(k);
    if (!csr) {
        snprintf(err, err_len, "CSR not built");
        return -1;
    }
    if (!(body = request_body(s, j, csr, csr_len)))
        snprintf(err, err_len, "out of memory");
    else if ((remote = tg_api_new(&cfg, err, err_len))) {
        rc = tg_api_call(remote, "POST", AUTH_PATH, TG_KUBE_CT_JSON, body, answer, err, err_len);
        tg_api_free(remote);
    }
    json_object_put(body);
    free(csr);
    return rc;
}

/* The answer into the result Secret (tg_auth_result_data). 0 or -1 with err. */
static int store_identity(tg_signer *s, tg_api *api, auth_job *j, json_object *answer, char *err, size_t err_len)
{
    json_object *data = tg_auth_result_data(answer, j->pid, s->cluster_id, j->key_pem, j->key_len, err, err_len);
    json_object *patch;
    char path[1024];
    long rc;

    if (!data)
        return -1;
    patch = json_object_new_object();
    json_object_object_add(patch, "data", data);
    snprintf(path, sizeof(path), SECRETS "/%s", j->ns, j->result);
    rc = tg_api_call(api, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, patch, NULL, err, err_len);
    json_object_put(patch);
    return rc == 200 ? 0 : -1;
}

/* data.token of a Secret, trailing whitespace dropped (`echo` adds a newline). */
static char *secret_token(json_object *sec, size_t *len)
{
    char *t = (char *)rc_secret_data(sec, "token", len);

    while (t && *len && strchr(" \t\r\n", t[*len - 1]))
        t[--*len] = '\0';
    return t;
}

/* The provider's token, from the token Secret. */
static void read_token(json_object *tok, auth_job *j)
{
    j->token = secret_token(tok, &j->token_len);
    tg_auth_token_digest(j->token ? j->token : "", j->token_len, j->digest);
}

/* Our own token (TG_AUTH_OWN_TOKEN_SECRET in the token namespace, where this
 * cluster's tenantgate-auth keeps it), sent as originClusterToken; a cluster
 * without one sends none (the field is omitempty). 0, or -1 when it could not
 * be read (retried). */
static int read_own_token(const tg_signer *s, tg_api *api, auth_job *j)
{
    json_object *sec = NULL;
    char path[1024], err[256];
    long rc;

    snprintf(path, sizeof(path), SECRETS "/" TG_AUTH_OWN_TOKEN_SECRET, s->token_ns);
    if ((rc = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return 0;
    if (rc != 200)
        return -1;
    j->own_token = secret_token(sec, &j->own_len);
    json_object_put(sec);
    return 0;
}

/* The request and its outcome, once the key is there. */
static long run_procedure(tg_signer *s, tg_api *api, json_object *tok, auth_job *j, const char *url, const char *ca,
                          tg_auth_status was)
{
    json_object *answer = NULL;
    char err[768], reason[1024];
    tg_auth_status st;
    long rc;

    /* Pending already (a retry): no write, or its watch event would queue
     * the key again at once and beat the back-off. */
    if (was != TG_AUTH_PENDING &&
        write_status(api, tok, j, TG_AUTH_PENDING, "Sent: waiting for the provider's answer", NULL) != 200)
        return TG_RECONCILE_RETRY;
    rc = post_identity(s, j, url, ca, &answer, err, sizeof(err));
    st = tg_auth_outcome(rc, j->token_len == 0);
    if (st == TG_AUTH_ESTABLISHED && store_identity(s, api, j, answer, err, sizeof(err)) != 0) {
        json_object_put(answer);
        snprintf(reason, sizeof(reason), "ResultNotStored: %s", err);
        write_status(api, tok, j, TG_AUTH_PENDING, reason, NULL);
        return TG_RECONCILE_RETRY;
    }
    json_object_put(answer);
    if (st == TG_AUTH_ESTABLISHED)
        snprintf(reason, sizeof(reason), "Established: identity in Secret %s", j->result);
    else if (rc < 0)
        snprintf(reason, sizeof(reason), "AuthServerUnreachable: %s", err);
    else
        snprintf(reason, sizeof(reason), "%s: %s", st == TG_AUTH_PENDING ? "Retrying" : tg_auth_status_name(st), err);
    write_status(api, tok, j, st, reason, st == TG_AUTH_DENIED || st == TG_AUTH_EMPTY_DENIED ? j->digest : NULL);
    return tg_auth_status_final(st) ? TG_RECONCILE_OK : TG_RECONCILE_RETRY;
}

/* What the Secret must say before anything is sent; NULL when it does. */
static const char *missing_setup(const char *url, const char *ca)
{
    if (!url || strncmp(url, "https://", 8) != 0)
        return "AuthServerUnknown: annotation " TG_ANN_AUTH_URL " expected (https://host:port of the provider's "
               "authentication server)";
    if (!ca || !strstr(ca, "-----BEGIN CERTIFICATE-----"))
        return "AuthCAUnknown: annotation " TG_ANN_AUTH_CA " expected (PEM of the CA that signed the provider's "
               "authentication server certificate)";
    return NULL;
}

static long procedure(tg_signer *s, tg_api *api, json_object *tok, auth_job *j)
{
    json_object *ann = tg_json_path(tok, "metadata", "annotations", NULL);
    const char *url = ann ? tg_json_string(ann, TG_ANN_AUTH_URL) : NULL;
    const char *ca = ann ? tg_json_string(ann, TG_ANN_AUTH_CA) : NULL;
    const char *denied = ann ? tg_json_string(ann, TG_ANN_AUTH_DENIED_TOKEN) : NULL;
    tg_auth_status st = tg_auth_status_parse(ann ? tg_json_string(ann, TG_ANN_AUTH_STATUS) : NULL);
    char path[1024], err[512], reason[768];
    const char *setup;
    long rc;

    snprintf(path, sizeof(path), SECRETS "/%s", j->ns, j->result);
    if ((rc = tg_api_get(api, path, &j->result_sec, err, sizeof(err))) != 200 && rc != 404)
        return TG_RECONCILE_RETRY;
    if (result_complete(j->result_sec)) {
        snprintf(reason, sizeof(reason), "Established: identity in Secret %s", j->result);
        return write_status(api, tok, j, TG_AUTH_ESTABLISHED, reason, NULL) == 200 ? TG_RECONCILE_OK
                                                                                    : TG_RECONCILE_RETRY;
    }
    read_token(tok, j);
    j->revocable = ann && tg_json_string(ann, TG_ANN_AUTH_REVOCABLE) &&
                   strcmp(tg_json_string(ann, TG_ANN_AUTH_REVOCABLE), "true") == 0;
    /* Denied stays denied for this token (Liqo: "no other retries"); a new
     * token, or the status set back to Pending by hand, tries again. */
    if ((st == TG_AUTH_DENIED || st == TG_AUTH_EMPTY_DENIED) && denied && strcmp(denied, j->digest) == 0)
        return TG_RECONCILE_OK;
    if ((setup = missing_setup(url, ca)))
        return write_status(api, tok, j, TG_AUTH_NONE, setup, NULL) == 200 ? TG_RECONCILE_OK : TG_RECONCILE_RETRY;
    if (read_own_token(s, api, j) != 0)
        return TG_RECONCILE_RETRY;
    if (ensure_key(s, api, j, err, sizeof(err)) != 0) {
        snprintf(reason, sizeof(reason), "KeyNotStored: %s", err);
        write_status(api, tok, j, TG_AUTH_PENDING, reason, NULL);
        return TG_RECONCILE_RETRY;
    }
    return run_procedure(s, api, tok, j, url, ca, st);
}

long tg_reconcile_auth_token(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512];
    json_object *tok = NULL;
    auth_job j = {.ns = ns, .name = name};
    long st, ret;

    snprintf(path, sizeof(path), SECRETS "/%s", ns, name);
    if ((st = tg_api_get(api, path, &tok, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200) {
        tg_log(TG_LOG_WARN, "auth token read failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name),
               TG_LOG_STR("error", err));
        return TG_RECONCILE_RETRY;
    }
    j.pid = tg_json_path_string(tok, "metadata", "labels", TG_LABEL_AUTH_CLUSTER_ID, NULL);
    if (!tg_json_path(tok, "metadata", "labels", TG_LABEL_AUTH_TOKEN, NULL) ||
        tg_json_path_string(tok, "metadata", "deletionTimestamp", NULL)) {
        ret = TG_RECONCILE_OK;
    } else if (!j.pid || !tg_cluster_id_valid(j.pid)) {
        ret = write_status(api, tok, &j, TG_AUTH_NONE,
                           "InvalidClusterID: label " TG_LABEL_AUTH_CLUSTER_ID " expected, the provider's cluster id "
                           "(lowercase letters, digits and '-', at most 63)", NULL) == 200
                  ? TG_RECONCILE_OK
                  : TG_RECONCILE_RETRY;
    } else {
        snprintf(j.result, sizeof(j.result), TG_AUTH_RESULT_PREFIX "%s", j.pid);
        ret = procedure(s, api, tok, &j);
    }
    rc_free_secret(j.token, j.token_len);
    rc_free_secret(j.own_token, j.own_len);
    rc_free_secret(j.key_pem, j.key_len);
    json_object_put(j.result_sec);
    json_object_put(tok);
    return ret;
}

/* ---------- descriptor ---------- */

static void map_token_secret(const tg_event *ev, tg_key_sink *sink)
{
    tg_key_emit(sink, "authtoken", tg_json_path_string(ev->obj, "metadata", "namespace", NULL),
                tg_json_path_string(ev->obj, "metadata", "name", NULL));
}

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    return tg_reconcile_auth_token(s, api, ns, name);
}

const tg_controller_desc tg_ctl_authtoken = {
    .name = "authtoken", .key_prefix = "authtoken", .bit = TG_CTL_AUTHTOKEN, .side = "consumer",
    .scope = {.where = TG_WHERE_INSTALL_NS,
              .acts_on = "Secrets labelled " TG_LABEL_AUTH_TOKEN " in the install namespace (a provider's token)",
              .writes = "their status annotations and Secret " TG_AUTH_RESULT_PREFIX "<provider id> (a private key) "
                        "in the install namespace"},
    .subs = {{TG_INF_AUTH_TOKENS, 1, map_token_secret}}, .nsubs = 1,
    .reconcile = reconcile_key,
};
