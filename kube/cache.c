/* cache.c - informer store: the objects by namespace/name, optional
 * indexes (a label's value, the namespace, the name), and the list/watch
 * state machine. Entries and index buckets are found through
 * common/strtab.h: one pointer a slot, not json-c's 40-byte entries.
 *
 * An entry holds its object in one of two forms. Tree mode (the default)
 * keeps the json-c tree: readers visit it directly, with no parse. Compact
 * mode keeps the object as its compact JSON text: a json-c tree costs about
 * four times its text (every object node carries its own hash table), which
 * matters to the signer with thousands of Tenants and CSRs and to the
 * webhook's idle RSS; readers and handlers then get a tree parsed from the
 * text for the duration of one call. */
#include "kube/cache.h"
#include "errbuf.h"
#include "kube/json.h"

#include "common/strtab.h"
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The indexes an entry can be in: a label's value (tg_cache_new), and the
 * metadata fields of tg_cache_index_metadata. */
enum { IDX_LABEL, IDX_NAMESPACE, IDX_NAME, IDX_COUNT };

typedef struct cache_entry {
    json_object *obj;              /* tree mode: one reference; NULL in compact mode */
    char *stored;                  /* compact mode: resourceVersion, namespace, name and
                                    * the compact JSON without them, in one allocation
                                    * (see stored_new), the JSON empty when only the
                                    * digest is kept; NULL in tree mode */
    const char *index_value[IDX_COUNT];  /* each index's value for this object: its
                                    * bucket's own copy (one per value, not per
                                    * object), or NULL */
    struct cache_entry *idx_next[IDX_COUNT];  /* others with the same value */
    void *digest;                  /* what the digest function made of the object, or NULL */
    void (*digest_free)(void *digest);   /* entries do not point back to their cache */
    int seen;                      /* relist mark */
    char key[];                    /* "ns/name", or "name" when cluster-scoped: in the
                                    * entry's own allocation, one malloc less an object */
} cache_entry;

typedef struct index_bucket {
    cache_entry *head;
    size_t count;                  /* entries in the chain: counts cost no walk */
    char value[];                  /* in the bucket's own allocation */
} index_bucket;

struct tg_cache {
    pthread_rwlock_t lock;
    tg_strtab *objects;            /* cache_entry by key (owned) */
    tg_strtab *index[IDX_COUNT];   /* index_bucket by value (owned), or NULL when off */
    char *index_label;
    char **keep;                   /* dotted paths to keep (NULL-terminated), or NULL: all */
    char **keep_meta;              /* metadata members to keep beside the cache's own
                                    * (tg_cache_keep_metadata), or NULL: all */
    char *shrink_path;             /* tg_cache_shrink_field: the dotted path, or NULL */
    char *(*shrink)(const char *value);
    char *rv;                      /* writer thread only */
    int synced;
    int compact;                   /* store JSON text, not trees (tg_cache_set_compact) */
    /* A paged list being staged (writer thread only): tree mode keeps the
     * items' references, compact mode their compact texts, NUL-separated,
     * in one buffer. */
    void *(*digest)(json_object *obj);   /* tg_cache_set_digest, or NULL */
    void (*digest_free)(void *digest);
    int digest_only;               /* tg_cache_keep_digest_only */
    json_object *staged_items;
    char *staged;
    size_t staged_len, staged_cap, staged_n;
};

/* Handler calls are collected under the write lock and made after it. */
typedef struct change {
    enum { CH_ADD, CH_UPDATE, CH_DELETE } kind;
    json_object *old_obj, *new_obj;   /* references held until the call is made */
    char *old_stored;                 /* compact mode: the old entry's text (owned), parsed
                                       * only if a handler wants the old object */
} change;

typedef struct change_list {
    change *v;
    size_t n, cap;
} change_list;

static void entry_free(cache_entry *e)
{
    if (e->digest)
        e->digest_free(e->digest);
    json_object_put(e->obj);
    free(e->stored);
    free(e);
}

static const char *entry_key(const void *e)
{
    return ((const cache_entry *)e)->key;
}

static const char *bucket_value(const void *b)
{
    return ((const index_bucket *)b)->value;
}

/* Frees the table and what it holds (item_free: entry_free or free). */
static void table_free(tg_strtab *t, void (*item_free)(cache_entry *e))
{
    size_t at = 0;
    void *item;

    if (!t)
        return;
    while ((item = tg_strtab_next(t, &at)) != NULL)
        item_free ? item_free(item) : free(item);
    tg_strtab_free(t);
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

tg_cache *tg_cache_new(const char *index_label)
{
    tg_cache *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    /* glibc's default lets a steady stream of readers (webhook workers)
     * starve the writer (the informer): prefer the writer. */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int rc = pthread_rwlock_init(&c->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0) {
        free(c);
        return NULL;
    }
    c->objects = tg_strtab_new(entry_key);
    c->rv = strdup("");
    if (index_label != NULL) {
        c->index_label = strdup(index_label);
        c->index[IDX_LABEL] = tg_strtab_new(bucket_value);
    }
    if (c->objects == NULL || c->rv == NULL || (index_label && (!c->index_label || !c->index[IDX_LABEL]))) {
        tg_cache_free(c);
        return NULL;
    }
    return c;
}

void tg_cache_free(tg_cache *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < IDX_COUNT; i++)
        table_free(c->index[i], NULL);
    table_free(c->objects, entry_free);
    free(c->index_label);
    free_strv(c->keep);
    free_strv(c->keep_meta);
    free(c->shrink_path);
    free(c->rv);
    tg_cache_discard(c);
    pthread_rwlock_destroy(&c->lock);
    free(c);
}

