/* routes.c - GET /ids, POST /identity/certificate, and the v1 one-string
 * peering's POST /v1/nonce and /v1/tenant (v1_flow.h). Order of the checks in
 * a POST, so that nothing is learnt before the token matched (docs/auth.md
 * "No oracle"): the source's budget, the body's shape, the token, then the
 * CSR and the issuance. Every request is logged once (never the token) and
 * counted by path, status and reason. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/answer.h"
#include "auth/csr_policy.h"
#include "auth/issue_docs.h"
#include "auth/origin_token.h"
#include "auth/request.h"
#include "auth/server_priv.h"
#include "auth/token.h"
#include "auth/v1_request.h"
#include "common/log.h"

typedef struct route {
    h2o_handler_t super;
    tg_auth_server *server;
} route;

/* One request's account: where it came from, what it was about. */
typedef struct attempt {
    tg_auth_server *s;
    const char *path;              /* static: a TG_AUTH_PATH_* or "other" */
    char source[INET6_ADDRSTRLEN];
    tg_peer_key key;               /* the limiter's: IPv6 by its /64 */
    char cluster_id[TG_AUTH_MAX_CLUSTER_ID + 1];
    uint64_t started_ms;
} attempt;

static void attempt_init(attempt *a, tg_auth_server *s, h2o_req_t *req, const char *path)
{
    struct sockaddr_storage ss;
    socklen_t sl = req->conn->callbacks->get_peername(req->conn, (struct sockaddr *)&ss);

    memset(a, 0, sizeof(*a));
    a->s = s;
    a->path = path;
    a->started_ms = uv_now(s->loop);
    strcpy(a->source, "unknown");
    if (sl > 0) {
        tg_peer_net_key_of((struct sockaddr *)&ss, &a->key);
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a->source, sizeof(a->source));
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a->source, sizeof(a->source));
    }
}

/* Log, count, and (when req is still there) send. */
static void attempt_end(attempt *a, h2o_req_t *req, tg_auth_reason r, const char *message, const char *body,
                        size_t len)
{
    int status = tg_auth_reason_status(r);
    char code[8];

    snprintf(code, sizeof(code), "%d", status);
    tg_log(status < 400 ? TG_LOG_INFO : TG_LOG_WARN, "auth request", TG_LOG_STR("path", a->path),
           TG_LOG_STR("source", a->source), TG_LOG_STR("cluster_id", a->cluster_id[0] ? a->cluster_id : NULL),
           TG_LOG_INT("status", status), TG_LOG_STR("reason", tg_auth_reason_name(r)),
           TG_LOG_STR("message", status < 400 ? NULL : message), TG_LOG_INT("ms", uv_now(a->s->loop) - a->started_ms));
    tg_counter_add(tg_metric_series_get(a->s->m_requests, (const char *[]){a->path, code, tg_auth_reason_name(r)}), 1);
    tg_histogram_observe(tg_metric_series_get(a->s->m_duration, (const char *[]){a->path}),
                         (double)(uv_now(a->s->loop) - a->started_ms) / 1e3);
    if (!req)
        return;
    if (r == TG_AUTH_METHOD_NOT_ALLOWED) {
        const char *allow = strcmp(a->path, TG_AUTH_PATH_IDS) == 0 ? "GET" : "POST";
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, allow, strlen(allow));
    }
    req->res.status = status;
    req->res.reason = tg_auth_reason_name(r);
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CACHE_CONTROL, NULL, H2O_STRLIT("no-store"));
    h2o_send_inline(req, body, len);
}

static void answer_error(attempt *a, h2o_req_t *req, tg_auth_reason r, const char *message)
{
    size_t len = 0;
    char *body = tg_auth_answer_error(r, message, &len);

    attempt_end(a, req, r, message, body ? body : "{}", body ? len : 2);
    free(body);
}

static int iov_is(h2o_iovec_t v, const char *s)
{
    size_t n = strlen(s);
    return v.len == n && memcmp(v.base, s, n) == 0;
}

static int on_ids(tg_auth_server *s, h2o_req_t *req)
{
    attempt a;
    size_t len = 0;
    char *body;

    attempt_init(&a, s, req, TG_AUTH_PATH_IDS);
    if (!iov_is(req->method, "GET") && !iov_is(req->method, "HEAD")) {
        answer_error(&a, req, TG_AUTH_METHOD_NOT_ALLOWED, "expected GET");
        return 0;
    }
    if (!(body = tg_auth_answer_ids(s->cfg.cluster_id, s->cfg.cluster_name, &len))) {
        h2o_send_error_503(req, "Service Unavailable", "out of memory\n", 0);
        return 0;
    }
    attempt_end(&a, req, TG_AUTH_IDS, NULL, body, len);
    free(body);
    return 0;
}

