/* h1_response.c - an HTTP/1.1 response's head and framing (see h1_response.h). */
#include "kube/h1_response.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* picohttpparser, as libh2o (2.2.5) builds and exports it; Debian ships no
 * header for it, so the two entry points used here are declared as that
 * version defines them. */
struct phr_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};
struct phr_chunked_decoder {
    size_t bytes_left_in_chunk;
    char consume_trailer;
    char _hex_count;
    char _state;
};
int phr_parse_response(const char *buf, size_t len, int *minor_version, int *status, const char **msg,
                       size_t *msg_len, struct phr_header *headers, size_t *num_headers, size_t last_len);
ssize_t phr_decode_chunked(struct phr_chunked_decoder *decoder, char *buf, size_t *bufsz);

_Static_assert(sizeof(struct phr_chunked_decoder) <= sizeof(((tg_h1_response *)0)->chunked_state),
               "room for the chunked decoder");

enum { ST_HEAD, ST_LENGTH, ST_CHUNKED, ST_UNTIL_CLOSE, ST_DONE };

void tg_h1_response_init(tg_h1_response *r)
{
    memset(r, 0, sizeof(*r));
    r->state = ST_HEAD;
}

void tg_h1_response_free(tg_h1_response *r)
{
    free(r->head);
    r->head = NULL;
    r->head_len = r->head_cap = 0;
}

static int header_is(const struct phr_header *h, const char *name)
{
    return h->name_len == strlen(name) && strncasecmp(h->name, name, h->name_len) == 0;
}

static int value_is(const struct phr_header *h, const char *value)
{
    return h->value_len == strlen(value) && strncasecmp(h->value, value, h->value_len) == 0;
}

