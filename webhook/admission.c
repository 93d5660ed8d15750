/* admission.c - see admission.h. */
#include "admission.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "webhook/conns.h"
#include "webhook/decide.h"
#include "webhook/log_budget.h"
#include "webhook/reply.h"
#include "webhook/review.h"
#include "webhook/slice_decide.h"

typedef struct admission {
    tg_server *server;
    worker *w;
    h2o_req_t *req;                /* NULL once the client went away */
    const char *path;              /* the route's (static) */
    uint64_t started_us;
    tg_review_request review;
    int review_ok;
    char error[256];
} admission;

/* "error" is an answer that is not a verdict (retry later): a 5xx, or 429. */
static const char *verdict_of(const tg_decision *d)
{
    if (d->response.allowed)
        return "allowed";
    return d->response.code >= 500 || d->response.code == 429 ? "error" : "denied";
}

/* metadata.uid of the reviewed object ("" when absent: the mutating pass
 * of a CREATE runs before the API server assigns it). Logged so an audit can
 * match a stored object to the admission that let it in. */
static const char *object_uid(const tg_review_request *r)
{
    json_object *meta = NULL, *uid = NULL;

    if (!r->object || !json_object_object_get_ex(r->object, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "uid", &uid) || !json_object_is_type(uid, json_type_string))
        return "";
    return json_object_get_string(uid);
}

static void admission_log(const admission *a, const tg_decision *d)
{
    const tg_review_request *r = &a->review;
    const char *verdict = verdict_of(d);

    /* No nonce, key, CSR, signature or token ever reaches this line: only
     * names, the verdict and its one-line reason. */
    tg_log(d->response.allowed ? TG_LOG_INFO : TG_LOG_WARN, "admission", TG_LOG_STR("path", a->path),
           TG_LOG_STR("uid", r->uid), TG_LOG_STR("object_uid", object_uid(r)), TG_LOG_STR("tenant", r->name), TG_LOG_STR("namespace", r->namespace_),
           TG_LOG_STR("op", r->operation), TG_LOG_STR("verdict", verdict), TG_LOG_STR("reason", d->reason),
           TG_LOG_STR("message", d->response.allowed ? NULL : d->response.message),
           TG_LOG_BOOL("dry_run", r->dry_run), TG_LOG_BOOL("crypto_skipped", d->crypto_skipped),
           TG_LOG_INT("us", (int64_t)(tg_now_us() - a->started_us)));
}

/* A review that does not parse was sent by no API server: past the
 * worker's budget (MALFORMED_LOG_PER_S a second) such lines are only
 * counted, and summed up in one line when the next second starts. The
 * others are the admissions' audit trail: every one is logged. */
static int may_log(admission *a)
{
    uint64_t held = 0;
    int ok;

    if (a->review_ok)
        return 1;
    ok = tg_log_budget_take(tg_worker_malformed_log(a->w), uv_now(tg_worker_loop(a->w)), &held);
    if (held)
        tg_log(TG_LOG_WARN, "admission lines held back", TG_LOG_STR("why", "malformed reviews past the log budget"),
               TG_LOG_INT("lines", (int64_t)held));
    return ok;
}

/* Answer, account and release. a->req may be gone (client closed). */
static void admission_finish(admission *a, tg_decision *d)
{
    const char *verdict = verdict_of(d);

    if (may_log(a))
        admission_log(a, d);
    tg_count_request(a->server, a->path, verdict, d->reason, a->started_us);
    if (a->req) {
        size_t len = 0;
        char *body = tg_review_response_json(a->review.version, a->review.uid, &d->response, &len);
        if (body) {
            tg_send_text(a->req, 200, "OK", "application/json", body, len);
            free(body);
        } else {
            h2o_send_error_500(a->req, "Internal Server Error", "out of memory\n", 0);
        }
    }
    tg_worker_admission_end(a->w);
}

static void admission_free(admission *a)
{
    tg_review_request_clear(&a->review);
    free(a);
}

/* The request's pool holds a pointer to the admission; when h2o disposes the
 * request (answered, or the connection closed) it clears the back pointer. */
typedef struct admission_guard {
    admission *a;
    void *conn;                    /* tg_conns_request_pending's handle */
} admission_guard;

static void on_request_disposed(void *p)
{
    admission_guard *g = p;
    if (g->a)
        g->a->req = NULL;
    tg_conns_request_done(g->conn);
}

typedef struct live_wait {
    admission *a;
    admission_guard *guard;
} live_wait;

