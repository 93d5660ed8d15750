/* server.h - tenantgate-webhook's HTTP side: N worker threads, each with its
 * own libuv loop and h2o context, serving HTTPS on one port; and a plain-HTTP
 * port for /healthz, /readyz and /metrics on the main loop.
 *
 * Listening: one SO_REUSEPORT socket per worker. The kernel spreads new
 * connections evenly over the workers, which matters because kube-apiserver
 * keeps few long-lived keep-alive connections: with one shared socket the
 * first thread to wake takes most of them. */
#ifndef TG_WEBHOOK_SERVER_H
#define TG_WEBHOOK_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "webhook/lookup.h"
#include "webhook/slice_decide.h"

/* The body limit (PROTOCOL.md 9): 413 above it. */
#define TG_WEBHOOK_MAX_BODY ((size_t)3 << 20)

/* Asynchronous live read of the nonce Secret ns/liqo-nonce for cluster_id,
 * on the calling worker's loop: called when the cache has none, before
 * denying NonceNotFound. done() must be called exactly once, on that loop and
 * never from inside fetch, with the nonce text or NULL when none was found;
 * status < 0 when the API could not be asked, else the tg_nonce_state found
 * (lookup.h). fetch returns 0 when the review waits for a read,
 * TG_LIVE_FETCH_FAILED when no read could start and TG_LIVE_FETCH_BUSY when
 * too many namespaces are being read (done is then not called). */
#define TG_LIVE_FETCH_FAILED (-1)
#define TG_LIVE_FETCH_BUSY (-2)
typedef void (*tg_live_nonce_done)(void *cbdata, const char *nonce, size_t len, int status);

/* Counts since start, summed over the workers. */
typedef struct tg_live_nonce_stats {
    unsigned long reads;           /* live reads sent to the API server */
    unsigned long resumed;         /* of those, on a resumed TLS session (answered or not) */
    unsigned long started;         /* reviews whose arrival started a read */
    unsigned long queued;          /* reviews that waited for the next read of their namespace */
    unsigned long refused;         /* reviews refused: TG_LIVE_FETCH_BUSY */
} tg_live_nonce_stats;

typedef struct tg_live_nonce {
    int (*fetch)(void *self, uv_loop_t *loop, int worker, const char *ns, const char *cluster_id,
                 tg_live_nonce_done done, void *cbdata);
    /* On the worker's thread when it stops: release what fetch created on
     * that loop (its handles must be closing when this returns). */
    void (*worker_stop)(void *self, int worker);
    /* Any thread; may be NULL. */
    void (*stats)(void *self, tg_live_nonce_stats *out);
    void *self;
} tg_live_nonce;

typedef struct tg_server tg_server;
struct st_h2o_hostconf_t;

typedef struct tg_server_config {
    /* The HTTPS port's handlers, registered on the host by the code that
     * builds the server (main.c: routes.h), so the server core and the
     * handlers do not include each other. */
    void (*register_routes)(struct st_h2o_hostconf_t *host, tg_server *s);
    const char *listen_host;       /* "0.0.0.0", "::", "127.0.0.1" */
    int listen_port;               /* 0: any (tests) */
    const char *metrics_host;
    int metrics_port;              /* -1: no metrics listener */
    int threads;                   /* >= 1 */
    const char *cert_path;
    const char *key_path;
    uint64_t cert_check_ms;        /* periodic check of the cert files */
    uint64_t shutdown_grace_ms;
    uint64_t request_timeout_ms;   /* first request (handshake included), request arrival, stalled HTTP/2 stream */
    uint64_t idle_timeout_ms;      /* a kept-alive connection waiting for its next request */
    long max_connections;          /* open HTTPS connections, all workers */
    long max_connections_per_peer; /* of them, from one source address; 0: no cap */
    int allow_no_handshake;
    int enable_h2;
    tg_slice_opts slice;           /* this cluster's id and its trusted local-slice writers */
    const tg_lookup *lookup;       /* read from any worker */
    const tg_live_nonce *live;     /* may be NULL: no live read */
} tg_server_config;

/* Load the certificate, bind every socket. NULL with err when any fails. */
tg_server *tg_server_new(uv_loop_t *main_loop, const tg_server_config *cfg, char *err, size_t err_len);

/* Start the workers and the main-loop parts (metrics port, cert watch,
 * SIGTERM/SIGINT). Then run main_loop; it returns once the server has shut
 * down (in-flight requests done, or the grace period over). */
int tg_server_start(tg_server *s, char *err, size_t err_len);

/* Start the shutdown as SIGTERM does (readyz 503, stop accepting, finish,
 * close idle connections, exit within the grace period). Main loop only. */
void tg_server_shutdown(tg_server *s);

/* Join the workers and free everything (after main_loop returned). Returns
 * -1 when connections were still open (grace period over, or a metrics
 * scraper's keep-alive): then nothing on the main loop was released and the
 * caller should just exit. */
int tg_server_free(tg_server *s);

/* Ports actually bound (for listen_port 0). */
int tg_server_port(const tg_server *s);
int tg_server_metrics_port(const tg_server *s);

#endif
