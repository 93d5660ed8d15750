/* certwatch.h - reload the serving certificate when its files change.
 *
 * Watches the directories holding the cert and the key (a Kubernetes Secret
 * volume swaps a `..data` symlink, which changes the directory, not the file
 * we hold open), debounces bursts (cert and key are written one after the
 * other), and also checks periodically because inotify can miss changes on
 * some volume types. A change is a different inode, device, size or mtime of
 * either file (stat follows symlinks). */
#ifndef TG_COMMON_CERTWATCH_H
#define TG_COMMON_CERTWATCH_H

#include <sys/stat.h>
#include <uv.h>

#include "common/tls.h"

#define TG_CERTWATCH_DEBOUNCE_MS 200

typedef struct tg_certwatch tg_certwatch;

/* After every reload attempt: ok = 1 and err "" on success. */
typedef void (*tg_certwatch_reload_cb)(tg_certwatch *w, int ok, const char *err);

struct tg_certwatch {
    uv_loop_t *loop;
    tg_tls_store *store;
    tg_certwatch_reload_cb on_reload;
    void *data;
    uv_fs_event_t dir_events[2];
    int ndirs;
    uv_timer_t periodic;
    uv_timer_t debounce;
    struct stat cert_st, key_st;
    int have_st;
    int closing;
    int open_handles;
    void (*on_closed)(tg_certwatch *w);
};

/* Start watching; the store must already hold the first pair (its files'
 * stat is recorded as the baseline). 0 or a libuv error code. */
int tg_certwatch_start(tg_certwatch *w, uv_loop_t *loop, tg_tls_store *store, uint64_t interval_ms,
                       tg_certwatch_reload_cb on_reload, void *data);

/* Close every handle; on_closed runs once they are all closed. */
void tg_certwatch_stop(tg_certwatch *w, void (*on_closed)(tg_certwatch *w));

#endif