/* An issuance under way. The request's pool holds a guard that forgets the
 * request when h2o disposes of it (the client went away). */
typedef struct pending {
    attempt a;
    h2o_req_t *req;
    struct guard *guard;
    char *origin;                  /* the consumer's own token, kept once issued; secret */
    size_t origin_len;
} pending;

static void pending_free(pending *p)
{
    if (p->origin)
        sodium_memzero(p->origin, p->origin_len);
    free(p->origin);
    free(p);
}

typedef struct guard {
    pending *p;
} guard;

static void on_req_disposed(void *g)
{
    if (((guard *)g)->p)
        ((guard *)g)->p->req = NULL;
}

static void on_origin_token_stored(int ok, const char *why, void *data)
{
    tg_auth_server *s = data;

    tg_counter_add(tg_metric_series_get(s->m_origin_tokens, (const char *[]){ok ? "ok" : "error"}), 1);
    if (!ok)
        tg_log(TG_LOG_WARN, "the consumer's token was not stored", TG_LOG_STR("error", why));
    s->in_flight--;
}

/* Keep the consumer's own token as Liqo does (origin_token.h); the answer
 * does not wait for it. */
static void keep_origin_token(tg_auth_server *s, const pending *p)
{
    if (p->origin_len == 0)
        return;
    s->in_flight++;                /* a drain waits for it, until on_origin_token_stored */
    if (tg_auth_origin_token_store(s->cfg.kube, s->cfg.v1.token_ns, p->a.cluster_id, p->origin, p->origin_len,
                                   on_origin_token_stored, s) != 0)
        on_origin_token_stored(0, "cannot reach the API server", s);
}

static void on_issued(const tg_auth_issue_result *res, void *data)
{
    pending *p = data;
    tg_auth_server *s = p->a.s;

    if (p->req)
        p->guard->p = NULL;
    if (res->reason == TG_AUTH_ISSUED) {
        char ns[96];
        size_t len = 0;
        char *body;

        keep_origin_token(s, p);
        tg_auth_tenant_namespace(p->a.cluster_id, ns, sizeof(ns));
        body = tg_auth_answer_identity(ns, res->cert_pem, res->cert_len, s->cfg.api_server_url, s->cfg.api_server_ca,
                                       s->cfg.api_server_ca_len, &len);
        if (body)
            attempt_end(&p->a, p->req, TG_AUTH_ISSUED, NULL, body, len);
        else
            answer_error(&p->a, p->req, TG_AUTH_ISSUANCE_FAILED, "out of memory");
        free(body);
    } else {
        answer_error(&p->a, p->req, res->reason, res->why);
    }
    s->in_flight--;
    pending_free(p);
}

/* Ids that are well formed but not signed here: another shape than Liqo
 * v0.10's (unless --any-cluster-id), or this cluster's own. */
static int cluster_id_refused(tg_auth_server *s, attempt *a, h2o_req_t *req, const char *id)
{
    if (!s->cfg.any_cluster_id && !tg_auth_cluster_id_is_uuid(id)) {
        answer_error(a, req, TG_AUTH_INVALID_CLUSTER_ID,
                     "expected cluster.clusterID to be a lowercase UUID, as Liqo v0.10 makes them");
        return 1;
    }
    if (strcmp(id, s->cfg.cluster_id) == 0) {
        answer_error(a, req, TG_AUTH_INVALID_CLUSTER_ID, "expected another cluster's id, got this cluster's own");
        return 1;
    }
    return 0;
}

/* The token step: 0 when the request may go on. */
static int token_ok(tg_auth_server *s, attempt *a, h2o_req_t *req, const tg_auth_request *r)
{
    const char *want;
    size_t want_len;

    if (s->cfg.authentication_disabled) {
        tg_log(TG_LOG_WARN, "authentication is disabled: accepting without a token check",
               TG_LOG_STR("source", a->source), TG_LOG_STR("cluster_id", a->cluster_id));
        return 0;
    }
    if (!(want = tg_auth_token_secret_get(s->cfg.token, &want_len))) {
        answer_error(a, req, TG_AUTH_TOKEN_UNAVAILABLE, "the peering token has not been read yet, retry later");
        return -1;
    }
    if (r->token_len == 0) {
        tg_ratelimit_failure(s->limits, &a->key, uv_now(s->loop));
        answer_error(a, req, TG_AUTH_EMPTY_TOKEN, "expected the peering token of this cluster, got none");
        return -1;
    }
    if (!tg_auth_token_equal(want, want_len, r->token, r->token_len)) {
        tg_ratelimit_failure(s->limits, &a->key, uv_now(s->loop));
        answer_error(a, req, TG_AUTH_TOKEN_MISMATCH, "expected the peering token of this cluster");
        return -1;
    }
    return 0;
}

