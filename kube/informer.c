/* informer.c - list, watch, resume, relist: the network side of a cache. */
#include "kube/informer.h"
#include "kube/backoff.h"
#include "kube/json.h"
#include "kube/watch.h"
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum inf_state { INF_IDLE, INF_LISTING, INF_WATCHING, INF_WAITING, INF_STOPPED } inf_state;

/* What the watch stream told us to do next. */
typedef enum next_step { NEXT_REWATCH, NEXT_RELIST, NEXT_BACKOFF } next_step;

struct tg_informer {
    tg_kube_client *client;
    tg_cache *cache;
    tg_cache_handlers handlers;
    char *path, *label_selector, *field_selector, *resume_rv;
    long page_size, watch_timeout_s;
    long page_limit;               /* this list's limit: page_size, less after a page too big */
    tg_backoff backoff;
    uv_timer_t timer;              /* backoff delay before the next list or watch */
    inf_state state;
    int relist_after_wait;         /* what the timer starts: a list or a watch */
    tg_kube_request *req;          /* the list page or watch in flight */
    char *continue_token;
    tg_watch_parser parser;
    next_step watch_next;          /* set by the event callback when it stops the stream */
    uint64_t watch_started_ms;
    tg_informer_stats stats;
};

static void start_list(tg_informer *inf);
static void start_watch(tg_informer *inf);

static void note_error(tg_informer *inf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note_error(tg_informer *inf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inf->stats.last_error, sizeof(inf->stats.last_error), fmt, ap);
    va_end(ap);
}

static void on_timer(uv_timer_t *t)
{
    tg_informer *inf = t->data;
    if (inf->state != INF_WAITING)
        return;
    if (inf->relist_after_wait)
        start_list(inf);
    else
        start_watch(inf);
}

/* Every failure is logged, with what comes next: otherwise a process whose
 * caches never sync (an apiserver certificate refused, RBAC missing) says
 * only "caches not synced". The backoff bounds the rate: one line per retry,
 * at most one every 30 s once it is capped. last_error is never secret. */
static void wait_then(tg_informer *inf, int relist)
{
    uint64_t delay_ms = tg_backoff_next(&inf->backoff);
    inf->stats.failures++;
    inf->state = INF_WAITING;
    inf->relist_after_wait = relist;
    tg_log(TG_LOG_WARN, "informer failed", TG_LOG_STR("resource", inf->path),
           TG_LOG_STR("error", inf->stats.last_error), TG_LOG_STR("next", relist ? "list" : "watch"),
           TG_LOG_INT("retry_ms", delay_ms), TG_LOG_INT("failures", inf->stats.failures));
    uv_timer_start(&inf->timer, on_timer, delay_ms, 0);
}

/* Append "&name=escaped(value)" to a query being built. */
static int query_add(char *q, size_t cap, const char *name, const char *value)
{
    if (value == NULL || *value == '\0')
        return 0;
    char *e = tg_kube_escape(value);
    if (e == NULL)
        return -1;
    size_t used = strlen(q);
    int n = snprintf(q + used, cap - used, "%s%s=%s", used ? "&" : "", name, e);
    free(e);
    return n >= 0 && (size_t)n < cap - used ? 0 : -1;
}

/* path?query, or NULL when it does not fit. */
static char *make_url(const tg_informer *inf, const char *query)
{
    size_t n = strlen(inf->path) + strlen(query) + 2;
    char *u = malloc(n);
    if (u != NULL)
        snprintf(u, n, "%s%s%s", inf->path, strchr(inf->path, '?') ? "&" : "?", query);
    return u;
}

/* --- list --- */

static void list_reset(tg_informer *inf)
{
    tg_cache_discard(inf->cache);
    free(inf->continue_token);
    inf->continue_token = NULL;
    inf->page_limit = inf->page_size;
}

/* A page is buffered and parsed whole, and whoever may create the objects
 * listed chooses their size (a Secret can hold 1 MiB): a page over the
 * parser's limit is asked again, same continue token, for fewer objects,
 * down to one. Otherwise a few big objects would keep the cache from ever
 * syncing. */
