/* trim.h - gives memory freed after a burst back to the OS (malloc_trim),
 * from a timer on the main loop, only once things are quiet. */
#ifndef TG_WEBHOOK_TRIM_H
#define TG_WEBHOOK_TRIM_H

#include "webhook/server_priv.h"

/* Start the (unreferenced) timer; shutdown closes s->trim_timer. */
void tg_trim_start(tg_server *s);

#endif
