/* fuzz_h1_response.c - the HTTP/1.1 response reader on arbitrary bytes, fed
 * in pieces whose sizes come from the input's first byte, then the close.
 * Checked on every input: no piece is over-read, a piece is taken whole
 * unless the response ended in it, and the body handed on is never longer
 * than the bytes that came in (chunked decoding only removes bytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/h1_response.h"

static int on_body(const char *bytes, size_t n, void *data)
{
    size_t *total = data;
    volatile char sink = 0;
    for (size_t i = 0; i < n; i++)
        sink ^= bytes[i];   /* every byte handed on is readable */
    (void)sink;
    *total += n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = (size_t)data[0] + 1, total = 0, at = 0;
    size_t n = size - 1;
    char *copy = malloc(n ? n : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data + 1, n);
    tg_h1_response r;
    const char *why;
    tg_h1_result rc = TG_H1_MORE;
    tg_h1_response_init(&r);
    while (at < n && rc == TG_H1_MORE) {
        size_t len = n - at < piece ? n - at : piece, used;
        rc = tg_h1_response_feed(&r, copy + at, len, &used, on_body, &total, &why);
        if (used > len || (rc == TG_H1_MORE && used != len) || (rc == TG_H1_ERROR && why == NULL))
            abort();
        at += len;
    }
    if (rc == TG_H1_MORE && (tg_h1_response_eof(&r, &why) == TG_H1_ERROR) != (why != NULL))
        abort();
    if (total > n)
        abort();
    tg_h1_response_free(&r);
    free(copy);
    return 0;
}
