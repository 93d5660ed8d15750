/* server.h - tenantgate-auth's HTTPS side: one libuv loop, libh2o HTTP/1.1
 * over TLS 1.2+ (common/tls.h, reloaded on change by common/certwatch.h),
 * GET /ids and POST /identity/certificate (routes.c), a plain-HTTP port for
 * /healthz /readyz /metrics, and the limits of docs/auth.md ("Limits"):
 * open connections overall and per source address, the TLS handshake and a
 * request's arrival bounded by the request timeout, 64 KiB bodies, and a
 * per-source request budget with failure back-off (ratelimit.h). */
#ifndef TG_AUTH_SERVER_H
#define TG_AUTH_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "auth/issue.h"
#include "auth/ratelimit.h"
#include "auth/token_secret.h"
#include "auth/v1_flow.h"
#include "kube/client.h"

typedef struct tg_auth_server_config {
    const char *listen_host;
    int listen_port;               /* 0: any (tests) */
    const char *metrics_host;
    int metrics_port;              /* -1: none */
    const char *cert_path, *key_path;
    uint64_t cert_check_ms;
    uint64_t request_timeout_ms;   /* handshake, and a request's arrival */
    uint64_t shutdown_grace_ms;
    long max_connections;
    long max_connections_per_peer;
    tg_ratelimit_config limits;
    int any_cluster_id;            /* sign any DNS-label cluster id, not only UUIDs */
    int authentication_disabled;   /* --authentication=off: any token, logged per request */
    const char *cluster_id, *cluster_name;
    const char *api_server_url;    /* what consumers are told to reach */
    const char *api_server_ca;     /* PEM, or NULL */
    size_t api_server_ca_len;
    tg_auth_issue_config issue;
    tg_auth_v1_config v1;          /* POST /v1/nonce, /v1/tenant (bootstrap tokens) */
    tg_kube_client *kube;
    tg_auth_token_secret *token;   /* NULL only with authentication disabled */
} tg_auth_server_config;

typedef struct tg_auth_server tg_auth_server;

/* Certificate, sockets, metrics. NULL with err. */
tg_auth_server *tg_auth_server_new(uv_loop_t *loop, const tg_auth_server_config *cfg, char *err, size_t err_len);

/* Accept connections; SIGTERM/SIGINT stop accepting, let in-flight
 * issuances finish (within the grace period) and stop the loop. */
int tg_auth_server_start(tg_auth_server *s, char *err, size_t err_len);

int tg_auth_server_port(const tg_auth_server *s);

/* After start returned: close the server's handles. Then the caller runs
 * the loop until its handles are closed and calls tg_auth_server_free. -1
 * (and nothing closed) while connections or issuances are left (the grace
 * period ran out): then just exit. */
int tg_auth_server_close(tg_auth_server *s);
void tg_auth_server_free(tg_auth_server *s);

#endif