/* An answer to come, tied to req's lifetime by a guard; NULL (answered) when
 * out of memory. */
static pending *pending_new(tg_auth_server *s, attempt *a, h2o_req_t *req)
{
    pending *p = calloc(1, sizeof(*p));
    guard *g;

    if (!p) {
        answer_error(a, req, TG_AUTH_ISSUANCE_FAILED, "out of memory");
        return NULL;
    }
    p->a = *a;
    p->req = req;
    g = h2o_mem_alloc_shared(&req->pool, sizeof(*g), on_req_disposed);
    g->p = p;
    p->guard = g;
    s->in_flight++;
    return p;
}

/* The work could not start: nothing will call back for p. */
static void pending_not_started(tg_auth_server *s, pending *p, attempt *a, h2o_req_t *req)
{
    p->guard->p = NULL;
    s->in_flight--;
    pending_free(p);
    answer_error(a, req, TG_AUTH_ISSUANCE_FAILED, "cannot reach the API server");
}

static void start_issuance(tg_auth_server *s, attempt *a, h2o_req_t *req, const tg_auth_request *r)
{
    pending *p = pending_new(s, a, req);

    if (p && r->origin_token_len > 0 && (p->origin = malloc(r->origin_token_len)) != NULL) {
        memcpy(p->origin, r->origin_token, r->origin_token_len);
        p->origin_len = r->origin_token_len;
    }
    if (p && tg_auth_issue_start(s->cfg.kube, &s->cfg.issue, r->cluster_id, r->csr_pem, r->csr_len, on_issued,
                                 p) != 0)
        pending_not_started(s, p, a, req);
}

/* The steps every POST takes first: the method, the source's budget, the
 * body's size. 0 when the request may go on; else it has been answered. */
static int post_admitted(tg_auth_server *s, attempt *a, h2o_req_t *req)
{
    uint64_t retry_ms;

    if (!iov_is(req->method, "POST")) {
        answer_error(a, req, TG_AUTH_METHOD_NOT_ALLOWED, "expected POST");
        return -1;
    }
    if (tg_ratelimit_admit(s->limits, &a->key, uv_now(s->loop), &retry_ms) != 0) {
        char secs[24];
        int n = snprintf(secs, sizeof(secs), "%llu", (unsigned long long)(retry_ms + 999) / 1000);
        h2o_iovec_t v = h2o_strdup(&req->pool, secs, (size_t)n);
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, v.base, v.len);
        answer_error(a, req, TG_AUTH_RATE_LIMITED, "too many requests or failures from this address, retry later");
        return -1;
    }
    if (req->entity.len > TG_AUTH_MAX_BODY) {
        tg_ratelimit_failure(s->limits, &a->key, uv_now(s->loop));
        req->http1_is_persistent = 0;
        answer_error(a, req, TG_AUTH_PAYLOAD_TOO_LARGE, "expected a body of at most 64 KiB");
        return -1;
    }
    return 0;
}

static int on_identity(tg_auth_server *s, h2o_req_t *req)
{
    attempt a;
    tg_auth_request r;
    tg_auth_reason reason;
    char why[400];

    attempt_init(&a, s, req, TG_AUTH_PATH_IDENTITY);
    if (post_admitted(s, &a, req) != 0)
        return 0;
    if (tg_auth_request_parse(req->entity.base ? req->entity.base : "", req->entity.len, &r, &reason, why,
                              sizeof(why)) != 0) {
        tg_ratelimit_failure(s->limits, &a.key, uv_now(s->loop));
        answer_error(&a, req, reason, why);
        tg_auth_request_clear(&r);
        return 0;
    }
    memcpy(a.cluster_id, r.cluster_id, sizeof(a.cluster_id));
    if (cluster_id_refused(s, &a, req, r.cluster_id)) {
        tg_ratelimit_failure(s->limits, &a.key, uv_now(s->loop));
        tg_auth_request_clear(&r);
        return 0;
    }
    if (token_ok(s, &a, req, &r) != 0) {
        tg_auth_request_clear(&r);
        return 0;
    }
    tg_ratelimit_success(s->limits, &a.key);
    if (tg_auth_csr_check(r.csr_pem, r.csr_len, r.cluster_id, &reason, why, sizeof(why)) != 0)
        answer_error(&a, req, reason, why);
    else
        start_issuance(s, &a, req, &r);
    tg_auth_request_clear(&r);
    return 0;
}

/* --- v1 one-string peering (docs/auth.md "v1 one-string peering") ---------- */

