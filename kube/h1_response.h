/* h1_response.h - one HTTP/1.1 response read as its bytes arrive.
 *
 * The status line and headers are parsed with picohttpparser (which libh2o
 * carries and exports), then the body is framed by Content-Length, by the
 * chunked transfer coding (decoded here) or by the end of the connection.
 * Interim 1xx responses are skipped. Pure: bytes in, body bytes out through a
 * callback; no I/O, so the unit tests and the fuzz target drive it directly.
 *
 * Limits: the head (status line and headers) is at most TG_H1_HEAD_MAX bytes
 * and TG_H1_HEADERS_MAX header lines; a response that breaks them, or whose
 * framing is ambiguous (two different Content-Lengths, a transfer coding other
 * than chunked), is an error, never a guess. */
#ifndef TG_KUBE_H1_RESPONSE_H
#define TG_KUBE_H1_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

#define TG_H1_HEAD_MAX 65536
#define TG_H1_HEADERS_MAX 64

typedef enum tg_h1_result {
    TG_H1_MORE = 0,      /* all bytes taken; the response goes on */
    TG_H1_DONE = 1,      /* the response is complete */
    TG_H1_ERROR = -1,    /* not a valid response: *why says what */
    TG_H1_ABORTED = -2,  /* the body callback asked to stop */
} tg_h1_result;

/* Decoded body bytes, in order. Return 0 to go on, non-zero to stop. */
typedef int (*tg_h1_body_cb)(const char *bytes, size_t n, void *data);

typedef struct tg_h1_response {
    int status;          /* 0 until the final (non-1xx) head has been read */
    int keep_alive;      /* set with status: the connection may carry another request */
    /* private */
    int state;
    char *head;          /* the head's bytes until it is complete */
    size_t head_len, head_cap;
    uint64_t body_left;  /* Content-Length framing */
    unsigned char chunked_state[32];   /* picohttpparser's decoder, opaque here */
} tg_h1_response;

void tg_h1_response_init(tg_h1_response *r);
void tg_h1_response_free(tg_h1_response *r);

/* Take len bytes the server sent (buf is decoded in place, so it must be
 * writable). Stops at the end of the response: *used (optional) says how many
 * bytes it took; the rest were sent after it. */
tg_h1_result tg_h1_response_feed(tg_h1_response *r, char *buf, size_t len, size_t *used,
                                 tg_h1_body_cb on_body, void *data, const char **why);

/* The server closed the connection: DONE when that ends a body framed by
 * the close, ERROR (truncated) otherwise. */
tg_h1_result tg_h1_response_eof(tg_h1_response *r, const char **why);

#endif