static void on_live_nonce(void *cbdata, const char *nonce, size_t len, int status)
{
    live_wait *lw = cbdata;
    admission *a = lw->a;
    tg_decide_opts opts = {
        .allow_no_handshake = tg_server_cfg(a->server)->allow_no_handshake,
        .live_nonce_done = 1,
        .live_nonce = nonce,
        .live_nonce_len = nonce ? len : 0,
        .live_nonce_state = status > 0 ? (tg_nonce_state)status : TG_NONCE_ABSENT,
    };
    tg_decision d;

    if (status < 0) {
        /* Could not ask: not a reason to deny as NonceNotFound. */
        tg_decide_error(&d, TG_LIVE_READ_FAILED, "cannot read the nonce Secret from the API server, retry later");
        d.intercepted = 1;
    } else {
        tg_decide_validate(&a->review, tg_server_cfg(a->server)->lookup, &opts, &d);
    }
    if (a->req)
        lw->guard->a = NULL;       /* answering now: the guard must not touch a */
    admission_finish(a, &d);
    tg_decision_clear(&d);
    admission_free(a);
    free(lw);
}

/* A Tenant to validate: from the cache, or after a live read of its nonce
 * (answered from on_live_nonce then: returns 1). */
static int validate_tenant(admission *a, h2o_req_t *req, tg_decision *d)
{
    const tg_server_config *cfg = tg_server_cfg(a->server);
    tg_decide_opts opts = {.allow_no_handshake = cfg->allow_no_handshake};
    live_wait *lw;
    int fetched = TG_LIVE_FETCH_FAILED;
    admission_guard *g;

    tg_decide_validate(&a->review, cfg->lookup, &opts, d);
    if (!d->need_live_nonce || !cfg->live)
        return 0;
    g = h2o_mem_alloc_shared(&req->pool, sizeof(*g), on_request_disposed);
    g->a = NULL;
    g->conn = NULL;
    if ((lw = malloc(sizeof(*lw))) != NULL) {
        g->a = a;
        g->conn = tg_conns_request_pending(req);
        lw->a = a;
        lw->guard = g;
        fetched = cfg->live->fetch(cfg->live->self, tg_worker_loop(a->w), tg_worker_index(a->w), d->nonce_namespace,
                                     d->cluster_id, on_live_nonce, lw);
        if (fetched == 0) {
            tg_decision_clear(d);
            return 1;
        }
        g->a = NULL;
        free(lw);
    }
    tg_decision_clear(d);
    if (fetched == TG_LIVE_FETCH_BUSY) {
        /* Not a verdict: the nonce may exist. */
        tg_decide_error(d, TG_LIVE_READ_BUSY,
                        "too many namespaces' nonce Secrets are being read from the API server, retry later");
        d->intercepted = 1;
    } else {
        /* No live read possible: decide with what the cache said. */
        opts.live_nonce_done = 1;
        tg_decide_validate(&a->review, cfg->lookup, &opts, d);
    }
    return 0;
}

int tg_admission_handle(tg_server *s, worker *w, h2o_req_t *req, const tg_admission_route *route,
                        uint64_t started_us)
{
    admission *a = calloc(1, sizeof(*a));
    tg_decision d;

    if (!a) {
        h2o_send_error_503(req, "Service Unavailable", "out of memory\n", 0);
        return 0;
    }
    tg_worker_admission_begin(w);
    a->server = s;
    a->w = w;
    a->req = req;
    a->path = route->path;
    a->started_us = started_us;
    a->review_ok = tg_review_parse(req->entity.base ? req->entity.base : "", req->entity.len, &a->review,
                                   a->error, sizeof(a->error)) == 0;
    if (!a->review_ok) {
        /* Still HTTP 200 with an AdmissionReview: the API server shows the
         * message, and the uid is echoed when it could be read. */
        tg_decide_error(&d, route->kind == TG_ADMIT_VALIDATE_SLICE ? TG_MALFORMED_RESOURCE_SLICE : TG_MALFORMED_TENANT,
                        a->error);
    } else if (route->kind == TG_ADMIT_VALIDATE_SLICE) {
        tg_decide_validate_slice(&a->review, tg_server_cfg(s)->lookup, &tg_server_cfg(s)->slice, &d);
    } else if (route->kind == TG_ADMIT_MUTATE_TENANT) {
        tg_decide_mutate(&a->review, &d);
    } else if (validate_tenant(a, req, &d)) {
        return 0;                  /* answered from on_live_nonce */
    }
    admission_finish(a, &d);
    tg_decision_clear(&d);
    admission_free(a);
    return 0;
}
