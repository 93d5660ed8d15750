/* informer.h - a watch-fed cache of one kind of object, as client-go has it.
 *
 * List (paged with limit/continue, filtered by label/field selectors), then
 * watch from the list's resourceVersion with bookmarks. The watch is resumed
 * from the last resourceVersion when it ends (the server closes it after
 * timeoutSeconds) or breaks (reconnect with capped exponential backoff and
 * jitter). A 410 Gone (HTTP status or ERROR event) means our version is too
 * old: relist, and report what vanished meanwhile as deletions.
 *
 * The informer runs on its client's loop; handlers are called there. The
 * cache (cache.h) may be read from any thread. */
#ifndef TG_KUBE_INFORMER_H
#define TG_KUBE_INFORMER_H

#include <stdint.h>

#include "kube/cache.h"
#include "kube/client.h"

typedef struct tg_informer tg_informer;

typedef struct tg_informer_opts {
    const char *path;              /* the collection: "/api/v1/secrets",
                                    * "/apis/authentication.liqo.io/v1beta1/tenants" */
    const char *label_selector;    /* "liqo.io/nonce=true", or NULL */
    const char *field_selector;    /* or NULL */
    const char *index_label;       /* a label to index by (cache.h), or NULL */
    unsigned index_metadata;       /* TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME, or 0
                                    * (tg_cache_index_metadata) */
    const char *const *keep_fields;/* NULL-terminated dotted paths to keep
                                    * (tg_cache_keep_fields), or NULL: all */
    const char *const *keep_metadata; /* NULL-terminated metadata members to keep
                                    * (tg_cache_keep_metadata), or NULL: all */
    const char *shrink_path;       /* a string field stored shrunk (tg_cache_shrink_field), */
    char *(*shrink)(const char *value);   /* by this; NULL: none */
    long page_size;                /* list page size; 0: 500 */
    long watch_timeout_s;          /* server-side timeoutSeconds; 0: random in [300, 600) */
    uint64_t backoff_base_ms;      /* 0: 500 ms */
    uint64_t backoff_cap_ms;       /* 0: 30 s */
    int compact;                   /* store objects as compact JSON text
                                    * (tg_cache_set_compact): less memory, a parse per read */
    const char *resume_rv;         /* watch from this resourceVersion first instead of
                                    * listing (tests, or a caller resuming a known state);
                                    * not synced until a list. NULL: list first */
    tg_cache_handlers handlers;    /* called on the loop thread */
} tg_informer_opts;

/* Counters for tests, probes and metrics. Loop thread only. */
typedef struct tg_informer_stats {
    unsigned lists;                /* complete lists stored */
    unsigned pages;                /* list pages received (limit/continue) */
    unsigned gone;                 /* 410s seen (each led to a relist) */
    unsigned watches;              /* watch requests started */
    unsigned failures;             /* lists or watches that failed and were retried with backoff */
    unsigned smaller_pages;        /* list pages asked again with a smaller limit (over TG_DOC_MAX_BYTES) */
    unsigned long events;          /* watch events applied (bookmarks included) */
    char last_error[200];          /* the latest failure, "" if none; never secret */
} tg_informer_stats;

/* The strings in opts are copied. Returns NULL with err. */
tg_informer *tg_informer_new(tg_kube_client *client, const tg_informer_opts *opts, char *err, size_t err_len);

/* Begin listing. Returns 0, or -1 with err. */
int tg_informer_start(tg_informer *inf, char *err, size_t err_len);

/* Stop and free on the loop thread; no reader may use the cache any more.
 * The memory is released once libuv has closed the timer: run the loop. */
void tg_informer_free(tg_informer *inf);

/* The store, for readers on any thread. */
tg_cache *tg_informer_cache(tg_informer *inf);

/* 1 once the first list is stored (any thread). */
int tg_informer_synced(tg_informer *inf);

/* Objects in the cache (any thread). */
size_t tg_informer_count(tg_informer *inf);

const tg_informer_stats *tg_informer_stats_get(tg_informer *inf);

#endif
