/* reply.h - a plain-text or JSON answer. */
#ifndef TG_WEBHOOK_REPLY_H
#define TG_WEBHOOK_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include <h2o.h>

/* With a Content-Length (not chunked: plain keep-alive for HTTP/1.1). */
void tg_send_text(h2o_req_t *req, int status, const char *reason, const char *content_type, const char *body,
                  size_t len);

#endif
