/* flags.c - see flags.h. */
#include "common/flags.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tg_flag_long(const char *arg, long min, long max, long *out)
{
    char *end;
    long v;

    if (!(*arg >= '0' && *arg <= '9') && *arg != '-')
        return -1;   /* strtol would skip blanks and take a '+' */
    errno = 0;
    v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Past this many seconds the value is refused whatever max_ms says: no
 * overflow while the digits are summed. */
#define SECONDS_CEILING 1000000000ULL

int tg_flag_seconds(const char *arg, uint64_t min_ms, uint64_t max_ms, uint64_t *ms)
{
    uint64_t whole = 0, frac_ms = 0, scale = 100;
    const char *p = arg;

    if (!(*p >= '0' && *p <= '9'))
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > SECONDS_CEILING)
            return -1;
    }
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;     /* "1." */
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac_ms += (uint64_t)(*p - '0') * scale;
    }
    if (*p == 's')
        p++;
    if (*p != '\0')
        return -1;
    whole = whole * 1000 + frac_ms;
    if (whole < min_ms || whole > max_ms)
        return -1;
    *ms = whole;
    return 0;
}

/* Copy n bytes of src into host as a string, if they fit. */
static int copy_host(char *host, size_t host_len, const char *src, size_t n)
{
    if (n >= host_len)
        return -1;
    memcpy(host, src, n);
    host[n] = '\0';
    return 0;
}

int tg_flag_listen_addr(const char *arg, char *host, size_t host_len, int *port)
{
    const char *colon;
    long p;

    if (arg[0] == '[') {
        /* an IPv6 literal: the only form where the host has colons */
        const char *close = strchr(arg, ']');
        if (!close || close[1] != ':' || close == arg + 1 || copy_host(host, host_len, arg + 1, (size_t)(close - arg - 1)))
            return -1;
        colon = close + 1;
    } else {
        colon = strchr(arg, ':');
        if (!colon || strchr(colon + 1, ':'))
            return -1;
        if (colon == arg ? copy_host(host, host_len, "0.0.0.0", 7) : copy_host(host, host_len, arg, (size_t)(colon - arg)))
            return -1;
    }
    if (tg_flag_long(colon + 1, 0, 65535, &p) != 0)
        return -1;
    *port = (int)p;
    return 0;
}

int tg_flag_listen_addr_or_off(const char *arg, char *host, size_t host_len, int *port)
{
    if (strcmp(arg, "off") == 0) {
        *port = -1;
        return 0;
    }
    return tg_flag_listen_addr(arg, host, host_len, port);
}
