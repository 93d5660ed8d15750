/* reply.c - see reply.h. */
#include "reply.h"

#include <string.h>

void tg_send_text(h2o_req_t *req, int status, const char *reason, const char *content_type,
                      const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;     /* not chunked: plain keep-alive for HTTP/1.1 */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type,
                   strlen(content_type));
    h2o_send_inline(req, body, len);
}

void tg_count_request(tg_server *s, const char *path, const char *verdict, const char *reason,
                          uint64_t started_us)
{
    tg_counter_add(tg_metric_series_get(s->m_requests, (const char *[]){path, verdict, reason}), 1);
    if (started_us)
        tg_histogram_observe(tg_metric_series_get(s->m_duration, (const char *[]){path}),
                             (double)(now_us() - started_us) / 1e6);
}
