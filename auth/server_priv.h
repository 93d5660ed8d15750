/* server_priv.h - tenantgate-auth's server state, shared by server.c (life
 * cycle, accept, limits) and routes.c (the two endpoints). Not for others. */
#ifndef TG_AUTH_SERVER_PRIV_H
#define TG_AUTH_SERVER_PRIV_H

#include <h2o.h>

#include "auth/ratelimit.h"
#include "auth/reason.h"
#include "auth/server.h"
#include "common/certwatch.h"
#include "common/conn_slots.h"
#include "common/metrics.h"
#include "common/peers.h"
#include "common/probe_server.h"
#include "common/tls.h"

#define TG_AUTH_PATH_IDS "/ids"
#define TG_AUTH_PATH_IDENTITY "/identity/certificate"
#define TG_AUTH_PATH_V1_NONCE "/v1/nonce"
#define TG_AUTH_PATH_V1_TENANT "/v1/tenant"

struct tg_auth_server {
    tg_auth_server_config cfg;
    uv_loop_t *loop;
    h2o_globalconf_t conf;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    SSL_CTX *ssl_ctx;
    tg_tls_store tls;
    tg_certwatch watch;
    uv_tcp_t listener;
    uv_signal_t sigterm, sigint;
    uv_timer_t drain;
    uint64_t drain_deadline;
    int draining;
    int port;
    tg_slots slots;                /* --max-connections, evicting idle ones */
    long in_flight;                /* issuances under way */
    tg_peers *peers;
    tg_ratelimit *limits;
    tg_probe_server *probe;
    tg_metrics *metrics;
    tg_metric_family *m_requests, *m_duration, *m_conns_rejected, *m_conns_accepted, *m_conns_evicted, *m_conns, *m_origin_tokens, *m_token,
        *m_disabled, *m_reloads;
};

/* A request of req's connection entered the handler: the connection is not
 * evicted until h2o has disposed of the request (answered, or the client
 * went away) (server.c). */
void tg_auth_conn_request_begin(h2o_req_t *req);

/* Register the handlers on host (routes.c). */
void tg_auth_routes_register(h2o_hostconf_t *host, tg_auth_server *s);

#endif
