/* trim.c - see trim.h. */
#include "trim.h"

#include <malloc.h>

#include "common/file_pages.h"
#include "webhook/server_metrics.h"

#define TRIM_CHECK_MS 500
#define TRIM_ROUNDS 4

/* glibc keeps freed memory in its arenas: after a burst (a thousand
 * connections, a load peak, the parsing of the initial cache lists) the RSS
 * would stay at its peak. Once the burst is over - fewer connections than at
 * the last tick, or no request for a whole tick after some - hand the free
 * pages back, a few ticks in a row: connections close (and workers release
 * their spare buffers) a little after their last request. Cheap when there is
 * nothing to trim, and never while requests keep coming at a steady number of
 * connections. */
static void on_trim_tick(uv_timer_t *t)
{
    tg_server *s = t->data;
    long conns = tg_server_total(s, 0), served = 0;
    int quiet, shrinking;

    for (int i = 0; i < s->nworkers; i++)
        served += atomic_load_explicit(&s->workers[i].served, memory_order_relaxed);
    quiet = served == s->trim_served;
    shrinking = conns < s->trim_conns_last;
    if (!s->trim_synced && s->cfg.lookup->ops->synced(s->cfg.lookup)) {
        s->trim_synced = 1;
        s->trim_rounds = TRIM_ROUNDS;  /* the initial lists' parse garbage */
    }
    if (!quiet || conns != s->trim_conns_last)
        s->trim_rounds = TRIM_ROUNDS;
    s->trim_served = served;
    s->trim_conns_last = conns;
    if (s->trim_rounds > 0 && (quiet || shrinking)) {
        malloc_trim(0);
        /* start-up-only library pages (common/file_pages.h); not while
         * requests run: their code would fault back in */
        if (quiet)
            tg_file_pages_release();
        s->trim_rounds--;
    }
}

void tg_trim_start(tg_server *s)
{
    uv_timer_init(s->main_loop, &s->trim_timer);
    s->trim_timer.data = s;
    uv_timer_start(&s->trim_timer, on_trim_tick, TRIM_CHECK_MS, TRIM_CHECK_MS);
    uv_unref((uv_handle_t *)&s->trim_timer);
}
