/* client.h - asynchronous Kubernetes API requests on a libuv loop.
 *
 * Two implementations, one per library (kube/client.cmake):
 *  - client_curl.c (tg_kube): a libcurl multi handle driven by the loop
 *    (CURLMOPT_SOCKETFUNCTION -> uv_poll_t, CURLMOPT_TIMERFUNCTION -> uv_timer_t);
 *    requests share connections (HTTP/2 when the server offers it), proxies
 *    and compressed bodies work. The signer, the CLI and the tools.
 *  - client_h1.c (tg_kube_h1): HTTP/1.1 over OpenSSL on uv_tcp_t, one
 *    connection per request, each resuming the TLS session of the last one
 *    the server gave; no proxy-url (refused at tg_kube_client_new).
 *    The webhook, which then does not load libcurl's libraries.
 * Both: requests never block the loop; TLS is verified against the
 * configured CA (in memory, never a temporary file) for the server's name or
 * IP address; client certificates are given from memory; the bearer token is
 * re-read from its file every minute and after a 401.
 *
 * Everything runs on the loop's thread: start requests and free the client
 * there. Callbacks are called on that thread, never from inside
 * tg_kube_request_start().
 *
 * The process must ignore SIGPIPE (signal(SIGPIPE, SIG_IGN)): a peer closing
 * a TLS connection mid-write would otherwise kill it. libcurl is told not to
 * touch signals, as multi-threaded programs need. */
#ifndef TG_KUBE_CLIENT_H
#define TG_KUBE_CLIENT_H

#include <stddef.h>
#include <uv.h>

#include "kube/kubeconfig.h"

#define TG_KUBE_DEFAULT_TIMEOUT_MS 30000L
#define TG_KUBE_DEFAULT_MAX_BODY ((size_t)64 << 20)   /* a big List */
#define TG_KUBE_TOKEN_REREAD_MS 60000L

typedef struct tg_kube_client tg_kube_client;
typedef struct tg_kube_request tg_kube_request;

typedef enum tg_kube_content_type {
    TG_KUBE_CT_JSON,            /* application/json (POST, PUT) */
    TG_KUBE_CT_MERGE_PATCH,     /* application/merge-patch+json */
    TG_KUBE_CT_JSON_PATCH,      /* application/json-patch+json */
    TG_KUBE_CT_STRATEGIC_PATCH, /* application/strategic-merge-patch+json */
    TG_KUBE_CT_APPLY,           /* application/apply-patch+yaml (server-side apply) */
} tg_kube_content_type;

/* resp->error of a buffered request whose body went over its max_body. */
extern const char TG_KUBE_ERR_BODY_TOO_LARGE[];

typedef struct tg_kube_response {
    long status;             /* HTTP status; 0 when no response arrived */
    const char *body;        /* NUL-terminated (buffered requests); "" when streamed */
    size_t body_len;
    const char *error;       /* NULL, or why the request failed (transport, timeout,
                              * body too large, cancelled by on_data); never secret */
    int tls_resumed;         /* its connection resumed a TLS session: no certificate was
                              * sent or checked again (client_h1.c; always 0 in client_curl.c,
                              * whose requests share connections instead) */
} tg_kube_response;

/* The request finished (success or not). resp is valid during the call only.
 * The request is freed after the callback returns. */
typedef void (*tg_kube_response_cb)(tg_kube_request *req, const tg_kube_response *resp, void *data);

/* Streaming: response bytes as they arrive, for 2xx responses only (error
 * bodies are buffered and handed to on_done). Return 0 to go on, non-zero
 * to abort the request (on_done then gets error "aborted by the receiver"). */
typedef int (*tg_kube_data_cb)(tg_kube_request *req, const char *bytes, size_t n, void *data);

typedef struct tg_kube_request_opts {
    const char *method;               /* "GET" (NULL), "POST", "PUT", "PATCH", "DELETE" */
    const char *path;                 /* "/api/v1/namespaces/x/secrets?labelSelector=..." */
    const char *body;                 /* copied; may be NULL */
    size_t body_len;
    tg_kube_content_type content_type;
    long timeout_ms;                  /* 0: TG_KUBE_DEFAULT_TIMEOUT_MS; <0: none (watches:
                                       * a low-speed limit and TCP keepalive instead) */
    long low_speed_time_s;            /* with timeout_ms < 0: abort after this long without
                                       * a byte (0: 180 s, three bookmark periods) */
    size_t max_body;                  /* 0: TG_KUBE_DEFAULT_MAX_BODY */
    tg_kube_data_cb on_data;          /* NULL: buffer the body */
} tg_kube_request_opts;

/* config is copied (the caller may free it). Returns NULL with err. */
tg_kube_client *tg_kube_client_new(uv_loop_t *loop, const tg_kube_config *config, char *err, size_t err_len);

/* Cancel every request (their callbacks are not called), close the handles
 * and free the client once libuv has closed them: run the loop afterwards
 * (uv_run until it returns) to finish. */
void tg_kube_client_free(tg_kube_client *c);

uv_loop_t *tg_kube_client_loop(tg_kube_client *c);

/* The namespace of the configuration's context, or NULL. */
const char *tg_kube_client_namespace(tg_kube_client *c);

/* Start a request. Returns NULL (and never calls on_done) when it could not
 * be started, with err. */
tg_kube_request *tg_kube_request_start(tg_kube_client *c, const tg_kube_request_opts *opts,
                                       tg_kube_response_cb on_done, void *data, char *err, size_t err_len);

/* Abort a request that has not finished; on_done is not called. Not from
 * inside that request's on_data (return non-zero there instead). A request
 * pointer is dead once its on_done has returned. */
void tg_kube_request_cancel(tg_kube_request *req);

/* Synchronous use (CLI, tools): start the request and run the loop until it
 * finishes (other work on the loop runs meanwhile). Returns the HTTP status
 * with *body malloc'd and NUL-terminated (the caller frees it), or -1 with
 * err when no complete response arrived (*body is then NULL). */
long tg_kube_request_sync(tg_kube_client *c, const tg_kube_request_opts *opts, char **body, size_t *body_len,
                          char *err, size_t err_len);

/* Percent-encode a query value (label selectors: "a=b,c in (d)"). malloc'd. */
char *tg_kube_escape(const char *s);

#endif