static int page_too_big(tg_informer *inf, const tg_kube_response *resp)
{
    if (resp->error == NULL || strcmp(resp->error, TG_KUBE_ERR_BODY_TOO_LARGE) != 0 || inf->page_limit <= 1)
        return 0;
    inf->page_limit = inf->page_limit > 4 ? inf->page_limit / 4 : 1;
    inf->stats.smaller_pages++;
    tg_log(TG_LOG_INFO, "informer list page too large, asking for fewer objects per page",
           TG_LOG_STR("resource", inf->path), TG_LOG_INT("max_bytes", (int64_t)TG_DOC_MAX_BYTES),
           TG_LOG_INT("limit", inf->page_limit));
    return 1;
}

static void on_list_page(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    tg_informer *inf = data;
    inf->req = NULL;
    if (resp->error == NULL && resp->status == 410 && inf->continue_token != NULL) {
        /* The continue token expired between pages: start the list over. */
        note_error(inf, "list %s: continue token expired (HTTP 410)", inf->path);
        inf->stats.gone++;
        list_reset(inf);
        start_list(inf);
        return;
    }
    if (page_too_big(inf, resp)) {
        start_list(inf);
        return;
    }
    if (resp->error != NULL || resp->status != 200) {
        if (resp->error != NULL)
            note_error(inf, "list %s: %s", inf->path, resp->error);
        else
            note_error(inf, "list %s: HTTP %ld", inf->path, resp->status);
        list_reset(inf);
        wait_then(inf, 1);
        return;
    }
    char jerr[128];
    json_object *list = tg_json_parse(resp->body, resp->body_len, jerr, sizeof(jerr));
    json_object *items = NULL;
    if (list == NULL || !json_object_object_get_ex(list, "items", &items) ||
        !(json_object_is_type(items, json_type_array) || json_object_is_type(items, json_type_null))) {
        note_error(inf, "list %s: not a List: %s", inf->path, list ? "no items" : jerr);
        json_object_put(list);
        list_reset(inf);
        wait_then(inf, 1);
        return;
    }
    inf->stats.pages++;
    char err[200];
    if (tg_cache_stage(inf->cache, items, err, sizeof(err)) != 0) {
        note_error(inf, "list %s: %s", inf->path, err);
        json_object_put(list);
        list_reset(inf);
        wait_then(inf, 1);
        return;
    }

    const char *cont = tg_json_path_string(list, "metadata", "continue", NULL);
    const char *rv = tg_json_path_string(list, "metadata", "resourceVersion", NULL);
    free(inf->continue_token);
    inf->continue_token = cont && *cont ? strdup(cont) : NULL;
    if (inf->continue_token != NULL) {
        json_object_put(list);
        start_list(inf);
        return;
    }
    /* The page's tree goes before the objects are stored (cache.h, paged lists). */
    char *rv_copy = rv ? strdup(rv) : NULL;
    json_object_put(list);
    int rc = -1;
    if (rv && !rv_copy)
        snprintf(err, sizeof(err), "out of memory");
    else
        rc = tg_cache_commit(inf->cache, rv_copy, &inf->handlers, err, sizeof(err));
    free(rv_copy);
    list_reset(inf);
    if (rc != 0) {
        note_error(inf, "list %s: %s", inf->path, err);
        wait_then(inf, 1);
        return;
    }
    inf->stats.lists++;
    tg_backoff_reset(&inf->backoff);
    start_watch(inf);
}

static void start_list(tg_informer *inf)
{
    char q[2048] = "", limit[32], err[160];
    snprintf(limit, sizeof(limit), "%ld", inf->page_limit);
    char *url = NULL;
    if (query_add(q, sizeof(q), "labelSelector", inf->label_selector) != 0 ||
        query_add(q, sizeof(q), "fieldSelector", inf->field_selector) != 0 ||
        query_add(q, sizeof(q), "limit", limit) != 0 ||
        (inf->continue_token && query_add(q, sizeof(q), "continue", inf->continue_token) != 0) ||
        (url = make_url(inf, q)) == NULL) {
        note_error(inf, "list %s: query too long", inf->path);
        list_reset(inf);
        wait_then(inf, 1);
        return;
    }
    /* No more than the parser takes: a bigger page is asked again, smaller. */
    tg_kube_request_opts o = {.method = "GET", .path = url, .max_body = TG_DOC_MAX_BYTES};
    inf->state = INF_LISTING;
    inf->req = tg_kube_request_start(inf->client, &o, on_list_page, inf, err, sizeof(err));
    free(url);
    if (inf->req == NULL) {
        note_error(inf, "list %s: %s", inf->path, err);
        list_reset(inf);
        wait_then(inf, 1);
    }
}

