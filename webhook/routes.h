/* routes.h - the HTTPS port's handlers, one registered per admission path
 * (/validate/tenants, /mutate/tenants, /validate/resourceslices) and a
 * catch-all for the rest (404). Each checks what every request must be
 * (unambiguous HTTP/1.1 framing, exactly its path, POST, JSON, within the
 * body limit) and hands it to admission.h. */
#ifndef TG_WEBHOOK_ROUTES_H
#define TG_WEBHOOK_ROUTES_H

#include <h2o.h>

#include "webhook/server.h"

/* For tg_server_config.register_routes. */
void tg_routes_register(h2o_hostconf_t *host, tg_server *s);

#endif
