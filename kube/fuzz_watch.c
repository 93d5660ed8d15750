/* fuzz_watch.c - the watch stream parser on arbitrary bytes, fed in pieces
 * whose sizes come from the input, and the cache applying what it yields:
 * in tree mode, or (the first byte's top bit) in compact mode with kept
 * fields and handlers, so stored text is parsed back for every old object. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/watch.h"

typedef struct fuzz_state {
    tg_cache *cache;
    const tg_cache_handlers *handlers;
} fuzz_state;

static void touch(json_object *o)
{
    (void)json_object_object_length(o);
}

static void on_add(json_object *o, void *data) { touch(o); }
static void on_update(json_object *old_obj, json_object *o, void *data) { touch(old_obj); touch(o); }
static void on_delete(json_object *o, void *data) { touch(o); }
static void on_visit(json_object *o, void *data) { touch(o); }

static int on_event(const tg_watch_event *ev, void *data)
{
    fuzz_state *st = data;
    char err[200];
    /* Whatever the verdict (410, bad event), keep going to exercise more. */
    (void)tg_cache_apply(st->cache, ev, st->handlers, err, sizeof(err));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keep[] = {"status.certificate", "data.nonce", NULL};
    static const tg_cache_handlers handlers = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete};
    tg_cache *cache = tg_cache_new("liqo.io/remote-cluster-id");
    if (cache == NULL)
        return 0;
    fuzz_state st = {.cache = cache, .handlers = NULL};
    if (size && (data[0] & 0x80)) {
        if (tg_cache_set_compact(cache) != 0 || tg_cache_keep_fields(cache, keep) != 0) {
            tg_cache_free(cache);
            return 0;
        }
        st.handlers = &handlers;
    }
    tg_watch_parser p;
    /* A small cap so the over-long path is reached too. */
    tg_watch_parser_init(&p, 4096, on_event, &st);
    /* The first byte picks the piece size: events split anywhere. */
    size_t step = size ? (size_t)(data[0] & 0x7f) % 64 + 1 : 1;
    int rc = 0;
    for (size_t off = 1; off < size && rc == 0; off += step) {
        size_t n = size - off < step ? size - off : step;
        rc = tg_watch_parser_feed(&p, (const char *)data + off, n);
    }
    if (rc == 0)
        tg_watch_parser_finish(&p);
    tg_watch_parser_free(&p);
    tg_cache_count(cache);
    tg_cache_foreach(cache, on_visit, NULL);
    tg_cache_free(cache);
    return 0;
}
