/* probe_server.h - the plain-HTTP port every tenantgate service exposes for
 * the kubelet and Prometheus: GET /healthz (200 while the loop runs), /readyz
 * (200, or 503 with the reason the service gives), /metrics (the registry's
 * text exposition). libh2o on the caller's libuv loop; one thread.
 *
 * Shutdown: tg_probe_server_close() stops listening and asks h2o to close the
 * connections; the loop ends once scrapers' keep-alive connections close, so
 * callers that must not wait (a webhook past its grace period) may just exit.
 * tg_probe_server_free() after the loop has no probe connection left. */
#ifndef TG_COMMON_PROBE_SERVER_H
#define TG_COMMON_PROBE_SERVER_H

#include <stddef.h>
#include <uv.h>

#include "common/metrics.h"

typedef struct tg_probe_server tg_probe_server;

typedef struct tg_probe_config {
    const char *host;                          /* "0.0.0.0", "127.0.0.1", "::" */
    int port;                                  /* 0: any (tests) */
    tg_metrics *metrics;                       /* rendered on /metrics; may be NULL */
    /* Why not ready, or NULL when ready (called on the loop thread). */
    const char *(*not_ready)(void *data);
    /* Called before /metrics renders: refresh gauges. May be NULL. */
    void (*before_metrics)(void *data);
    void *data;
} tg_probe_config;

/* Bind and listen. NULL with err. */
tg_probe_server *tg_probe_server_new(uv_loop_t *loop, const tg_probe_config *cfg, char *err, size_t err_len);

int tg_probe_server_port(const tg_probe_server *p);

/* Open connections (loop thread). */
int tg_probe_server_connections(const tg_probe_server *p);

/* Stop listening; ask open connections to close. */
void tg_probe_server_close(tg_probe_server *p);

/* Release (after close, once the loop ran the closes). Returns -1 and frees
 * nothing while connections are still open. */
int tg_probe_server_free(tg_probe_server *p);

#endif