/* --- watch --- */

static int on_event(const tg_watch_event *ev, void *data)
{
    tg_informer *inf = data;
    char err[200];
    inf->stats.events++;
    int rc = tg_cache_apply(inf->cache, ev, &inf->handlers, err, sizeof(err));
    if (rc == TG_CACHE_OK)
        return 0;
    note_error(inf, "watch %s: %s", inf->path, err);
    inf->watch_next = rc == TG_CACHE_GONE ? NEXT_RELIST : NEXT_BACKOFF;
    return 1;   /* stop the stream */
}

static int on_watch_data(tg_kube_request *req, const char *bytes, size_t n, void *data)
{
    tg_informer *inf = data;
    int rc = tg_watch_parser_feed(&inf->parser, bytes, n);
    if (rc == -1) {
        note_error(inf, "watch %s: %s", inf->path, inf->parser.err);
        inf->watch_next = NEXT_BACKOFF;
    }
    return rc;
}

static void on_watch_done(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    tg_informer *inf = data;
    inf->req = NULL;
    next_step next = inf->watch_next;
    if (next == NEXT_REWATCH) {
        if (resp->status == 410) {
            note_error(inf, "watch %s: HTTP 410 Gone", inf->path);
            next = NEXT_RELIST;
        } else if (resp->error != NULL) {
            note_error(inf, "watch %s: %s", inf->path, resp->error);
            next = NEXT_BACKOFF;
        } else if (resp->status != 200) {
            note_error(inf, "watch %s: HTTP %ld", inf->path, resp->status);
            next = NEXT_BACKOFF;
        } else if (tg_watch_parser_finish(&inf->parser) != 0) {
            /* finish() may have applied a last event that asked for a relist. */
            if (inf->watch_next == NEXT_REWATCH) {
                note_error(inf, "watch %s: %s", inf->path, inf->parser.err);
                next = NEXT_BACKOFF;
            } else {
                next = inf->watch_next;
            }
        } else if (uv_now(tg_kube_client_loop(inf->client)) - inf->watch_started_ms < 1000) {
            /* A server that ends every watch at once must not make us spin. */
            note_error(inf, "watch %s: the server ended the watch within 1 s", inf->path);
            next = NEXT_BACKOFF;
        }
    }
    tg_watch_parser_reset(&inf->parser);
    switch (next) {
    case NEXT_RELIST:
        inf->stats.gone++;
        start_list(inf);
        break;
    case NEXT_BACKOFF:
        wait_then(inf, 0);
        break;
    case NEXT_REWATCH:
        /* The server closed the watch after timeoutSeconds: resume. */
        tg_backoff_reset(&inf->backoff);
        start_watch(inf);
        break;
    }
}

static void start_watch(tg_informer *inf)
{
    char q[2048] = "", timeout[32], err[160];
    long t = inf->watch_timeout_s;
    if (t <= 0)
        t = 300 + (long)(uv_hrtime() % 300);   /* spread the reconnects, as client-go does */
    snprintf(timeout, sizeof(timeout), "%ld", t);
    char *url = NULL;
    if (query_add(q, sizeof(q), "watch", "1") != 0 ||
        query_add(q, sizeof(q), "allowWatchBookmarks", "true") != 0 ||
        query_add(q, sizeof(q), "resourceVersion", tg_cache_resource_version(inf->cache)) != 0 ||
        query_add(q, sizeof(q), "timeoutSeconds", timeout) != 0 ||
        query_add(q, sizeof(q), "labelSelector", inf->label_selector) != 0 ||
        query_add(q, sizeof(q), "fieldSelector", inf->field_selector) != 0 ||
        (url = make_url(inf, q)) == NULL) {
        note_error(inf, "watch %s: query too long", inf->path);
        wait_then(inf, 1);
        return;
    }
    /* Silence longer than three bookmark periods means a dead connection;
     * the server-side timeout ends healthy watches well before the client would. */
    tg_kube_request_opts o = {.method = "GET", .path = url, .timeout_ms = -1, .low_speed_time_s = 180,
                              .on_data = on_watch_data};
    inf->state = INF_WATCHING;
    inf->watch_next = NEXT_REWATCH;
    inf->watch_started_ms = uv_now(tg_kube_client_loop(inf->client));
    tg_watch_parser_reset(&inf->parser);
    inf->req = tg_kube_request_start(inf->client, &o, on_watch_done, inf, err, sizeof(err));
    free(url);
    if (inf->req == NULL) {
        note_error(inf, "watch %s: %s", inf->path, err);
        wait_then(inf, 0);
        return;
    }
    inf->stats.watches++;
}

