/* handler_api.c - see handler_api.h: the core's side, over server_priv.h. */
#include "webhook/handler_api.h"

#include "webhook/server_priv.h"

worker *tg_worker_of(h2o_req_t *req)
{
    return H2O_STRUCT_FROM_MEMBER(worker, ctx, req->conn->ctx);
}

uv_loop_t *tg_worker_loop(worker *w)
{
    return &w->loop;
}

int tg_worker_index(const worker *w)
{
    return w->index;
}

tg_log_budget *tg_worker_malformed_log(worker *w)
{
    return &w->malformed_log;
}

void tg_worker_admission_begin(worker *w)
{
    atomic_fetch_add(&w->in_flight, 1);
    atomic_fetch_add_explicit(&w->served, 1, memory_order_relaxed);
}

void tg_worker_admission_end(worker *w)
{
    atomic_fetch_sub(&w->in_flight, 1);
}

const tg_server_config *tg_server_cfg(const tg_server *s)
{
    return &s->cfg;
}

uint64_t tg_now_us(void)
{
    return now_us();
}

void tg_count_request(tg_server *s, const char *path, const char *verdict, const char *reason,
                      uint64_t started_us)
{
    tg_counter_add(tg_metric_series_get(s->m_requests, (const char *[]){path, verdict, reason}), 1);
    if (started_us)
        tg_histogram_observe(tg_metric_series_get(s->m_duration, (const char *[]){path}),
                             (double)(now_us() - started_us) / 1e6);
}
