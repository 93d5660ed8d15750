/* h1_framing.c - see h1_framing.h. */
#include "h1_framing.h"

#include <string.h>
#include <strings.h>

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* [*b, *e) without surrounding spaces, tabs and a trailing CR. */
static void trim(const char **b, const char **e)
{
    while (*e > *b && (is_ows((*e)[-1]) || (*e)[-1] == '\r'))
        (*e)--;
    while (*b < *e && is_ows(**b))
        (*b)++;
}

static int name_is(const char *name, size_t len, const char *want)
{
    return len == strlen(want) && strncasecmp(name, want, len) == 0;
}

int tg_h1_framing_check(const char *head, size_t len)
{
    const char *p = head, *end = head + len;
    const char *cl = NULL;         /* the first Content-Length value */
    size_t cl_len = 0;
    int has_te = 0, first = 1;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end, *colon, *v, *ve;

        /* the request line, and obsolete folded continuations, carry no header */
        if (first || is_ows(*p)) {
            first = 0;
            p = eol ? eol + 1 : end;
            continue;
        }
        colon = memchr(p, ':', (size_t)(line_end - p));
        if (colon) {
            const char *n = p, *ne = colon;
            trim(&n, &ne);
            v = colon + 1;
            ve = line_end;
            trim(&v, &ve);
            if (name_is(n, (size_t)(ne - n), "transfer-encoding")) {
                has_te = 1;
            } else if (name_is(n, (size_t)(ne - n), "content-length")) {
                if (!cl) {
                    cl = v;
                    cl_len = (size_t)(ve - v);
                } else if (cl_len != (size_t)(ve - v) || memcmp(cl, v, cl_len) != 0) {
                    return TG_H1_FRAMING_LENGTH_CONFLICT;
                }
            }
        }
        p = eol ? eol + 1 : end;
    }
    return cl && has_te ? TG_H1_FRAMING_LENGTH_AND_CHUNKED : TG_H1_FRAMING_OK;
}

const char *tg_h1_framing_message(int verdict)
{
    switch (verdict) {
    case TG_H1_FRAMING_OK: return "ok";
    case TG_H1_FRAMING_LENGTH_AND_CHUNKED: return "both Content-Length and Transfer-Encoding";
    case TG_H1_FRAMING_LENGTH_CONFLICT: return "Content-Length headers that differ";
    default: return "ambiguous message length";
    }
}
