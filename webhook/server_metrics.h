/* server_metrics.h - the webhook's own metrics (registered once) and what
 * the metrics port asks of the server: readiness and the gauges refreshed
 * before each scrape (common/probe_server.h). */
#ifndef TG_WEBHOOK_SERVER_METRICS_H
#define TG_WEBHOOK_SERVER_METRICS_H

#include "webhook/server_priv.h"

void tg_server_metrics_register(tg_server *s);

/* Summed over the workers: open connections, or (in_flight) requests
 * inside our handlers. Any thread. */
long tg_server_total(tg_server *s, int in_flight);

/* The probe port's callbacks, on the main loop; data is the tg_server. Why
 * not ready, or NULL when ready. */
const char *tg_server_probe_not_ready(void *data);
void tg_server_probe_before_metrics(void *data);

#endif
