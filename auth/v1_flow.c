/* v1_flow.c - see v1_flow.h. One struct per chain; each API answer moves it on. */
#include "v1_flow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "auth/btoken_record.h"
#include "auth/issue_docs.h"
#include "auth/name_check.h"
#include "auth/v1_docs.h"
#include "kube/json.h"

#define TENANTS_API "/apis/authentication.liqo.io/v1beta1/namespaces/%s/tenants"
/* Each lost race means another request recorded an id, so this many reads
 * end in a place or TokenExhausted well before it is reached. */
#define MAX_TOKEN_READS (TG_AUTH_BTOKEN_MAX_NONCES + 2)

typedef struct chain {
    tg_kube_client *c;
    const tg_auth_v1_config *cfg;
    tg_auth_v1_kind kind;
    tg_auth_v1_request req;        /* owned: token wiped at the end */
    tg_auth_btoken_record rec;
    char ns[96];
    int reads;                     /* of the token: a lost record race reads it again */
    uv_timer_t poll;
    uint64_t deadline_ms;
    tg_auth_v1_result res;
    tg_auth_v1_done done;
    void *data;
} chain;

static void step_work(chain *ch);
static void nonce_place(chain *ch);
static void on_poll(uv_timer_t *t);

static void on_timer_closed(uv_handle_t *h)
{
    chain *ch = h->data;

    tg_auth_v1_request_clear(&ch->req);
    free(ch->res.body);
    free(ch);
}

/* fmt is one of this file's literals, with at most one %s. */
static void finish(chain *ch, tg_auth_reason r, const char *fmt, const char *arg)
{
    ch->res.reason = r;
    if (fmt) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(ch->res.why, sizeof(ch->res.why), fmt, arg ? arg : "");
#pragma GCC diagnostic pop
    }
    ch->done(&ch->res, ch->data);
    uv_close((uv_handle_t *)&ch->poll, on_timer_closed);
}

/* An API answer we did not expect: the server's problem, not the caller's. */
static void api_failed(chain *ch, const char *step, const tg_kube_response *resp)
{
    char msg[400], what[600];

    tg_auth_v1_status_message(resp->body, resp->body_len, msg, sizeof(msg));
    snprintf(what, sizeof(what), "%s: HTTP %ld %s", step, resp->status, resp->error ? resp->error : msg);
    finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", what);
}

static void api_send(chain *ch, const char *method, const char *path, json_object *body, tg_kube_response_cb cb)
{
    tg_kube_request_opts o = {.method = method, .path = path, .content_type = TG_KUBE_CT_JSON};
    char err[200];
    size_t len = 0;

    o.body = body ? json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len) : NULL;
    o.body_len = len;
    if (!tg_kube_request_start(ch->c, &o, cb, ch, err, sizeof(err)))
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "cannot reach the API server: %s", err);
}

static void invalid_token(chain *ch)
{
    finish(ch, TG_AUTH_INVALID_TOKEN, "%s", TG_AUTH_V1_INVALID_TOKEN_MSG);
}

/* --- polling: the nonce Secret, or the Tenant ------------------------------ */

static void poll_later(chain *ch, const char *what)
{
    if (uv_now(ch->poll.loop) >= ch->deadline_ms) {
        finish(ch, TG_AUTH_PROVIDER_TIMEOUT, "%s", what);
        return;
    }
    uv_timer_start(&ch->poll, on_poll, ch->cfg->poll_ms, 0);
}

static void on_nonce_read(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *doc = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    char nonce[256];

    if (doc && tg_auth_v1_nonce_of(doc, nonce, sizeof(nonce)) == 0) {
        ch->res.body = tg_auth_v1_answer_nonce(ch->cfg->provider_id, nonce, &ch->res.len);
        sodium_memzero(nonce, sizeof(nonce));
        json_object_put(doc);
        if (ch->res.body)
            finish(ch, TG_AUTH_NONCE_ISSUED, NULL, NULL);
        else
            finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "out of memory");
        return;
    }
    json_object_put(doc);
    if (resp->status != 200 && resp->status != 404) {
        api_failed(ch, "read the nonce Secret", resp);
        return;
    }
    poll_later(ch, "expected tenantgate-signer's nonce controller to fill the nonce Secret in time "
                   "(is the signer running on the provider?)");
}