/* --- keys and metadata --- */

static char *object_key(json_object *obj)
{
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    if (name == NULL || *name == '\0')
        return NULL;
    char *key;
    if (ns != NULL && *ns != '\0') {
        size_t n = strlen(ns) + strlen(name) + 2;
        if ((key = malloc(n)) != NULL)
            snprintf(key, n, "%s/%s", ns, name);
    } else {
        key = strdup(name);
    }
    return key;
}

static const char *object_rv(json_object *obj)
{
    const char *rv = tg_json_path_string(obj, "metadata", "resourceVersion", NULL);
    return rv ? rv : "";
}

int tg_cache_set_compact(tg_cache *c)
{
    int rc = 0;
    pthread_rwlock_wrlock(&c->lock);
    /* Switching with objects stored would leave entries of both forms. */
    if (tg_strtab_count(c->objects) != 0 || c->synced)
        rc = c->compact ? 0 : -1;
    else
        c->compact = 1;
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

/* A NULL-terminated copy of v into *to (left NULL when v is NULL). Returns
 * 0, or -1 when *to is already set or out of memory (tg_cache_free
 * releases the part made). */
static int copy_strv(char ***to, const char *const *v)
{
    size_t n = 0;

    if (*to != NULL || v == NULL)
        return -1;
    while (v[n])
        n++;
    if ((*to = calloc(n + 1, sizeof(**to))) == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (((*to)[i] = strdup(v[i])) == NULL)
            return -1;
    return 0;
}

int tg_cache_keep_fields(tg_cache *c, const char *const *paths)
{
    return copy_strv(&c->keep, paths);
}

int tg_cache_keep_metadata(tg_cache *c, const char *const *members)
{
    return copy_strv(&c->keep_meta, members);
}

int tg_cache_shrink_field(tg_cache *c, const char *path, char *(*shrink)(const char *value))
{
    if (c->shrink_path != NULL || path == NULL || shrink == NULL || (c->shrink_path = strdup(path)) == NULL)
        return -1;
    c->shrink = shrink;
    return 0;
}

int tg_cache_set_digest(tg_cache *c, void *(*digest)(json_object *obj), void (*digest_free)(void *digest))
{
    int rc = 0;
    pthread_rwlock_wrlock(&c->lock);
    if (tg_strtab_count(c->objects) != 0 || c->synced || digest == NULL || digest_free == NULL) {
        rc = -1;
    } else {
        c->digest = digest;
        c->digest_free = digest_free;
    }
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

int tg_cache_keep_digest_only(tg_cache *c)
{
    int rc = 0;
    pthread_rwlock_wrlock(&c->lock);
    if (tg_strtab_count(c->objects) != 0 || c->synced || !c->compact || c->digest == NULL)
        rc = -1;
    else
        c->digest_only = 1;
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

int tg_cache_index_metadata(tg_cache *c, unsigned which)
{
    static const struct {
        unsigned flag;
        int idx;
    } kinds[] = {{TG_CACHE_BY_NAMESPACE, IDX_NAMESPACE}, {TG_CACHE_BY_NAME, IDX_NAME}};
    int rc = 0;

    pthread_rwlock_wrlock(&c->lock);
    /* Entries stored before would be missing from the new index. */
    if (tg_strtab_count(c->objects) != 0 || c->synced)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if ((which & kinds[i].flag) && !c->index[kinds[i].idx] &&
            !(c->index[kinds[i].idx] = tg_strtab_new(bucket_value)))
            rc = -1;   /* tg_cache_free releases the part made */
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

int tg_cache_indexed(tg_cache *c, unsigned which)
{
    int on;

    pthread_rwlock_rdlock(&c->lock);
    on = (!(which & TG_CACHE_BY_NAMESPACE) || c->index[IDX_NAMESPACE]) &&
         (!(which & TG_CACHE_BY_NAME) || c->index[IDX_NAME]);
    pthread_rwlock_unlock(&c->lock);
    return on;
}

/* How the keep paths treat member `name` of the object at dotted `pre`
 * (pre_len 0: the top): 2 keep it whole, 1 keep part of it, 0 drop it. */
static int keep_member(char *const *keep, const char *pre, size_t pre_len, const char *name)
{
    size_t nl = strlen(name);
    int r = 0;

    if (pre_len == 0 && strcmp(name, "metadata") == 0)
        return 2;   /* keys, resourceVersion, labels: the cache's own */
    for (; *keep; keep++) {
        const char *k = *keep;
        if (pre_len) {
            if (strncmp(k, pre, pre_len) != 0 || k[pre_len] != '.')
                continue;
            k += pre_len + 1;
        }
        if (strncmp(k, name, nl) != 0)
            continue;
        if (k[nl] == '\0')
            return 2;
        if (k[nl] == '.')
            r = 1;
    }
    return r;
}

/* Drop every member of obj (at dotted path pre) the keep paths do not name. */
static void prune(json_object *obj, char *const *keep, char *pre, size_t pre_len, size_t pre_cap)
{
    const char *drop[64];
    size_t ndrop;

    do {
        ndrop = 0;
        json_object_object_foreach(obj, name, val) {
            int k = keep_member(keep, pre, pre_len, name);
            size_t nl = strlen(name);
            if (k == 0) {
                if (ndrop < sizeof(drop) / sizeof(drop[0]))
                    drop[ndrop++] = name;
            } else if (k == 1 && (json_object_is_type(val, json_type_object) ||
                                  json_object_is_type(val, json_type_array)) &&
                       pre_len + nl + 2 <= pre_cap) {
                size_t at = pre_len;
                if (pre_len)
                    pre[at++] = '.';
                memcpy(pre + at, name, nl + 1);
                if (json_object_is_type(val, json_type_object)) {
                    prune(val, keep, pre, at + nl, pre_cap);
                } else {
                    /* a path through a list names a member of each of its
                     * objects: "status.conditions.type" */
                    for (size_t i = 0; i < json_object_array_length(val); i++) {
                        json_object *e = json_object_array_get_idx(val, i);
                        if (json_object_is_type(e, json_type_object))
                            prune(e, keep, pre, at + nl, pre_cap);
                    }
                }
                pre[pre_len] = '\0';
            }
        }
        for (size_t i = 0; i < ndrop; i++)
            json_object_object_del(obj, drop[i]);
    } while (ndrop == sizeof(drop) / sizeof(drop[0]));
}

/* managedFields are large and nobody here reads them; with keep paths, only
 * those fields (and metadata, which the cache itself needs) stay. */
static int keeps_path(char *const *keep, const char *path)
{
    for (; *keep; keep++)
        if (strcmp(*keep, path) == 0)
            return 1;
    return 0;
}

/* Whether metadata member name stays under tg_cache_keep_metadata: the
 * cache's own (the key, the version), deletionTimestamp (a terminating
 * object reads as such whatever the projection), the named ones, and the
 * annotations when tg_cache_keep_fields names them. */
static int keeps_meta_member(const tg_cache *c, const char *name)
{
    static const char *const own[] = {"name", "namespace", "resourceVersion", "deletionTimestamp", NULL};

    if (keeps_path((char *const *)own, name) || keeps_path(c->keep_meta, name))
        return 1;
    return strcmp(name, "annotations") == 0 && (c->keep == NULL || keeps_path(c->keep, "metadata.annotations"));
}

/* Drop the metadata members tg_cache_keep_metadata does not keep: uid,
 * creationTimestamp, generation, finalizers, ownerReferences cost about
 * 150 bytes an object where no reader looks at them. */
static void project_metadata(const tg_cache *c, json_object *meta)
{
    const char *drop[16];
    size_t ndrop;

    do {
        ndrop = 0;
        json_object_object_foreach(meta, name, val) {
            (void)val;
            if (!keeps_meta_member(c, name) && ndrop < sizeof(drop) / sizeof(drop[0]))
                drop[ndrop++] = name;
        }
        for (size_t i = 0; i < ndrop; i++)
            json_object_object_del(meta, drop[i]);
    } while (ndrop == sizeof(drop) / sizeof(drop[0]));
}

/* The string at c->shrink_path (through objects only) replaced by what
 * c->shrink makes of it; left as is when absent, not a string, or when
 * shrink makes nothing (out of memory: the object is only larger). */
static void shrink_field(const tg_cache *c, json_object *obj)
{
    char seg[128];
    const char *p = c->shrink_path, *dot;
    json_object *parent = obj, *val = NULL;
    char *small;

    for (;;) {
        dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(seg) || !json_object_is_type(parent, json_type_object))
            return;
        memcpy(seg, p, n);
        seg[n] = '\0';
        if (!json_object_object_get_ex(parent, seg, &val))
            return;
        if (!dot)
            break;
        parent = val;
        p = dot + 1;
    }
    if (!json_object_is_type(val, json_type_string) || (small = c->shrink(json_object_get_string(val))) == NULL)
        return;
    json_object_object_add(parent, seg, json_object_new_string(small));
    free(small);
}

static void strip(tg_cache *c, json_object *obj)
{
    json_object *meta;
    if (json_object_object_get_ex(obj, "metadata", &meta) && json_object_is_type(meta, json_type_object)) {
        json_object_object_del(meta, "managedFields");
        /* `kubectl apply` copies the whole object into an annotation: a
         * trimmed cache would otherwise keep a second, untrimmed copy. */
        if (c->keep != NULL && !keeps_path(c->keep, "metadata.annotations"))
            json_object_object_del(meta, "annotations");
        if (c->keep_meta != NULL)
            project_metadata(c, meta);
    }
    if (c->keep != NULL && json_object_is_type(obj, json_type_object)) {
        char pre[256] = "";
        prune(obj, c->keep, pre, 0, sizeof(pre));
    }
    if (c->shrink_path != NULL)
        shrink_field(c, obj);
}

/* --- compact entries --- */

/* The members of metadata that the stored form keeps outside the JSON
 * text, as plain strings: each is already there (the key, the version every
 * relist compares without a parse), so the text need not say them again
 * (about 100 bytes an object). */
static const char *const outside[] = {"resourceVersion", "namespace", "name"};
#define N_OUTSIDE (sizeof(outside) / sizeof(outside[0]))

/* obj's compact text without the outside members, into *json (malloc'd).
 * They are taken out of metadata for the serialisation and put back (at
 * the end of metadata: handlers may see the members in another order).
 * Slashes are not escaped: certificates are base64, full of them. */
static int text_without_outside(json_object *obj, char **json, size_t *json_len)
{
    json_object *meta = tg_json_path(obj, "metadata", NULL), *held[N_OUTSIDE] = {NULL};
    const char *text;
    int rc = -1;

    for (size_t i = 0; meta && i < N_OUTSIDE; i++)
        if (json_object_object_get_ex(meta, outside[i], &held[i])) {
            json_object_get(held[i]);
            json_object_object_del(meta, outside[i]);
        }
    text = json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                             json_len);
    if (text && (*json = malloc(*json_len + 1)) != NULL) {
        memcpy(*json, text, *json_len + 1);
        rc = 0;
    }
    for (size_t i = N_OUTSIDE; i-- > 0;)
        if (held[i] && json_object_object_add(meta, outside[i], held[i]) != 0)
            json_object_put(held[i]);
    return rc;
}

/* The stored form of an (already stripped) object, in one allocation:
 * "<resourceVersion>\0<namespace>\0<name>\0<JSON text without them>\0".
 * With rv_only (the digest stands for the object) the text is empty.
 * Returns NULL when out of memory. */
static char *stored_new(json_object *obj, int rv_only)
{
    const char *v[N_OUTSIDE];
    size_t len[N_OUTSIDE], json_len = 0, total = 0, at = 0;
    char *json = NULL, *s;

    v[0] = object_rv(obj);
    v[1] = tg_json_path_string(obj, "metadata", "namespace", NULL);
    v[2] = tg_json_path_string(obj, "metadata", "name", NULL);
    for (size_t i = 0; i < N_OUTSIDE; i++) {
        v[i] = v[i] ? v[i] : "";
        total += (len[i] = strlen(v[i])) + 1;
    }
    /* Copied before the text is made: the members go out of obj meanwhile. */
    if ((s = malloc(total)) == NULL)
        return NULL;
    for (size_t i = 0; i < N_OUTSIDE; i++) {
        memcpy(s + at, v[i], len[i] + 1);
        at += len[i] + 1;
    }
    if (!rv_only && text_without_outside(obj, &json, &json_len) != 0) {
        free(s);
        return NULL;
    }
    char *grown = realloc(s, total + json_len + 1);
    if (grown == NULL) {
        free(s);
        free(json);
        return NULL;
    }
    memcpy(grown + total, json ? json : "", json_len + 1);
    free(json);
    return grown;
}

static const char *stored_json(const char *stored)
{
    for (size_t i = 0; i < N_OUTSIDE; i++)
        stored += strlen(stored) + 1;
    return stored;
}

/* A fresh tree (one reference) from the stored text, the outside members
 * put back, or NULL. The text is json-c's own output, so plain parsing
 * suffices (tg_json_parse_own, with the thread's cached tokener); the depth
 * limit is the one the object passed on its way in. NULL only when out of
 * memory: callers treat it as "not found". */
static json_object *stored_parse(const char *stored)
{
    const char *json = stored_json(stored);
    json_object *obj = *json ? tg_json_parse_own(json, strlen(json)) : NULL, *meta;

    if (obj == NULL || !json_object_object_get_ex(obj, "metadata", &meta))
        return obj;   /* every stored object has metadata (its name) */
    for (size_t i = 0; i < N_OUTSIDE; stored += strlen(stored) + 1, i++) {
        json_object *str;
        if (*stored == '\0')
            continue;
        if ((str = json_object_new_string(stored)) == NULL || json_object_object_add(meta, outside[i], str) != 0) {
            json_object_put(str);
            json_object_put(obj);
            return NULL;
        }
    }
    return obj;
}

static const char *entry_rv(const cache_entry *e)
{
    return e->stored ? e->stored : object_rv(e->obj);
}

/* --- the indexes --- */

/* Put e in the bucket of each of its values (borrowed from its object). */
static void index_add(tg_cache *c, cache_entry *e, const char *const values[IDX_COUNT])
{
    for (int i = 0; i < IDX_COUNT; i++) {
        e->index_value[i] = NULL;
        if (c->index[i] == NULL || values[i] == NULL)
            continue;
        index_bucket *b = tg_strtab_get(c->index[i], values[i]);
        if (b == NULL) {
            size_t len = strlen(values[i]);
            if ((b = calloc(1, sizeof(*b) + len + 1)) != NULL)
                memcpy(b->value, values[i], len + 1);
            if (b == NULL || tg_strtab_add(c->index[i], b) != 0) {
                /* Out of memory: the object stays reachable by key, only
                 * this index misses it (a label index's users fall back to
                 * a live read); without a value, removal skips it too. */
                free(b);
                continue;
            }
        }
        e->index_value[i] = b->value;
        e->idx_next[i] = b->head;
        b->head = e;
        b->count++;
    }
}

static void index_remove(tg_cache *c, cache_entry *e)
{
    for (int i = 0; i < IDX_COUNT; i++) {
        if (c->index[i] == NULL || e->index_value[i] == NULL)
            continue;
        index_bucket *b = tg_strtab_get(c->index[i], e->index_value[i]);
        if (b == NULL)
            continue;
        for (cache_entry **p = &b->head; *p; p = &(*p)->idx_next[i]) {
            if (*p == e) {
                *p = e->idx_next[i];
                b->count--;
                break;
            }
        }
        e->idx_next[i] = NULL;
        e->index_value[i] = NULL;   /* the bucket's, which may go now */
        if (b->head == NULL)
            free(tg_strtab_take(c->index[i], b->value));
    }
}

/* Fills values[] with the object's value for each index that is on (in
 * obj, NULL when the object has none). */
static void index_values_of(tg_cache *c, json_object *obj, const char *values[IDX_COUNT])
{
    for (int i = 0; i < IDX_COUNT; i++)
        values[i] = NULL;
    if (c->index[IDX_LABEL])
        values[IDX_LABEL] = tg_json_string(tg_json_path(obj, "metadata", "labels", NULL), c->index_label);
    if (c->index[IDX_NAMESPACE])
        values[IDX_NAMESPACE] = tg_json_path_string(obj, "metadata", "namespace", NULL);
    if (c->index[IDX_NAME])
        values[IDX_NAME] = tg_json_path_string(obj, "metadata", "name", NULL);
}

/* --- changes --- */

/* old_stored (compact mode) is consumed, even on failure. */
static int change_push(change_list *l, int kind, json_object *old_obj, char *old_stored, json_object *new_obj)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        change *v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            free(old_stored);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].kind = kind;
    l->v[l->n].old_obj = old_obj ? json_object_get(old_obj) : NULL;
    l->v[l->n].old_stored = old_stored;
    l->v[l->n].new_obj = new_obj ? json_object_get(new_obj) : NULL;
    l->n++;
    return 0;
}

/* A compact entry's old object, parsed only when a handler will see it. */
static void change_parse_old(change *ch, const tg_cache_handlers *h)
{
    int wanted = h != NULL && ((ch->kind == CH_UPDATE && h->on_update) || (ch->kind == CH_DELETE && h->on_delete));
    if (ch->old_stored != NULL && ch->old_obj == NULL && wanted)
        ch->old_obj = stored_parse(ch->old_stored);
}

static void changes_deliver(change_list *l, const tg_cache_handlers *h)
{
    for (size_t i = 0; i < l->n; i++) {
        change *ch = &l->v[i];
        change_parse_old(ch, h);
        /* A compact old object that could not be parsed back (out of
         * memory) is "not found": an update then reads as the add of the
         * new object, and a deletion goes unreported; the next relist
         * brings the handlers back in step. */
        if (h != NULL) {
            if (ch->kind == CH_ADD && h->on_add) {
                h->on_add(ch->new_obj, h->data);
            } else if (ch->kind == CH_UPDATE && h->on_update) {
                if (ch->old_obj)
                    h->on_update(ch->old_obj, ch->new_obj, h->data);
                else if (h->on_add)
                    h->on_add(ch->new_obj, h->data);
            } else if (ch->kind == CH_DELETE && h->on_delete && ch->old_obj) {
                h->on_delete(ch->old_obj, h->data);
            }
        }
        json_object_put(ch->old_obj);
        json_object_put(ch->new_obj);
        free(ch->old_stored);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* --- writes (under the write lock) --- */

/* The digest of (stripped) obj. NULL when there is no digest function or it
 * made none (it found nothing it wanted, or out of memory): readers then see
 * no digest, and a digest-only cache keeps that entry's text. */
static void *make_digest(tg_cache *c, json_object *obj)
{
    return c->digest ? c->digest(obj) : NULL;
}

/* The entry's digest becomes digest (owned), the old one freed. */
static void set_digest(cache_entry *e, void *digest, void (*digest_free)(void *digest))
{
    if (e->digest)
        e->digest_free(e->digest);
    e->digest = digest;
    e->digest_free = digest_free;
}

/* Insert or replace obj under key (key is consumed). */
static int upsert(tg_cache *c, char *key, json_object *obj, change_list *changes)
{
    cache_entry *e = tg_strtab_get(c->objects, key);
    if (e != NULL) {
        free(key);
        e->seen = 1;
        if (e->obj == obj || strcmp(entry_rv(e), object_rv(obj)) == 0)
            return 0;   /* unchanged: a relist of an object we already have */
        void *digest = make_digest(c, obj);
        char *stored = NULL;
        if (c->compact && (stored = stored_new(obj, c->digest_only && digest)) == NULL) {
            if (digest)
                c->digest_free(digest);
            return -1;   /* the entry keeps its last known state */
        }
        const char *iv[IDX_COUNT];
        index_values_of(c, obj, iv);
        set_digest(e, digest, c->digest_free);
        if (changes)
            change_push(changes, CH_UPDATE, e->obj, e->stored, obj);
        else
            free(e->stored);
        e->stored = stored;
        index_remove(c, e);
        json_object_put(e->obj);
        e->obj = c->compact ? NULL : json_object_get(obj);
        index_add(c, e, iv);
        return 0;
    }
    size_t key_len = strlen(key);
    e = calloc(1, sizeof(*e) + key_len + 1);
    if (e == NULL) {
        free(key);
        return -1;
    }
    memcpy(e->key, key, key_len + 1);
    free(key);
    set_digest(e, make_digest(c, obj), c->digest_free);
    if (c->compact)
        e->stored = stored_new(obj, c->digest_only && e->digest);
    else
        e->obj = json_object_get(obj);
    e->seen = 1;
    if ((c->compact && e->stored == NULL) || tg_strtab_add(c->objects, e) != 0) {
        entry_free(e);
        return -1;
    }
    const char *iv[IDX_COUNT];
    index_values_of(c, obj, iv);
    index_add(c, e, iv);
    if (changes)
        change_push(changes, CH_ADD, NULL, NULL, obj);
    return 0;
}

static void remove_entry(tg_cache *c, cache_entry *e, change_list *changes)
{
    if (changes) {
        change_push(changes, CH_DELETE, e->obj, e->stored, NULL);
        e->stored = NULL;   /* moved into the change */
    }
    index_remove(c, e);
    tg_strtab_take(c->objects, e->key);
    entry_free(e);
}

/* Removes every entry a relist did not see: collected first, since a walk
 * of the table must not see it change. Returns -1 when out of memory (the
 * entries stay, as if still there: the next relist tries again). */
static int remove_unseen(tg_cache *c, change_list *changes)
{
    size_t n = 0, at = 0;
    cache_entry *e, **gone = malloc((tg_strtab_count(c->objects) + 1) * sizeof(*gone));

    if (!gone)
        return -1;
    while ((e = tg_strtab_next(c->objects, &at)) != NULL)
        if (!e->seen)
            gone[n++] = e;
    for (size_t i = 0; i < n; i++)
        remove_entry(c, gone[i], changes);
    free(gone);
    return 0;
}

static int set_rv(tg_cache *c, const char *rv)
{
    if (rv == NULL || *rv == '\0' || strcmp(rv, c->rv) == 0)
        return 0;
    char *copy = strdup(rv);
    if (copy == NULL)
        return -1;
    free(c->rv);
    c->rv = copy;
    return 0;
}

/* Every item a list object with a name: checked before anything is stored, so
 * that a bad list leaves the cache as it was. */
static int check_items(json_object *items, char *err, size_t err_len)
{
    if (!json_object_is_type(items, json_type_array))
        return tg_errf(err, err_len, "list has no items array");
    size_t n = json_object_array_length(items);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        if (!json_object_is_type(it, json_type_object) ||
            tg_json_path_string(it, "metadata", "name", NULL) == NULL)
            return tg_errf(err, err_len, "list item %zu has no metadata.name", i);
    }
    return 0;
}

/* The items of a replace, one at a time, as new references: a list's array,
 * or the staged compact texts parsed back one by one. */
typedef struct item_source {
    json_object *items;            /* or NULL: the texts */
    const char *text;              /* the next staged text */
    size_t i, n;
} item_source;

static json_object *next_item(item_source *src, int *oom)
{
    json_object *it;

    if (src->i >= src->n)
        return NULL;
    src->i++;
    if (src->items)
        return json_object_get(json_object_array_get_idx(src->items, src->i - 1));
    size_t len = strlen(src->text);
    it = tg_json_parse_own(src->text, len);
    src->text += len + 1;
    if (it == NULL)
        *oom = 1;
    return it;
}

/* Changes are collected only for handlers that will see them: each one holds
 * its objects until delivery, which for a list would keep every parsed item
 * alive at once. */
static change_list *changes_for(const tg_cache_handlers *h, change_list *l)
{
    return h != NULL && (h->on_add || h->on_update || h->on_delete) ? l : NULL;
}

static int replace_from(tg_cache *c, item_source *src, const char *rv, const tg_cache_handlers *h, char *err,
                        size_t err_len)
{
    if (rv == NULL || *rv == '\0')
        return tg_errf(err, err_len, "list has no metadata.resourceVersion");

    change_list changes = {0};
    int rc = 0, oom = 0;
    pthread_rwlock_wrlock(&c->lock);
    cache_entry *e;
    size_t at = 0;
    while ((e = tg_strtab_next(c->objects, &at)) != NULL)
        e->seen = 0;
    for (json_object *it; rc == 0 && (it = next_item(src, &oom)) != NULL;) {
        strip(c, it);
        char *key = object_key(it);
        if (key == NULL || upsert(c, key, it, changes_for(h, &changes)) != 0)
            rc = tg_errf(err, err_len, "out of memory storing the list");
        json_object_put(it);
    }
    if (oom)
        rc = tg_errf(err, err_len, "out of memory storing the list");
    if (rc == 0) {
        /* Whatever the list no longer has was deleted while we were not watching. */
        if (remove_unseen(c, changes_for(h, &changes)) != 0 || set_rv(c, rv) != 0)
            rc = tg_errf(err, err_len, "out of memory");
        else
            c->synced = 1;
    }
    pthread_rwlock_unlock(&c->lock);
    changes_deliver(&changes, h);
    return rc;
}

int tg_cache_replace(tg_cache *c, json_object *items, const char *rv, const tg_cache_handlers *h,
                     char *err, size_t err_len)
{
    if (check_items(items, err, err_len) != 0)
        return -1;
    item_source src = {.items = items, .n = json_object_array_length(items)};
    return replace_from(c, &src, rv, h, err, err_len);
}

/* --- paged lists --- */

static int stage_text(tg_cache *c, const char *text, size_t len)
{
    if (c->staged_len + len + 1 > c->staged_cap) {
        size_t cap = c->staged_cap ? c->staged_cap : 16384;
        while (cap < c->staged_len + len + 1)
            cap *= 2;
        char *p = realloc(c->staged, cap);
        if (p == NULL)
            return -1;
        c->staged = p;
        c->staged_cap = cap;
    }
    memcpy(c->staged + c->staged_len, text, len + 1);
    c->staged_len += len + 1;
    c->staged_n++;
    return 0;
}

int tg_cache_stage(tg_cache *c, json_object *items, char *err, size_t err_len)
{
    if (json_object_is_type(items, json_type_null))
        return 0;   /* an empty page */
    if (check_items(items, err, err_len) != 0)
        return -1;
    size_t n = json_object_array_length(items);
    if (!c->compact) {
        if (c->staged_items == NULL && (c->staged_items = json_object_new_array()) == NULL)
            return tg_errf(err, err_len, "out of memory");
        for (size_t i = 0; i < n; i++)
            if (json_object_array_add(c->staged_items, json_object_get(json_object_array_get_idx(items, i))) != 0)
                return tg_errf(err, err_len, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        size_t len;
        strip(c, it);
        const char *text = json_object_to_json_string_length(
            it, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (text == NULL || stage_text(c, text, len) != 0)
            return tg_errf(err, err_len, "out of memory");
    }
    return 0;
}

int tg_cache_commit(tg_cache *c, const char *rv, const tg_cache_handlers *h, char *err, size_t err_len)
{
    int rc;

    if (!c->compact) {
        json_object *items = c->staged_items ? c->staged_items : json_object_new_array();
        c->staged_items = NULL;
        if (items == NULL)
            return tg_errf(err, err_len, "out of memory");
        rc = tg_cache_replace(c, items, rv, h, err, err_len);
        json_object_put(items);
        return rc;
    }
    item_source src = {.text = c->staged, .n = c->staged_n};
    rc = replace_from(c, &src, rv, h, err, err_len);
    tg_cache_discard(c);
    return rc;
}

void tg_cache_discard(tg_cache *c)
{
    json_object_put(c->staged_items);
    c->staged_items = NULL;
    free(c->staged);
    c->staged = NULL;
    c->staged_len = c->staged_cap = c->staged_n = 0;
}

int tg_cache_apply(tg_cache *c, const tg_watch_event *ev, const tg_cache_handlers *h, char *err, size_t err_len)
{
    json_object *obj = ev->object;
    if (ev->type == TG_WATCH_ERROR) {
        int code = tg_watch_status_code(obj);
        const char *msg = tg_json_string(obj, "message");
        tg_errf(err, err_len, "watch ERROR %d: %.200s", code, msg ? msg : "(no message)");
        return code == 410 ? TG_CACHE_GONE : TG_CACHE_ERROR;
    }
    const char *rv = tg_json_path_string(obj, "metadata", "resourceVersion", NULL);
    if (rv == NULL || *rv == '\0')
        return tg_errf(err, err_len, "%s event without metadata.resourceVersion", tg_watch_type_name(ev->type));
    if (ev->type == TG_WATCH_BOOKMARK)
        return set_rv(c, rv) == 0 ? TG_CACHE_OK : tg_errf(err, err_len, "out of memory");

    char *key = object_key(obj);
    if (key == NULL)
        return tg_errf(err, err_len, "%s event without metadata.name", tg_watch_type_name(ev->type));

    change_list changes = {0};
    int rc = TG_CACHE_OK;
    strip(c, obj);
    pthread_rwlock_wrlock(&c->lock);
    if (ev->type == TG_WATCH_DELETED) {
        cache_entry *e = tg_strtab_get(c->objects, key);
        if (e != NULL)
            remove_entry(c, e, changes_for(h, &changes));
        free(key);
    } else if (upsert(c, key, obj, changes_for(h, &changes)) != 0) {
        rc = tg_errf(err, err_len, "out of memory storing an event");
    }
    if (rc == TG_CACHE_OK && set_rv(c, rv) != 0)
        rc = tg_errf(err, err_len, "out of memory");
    pthread_rwlock_unlock(&c->lock);
    changes_deliver(&changes, h);
    return rc;
}

int tg_cache_set_resource_version(tg_cache *c, const char *rv)
{
    return set_rv(c, rv);
}

const char *tg_cache_resource_version(const tg_cache *c)
{
    return c->rv;
}

/* --- reads --- */

/* Show one entry to a visitor: its tree, or in compact mode a tree parsed
 * for this call. Returns 1 if visited, 0 if the text could not be parsed
 * (out of memory) or only the digest is kept, which readers report as "not
 * found". */
static int visit_entry(const cache_entry *e, tg_cache_visit_cb visit, void *data)
{
    if (e->stored == NULL) {
        visit(e->obj, data);
        return 1;
    }
    json_object *obj = stored_parse(e->stored);
    if (obj == NULL)
        return 0;
    visit(obj, data);
    json_object_put(obj);
    return 1;
}

static char *make_key(const char *ns, const char *name, char *buf, size_t len)
{
    int n = ns && *ns ? snprintf(buf, len, "%s/%s", ns, name) : snprintf(buf, len, "%s", name);
    return n >= 0 && (size_t)n < len ? buf : NULL;
}

int tg_cache_get(tg_cache *c, const char *ns, const char *name, tg_cache_visit_cb visit, void *data)
{
    char buf[512];   /* 253 for a namespace + '/' + 253 for a name */
    if (name == NULL || make_key(ns, name, buf, sizeof(buf)) == NULL)
        return 0;
    pthread_rwlock_rdlock(&c->lock);
    cache_entry *e = tg_strtab_get(c->objects, buf);
    int found = e != NULL;
    if (found && visit != NULL)
        found = visit_entry(e, visit, data);
    pthread_rwlock_unlock(&c->lock);
    return found;
}

int tg_cache_get_digest(tg_cache *c, const char *ns, const char *name, tg_cache_digest_cb visit, void *data)
{
    char buf[512];
    if (name == NULL || make_key(ns, name, buf, sizeof(buf)) == NULL)
        return 0;
    pthread_rwlock_rdlock(&c->lock);
    cache_entry *e = tg_strtab_get(c->objects, buf);
    int found = e != NULL;
    if (found)
        visit(e->digest, data);
    pthread_rwlock_unlock(&c->lock);
    return found;
}

/* 1 when e may hold the JSON text quoted (a serialised string): a compact
 * entry whose text lacks it cannot (same serialisation, same escapes). */
static int may_hold(const cache_entry *e, const char *quoted)
{
    return !quoted || !e->stored || strstr(stored_json(e->stored), quoted) != NULL;
}

static size_t get_by(tg_cache *c, int idx, const char *value, const char *quoted, tg_cache_visit_cb visit,
                     void *data)
{
    size_t n = 0;
    if (c->index[idx] == NULL || value == NULL)
        return 0;
    pthread_rwlock_rdlock(&c->lock);
    index_bucket *b = tg_strtab_get(c->index[idx], value);
    if (b != NULL && visit == NULL) {
        n = b->count;
    } else if (b != NULL) {
        for (cache_entry *e = b->head; e; e = e->idx_next[idx])
            if (may_hold(e, quoted))
                n += (size_t)visit_entry(e, visit, data);
    }
    pthread_rwlock_unlock(&c->lock);
    return n;
}

size_t tg_cache_get_by_index(tg_cache *c, const char *value, tg_cache_visit_cb visit, void *data)
{
    return get_by(c, IDX_LABEL, value, NULL, visit, data);
}

size_t tg_cache_get_by_index_holding(tg_cache *c, const char *value, const char *holds, tg_cache_visit_cb visit,
                                     void *data)
{
    json_object *str = holds ? json_object_new_string(holds) : NULL;
    /* serialised as stored texts are (text_without_outside) */
    const char *quoted = str ? json_object_to_json_string_ext(str, JSON_C_TO_STRING_PLAIN |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE)
                             : NULL;
    size_t n = holds && !quoted ? 0 : get_by(c, IDX_LABEL, value, quoted, visit, data);

    json_object_put(str);
    return n;
}

size_t tg_cache_get_by_namespace(tg_cache *c, const char *ns, tg_cache_visit_cb visit, void *data)
{
    return get_by(c, IDX_NAMESPACE, ns, NULL, visit, data);
}

size_t tg_cache_get_by_name(tg_cache *c, const char *name, tg_cache_visit_cb visit, void *data)
{
    return get_by(c, IDX_NAME, name, NULL, visit, data);
}

size_t tg_cache_foreach(tg_cache *c, tg_cache_visit_cb visit, void *data)
{
    size_t n = 0;
    size_t at = 0;
    cache_entry *e;
    pthread_rwlock_rdlock(&c->lock);
    while ((e = tg_strtab_next(c->objects, &at)) != NULL)
        n += visit ? (size_t)visit_entry(e, visit, data) : 1;
    pthread_rwlock_unlock(&c->lock);
    return n;
}

size_t tg_cache_count(tg_cache *c)
{
    pthread_rwlock_rdlock(&c->lock);
    size_t n = tg_strtab_count(c->objects);
    pthread_rwlock_unlock(&c->lock);
    return n;
}

int tg_cache_synced(tg_cache *c)
{
    pthread_rwlock_rdlock(&c->lock);
    int s = c->synced;
    pthread_rwlock_unlock(&c->lock);
    return s;
}
