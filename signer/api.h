/* api.h - blocking Kubernetes calls for a reconciler's worker thread.
 *
 * Each worker owns one tg_api. Workers read the live object (a GET) when a
 * reconcile needs it, so a reconcile starts from the API server's current
 * state and never holds json-c objects shared with another thread. */
#ifndef TG_SIGNER_API_H
#define TG_SIGNER_API_H

#include <json-c/json.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"

typedef struct tg_api tg_api;

/* Relayed mode: the workers' calls run on one loop's client (the informers'),
 * so they all share its connection (HTTP/2 streams on one TLS connection)
 * instead of a connection, a TLS context and buffers per worker (~240 KB
 * each). A worker blocks on a condition variable while the loop thread does
 * the request. Create, ask busy and close on the loop thread. */
typedef struct tg_api_relay tg_api_relay;
tg_api_relay *tg_api_relay_new(uv_loop_t *loop, tg_kube_client *client);
/* 1 while calls are queued or running: keep the loop running for them. */
int tg_api_relay_busy(tg_api_relay *r);
/* Wake the loop (a worker left; see main.c's shutdown). Any thread. */
void tg_api_relay_nudge(tg_api_relay *r);
/* Close once no worker can call any more (after they joined). */
void tg_api_relay_close(tg_api_relay *r);
tg_api *tg_api_new_relayed(tg_api_relay *relay);

/* Own-loop mode: a private uv loop and client, for a thread that must not
 * depend on the main loop (leader election). */

tg_api *tg_api_new(const tg_kube_config *cfg, char *err, size_t err_len);
void tg_api_free(tg_api *a);

/* One request. body may be NULL (serialised with json-c when not). Returns
 * the HTTP status, or -1 with err on a transport failure. When out is not
 * NULL and the response is JSON it receives the parsed body (caller puts). */
long tg_api_call(tg_api *a, const char *method, const char *path, tg_kube_content_type ct,
                 json_object *body, json_object **out, char *err, size_t err_len);

/* GET path; 200 with *out, 404 with *out NULL, else -1 / status with err. */
long tg_api_get(tg_api *a, const char *path, json_object **out, char *err, size_t err_len);

/* Record an Event (core/v1) about obj; failures are logged, never fatal.
 * type: "Normal" | "Warning". */
void tg_api_event(tg_api *a, json_object *obj, const char *type, const char *reason, const char *message);

#endif
