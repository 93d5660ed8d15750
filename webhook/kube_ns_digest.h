/* kube_ns_digest.h - what placement reads of a tenant Namespace (its labels
 * liqo.io/tenant-namespace and liqo.io/remote-cluster-id), kept as a digest
 * made once when the Namespace is stored: an admission reads it without a
 * parse (cache.h, tg_cache_set_digest). */
#ifndef TG_WEBHOOK_KUBE_NS_DIGEST_H
#define TG_WEBHOOK_KUBE_NS_DIGEST_H

#include <json-c/json.h>

#include "kube/cache.h"
#include "webhook/lookup.h"

/* The digest of a Namespace (malloc'd, free() it); NULL when out of memory. */
void *tg_ns_digest_new(json_object *ns);

/* lookup.h's namespace_label over a cache of Namespaces with these digests. */
int tg_ns_digest_label(tg_cache *c, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                       int *ns_exists);

#endif
