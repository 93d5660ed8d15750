/* h1_framing.h - is an HTTP/1.1 request's body length ambiguous? A request
 * that carries both Content-Length and Transfer-Encoding, or two
 * Content-Length headers that disagree, can be read two ways: a proxy in
 * front and this server could split the stream differently (request
 * smuggling). h2o 2.2.5 silently picks one (Transfer-Encoding, or the first
 * Content-Length) and drops both headers from the parsed request, so the check
 * reads the raw request head. Pure, no I/O. */
#ifndef TG_WEBHOOK_H1_FRAMING_H
#define TG_WEBHOOK_H1_FRAMING_H

#include <stddef.h>

enum {
    TG_H1_FRAMING_OK = 0,
    TG_H1_FRAMING_LENGTH_AND_CHUNKED,   /* Content-Length and Transfer-Encoding */
    TG_H1_FRAMING_LENGTH_CONFLICT,      /* Content-Length headers that differ */
};

/* head: the request line and header lines as received (CRLF or LF line
 * ends), up to and optionally including the empty line. Returns one of the
 * TG_H1_FRAMING_* values. */
int tg_h1_framing_check(const char *head, size_t len);

/* A one-line explanation of a TG_H1_FRAMING_* value. */
const char *tg_h1_framing_message(int verdict);

#endif
