/* shutdown.h - SIGTERM/SIGINT and the graceful drain: readyz says 503,
 * listeners close, idle connections are closed, in-flight requests finish,
 * and the main loop stops once nothing is left or the grace period is over
 * (a backstop thread ends the process just before it, whatever hangs).
 * tg_server_shutdown (server.h) starts it. */
#ifndef TG_WEBHOOK_SHUTDOWN_H
#define TG_WEBHOOK_SHUTDOWN_H

#include "webhook/server_priv.h"

/* On the main loop: the drain timer and the signal handlers. */
void tg_shutdown_init(tg_server *s);

#endif
