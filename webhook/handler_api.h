/* handler_api.h - what the server core gives the HTTPS handlers (routes.c,
 * admission.c): the worker a request runs on, the server's configuration,
 * and the request counter. The handlers see nothing else of the core, and
 * the core does not include the handlers (main.c registers them:
 * tg_server_config.register_routes); server_priv.h is the core's own. */
#ifndef TG_WEBHOOK_HANDLER_API_H
#define TG_WEBHOOK_HANDLER_API_H

#include <stdint.h>

#include <h2o.h>
#include <uv.h>

#include "webhook/log_budget.h"
#include "webhook/server.h"

typedef struct worker worker;

/* The worker whose loop runs req. */
worker *tg_worker_of(h2o_req_t *req);

/* Its loop and index (for a live read on that loop). */
uv_loop_t *tg_worker_loop(worker *w);
int tg_worker_index(const worker *w);

/* Its budget of log lines for reviews that do not parse. */
tg_log_budget *tg_worker_malformed_log(worker *w);

/* An admission starts on w, and ends: shutdown waits for the ones under way. */
void tg_worker_admission_begin(worker *w);
void tg_worker_admission_end(worker *w);

const tg_server_config *tg_server_cfg(const tg_server *s);

/* Microseconds of a monotonic clock. */
uint64_t tg_now_us(void);

/* Count a request in tenantgate_webhook_requests_total: path is the route's
 * or "other"; started_us 0: no duration observed. */
void tg_count_request(tg_server *s, const char *path, const char *verdict, const char *reason,
                      uint64_t started_us);

#endif
