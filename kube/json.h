/* json.h - strict JSON documents on top of json-c.
 *
 * Kubernetes objects reach us as JSON from the API server, from kubectl and
 * from users' files. A Tenant is a security decision, so the parser is strict:
 * RFC 8259 syntax only, valid UTF-8, the whole input consumed, a depth limit,
 * no duplicate keys (two parsers picking different duplicates is a classic
 * way to smuggle a field past a check), no raw control characters in strings.
 * Keys are case-sensitive: "Spec" is not "spec". */
#ifndef TG_KUBE_JSON_H
#define TG_KUBE_JSON_H

#include <stddef.h>
#include <json-c/json.h>

/* Limits for JSON and YAML documents alike: nesting of objects and arrays,
 * and input size (the webhook's body limit is 3 MiB, PROTOCOL.md 9). */
#define TG_DOC_MAX_DEPTH 64
#define TG_DOC_MAX_BYTES (8u << 20)

/* Parse exactly one JSON value from text[0..len) (surrounding whitespace
 * allowed). Returns a new reference, or NULL with err saying what went wrong
 * and at which byte offset. A document that is just `null` is an error too, so
 * NULL always means failure. err may be NULL. */
json_object *tg_json_parse(const char *text, size_t len, char *err, size_t err_len);

/* Parse text that json-c itself wrote from a tree tg_json_parse accepted (a
 * cache's compact copy): the same tokener, reused per thread, without the
 * strictness pass, which such text passes by construction. Returns a new
 * reference, or NULL (out of memory, or text that is not such output). */
json_object *tg_json_parse_own(const char *text, size_t len);

/* obj[key] when obj is an object and the member is a string without embedded
 * NUL bytes; otherwise NULL. The pointer lives as long as obj. */
const char *tg_json_string(json_object *obj, const char *key);

/* Walk a NULL-terminated key path: tg_json_path(doc, "spec", "csr", NULL).
 * Returns the member (borrowed) or NULL when any step is missing or not an
 * object. */
json_object *tg_json_path(json_object *obj, ...) __attribute__((sentinel));

/* Like tg_json_string on the object at the end of a path:
 * tg_json_path_string(doc, "metadata", "name", NULL). */
const char *tg_json_path_string(json_object *obj, ...) __attribute__((sentinel));

#endif
