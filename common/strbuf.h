/* strbuf.h - a growable, always NUL-terminated text buffer for output that is
 * built piece by piece (the /metrics page, an AdmissionReview answer).
 *
 * Out of memory is sticky: the first failed growth sets oom and every later
 * append is ignored, so a caller appends freely and checks oom once at the
 * end. Zero-initialise; the caller owns p (free it). */
#ifndef TG_COMMON_STRBUF_H
#define TG_COMMON_STRBUF_H

#include <stddef.h>

typedef struct tg_strbuf {
    char *p;                       /* NULL until the first append */
    size_t len, cap;
    int oom;
} tg_strbuf;

void tg_strbuf_put(tg_strbuf *b, const char *s, size_t n);
void tg_strbuf_str(tg_strbuf *b, const char *s);

#endif
