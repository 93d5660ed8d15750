/* rfc3339.h - RFC 3339 UTC timestamps as the API server writes them
 * ("2026-11-25T15:04:05Z"): conditions' and Events' times, creationTimestamp.
 * Pure: no I/O. One implementation for the reconcilers and api.c. */
#ifndef TG_SIGNER_RFC3339_H
#define TG_SIGNER_RFC3339_H

#include <stddef.h>
#include <time.h>

/* t as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes). */
void rc_rfc3339(time_t t, char *buf, size_t len);

/* An RFC 3339 UTC timestamp as the API server writes it, or 0 when ts is
 * NULL or not one. */
time_t rc_parse_rfc3339(const char *ts);

#endif
