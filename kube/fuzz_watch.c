/* fuzz_watch.c - the watch stream parser on arbitrary bytes, fed in pieces
 * whose sizes come from the input, and the cache applying what it yields. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/watch.h"

static int on_event(const tg_watch_event *ev, void *data)
{
    char err[200];
    /* Whatever the verdict (410, bad event), keep going to exercise more. */
    (void)tg_cache_apply(data, ev, NULL, err, sizeof(err));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_cache *cache = tg_cache_new("liqo.io/remote-cluster-id");
    if (cache == NULL)
        return 0;
    tg_watch_parser p;
    /* A small cap so the over-long path is reached too. */
    tg_watch_parser_init(&p, 4096, on_event, cache);
    /* The first byte picks the piece size: events split anywhere. */
    size_t step = size ? (size_t)data[0] % 64 + 1 : 1;
    int rc = 0;
    for (size_t off = 1; off < size && rc == 0; off += step) {
        size_t n = size - off < step ? size - off : step;
        rc = tg_watch_parser_feed(&p, (const char *)data + off, n);
    }
    if (rc == 0)
        tg_watch_parser_finish(&p);
    tg_watch_parser_free(&p);
    tg_cache_count(cache);
    tg_cache_free(cache);
    return 0;
}
