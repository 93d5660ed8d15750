/* strbuf.c - growable text buffer. */
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void tg_strbuf_put(tg_strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;
        while (b->len + n + 1 > cap)
            cap *= 2;
        if (!(np = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tg_strbuf_str(tg_strbuf *b, const char *s)
{
    tg_strbuf_put(b, s, strlen(s));
}
