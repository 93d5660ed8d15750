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
#include "signer/settled.h"

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

/* ---------- our own writes (api_kept.c) ----------
 *
 * The bookkeeping of an informer-fed reconciler, kept here and not in each
 * one, over the signer's table of settled records (settled.h; kept NULL
 * keeps nothing and every read is live):
 *  - the answer of our own write is kept under the object's path, and a read
 *    at the version the informer shows is answered from it: a
 *    resourceVersion names one version of one object, so the copy is that
 *    object, not a guess;
 *  - a write made from a kept copy that answers 409 says TG_API_STALE: the
 *    object changed since our write, so the caller reads it live next time
 *    (a requeue) and decides again;
 *  - the version our own write left is recorded as settled with what the
 *    outcome depended on, so the watch event of that write costs no GET;
 *  - a CSR we made is noted until the informer shows it, so a lagging
 *    cache does not make a second one. */

/* A 409 on a write whose body came from a kept copy. */
#define TG_API_STALE (-2)
/* tg_api_get_at without a kept copy: a quorum read, not "not older than rv". */
#define TG_API_LIVE 1

/* GET the object at path (no query). When kept holds our copy at exactly rv
 * (the informer's resourceVersion, may be NULL) *out is that copy; else the
 * live object, read "not older than rv" from the API server's watch cache
 * unless flags has TG_API_LIVE. 200 with *out, 404 with *out NULL, else -1
 * or the status with err. */
long tg_api_get_at(tg_api *a, tg_settled *kept, const char *path, const char *rv, int flags, json_object **out,
                   char *err, size_t err_len);

/* tg_api_call for a write of the object at path (a POST's collection, or the
 * object or its /status or /approval): its kept copy is forgotten (the
 * write moves it past that version); on 2xx the answer is kept keep_ms (0:
 * not). TG_API_STALE for a 409 when body came from tg_api_get_at's copy. */
long tg_api_write(tg_api *a, tg_settled *kept, const char *method, const char *path, tg_kube_content_type ct,
                  json_object *body, long keep_ms, json_object **out, char *err, size_t err_len);

/* Keep obj (at its resourceVersion) as the object at path for keep_ms, as a
 * pass left it without writing; forget it. */
void tg_api_keep(tg_settled *kept, const char *path, json_object *obj, long keep_ms);
void tg_api_forget(tg_settled *kept, const char *path);
/* The copy kept under path while it is at rv (a new object), or NULL. */
json_object *tg_api_kept(tg_settled *kept, const char *path, const char *rv);

/* The object at rv (ours to have left so) needs nothing for ms while what
 * it depends on reads dep_a or dep_b (may be NULL), under key. Best effort. */
void tg_api_settle(tg_settled *kept, const char *key, const char *rv, const char *dep_a, const char *dep_b, long ms);
/* Milliseconds (>= 1) it still needs nothing when the informer shows it at
 * rv with dep; 0: reconcile it. */
long tg_api_settled(tg_settled *kept, const char *key, const char *rv, const char *dep);

/* Our POST made `made` under key (for ms). tg_api_made_unseen: 1 while the
 * informer's newest (may be "") is not it yet; once it is, forgets it. */
void tg_api_note_made(tg_settled *kept, const char *key, const char *made, long ms);
int tg_api_made_unseen(tg_settled *kept, const char *key, const char *newest);

#endif
