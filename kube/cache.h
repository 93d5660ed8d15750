/* cache.h - the object store behind an informer: the state machine that
 * turns a list and a stream of watch events into "the objects as they are
 * now", and the handlers' add/update/delete notifications.
 *
 * Pure (no I/O): the informer feeds it; tests feed it recorded API JSON.
 *
 * Threads: ONE writer thread (the informer's loop) calls replace/apply/
 * resource_version; ANY thread may read through the visitors, which run
 * under a read lock. json-c is not thread-safe even for reads that look
 * harmless: reference counts are not atomic and json_object_to_json_string()
 * (and json_object_get_string() on a non-string) writes a cached buffer into
 * the object. So a visitor may only walk the tree with getters
 * (json_object_object_get_ex, json_object_array_get_idx, tg_json_string, and
 * json_object_get_string/get_int64/get_boolean on values of that very type),
 * must copy what it needs, and must never keep a pointer, take a reference or
 * serialise. The handlers run on the writer thread after the lock is
 * released; they may take references. */
#ifndef TG_KUBE_CACHE_H
#define TG_KUBE_CACHE_H

#include <stddef.h>
#include <json-c/json.h>

#include "kube/watch.h"

typedef struct tg_cache tg_cache;

typedef struct tg_cache_handlers {
    void (*on_add)(json_object *obj, void *data);
    void (*on_update)(json_object *old_obj, json_object *new_obj, void *data);
    void (*on_delete)(json_object *last_known, void *data);
    void *data;
} tg_cache_handlers;

/* index_label: a label whose value indexes the objects (e.g.
 * "liqo.io/remote-cluster-id"), or NULL. Returns NULL when out of memory. */
tg_cache *tg_cache_new(const char *index_label);
void tg_cache_free(tg_cache *c);

/* Store every object as its compact JSON text instead of a json-c tree:
 * about a quarter of the memory, for a parse on every read. Visitors and the
 * handlers' old objects then get a tree parsed for the one call (same
 * fields, same contract); on_add/on_update's new object is the stripped
 * object as it came in (after tg_cache_stage, the same object parsed back
 * from its text). A small object parses in about a microsecond:
 * the signer's caches and the webhook's use this mode.
 * Call before the first list or event. Returns 0, or -1 when objects are
 * already stored as trees. */
int tg_cache_set_compact(tg_cache *c);

/* Keep only these fields of every stored object, to save memory: dotted
 * paths ("data.nonce", "status.certificate"); a path through a list names
 * a member of each object in it ("status.conditions.type"); metadata (minus
 * managedFields, and minus annotations unless "metadata.annotations" is
 * named) is always kept. Handlers see the trimmed objects too. Call once,
 * before the first list. paths is NULL-terminated and copied. Returns 0 or -1. */
int tg_cache_keep_fields(tg_cache *c, const char *const *paths);

/* Keep of metadata only name, namespace, resourceVersion, deletionTimestamp
 * and these members ("labels", "uid"; the annotations still as
 * tg_cache_keep_fields says): for caches whose readers look at no other
 * metadata. Handlers see the projected objects too. Call once, before the
 * first list. members is NULL-terminated and copied. Returns 0 or -1. */
int tg_cache_keep_metadata(tg_cache *c, const char *const *members);

/* Replace the string at dotted path `path` (through objects) of every
 * stored object by what shrink makes of it (malloc'd; NULL leaves it): for
 * a large value whose readers only ask whether it is there or whether it is
 * the one they hold. The signer's CSR cache keeps a digest of
 * status.certificate (about 1.5 KB an issued CSR); its shrink also keeps the
 * last few certificates for the pass that copies them (signer/csr_cert.h).
 * Handlers see the shrunk objects too. Call once, before the first list. Returns 0 or -1. */
int tg_cache_shrink_field(tg_cache *c, const char *path, char *(*shrink)(const char *value));

/* Also index the objects by metadata.namespace and/or metadata.name
 * (TG_CACHE_BY_* flags), for readers that would otherwise walk every object
 * (the webhook's duplicate checks). Call before the first list. Returns 0,
 * or -1 when objects are already stored or out of memory. */
#define TG_CACHE_BY_NAMESPACE 0x1u
#define TG_CACHE_BY_NAME 0x2u
int tg_cache_index_metadata(tg_cache *c, unsigned which);
/* 1 when the cache indexes by every flag of which, else 0: a reader that
 * would take an empty bucket for "none there" checks first. */
int tg_cache_indexed(tg_cache *c, unsigned which);

/* Keep, beside every object, what digest(obj) makes of it (a malloc'd
 * struct of the few fields a hot reader needs, or NULL), freed with
 * digest_free when the object changes or goes. tg_cache_get_digest then
 * reads an object without a parse (compact mode) or a tree walk. Call before
 * the first list. Returns 0, or -1 (objects already stored, NULL functions). */
int tg_cache_set_digest(tg_cache *c, void *(*digest)(json_object *obj), void (*digest_free)(void *digest));