static void on_v1_done(const tg_auth_v1_result *res, void *data)
{
    pending *p = data;
    tg_auth_server *s = p->a.s;

    if (p->req)
        p->guard->p = NULL;
    /* the token was checked by the chain: a wrong one counts as a failure */
    if (res->reason == TG_AUTH_INVALID_TOKEN)
        tg_ratelimit_failure(s->limits, &p->a.key, uv_now(s->loop));
    else if (res->reason == TG_AUTH_NONCE_ISSUED || res->reason == TG_AUTH_TENANT_SIGNED)
        tg_ratelimit_success(s->limits, &p->a.key);
    if (res->body)
        attempt_end(&p->a, p->req, res->reason, NULL, res->body, res->len);
    else
        answer_error(&p->a, p->req, res->reason, res->why);
    s->in_flight--;
    pending_free(p);
}

static void start_v1(tg_auth_server *s, attempt *a, h2o_req_t *req, tg_auth_v1_kind kind, tg_auth_v1_request *r)
{
    pending *p = pending_new(s, a, req);

    if (p && tg_auth_v1_start(s->cfg.kube, &s->cfg.v1, kind, r, on_v1_done, p) != 0)
        pending_not_started(s, p, a, req);
}

/* Both v1 POSTs: admitted, parsed (a malformed body or token counts as a
 * failure), then the chain of v1_flow.h checks the token and does the work. */
static int on_v1(tg_auth_server *s, h2o_req_t *req, const char *path, tg_auth_v1_kind kind)
{
    attempt a;
    tg_auth_v1_request r;
    tg_auth_reason reason;
    char why[400];
    const char *body = req->entity.base ? req->entity.base : "";
    int rc;

    attempt_init(&a, s, req, path);
    if (post_admitted(s, &a, req) != 0)
        return 0;
    rc = kind == TG_AUTH_V1_NONCE ? tg_auth_v1_parse_nonce(body, req->entity.len, &r, &reason, why, sizeof(why))
                                  : tg_auth_v1_parse_tenant(body, req->entity.len, &r, &reason, why, sizeof(why));
    if (rc == 0 && strcmp(r.cluster_id, s->cfg.cluster_id) == 0) {
        reason = TG_AUTH_INVALID_CLUSTER_ID;
        snprintf(why, sizeof(why), "expected another cluster's id, got this cluster's own");
        rc = -1;
    }
    if (rc != 0) {
        tg_ratelimit_failure(s->limits, &a.key, uv_now(s->loop));
        answer_error(&a, req, reason, why);
    } else {
        memcpy(a.cluster_id, r.cluster_id, sizeof(a.cluster_id));
        start_v1(s, &a, req, kind, &r);
    }
    tg_auth_v1_request_clear(&r);
    return 0;
}

/* h2o bounds a head that arrives in pieces (8 KiB), not one that arrives
 * in a single read: this bounds both. */
static size_t head_size(const h2o_req_t *req)
{
    size_t n = req->method.len + req->path.len;

    for (size_t i = 0; i < req->headers.size; i++)
        n += req->headers.entries[i].name->len + req->headers.entries[i].value.len + 4;
    return n;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    tg_auth_server *s = ((route *)self)->server;
    attempt a;

    tg_auth_conn_request_begin(req);
    if (head_size(req) > TG_AUTH_MAX_HEAD) {
        attempt_init(&a, s, req, "other");
        req->http1_is_persistent = 0;
        answer_error(&a, req, TG_AUTH_HEADERS_TOO_LARGE, "expected a request line and headers of at most 16 KiB");
        return 0;
    }

    if (iov_is(req->path_normalized, TG_AUTH_PATH_IDS))
        return on_ids(s, req);
    if (iov_is(req->path_normalized, TG_AUTH_PATH_IDENTITY))
        return on_identity(s, req);
    if (iov_is(req->path_normalized, TG_AUTH_PATH_V1_NONCE))
        return on_v1(s, req, TG_AUTH_PATH_V1_NONCE, TG_AUTH_V1_NONCE);
    if (iov_is(req->path_normalized, TG_AUTH_PATH_V1_TENANT))
        return on_v1(s, req, TG_AUTH_PATH_V1_TENANT, TG_AUTH_V1_TENANT);
    /* "other": arbitrary paths must not become metric label values */
    attempt_init(&a, s, req, "other");
    answer_error(&a, req, TG_AUTH_NOT_FOUND, "expected GET /ids, or POST /identity/certificate, /v1/nonce or /v1/tenant");
    return 0;
}

void tg_auth_routes_register(h2o_hostconf_t *host, tg_auth_server *s)
{
    h2o_pathconf_t *pc = h2o_config_register_path(host, "/", 0);
    route *r = (route *)h2o_create_handler(pc, sizeof(*r));

    r->super.on_req = on_req;
    r->server = s;
}