static void on_tenant_read(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *doc = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;

    if (doc && tg_auth_v1_tenant_signed(doc)) {
        ch->res.body = tg_auth_v1_answer_tenant(ch->cfg->provider_id, doc, ch->cfg->api_server_url,
                                                ch->cfg->api_server_ca, ch->cfg->api_server_ca_len, &ch->res.len);
        json_object_put(doc);
        if (ch->res.body)
            finish(ch, TG_AUTH_TENANT_SIGNED, NULL, NULL);
        else
            finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "out of memory");
        return;
    }
    json_object_put(doc);
    if (resp->status != 200) {
        api_failed(ch, "read the Tenant", resp);
        return;
    }
    poll_later(ch, "expected tenantgate-signer to sign the Tenant in time (kubectl get events -n "
                   "liqo-tenant-<consumer id> on the provider says why not)");
}

static void on_poll(uv_timer_t *t)
{
    chain *ch = t->data;
    char path[256];

    if (ch->kind == TG_AUTH_V1_NONCE) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/" TG_AUTH_NONCE_SECRET, ch->ns);
        api_send(ch, "GET", path, NULL, on_nonce_read);
    } else {
        snprintf(path, sizeof(path), TENANTS_API "/%s", ch->ns, ch->req.cluster_id);
        api_send(ch, "GET", path, NULL, on_tenant_read);
    }
}

static void start_polling(chain *ch)
{
    ch->deadline_ms = uv_now(ch->poll.loop) + ch->cfg->wait_ms;
    uv_timer_start(&ch->poll, on_poll, 0, 0);
}

/* --- nonce: the namespace; the signer makes the Secret ---------------------- */

static void on_namespace(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    /* 409: made before, by an earlier request for this id (or otherwise: then
     * without the token label the signer makes no nonce, and this times out) */
    if (resp->status != 201 && resp->status != 409)
        api_failed(ch, "create the tenant namespace", resp);
    else
        start_polling(ch);
}

/* --- tenant: create it ----------------------------------------------------- */

static void on_tenant_created(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    char msg[600];

    tg_auth_v1_status_message(resp->body, resp->body_len, msg, sizeof(msg));
    if (resp->status == 201)
        start_polling(ch);
    else if (resp->status == 409)
        finish(ch, TG_AUTH_TENANT_EXISTS, "expected no Tenant for this consumer yet (unpeer first): %s", msg);
    else if (resp->status == 400 || resp->status == 403 || resp->status == 404 || resp->status == 422)
        finish(ch, TG_AUTH_TENANT_REFUSED, "the provider's API server refused the Tenant: %s", msg);
    else
        api_failed(ch, "create the Tenant", resp);
}

static void step_work(chain *ch)
{
    char path[256];

    if (ch->kind == TG_AUTH_V1_NONCE) {
        json_object *doc = tg_auth_v1_namespace_doc(ch->req.cluster_id, ch->req.token.id);
        api_send(ch, "POST", "/api/v1/namespaces", doc, on_namespace);
        json_object_put(doc);
        return;
    }
    snprintf(path, sizeof(path), TENANTS_API, ch->ns);
    api_send(ch, "POST", path, ch->req.tenant, on_tenant_created);
}

/* --- the name's owner (name_check.h) --------------------------------------- */

static void on_claimed(const tg_auth_name_result *res, void *data)
{
    chain *ch = data;

    if (res->ok)
        step_work(ch);
    else
        finish(ch, res->reason, "%s", res->why);
}

/* The Tenant is the Tenant flow's: its name is claimed for that path right
 * before the Tenant is made (of two racing paths, one wins). */
static void claim_then_work(chain *ch)
{
    if (ch->kind == TG_AUTH_V1_NONCE) {     /* the nonce claims no name: a place under the token's bound */
        nonce_place(ch);
        return;
    }
    if (tg_auth_name_claim_start(ch->c, ch->req.cluster_id, TG_NAME_PATH_TENANT, on_claimed, ch) != 0)
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "claim the name: cannot reach the API server");
}

/* --- the token ------------------------------------------------------------- */

static void on_consumed(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    if (resp->status == 200 || resp->status == 202)
        claim_then_work(ch);
    else if (resp->status == 404 || resp->status == 409)   /* another request spent it first */
        invalid_token(ch);
    else
        api_failed(ch, "spend the single-use token", resp);
}

static void read_token(chain *ch);

static void on_recorded(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;

    if (resp->status == 200)
        step_work(ch);
    else if (resp->status == 409)              /* another request recorded first: count again */
        read_token(ch);
    else if (resp->status == 404)              /* deleted (revoked, spent) in between */
        invalid_token(ch);
    else
        api_failed(ch, "record the nonce in the bootstrap token", resp);
}

static void api_merge_patch(chain *ch, const char *path, json_object *body, tg_kube_response_cb cb)
{
    tg_kube_request_opts o = {.method = "PATCH", .path = path, .content_type = TG_KUBE_CT_MERGE_PATCH};
    char err[200];
    size_t len = 0;

    o.body = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len);
    o.body_len = len;
    if (!tg_kube_request_start(ch->c, &o, cb, ch, err, sizeof(err)))
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "cannot reach the API server: %s", err);
}

