/* admission.h - one AdmissionReview, from the request's body to its answer:
 * parse, decide (validate, mutate, or a ResourceSlice), and for a nonce
 * the cache does not have, wait for a live read (server.h) before deciding.
 * Every answer is logged in one line and counted. */
#ifndef TG_WEBHOOK_ADMISSION_H
#define TG_WEBHOOK_ADMISSION_H

#include <stdint.h>

#include <h2o.h>

#include "webhook/handler_api.h"

/* What a path reviews; routes.c registers one route per path with its kind. */
typedef enum tg_admission_kind {
    TG_ADMIT_VALIDATE_TENANT,      /* /validate/tenants */
    TG_ADMIT_MUTATE_TENANT,        /* /mutate/tenants */
    TG_ADMIT_VALIDATE_SLICE,       /* /validate/resourceslices */
} tg_admission_kind;

typedef struct tg_admission_route {
    const char *path;              /* the metric label and the log's path */
    tg_admission_kind kind;
} tg_admission_route;

/* req is a POST of JSON to route's path, within the body limit. Answers now
 * or from the live read's callback; returns 0 (h2o's on_req). */
int tg_admission_handle(tg_server *s, worker *w, h2o_req_t *req, const tg_admission_route *route,
                        uint64_t started_us);

#endif
