/* fake_api.h - an in-memory API server behind signer/api.h, for the
 * reconcilers' unit tests (linked instead of api.c).
 *
 * Objects are kept by path ("/api/v1/namespaces/ns/secrets/name"). It
 * answers as the API server would for what the reconcilers do: GET of an
 * object or a list (with an equality labelSelector), POST (name or
 * generateName; 409 when the name is taken), PUT (409 on a stale
 * resourceVersion), merge PATCH (the same precondition), DELETE (404 when
 * absent, 409 on a failed uid precondition; an object with finalizers only
 * gets its deletionTimestamp), server-side apply (created when absent, else
 * merged), the status and approval subresources. Every
 * call other than a GET is recorded as a write, events too (tg_api_event).
 * A call can be told to fail. Single-threaded, as the tests are. */
#ifndef TG_SIGNER_FAKE_API_H
#define TG_SIGNER_FAKE_API_H

#include <stddef.h>

#include <json-c/json.h>

#include "signer/api.h"

tg_api *fake_api_new(void);
void fake_api_free(tg_api *a);

/* Store the object at path as the API server holds it: a resourceVersion,
 * uid and creationTimestamp are added when missing. json is JSON text. */
void fake_api_put(tg_api *a, const char *path, const char *json);
/* The same for an object (the fake takes the reference). */
void fake_api_put_obj(tg_api *a, const char *path, json_object *obj);
/* The object stored at path (borrowed), or NULL. */
json_object *fake_api_object(tg_api *a, const char *path);

/* The next `times` calls of method (NULL: any) on path (without its query)
 * answer status instead: -1 a transport error, or an HTTP status. */
void fake_api_fail(tg_api *a, const char *method, const char *path, long status, int times);

/* The next call of method (NULL: any) on path answers status with json (a
 * JSON text, or NULL: no body), whatever the store holds: the canned answer
 * of a server that is not an API server (the auth server, for instance). */
void fake_api_answer(tg_api *a, const char *method, const char *path, long status, const char *json);

/* The calls other than GETs, in order (borrowed): objects {method, path,
 * body (JSON text or null), status (-1: transport error)}; an event is
 * {"method": "EVENT", "path": "<ns>/<name> <reason>", "body": message}. */
json_object *fake_api_writes(tg_api *a);
/* How many GETs were made. */
size_t fake_api_ngets(tg_api *a);

/* tg_api_new (the remote pool's clients) returns a for a kubeconfig whose
 * server is `server` (one fake at a time); a stays the test's to free. */
void fake_api_serve(tg_api *a, const char *server);

#endif
