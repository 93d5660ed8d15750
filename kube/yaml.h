/* yaml.h - YAML documents as json-c trees, and the kubectl-like YAML output.
 *
 * Users hand Tenants to `kubectl-tenantgate check` as YAML or JSON. YAML is
 * read with libyaml into the same json-c tree the JSON parser returns, so one
 * decoder (tenant_json.h) serves both. Only what Kubernetes manifests use is
 * accepted: one document of mappings, sequences and scalars. Anchors, aliases
 * and merge keys are refused (billion laughs), as are duplicate keys and
 * non-scalar keys; depth, node count and input size are bounded. */
#ifndef TG_KUBE_YAML_H
#define TG_KUBE_YAML_H

#include <stddef.h>
#include <json-c/json.h>

#include "json.h"   /* TG_DOC_MAX_DEPTH, TG_DOC_MAX_BYTES */

#define TG_YAML_MAX_NODES 100000u      /* mappings + sequences + scalars */

/* Exactly one YAML document -> json-c tree. Plain scalars are typed with the
 * YAML 1.2 core schema (null, true/false, int, float, else string); quoted and
 * block scalars are always strings. Returns a new reference, or NULL with err
 * giving line:column (1-based) and the problem; an empty or null document is
 * an error. err may be NULL. */
json_object *tg_yaml_parse(const char *text, size_t len, char *err, size_t err_len);

/* JSON when the first non-whitespace byte is '{' or '[', YAML otherwise. */
json_object *tg_doc_parse(const char *text, size_t len, char *err, size_t err_len);

/* Block-style YAML of obj, keys in the object's order, strings quoted only
 * when a plain scalar would read back differently. malloc'd, NUL-terminated;
 * *len (if not NULL) excludes the NUL. NULL on allocation or emitter failure. */
char *tg_yaml_emit(json_object *obj, size_t *len);

#endif
