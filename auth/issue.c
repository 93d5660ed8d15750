/* issue.c - see issue.h. One struct per chain; each API answer moves it on. */
#include "issue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/issue_docs.h"
#include "auth/name_check.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "pki/cert_group.h"
#include "pki/csr.h"

#define CSR_API "/apis/certificates.k8s.io/v1/certificatesigningrequests"
/* the signer's records (signer/cert_group_plan.h), in the namespace both run in */
#define REVOKED_CONFIGMAP "tenantgate-revoked-certificates"

typedef struct chain {
    tg_kube_client *c;
    const tg_auth_issue_config *cfg;
    char id[64];
    char ns[96];
    char csr_name[256];
    char group[TG_CERT_GROUP_MAX]; /* the CSR's per-certificate group, or "" */
    unsigned char *csr_pem;
    size_t csr_len;
    uv_timer_t poll;
    uint64_t deadline_ms;
    tg_auth_issue_result res;      /* kept while the RoleBinding is removed */
    tg_auth_issue_done done;
    void *data;
} chain;

static void step_rolebinding(chain *ch);
static void step_csr(chain *ch);
static void step_poll(uv_timer_t *t);

static void on_timer_closed(uv_handle_t *h)
{
    chain *ch = h->data;
    free(ch->csr_pem);
    free(ch);
}

static void finish(chain *ch)
{
    ch->done(&ch->res, ch->data);
    uv_close((uv_handle_t *)&ch->poll, on_timer_closed);
}

static int api_send(chain *ch, const char *method, const char *path, json_object *body, tg_kube_response_cb cb)
{
    tg_kube_request_opts o = {.method = method, .path = path, .content_type = TG_KUBE_CT_JSON};
    char err[200];
    size_t len = 0;
    const char *text = body ? json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len) : NULL;

    o.body = text;
    o.body_len = len;
    if (tg_kube_request_start(ch->c, &o, cb, ch, err, sizeof(err)))
        return 0;
    snprintf(ch->res.why, sizeof(ch->res.why), "%s %s: %s", method, path, err);
    return -1;
}

static void fail(chain *ch, tg_auth_reason r, const char *step, const tg_kube_response *resp)
{
    ch->res.reason = r;
    if (resp)
        snprintf(ch->res.why, sizeof(ch->res.why), "%s: HTTP %ld%s%s", step, resp->status, resp->error ? ": " : "",
                 resp->error ? resp->error : "");
    else if (!ch->res.why[0])
        snprintf(ch->res.why, sizeof(ch->res.why), "%s", step);
}

static void on_rolebinding_removed(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    finish(data);
}

/* After step 2 succeeded: undo it, then answer with ch->res. */
static void rollback(chain *ch)
{
    char path[256];

    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/%s", ch->ns,
             TG_AUTH_ROLEBINDING);
    if (api_send(ch, "DELETE", path, NULL, on_rolebinding_removed) != 0)
        finish(ch);
}

static void name_refused(chain *ch, const tg_auth_name_result *res)
{
    ch->res.reason = res->reason;
    snprintf(ch->res.why, sizeof(ch->res.why), "%s", res->why);
    finish(ch);
}

/* A revoked group is never bound again: the revoked certificate still
 * carries it until its NotAfter, and a new CSR with the same group would
 * give it back its rights. No records (404) is nothing revoked. */
static void on_records(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *cm = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    int revoked = cm && tg_cert_group_revoked(tg_json_path(cm, "data", NULL), ch->group);

    json_object_put(cm);
    if (resp->status != 200 && resp->status != 404) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "read the revocation records", resp);
        finish(ch);
    } else if (revoked) {
        ch->res.reason = TG_AUTH_NAME_REVOKED;
        snprintf(ch->res.why, sizeof(ch->res.why),
                 "expected a per-certificate group with no revocation record: %s is revoked "
                 "(ConfigMap %s/" REVOKED_CONFIGMAP "); a new request draws a new group",
                 ch->group, ch->cfg->records_namespace);
        finish(ch);
    } else {
        step_rolebinding(ch);
    }
}

