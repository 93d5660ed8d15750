/* workers.c - see workers.h. */
#include "workers.h"

#include <stdio.h>

#include "common/log.h"

/* h2o_context_request_shutdown() leaves the HTTP/2 GOAWAY re-send timer
 * linked, and h2o_context_dispose() insists on empty timeouts. */
static void context_dispose(h2o_context_t *ctx)
{
    if (h2o_timeout_is_linked(&ctx->http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&ctx->http2._graceful_shutdown_timeout);
    h2o_context_dispose(ctx);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_wake(uv_async_t *a)
{
    worker *w = a->data;
    int phase = atomic_load(&w->phase);

    tg_conns_pay_evictions(&w->conns);
    if (phase >= PHASE_DRAIN && !uv_is_closing((uv_handle_t *)&w->listener)) {
        uv_close((uv_handle_t *)&w->listener, NULL);
        /* HTTP/2: GOAWAY. HTTP/1.1: nothing in h2o 2.2, hence the drain
         * closing idle connections itself. */
        h2o_context_request_shutdown(&w->ctx);
        tg_conns_drain(&w->conns);
    }
    if (phase == PHASE_STOP) {
        const tg_live_nonce *live = w->server->cfg.live;
        if (live && live->worker_stop)
            live->worker_stop(live->self, w->index);
        uv_stop(&w->loop);
    }
}

static void on_log_flush(uv_prepare_t *p)
{
    tg_log_flush();
}

void *tg_worker_main(void *arg)
{
    worker *w = arg;

    /* One write(2) per loop turn instead of one per admission line. */
    tg_log_batch_begin();
    uv_run(&w->loop, UV_RUN_DEFAULT);
    tg_log_batch_end();
    return NULL;
}

/* tg_conns_config.evict_elsewhere: the first other worker with a connection
 * to spare evicts it on its own loop. */
static int evict_in_other_worker(void *data)
{
    worker *self = data;
    tg_server *s = self->server;

    for (int i = 0; i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        if (w != self && tg_conns_promise_eviction(&w->conns)) {
            uv_async_send(&w->wake);
            return 1;
        }
    }
    return 0;
}

static void worker_conns_init(tg_server *s, worker *w)
{
    tg_conns_config cc = {
        .accept_ctx = &w->accept_ctx,
        .open_total = &s->open_conns,
        .max_open = s->cfg.max_connections,
        .peers = s->peers,
        .enable_h2 = s->cfg.enable_h2,
        .timeout_ms = s->cfg.request_timeout_ms,
        .rejected = tg_metric_series_get(s->m_conns_rejected, NULL),
        .rejected_peer = tg_metric_series_get(s->m_conns_rejected_peer, NULL),
        .closed_no_request = tg_metric_series_get(s->m_conns_closed, (const char *[]){"no_request"}),
        .closed_evicted = tg_metric_series_get(s->m_conns_closed, (const char *[]){"evicted"}),
        .closed_h2_refused = tg_metric_series_get(s->m_conns_closed, (const char *[]){"http2_refused"}),
        .closed_stalled = tg_metric_series_get(s->m_conns_closed, (const char *[]){"stalled_stream"}),
        .closed_slow = tg_metric_series_get(s->m_conns_closed, (const char *[]){"slow_request"}),
        .closed_resets = tg_metric_series_get(s->m_conns_closed, (const char *[]){"stream_resets"}),
        .closed_dead = tg_metric_series_get(s->m_conns_closed, (const char *[]){"dead_peer"}),
        .resets = tg_metric_series_get(s->m_h2_resets, NULL),
        .evict_elsewhere = evict_in_other_worker,
        .evict_data = w,
    };
    tg_conns_init(&w->conns, &w->loop, &cc);
}

int tg_worker_init(tg_server *s, worker *w, int index, int fd, char *err, size_t err_len)
{
    int rc;

    w->server = s;
    w->index = index;
    uv_loop_init(&w->loop);
    w->loop.data = w;
    h2o_context_init(&w->ctx, &w->loop, &s->conf);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = s->conf.hosts;
    w->accept_ctx.ssl_ctx = s->ssl_ctx;
    tg_log_budget_init(&w->malformed_log, 1000, MALFORMED_LOG_PER_S);
    worker_conns_init(s, w);
    uv_tcp_init(&w->loop, &w->listener);
    w->listener.data = &w->conns;
    if ((rc = uv_tcp_open(&w->listener, fd)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&w->listener, 1024, tg_conns_on_accept)) != 0) {
        snprintf(err, err_len, "worker %d cannot listen: %s", index, uv_strerror(rc));
        return -1;
    }
    uv_async_init(&w->loop, &w->wake, on_wake);
    w->wake.data = w;
    uv_prepare_init(&w->loop, &w->log_flush);
    uv_prepare_start(&w->log_flush, on_log_flush);
    uv_unref((uv_handle_t *)&w->log_flush);
    return 0;
}

void tg_workers_set_phase(tg_server *s, int phase)
{
    for (int i = 0; i < s->nworkers; i++) {
        atomic_store(&s->workers[i].phase, phase);
        uv_async_send(&s->workers[i].wake);
    }
}

/* h2o closes its own timers in dispose; the rest of a worker loop is ours.
 * The watch is closed first: dispose frees the context's timestamp and then
 * runs the loop once, where a due watch tick would run against the disposed
 * context (it read the freed timestamp while it did so on every tick: a
 * double free). */
void tg_worker_dispose(worker *w)
{
    tg_conns_stop(&w->conns);
    context_dispose(&w->ctx);
    uv_walk(&w->loop, close_walk, NULL);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    uv_loop_close(&w->loop);
}