/* --- lifecycle --- */

tg_informer *tg_informer_new(tg_kube_client *client, const tg_informer_opts *o, char *err, size_t err_len)
{
    if (o->path == NULL || o->path[0] != '/') {
        snprintf(err, err_len, "informer path must start with '/'");
        return NULL;
    }
    tg_informer *inf = calloc(1, sizeof(*inf));
    if (inf == NULL)
        goto oom;
    inf->client = client;
    inf->handlers = o->handlers;
    inf->page_size = o->page_size > 0 ? o->page_size : 500;
    inf->page_limit = inf->page_size;
    inf->watch_timeout_s = o->watch_timeout_s;
    inf->cache = tg_cache_new(o->index_label);
    inf->path = strdup(o->path);
    if (inf->cache == NULL || inf->path == NULL ||
        (o->keep_fields != NULL && tg_cache_keep_fields(inf->cache, o->keep_fields) != 0) ||
        (o->keep_metadata != NULL && tg_cache_keep_metadata(inf->cache, o->keep_metadata) != 0) ||
        (o->shrink != NULL && tg_cache_shrink_field(inf->cache, o->shrink_path, o->shrink) != 0) ||
        (o->compact && tg_cache_set_compact(inf->cache) != 0) ||
        (o->index_metadata && tg_cache_index_metadata(inf->cache, o->index_metadata) != 0) ||
        (o->label_selector && (inf->label_selector = strdup(o->label_selector)) == NULL) ||
        (o->field_selector && (inf->field_selector = strdup(o->field_selector)) == NULL) ||
        (o->resume_rv && (inf->resume_rv = strdup(o->resume_rv)) == NULL))
        goto oom;
    tg_backoff_init(&inf->backoff, o->backoff_base_ms ? o->backoff_base_ms : 500,
                    o->backoff_cap_ms ? o->backoff_cap_ms : 30000, uv_hrtime() ^ (uintptr_t)inf);
    tg_watch_parser_init(&inf->parser, 0, on_event, inf);
    uv_timer_init(tg_kube_client_loop(client), &inf->timer);
    inf->timer.data = inf;
    return inf;
oom:
    if (inf) {
        tg_cache_free(inf->cache);
        free(inf->path);
        free(inf->label_selector);
        free(inf->field_selector);
        free(inf->resume_rv);
        free(inf);
    }
    snprintf(err, err_len, "out of memory");
    return NULL;
}

int tg_informer_start(tg_informer *inf, char *err, size_t err_len)
{
    if (inf->state != INF_IDLE) {
        snprintf(err, err_len, "informer already started");
        return -1;
    }
    if (inf->resume_rv != NULL && *inf->resume_rv != '\0') {
        /* Watch from there first; a 410 turns this into an ordinary list. */
        if (tg_cache_set_resource_version(inf->cache, inf->resume_rv) != 0) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        inf->state = INF_WATCHING;
        start_watch(inf);
        return 0;
    }
    start_list(inf);
    return 0;
}

static void on_timer_close(uv_handle_t *h)
{
    tg_informer *inf = h->data;
    tg_cache_free(inf->cache);
    free(inf->path);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->resume_rv);
    free(inf);
}

void tg_informer_free(tg_informer *inf)
{
    if (inf == NULL || inf->state == INF_STOPPED)
        return;
    inf->state = INF_STOPPED;
    tg_kube_request_cancel(inf->req);
    inf->req = NULL;
    list_reset(inf);
    tg_watch_parser_free(&inf->parser);
    uv_timer_stop(&inf->timer);
    uv_close((uv_handle_t *)&inf->timer, on_timer_close);
}

tg_cache *tg_informer_cache(tg_informer *inf)
{
    return inf->cache;
}

int tg_informer_synced(tg_informer *inf)
{
    return tg_cache_synced(inf->cache);
}

size_t tg_informer_count(tg_informer *inf)
{
    return tg_cache_count(inf->cache);
}

const tg_informer_stats *tg_informer_stats_get(tg_informer *inf)
{
    return &inf->stats;
}
