/* admission.h - one AdmissionReview, from the request's body to its answer:
 * parse, decide (validate, mutate, or a ResourceSlice), and for a nonce
 * the cache does not have, wait for a live read (server.h) before deciding.
 * Every answer is logged in one line and counted. */
#ifndef TG_WEBHOOK_ADMISSION_H
#define TG_WEBHOOK_ADMISSION_H

#include <stdint.h>

#include <h2o.h>

#include "webhook/server_priv.h"

/* req is a POST of JSON to path (PATH_*), within the body limit. Answers
 * now or from the live read's callback; returns 0 (h2o's on_req). */
int tg_admission_handle(tg_server *s, worker *w, h2o_req_t *req, const char *path, uint64_t started_us);

#endif
