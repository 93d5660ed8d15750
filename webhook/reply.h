/* reply.h - a plain-text or JSON answer, and the request counted in
 * tenantgate_webhook_requests_total (and its duration). */
#ifndef TG_WEBHOOK_REPLY_H
#define TG_WEBHOOK_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include <h2o.h>

#include "webhook/server_priv.h"

/* With a Content-Length (not chunked: plain keep-alive for HTTP/1.1). */
void tg_send_text(h2o_req_t *req, int status, const char *reason, const char *content_type, const char *body,
                  size_t len);

/* path is one of PATH_* or "other"; started_us 0: no duration observed. */
void tg_count_request(tg_server *s, const char *path, const char *verdict, const char *reason,
                      uint64_t started_us);

#endif