static void step_records(chain *ch)
{
    char path[256];

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/" REVOKED_CONFIGMAP, ch->cfg->records_namespace);
    if (api_send(ch, "GET", path, NULL, on_records) != 0) {
        ch->res.reason = TG_AUTH_ISSUANCE_FAILED;
        finish(ch);
    }
}

/* The name is ours for the token path: now the records (a group) and the
 * RoleBinding decide. */
static void on_claimed(const tg_auth_name_result *res, void *data)
{
    chain *ch = data;

    if (!res->ok)
        name_refused(ch, res);
    else if (ch->group[0])
        step_records(ch);
    else
        step_rolebinding(ch);
}

static void on_namespace(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    if (resp->status != 201 && resp->status != 409) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "create namespace", resp);
        finish(ch);
        return;
    }
    if (tg_auth_name_claim_start(ch->c, ch->id, TG_NAME_PATH_TOKEN, on_claimed, ch) != 0) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "claim the name: cannot reach the API server", NULL);
        finish(ch);
    }
}

/* Nothing is written for an id another path owns, a binding names, or that
 * is reserved (name_check.h). */
static void on_names_checked(const tg_auth_name_result *res, void *data)
{
    chain *ch = data;
    json_object *doc;

    if (!res->ok) {
        name_refused(ch, res);
        return;
    }
    doc = tg_auth_namespace_doc(ch->id);
    if (api_send(ch, "POST", "/api/v1/namespaces", doc, on_namespace) != 0) {
        ch->res.reason = TG_AUTH_ISSUANCE_FAILED;
        finish(ch);
    }
    json_object_put(doc);
}

static void on_rolebinding(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    if (resp->status == 409) {
        ch->res.reason = TG_AUTH_ALREADY_ISSUED;
        snprintf(ch->res.why, sizeof(ch->res.why),
                 "expected no identity for this cluster yet: RoleBinding %s/%s exists", ch->ns, TG_AUTH_ROLEBINDING);
        finish(ch);
    } else if (resp->status != 201) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "create rolebinding", resp);
        finish(ch);
    } else {
        step_csr(ch);
    }
}

static void on_approved(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    if (resp->status != 200) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "approve csr", resp);
        rollback(ch);
        return;
    }
    uv_timer_start(&ch->poll, step_poll, 0, 0);
}

static void on_csr_created(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *csr = resp->status == 201 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    const char *name = csr ? tg_json_path_string(csr, "metadata", "name", NULL) : NULL;
    char path[512];

    if (!name || strlen(name) >= sizeof(ch->csr_name) || tg_auth_csr_approve(csr) != 0) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "create csr", resp);
        json_object_put(csr);
        rollback(ch);
        return;
    }
    strcpy(ch->csr_name, name);
    snprintf(path, sizeof(path), CSR_API "/%s/approval", ch->csr_name);
    if (api_send(ch, "PUT", path, csr, on_approved) != 0) {
        ch->res.reason = TG_AUTH_ISSUANCE_FAILED;
        rollback(ch);
    }
    json_object_put(csr);
}

static int deliver_certificate(chain *ch, const char *b64)
{
    char err[128];
    size_t len;
    unsigned char *pem = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err));

    if (!pem)
        return -1;
    ch->res.reason = TG_AUTH_ISSUED;
    ch->res.cert_pem = (const char *)pem;
    ch->res.cert_len = len;
    ch->done(&ch->res, ch->data);
    free(pem);
    ch->res.cert_pem = NULL;
    uv_close((uv_handle_t *)&ch->poll, on_timer_closed);
    return 0;
}

