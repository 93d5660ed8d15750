/* rfc3339.c - RFC 3339 UTC timestamps as the API server writes them (rfc3339.h). */
#define _GNU_SOURCE   /* strptime, timegm */
#include "signer/rfc3339.h"

#include <string.h>

void rc_rfc3339(time_t t, char *buf, size_t len)
{
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

time_t rc_parse_rfc3339(const char *ts)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    return ts && strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm) ? timegm(&tm) : 0;
}
