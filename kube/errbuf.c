/* errbuf.c - see errbuf.h. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

int tg_errf(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || err_len == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}