static void on_csr_read(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *csr = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    const char *b64 = NULL;
    tg_auth_csr_state st = csr ? tg_auth_csr_read(csr, &b64) : TG_AUTH_CSR_WAITING;

    if (st == TG_AUTH_CSR_ISSUED && deliver_certificate(ch, b64) == 0) {
        json_object_put(csr);
        return;
    }
    json_object_put(csr);
    if (st != TG_AUTH_CSR_WAITING) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "the CSR was denied, failed, or its certificate is not base64", NULL);
        rollback(ch);
    } else if (uv_now(ch->poll.loop) >= ch->deadline_ms) {
        ch->res.reason = TG_AUTH_CERTIFICATE_TIMEOUT;
        snprintf(ch->res.why, sizeof(ch->res.why), "CSR %s approved, but no certificate within %llu ms",
                 ch->csr_name, (unsigned long long)ch->cfg->cert_wait_ms);
        rollback(ch);
    } else {
        uv_timer_start(&ch->poll, step_poll, ch->cfg->poll_ms, 0);
    }
}

static void step_poll(uv_timer_t *t)
{
    chain *ch = t->data;
    char path[512];

    snprintf(path, sizeof(path), CSR_API "/%s", ch->csr_name);
    if (api_send(ch, "GET", path, NULL, on_csr_read) != 0) {
        ch->res.reason = TG_AUTH_ISSUANCE_FAILED;
        rollback(ch);
    }
}

static void step_csr(chain *ch)
{
    json_object *doc = tg_auth_csr_doc(ch->id, ch->csr_pem, ch->csr_len, ch->cfg->expiration_s);

    ch->deadline_ms = uv_now(ch->poll.loop) + ch->cfg->cert_wait_ms;
    if (!doc || api_send(ch, "POST", CSR_API, doc, on_csr_created) != 0) {
        fail(ch, TG_AUTH_ISSUANCE_FAILED, "create csr: cannot send", NULL);
        rollback(ch);
    }
    json_object_put(doc);
}

static void step_rolebinding(chain *ch)
{
    json_object *doc = tg_auth_rolebinding_doc(ch->id, ch->cfg->cluster_role, ch->group[0] ? ch->group : NULL);
    char path[256];

    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ch->ns);
    if (api_send(ch, "POST", path, doc, on_rolebinding) != 0) {
        ch->res.reason = TG_AUTH_ISSUANCE_FAILED;
        finish(ch);
    }
    json_object_put(doc);
}

int tg_auth_issue_start(tg_kube_client *c, const tg_auth_issue_config *cfg, const char *cluster_id,
                        const unsigned char *csr_pem, size_t csr_len, tg_auth_issue_done done, void *data)
{
    chain *ch = calloc(1, sizeof(*ch));

    if (!ch || strlen(cluster_id) >= sizeof(ch->id) || !(ch->csr_pem = malloc(csr_len ? csr_len : 1))) {
        if (ch)
            free(ch->csr_pem);
        free(ch);
        return -1;
    }
    ch->c = c;
    ch->cfg = cfg;
    strcpy(ch->id, cluster_id);
    tg_auth_tenant_namespace(cluster_id, ch->ns, sizeof(ch->ns));
    memcpy(ch->csr_pem, csr_pem, csr_len);
    ch->csr_len = csr_len;
    /* checked before (csr_policy.h): at most one, the CN's own, in the exact form */
    if (tg_csr_cert_group(csr_pem, csr_len, ch->group, sizeof(ch->group)) != 1)
        ch->group[0] = '\0';
    ch->done = done;
    ch->data = data;
    uv_timer_init(tg_kube_client_loop(c), &ch->poll);
    ch->poll.data = ch;
    /* the provider's own id is refused before (routes.c) */
    if (tg_auth_name_check_start(c, cluster_id, TG_NAME_PATH_TOKEN, NULL, on_names_checked, ch) != 0) {
        uv_close((uv_handle_t *)&ch->poll, on_timer_closed);
        return -1;
    }
    return 0;
}
