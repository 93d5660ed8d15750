/* api.c - see api.h. */
#include "signer/api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/json.h"
#include "signer/rfc3339.h"

/* A worker's call waiting for the loop thread (relayed mode). Lives on the
 * worker's stack until done is set under the relay's mutex. */
typedef struct relay_call {
    struct tg_api_relay *relay;
    const tg_kube_request_opts *opts;
    long status;
    char *body;                /* malloc'd, NUL-terminated; the worker frees it */
    size_t body_len;
    char err[256];
    int done;
    struct relay_call *next;
} relay_call;

struct tg_api_relay {
    uv_async_t wakeup;         /* a worker queued a call, or left */
    tg_kube_client *client;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* a call is done */
    relay_call *head, *tail;   /* queued, not started; under mu */
    int running;               /* calls started on the loop, not done; loop thread only */
    int closing;               /* uv_close called; loop thread only */
};

struct tg_api {
    uv_loop_t loop;            /* own-loop mode */
    tg_kube_client *client;    /* own-loop mode */
    tg_api_relay *relay;       /* relayed mode */
};

/* ---------- relay: on the loop thread ---------- */

static void relay_complete(tg_api_relay *r, relay_call *c)
{
    pthread_mutex_lock(&r->mu);
    c->done = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void on_relayed_done(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    relay_call *c = data;
    tg_api_relay *r = c->relay;

    (void)req;
    r->running--;
    if (resp->error) {
        c->status = -1;
        snprintf(c->err, sizeof(c->err), "%s", resp->error);
    } else if (!(c->body = malloc(resp->body_len + 1))) {
        c->status = -1;
        snprintf(c->err, sizeof(c->err), "out of memory");
    } else {
        memcpy(c->body, resp->body, resp->body_len);
        c->body[resp->body_len] = '\0';
        c->body_len = resp->body_len;
        c->status = resp->status;
    }
    relay_complete(r, c);
}

static void on_wakeup(uv_async_t *h)
{
    tg_api_relay *r = h->data;
    relay_call *c, *next;

    pthread_mutex_lock(&r->mu);
    c = r->head;
    r->head = r->tail = NULL;
    pthread_mutex_unlock(&r->mu);
    for (; c; c = next) {
        next = c->next;
        if (!tg_kube_request_start(r->client, c->opts, on_relayed_done, c, c->err, sizeof(c->err))) {
            c->status = -1;
            relay_complete(r, c);
            continue;
        }
        r->running++;
    }
}

tg_api_relay *tg_api_relay_new(uv_loop_t *loop, tg_kube_client *client)
{
    tg_api_relay *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    if (uv_async_init(loop, &r->wakeup, on_wakeup) != 0) {
        free(r);
        return NULL;
    }
    r->wakeup.data = r;
    r->client = client;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    return r;
}

int tg_api_relay_busy(tg_api_relay *r)
{
    int queued;

    pthread_mutex_lock(&r->mu);
    queued = r->head != NULL;
    pthread_mutex_unlock(&r->mu);
    return queued || r->running > 0;
}

static void on_relay_closed(uv_handle_t *h)
{
    tg_api_relay *r = h->data;

    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

void tg_api_relay_close(tg_api_relay *r)
{
    if (!r || r->closing)
        return;
    r->closing = 1;
    uv_close((uv_handle_t *)&r->wakeup, on_relay_closed);
}

void tg_api_relay_nudge(tg_api_relay *r)
{
    uv_async_send(&r->wakeup);
}

/* ---------- relay: on a worker ---------- */

static long relay_call_sync(tg_api_relay *r, const tg_kube_request_opts *opts, char **body, size_t *body_len,
                            char *err, size_t err_len)
{
    relay_call call, *c = &call;

    memset(c, 0, sizeof(*c));
    c->relay = r;
    c->opts = opts;
    pthread_mutex_lock(&r->mu);
    if (r->tail)
        r->tail->next = c;
    else
        r->head = c;
    r->tail = c;
    pthread_mutex_unlock(&r->mu);
    uv_async_send(&r->wakeup);
    pthread_mutex_lock(&r->mu);
    while (!c->done)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    *body = c->body;
    *body_len = c->body_len;
    if (c->status < 0)
        snprintf(err, err_len, "%s", c->err);
    return c->status;
}

/* ---------- tg_api ---------- */

tg_api *tg_api_new_relayed(tg_api_relay *relay)
{
    tg_api *a = calloc(1, sizeof(*a));

    if (a)
        a->relay = relay;
    return a;
}

tg_api *tg_api_new(const tg_kube_config *cfg, char *err, size_t err_len)
{
    tg_api *a = calloc(1, sizeof(*a));

    if (!a) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (uv_loop_init(&a->loop) != 0) {
        snprintf(err, err_len, "uv_loop_init failed");
        free(a);
        return NULL;
    }
    if (!(a->client = tg_kube_client_new(&a->loop, cfg, err, err_len))) {
        uv_loop_close(&a->loop);
        free(a);
        return NULL;
    }
    return a;
}

void tg_api_free(tg_api *a)
{
    if (!a)
        return;
    if (a->client) {
        tg_kube_client_free(a->client);
        uv_run(&a->loop, UV_RUN_DEFAULT);
        uv_loop_close(&a->loop);
    }
    free(a);
}

long tg_api_call(tg_api *a, const char *method, const char *path, tg_kube_content_type ct,
                 json_object *body, json_object **out, char *err, size_t err_len)
{
    tg_kube_request_opts o = {.method = method, .path = path, .content_type = ct};
    char *resp = NULL;
    size_t resp_len = 0;
    long status;

    if (out)
        *out = NULL;
    if (body) {
        o.body = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        /* no "\/": apply bodies are read as YAML, which has no such escape */
        o.body_len = strlen(o.body);
    }
    status = a->relay ? relay_call_sync(a->relay, &o, &resp, &resp_len, err, err_len)
                      : tg_kube_request_sync(a->client, &o, &resp, &resp_len, err, err_len);
    if (status < 0)
        return -1;
    if (status >= 300) {
        /* The API's Status message says what went wrong (never secret data). */
        json_object *st = tg_json_parse(resp, resp_len, NULL, 0);
        const char *msg = st ? tg_json_string(st, "message") : NULL;
        snprintf(err, err_len, "%s %s: HTTP %ld%s%s", method, path, status, msg ? ": " : "", msg ? msg : "");
        json_object_put(st);
    } else if (out && resp_len > 0) {
        *out = tg_json_parse(resp, resp_len, err, err_len);
    }
    free(resp);
    return status;
}

long tg_api_get(tg_api *a, const char *path, json_object **out, char *err, size_t err_len)
{
    long s = tg_api_call(a, "GET", path, TG_KUBE_CT_JSON, NULL, out, err, err_len);

    if (s == 200 && !*out)
        return -1;
    return s;
}

void tg_api_event(tg_api *a, json_object *obj, const char *type, const char *reason, const char *message)
{
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    const char *uid = tg_json_path_string(obj, "metadata", "uid", NULL);
    const char *rv = tg_json_path_string(obj, "metadata", "resourceVersion", NULL);
    const char *kind = tg_json_string(obj, "kind"), *av = tg_json_string(obj, "apiVersion");
    json_object *ev, *meta, *ref, *src;
    char path[1024], now[32], err[256];
    long s;

    if (!name)
        return;
    /* Cluster-scoped objects (CSRs) get their Events in "default", as kubectl looks there. */
    if (!ns)
        ns = "default";
    rc_rfc3339(time(NULL), now, sizeof(now));
    ev = json_object_new_object();
    meta = json_object_new_object();
    json_object_object_add(meta, "generateName", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(ev, "metadata", meta);
    ref = json_object_new_object();
    if (kind)
        json_object_object_add(ref, "kind", json_object_new_string(kind));
    if (av)
        json_object_object_add(ref, "apiVersion", json_object_new_string(av));
    json_object_object_add(ref, "name", json_object_new_string(name));
    if (tg_json_path_string(obj, "metadata", "namespace", NULL))
        json_object_object_add(ref, "namespace", json_object_new_string(ns));
    if (uid)
        json_object_object_add(ref, "uid", json_object_new_string(uid));
    /* Which version of the object the event is about: the CLI reads a Tenant's
     * refusal from its event, and only for the version it is looking at. */
    if (rv)
        json_object_object_add(ref, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(ev, "involvedObject", ref);
    json_object_object_add(ev, "type", json_object_new_string(type));
    json_object_object_add(ev, "reason", json_object_new_string(reason));
    json_object_object_add(ev, "message", json_object_new_string(message));
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "count", json_object_new_int(1));
    src = json_object_new_object();
    json_object_object_add(src, "component", json_object_new_string("tenantgate-signer"));
    json_object_object_add(ev, "source", src);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
    s = tg_api_call(a, "POST", path, TG_KUBE_CT_JSON, ev, NULL, err, sizeof(err));
    if (s != 201)
        tg_log(TG_LOG_WARN, "cannot record an event", TG_LOG_STR("reason", reason), TG_LOG_STR("error", err));
    json_object_put(ev);
}
