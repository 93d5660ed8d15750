/* lookup_unavailable.h - the lookups while the cluster cannot be read: never
 * synced, so /readyz stays 503 and every Tenant CREATE/UPDATE is answered
 * with a 500 "cache not synced" error (failurePolicy Fail then refuses it),
 * never with a made-up denial reason. */
#ifndef TG_WEBHOOK_LOOKUP_UNAVAILABLE_H
#define TG_WEBHOOK_LOOKUP_UNAVAILABLE_H

#include "webhook/lookup.h"

extern const tg_lookup tg_lookup_unavailable;

#endif
