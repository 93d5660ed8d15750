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
