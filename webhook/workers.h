/* workers.h - a worker thread: its own libuv loop, h2o context, listening
 * socket and connections (conns.h). The main thread talks to it only by
 * setting its phase and waking it. */
#ifndef TG_WEBHOOK_WORKERS_H
#define TG_WEBHOOK_WORKERS_H

#include <stddef.h>

#include "webhook/server_priv.h"

/* Set up w on its own loop, listening on fd. 0, or -1 with err. */
int tg_worker_init(tg_server *s, worker *w, int index, int fd, char *err, size_t err_len);

/* The thread's body: runs the loop until PHASE_STOP. */
void *tg_worker_main(void *arg);

/* Tell every worker of a new phase (PHASE_DRAIN, PHASE_STOP). */
void tg_workers_set_phase(tg_server *s, int phase);

/* After the thread was joined with no connection left: close and free
 * what its loop holds. */
void tg_worker_dispose(worker *w);

#endif
