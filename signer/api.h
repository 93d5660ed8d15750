/* api.h - blocking Kubernetes calls for a reconciler's worker thread.
 *
 * Each worker owns one tg_api: a private uv loop with its own client, driven
 * by tg_kube_request_sync. The informers keep the main loop; workers read the
 * live object (a GET) rather than the informers' caches, so a reconcile
 * always starts from the API server's current state and never holds json-c
 * objects shared with another thread. */
#ifndef TG_SIGNER_API_H
#define TG_SIGNER_API_H

#include <json-c/json.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"

typedef struct tg_api tg_api;

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