/* Keep only the digest, not the object's text, for every object the digest
 * function made a digest of (compact mode; call after tg_cache_set_digest,
 * before the first list). For a cache read only through tg_cache_get_digest
 * and counts: a Namespace or nonce Secret then costs its digest, key and
 * resourceVersion instead of also its JSON text. The visitors of
 * tg_cache_get, get_by_* and foreach, and the handlers' old objects, treat
 * such an entry as one whose text cannot be parsed back (not found; an
 * update reads as an add, a delete goes unreported); tg_cache_get with a
 * NULL visitor and the counts still see it. An object the digest function
 * made nothing of keeps its text. Returns 0, or -1 (objects already stored,
 * not compact, no digest function). */
int tg_cache_keep_digest_only(tg_cache *c);

/* The result of applying a watch event. */
#define TG_CACHE_OK 0
#define TG_CACHE_ERROR (-1)    /* malformed event or an ERROR event: rewatch from the last RV */
#define TG_CACHE_GONE 410      /* ERROR event with code 410: the RV is too old, relist */

/* A (re)list: items is the JSON array of every object (all pages), rv the
 * list's metadata.resourceVersion. Objects not in items are deleted
 * (on_delete), new ones added, changed ones (other resourceVersion) updated.
 * The cache takes its own references. Marks the cache synced. Returns 0, or
 * -1 with err when the input is malformed (the cache is left untouched). */
int tg_cache_replace(tg_cache *c, json_object *items, const char *rv, const tg_cache_handlers *h,
                     char *err, size_t err_len);

/* A list that comes in pages (limit/continue): stage each page as it comes,
 * then commit, which is tg_cache_replace of all the staged items. In compact
 * mode a page is staged as its stripped objects' compact texts, in one
 * buffer, so the caller frees the page's tree before the next page, and the
 * stored objects are allocated at commit, when no list tree is alive: they
 * end up packed rather than strewn across the pages a whole list's tree used,
 * which malloc_trim could not give back (5,000 Tenants: 17.8 MB of heap for
 * 3.2 MB in use). stage returns 0, or -1 with err (a malformed page, checked
 * as replace checks a list; the caller discards and lists again). commit
 * empties the staging whatever it returns; discard empties it. Writer
 * thread. */
int tg_cache_stage(tg_cache *c, json_object *items, char *err, size_t err_len);
int tg_cache_commit(tg_cache *c, const char *rv, const tg_cache_handlers *h, char *err, size_t err_len);
void tg_cache_discard(tg_cache *c);

/* One watch event. Returns TG_CACHE_OK, TG_CACHE_GONE, or TG_CACHE_ERROR with err. */
int tg_cache_apply(tg_cache *c, const tg_watch_event *ev, const tg_cache_handlers *h,
                   char *err, size_t err_len);

/* Set the resourceVersion to watch from without listing (an informer told
 * to resume). The cache does not count as synced until a list. */
int tg_cache_set_resource_version(tg_cache *c, const char *rv);

/* The resourceVersion to resume watching from ("" before the first list).
 * Writer thread only. */
const char *tg_cache_resource_version(const tg_cache *c);

/* --- readers: any thread --- */

/* Called under the read lock; see the rules at the top. */
typedef void (*tg_cache_visit_cb)(json_object *obj, void *data);

/* The object namespace/name (ns NULL or "" for cluster-scoped objects).
 * Returns 1 if found (visit was called), 0 if not. In compact mode an object
 * whose text cannot be parsed back (out of memory) counts as not found, here
 * and in the two readers below. */
int tg_cache_get(tg_cache *c, const char *ns, const char *name, tg_cache_visit_cb visit, void *data);

/* The digest of object namespace/name, under the read lock: visit gets it
 * (NULL when the digest function made none) and must copy what it needs.
 * Returns 1 if the object is there (visit was called), 0 if not. */
typedef void (*tg_cache_digest_cb)(const void *digest, void *data);
int tg_cache_get_digest(tg_cache *c, const char *ns, const char *name, tg_cache_digest_cb visit, void *data);

/* Every object whose index label equals value. Returns how many were visited
 * (visit NULL: how many there are, without a walk). */
size_t tg_cache_get_by_index(tg_cache *c, const char *value, tg_cache_visit_cb visit, void *data);

/* The same, visiting only objects that hold the string holds somewhere (as a
 * member's value or name): in compact mode the others are passed over by a
 * search of their text, without a parse. For a reader that wants few of
 * many (the CSRs of one slice among a consumer's): the visitor still checks
 * where the string is. Not for the name, namespace or resourceVersion, which
 * compact mode keeps beside the text. Returns how many were visited. */
size_t tg_cache_get_by_index_holding(tg_cache *c, const char *value, const char *holds, tg_cache_visit_cb visit,
                                     void *data);

/* Every object in namespace ns, and every object called name in any
 * namespace, from the indexes of tg_cache_index_metadata (0 when that index
 * is off). Same returns as tg_cache_get_by_index: a count without a walk
 * when visit is NULL, so "how many Tenants in ns" costs one hash lookup. */
size_t tg_cache_get_by_namespace(tg_cache *c, const char *ns, tg_cache_visit_cb visit, void *data);
size_t tg_cache_get_by_name(tg_cache *c, const char *name, tg_cache_visit_cb visit, void *data);

/* Every object. Returns how many were visited. */
size_t tg_cache_foreach(tg_cache *c, tg_cache_visit_cb visit, void *data);

size_t tg_cache_count(tg_cache *c);

/* 1 once the first list has been stored. */
int tg_cache_synced(tg_cache *c);

#endif