/* /v1/nonce: a place for this id under the token's bound, recorded before
 * anything is made, so that what a token made is bounded whatever races. */
static void nonce_place(chain *ch)
{
    char path[256], name[64], bound[16];
    json_object *doc;

    switch (tg_auth_btoken_nonce_room(&ch->rec, ch->req.cluster_id, ch->cfg->max_nonces)) {
    case TG_AUTH_NONCE_KNOWN:
        step_work(ch);
        return;
    case TG_AUTH_NONCE_EXHAUSTED:
        snprintf(bound, sizeof(bound), "%d", ch->rec.single_use ? 1 : ch->cfg->max_nonces);
        finish(ch, TG_AUTH_TOKEN_EXHAUSTED,
               "expected a token with a free place: it has made its bound of %s tenant namespace(s) "
               "(--max-nonces-per-token; single-use: 1) for other cluster ids; make a new token",
               bound);
        return;
    case TG_AUTH_NONCE_RECORD:
        break;
    }
    if (!(doc = tg_auth_v1_record_nonce_doc(ch->rec.nonce_ids, ch->req.cluster_id, ch->rec.resource_version))) {
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "out of memory");
        return;
    }
    tg_auth_btoken_secret_name(ch->req.token.id, name, sizeof(name));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ch->cfg->token_ns, name);
    api_merge_patch(ch, path, doc, on_recorded);
    json_object_put(doc);
}

static void on_names_checked(const tg_auth_name_result *res, void *data);

static void on_token(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    chain *ch = data;
    json_object *doc = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    int ok;

    if (resp->status != 200 && resp->status != 404) {
        json_object_put(doc);
        api_failed(ch, "read the bootstrap token", resp);
        return;
    }
    ok = tg_auth_btoken_accepts(doc, &ch->req.token, time(NULL), &ch->rec);
    json_object_put(doc);
    if (!ok) {
        invalid_token(ch);
        return;
    }
    /* before anything is written or a single-use token spent */
    if (tg_auth_name_check_start(ch->c, ch->req.cluster_id, TG_NAME_PATH_TENANT, ch->cfg->provider_id,
                                 on_names_checked, ch) != 0)
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "check the name: cannot reach the API server");
}

static void on_names_checked(const tg_auth_name_result *res, void *data)
{
    chain *ch = data;
    json_object *doc;
    char path[256], name[64];

    if (!res->ok) {
        finish(ch, res->reason, "%s", res->why);
        return;
    }
    if (ch->kind == TG_AUTH_V1_NONCE || !ch->rec.single_use) {
        claim_then_work(ch);
        return;
    }
    doc = tg_auth_v1_consume_doc(ch->rec.uid, ch->rec.resource_version);
    tg_auth_btoken_secret_name(ch->req.token.id, name, sizeof(name));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ch->cfg->token_ns, name);
    api_send(ch, "DELETE", path, doc, on_consumed);
    json_object_put(doc);
}

static void read_token(chain *ch)
{
    char path[256], name[64];

    if (++ch->reads > MAX_TOKEN_READS) {
        finish(ch, TG_AUTH_ISSUANCE_FAILED, "%s", "the bootstrap token kept changing under this request");
        return;
    }
    tg_auth_btoken_secret_name(ch->req.token.id, name, sizeof(name));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ch->cfg->token_ns, name);
    api_send(ch, "GET", path, NULL, on_token);
}

int tg_auth_v1_start(tg_kube_client *c, const tg_auth_v1_config *cfg, tg_auth_v1_kind kind,
                     tg_auth_v1_request *req, tg_auth_v1_done done, void *data)
{
    chain *ch = calloc(1, sizeof(*ch));
    tg_kube_request_opts o = {.method = "GET", .content_type = TG_KUBE_CT_JSON};
    char path[256], name[64], err[200];

    if (!ch)
        return -1;
    ch->c = c;
    ch->cfg = cfg;
    ch->kind = kind;
    ch->req = *req;                /* take it over */
    memset(req, 0, sizeof(*req));
    ch->done = done;
    ch->data = data;
    ch->reads = 1;
    tg_auth_tenant_namespace(ch->req.cluster_id, ch->ns, sizeof(ch->ns));
    uv_timer_init(tg_kube_client_loop(c), &ch->poll);
    ch->poll.data = ch;
    tg_auth_btoken_secret_name(ch->req.token.id, name, sizeof(name));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", cfg->token_ns, name);
    o.path = path;
    if (!tg_kube_request_start(c, &o, on_token, ch, err, sizeof(err))) {
        uv_close((uv_handle_t *)&ch->poll, on_timer_closed);
        return -1;
    }
    return 0;
}