/* Content-Length: digits only, no sign, no overflow. */
static int parse_length(const struct phr_header *h, uint64_t *out)
{
    uint64_t v = 0;
    if (h->value_len == 0 || h->value_len > 19)
        return -1;
    for (size_t i = 0; i < h->value_len; i++) {
        if (h->value[i] < '0' || h->value[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(h->value[i] - '0');
    }
    *out = v;
    return 0;
}

typedef struct framing {
    int chunked, has_length, close;
    uint64_t length;
} framing;

static tg_h1_result read_framing(const struct phr_header *hs, size_t n, framing *f, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        const struct phr_header *h = &hs[i];
        if (h->name == NULL) {
            *why = "folded header line in the response";
            return TG_H1_ERROR;
        }
        if (header_is(h, "content-length")) {
            uint64_t v;
            if (parse_length(h, &v) != 0 || (f->has_length && v != f->length)) {
                *why = "invalid or conflicting Content-Length in the response";
                return TG_H1_ERROR;
            }
            f->has_length = 1;
            f->length = v;
        } else if (header_is(h, "transfer-encoding")) {
            if (!value_is(h, "chunked") || f->chunked) {
                *why = "response transfer coding other than chunked";
                return TG_H1_ERROR;
            }
            f->chunked = 1;
        } else if (header_is(h, "connection") && value_is(h, "close")) {
            f->close = 1;
        }
    }
    return TG_H1_MORE;
}

static int head_append(tg_h1_response *r, const char *buf, size_t len)
{
    if (len > TG_H1_HEAD_MAX - r->head_len)
        len = TG_H1_HEAD_MAX - r->head_len;   /* more cannot be a valid head */
    if (len == 0)
        return 0;
    if (r->head_len + len > r->head_cap) {
        size_t cap = r->head_cap ? r->head_cap : 1024;
        while (cap < r->head_len + len)
            cap *= 2;
        char *b = realloc(r->head, cap);
        if (b == NULL)
            return -1;
        r->head = b;
        r->head_cap = cap;
    }
    memcpy(r->head + r->head_len, buf, len);
    r->head_len += len;
    return 0;
}

/* The head is complete at head[0..n): choose the body's framing. */
static tg_h1_result start_body(tg_h1_response *r, int minor, int status, const struct phr_header *hs,
                               size_t nh, const char **why)
{
    framing f = {0};
    if (status < 100 || status > 599) {
        *why = "response status out of range";
        return TG_H1_ERROR;
    }
    if (read_framing(hs, nh, &f, why) != TG_H1_MORE)
        return TG_H1_ERROR;
    if (status < 200) {
        if (status == 101) {
            *why = "unexpected protocol switch";
            return TG_H1_ERROR;
        }
        return TG_H1_MORE;   /* interim: the final head follows */
    }
    r->status = status;
    r->keep_alive = minor >= 1 && !f.close;
    memset(r->chunked_state, 0, sizeof(r->chunked_state));
    /* Read through the trailer section, so that the response ends where
     * the next one would start. */
    ((struct phr_chunked_decoder *)r->chunked_state)->consume_trailer = 1;
    if (status == 204 || status == 304 || (f.has_length && f.length == 0 && !f.chunked)) {
        r->state = ST_DONE;
    } else if (f.chunked) {
        r->state = ST_CHUNKED;
    } else if (f.has_length) {
        r->state = ST_LENGTH;
        r->body_left = f.length;
    } else {
        r->state = ST_UNTIL_CLOSE;
        r->keep_alive = 0;
    }
    return TG_H1_MORE;
}

static tg_h1_result feed_body(tg_h1_response *r, char *buf, size_t len, size_t *used, tg_h1_body_cb on_body,
                              void *data, const char **why)
{
    size_t n = len;
    *used = len;
    switch (r->state) {
    case ST_LENGTH:
        if (n > r->body_left)
            n = (size_t)r->body_left;
        *used = n;
        r->body_left -= n;
        if (n > 0 && on_body(buf, n, data) != 0)
            return TG_H1_ABORTED;
        if (r->body_left > 0)
            return TG_H1_MORE;
        r->state = ST_DONE;
        return TG_H1_DONE;
    case ST_CHUNKED: {
        ssize_t left = phr_decode_chunked((struct phr_chunked_decoder *)r->chunked_state, buf, &n);
        if (left == -1) {
            *why = "malformed chunked response body";
            return TG_H1_ERROR;
        }
        if (n > 0 && on_body(buf, n, data) != 0)
            return TG_H1_ABORTED;
        if (left == -2)
            return TG_H1_MORE;
        *used = len - (size_t)left;
        if (left > 0)
            r->keep_alive = 0;   /* bytes after the response: never reuse */
        r->state = ST_DONE;
        return TG_H1_DONE;
    }
    case ST_UNTIL_CLOSE:
        if (n > 0 && on_body(buf, n, data) != 0)
            return TG_H1_ABORTED;
        return TG_H1_MORE;
    default:
        *used = 0;
        return TG_H1_DONE;
    }
}

tg_h1_result tg_h1_response_feed(tg_h1_response *r, char *buf, size_t len, size_t *used,
                                 tg_h1_body_cb on_body, void *data, const char **why)
{
    size_t taken = 0, u;
    tg_h1_result rc = TG_H1_MORE;
    *why = NULL;
    if (used)
        *used = len;   /* errors and aborts: the connection is done with */
    while (r->state == ST_HEAD) {
        size_t before = r->head_len;
        if (head_append(r, buf + taken, len - taken) != 0) {
            *why = "out of memory reading the response head";
            return TG_H1_ERROR;
        }
        struct phr_header hs[TG_H1_HEADERS_MAX];
        size_t nh = TG_H1_HEADERS_MAX, msg_len;
        const char *msg;
        int minor, status;
        int hl = r->head_len == 0 ? -2
                                  : phr_parse_response(r->head, r->head_len, &minor, &status, &msg, &msg_len, hs,
                                                       &nh, before);
        if (r->head_len == 0 || (hl == -2 && r->head_len < TG_H1_HEAD_MAX)) {
            if (used)
                *used = len;
            return TG_H1_MORE;
        }
        if (hl < 0) {
            *why = hl == -2 ? "response head over 64 KiB" : "malformed response head";
            return TG_H1_ERROR;
        }
        if (start_body(r, minor, status, hs, nh, why) != TG_H1_MORE)
            return TG_H1_ERROR;
        /* Bytes of this read past the head belong to the body (or, after an
         * interim response, to the next head): hand them on. */
        taken += (size_t)hl - before;
        tg_h1_response_free(r);
    }
    if (r->state == ST_DONE) {
        rc = TG_H1_DONE;
    } else {
        rc = feed_body(r, buf + taken, len - taken, &u, on_body, data, why);
        taken += u;
    }
    if (used)
        *used = taken;
    return rc;
}

tg_h1_result tg_h1_response_eof(tg_h1_response *r, const char **why)
{
    *why = NULL;
    if (r->state == ST_DONE)
        return TG_H1_DONE;
    if (r->state == ST_UNTIL_CLOSE) {
        r->state = ST_DONE;
        return TG_H1_DONE;
    }
    *why = r->state == ST_HEAD ? "connection closed before a complete response head"
                               : "connection closed in the middle of the response body";
    return TG_H1_ERROR;
}
