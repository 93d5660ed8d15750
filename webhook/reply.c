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
