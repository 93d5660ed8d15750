/* certwatch.c - file watch plus periodic check of the serving cert and key. */
#include "certwatch.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>

static int stat_changed(const struct stat *a, const struct stat *b)
{
    return a->st_ino != b->st_ino || a->st_dev != b->st_dev || a->st_size != b->st_size ||
           a->st_mtim.tv_sec != b->st_mtim.tv_sec || a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

static void check_files(tg_certwatch *w)
{
    struct stat cst, kst;
    char err[512];
    int ok;

    if (stat(w->store->cert_path, &cst) != 0 || stat(w->store->key_path, &kst) != 0)
        return;                    /* mid-swap or gone: keep serving, look again later */
    if (w->have_st && !stat_changed(&cst, &w->cert_st) && !stat_changed(&kst, &w->key_st))
        return;
    /* Record the new state whatever the outcome: a bad pair is reported once
     * per change, not every period; the next write triggers a new attempt. */
    w->cert_st = cst;
    w->key_st = kst;
    w->have_st = 1;
    err[0] = '\0';
    ok = tg_tls_store_reload(w->store, err, sizeof(err)) == 0;
    if (w->on_reload)
        w->on_reload(w, ok, err);
}

static void on_debounce(uv_timer_t *t)
{
    check_files(t->data);
}

static void on_periodic(uv_timer_t *t)
{
    check_files(t->data);
}

static void on_dir_event(uv_fs_event_t *ev, const char *filename, int events, int status)
{
    tg_certwatch *w = ev->data;

    if (w->closing)
        return;
    /* Restart the debounce: act once the burst of writes is over. */
    uv_timer_start(&w->debounce, on_debounce, TG_CERTWATCH_DEBOUNCE_MS, 0);
}

static int watch_dir_of(tg_certwatch *w, const char *path)
{
    char copy[4096], *dir;
    int rc;

    snprintf(copy, sizeof(copy), "%s", path);
    dir = dirname(copy);
    for (int i = 0; i < w->ndirs; i++) {
        char have[4096];
        size_t n = sizeof(have);
        if (uv_fs_event_getpath(&w->dir_events[i], have, &n) == 0 && strcmp(have, dir) == 0)
            return 0;              /* cert and key side by side: one watch */
    }
    uv_fs_event_init(w->loop, &w->dir_events[w->ndirs]);
    w->dir_events[w->ndirs].data = w;
    w->open_handles++;
    rc = uv_fs_event_start(&w->dir_events[w->ndirs], on_dir_event, dir, 0);
    w->ndirs++;
    return rc;
}

int tg_certwatch_start(tg_certwatch *w, uv_loop_t *loop, tg_tls_store *store, uint64_t interval_ms,
                       tg_certwatch_reload_cb on_reload, void *data)
{
    int rc;

    memset(w, 0, sizeof(*w));
    w->loop = loop;
    w->store = store;
    w->on_reload = on_reload;
    w->data = data;
    if (stat(store->cert_path, &w->cert_st) == 0 && stat(store->key_path, &w->key_st) == 0)
        w->have_st = 1;
    uv_timer_init(loop, &w->periodic);
    uv_timer_init(loop, &w->debounce);
    w->periodic.data = w->debounce.data = w;
    w->open_handles = 2;
    uv_timer_start(&w->periodic, on_periodic, interval_ms, interval_ms);
    /* A failed watch is not fatal: the periodic check still catches changes. */
    rc = watch_dir_of(w, store->cert_path);
    if (rc == 0)
        rc = watch_dir_of(w, store->key_path);
    return rc;
}

static void on_handle_closed(uv_handle_t *h)
{
    tg_certwatch *w = h->data;

    if (--w->open_handles == 0 && w->on_closed)
        w->on_closed(w);
}

void tg_certwatch_stop(tg_certwatch *w, void (*on_closed)(tg_certwatch *w))
{
    w->closing = 1;
    w->on_closed = on_closed;
    uv_close((uv_handle_t *)&w->periodic, on_handle_closed);
    uv_close((uv_handle_t *)&w->debounce, on_handle_closed);
    for (int i = 0; i < w->ndirs; i++)
        uv_close((uv_handle_t *)&w->dir_events[i], on_handle_closed);
}
