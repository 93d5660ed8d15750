/* test_wire.c - the two wire watchers: HTTP/1.1 body-length ambiguity and
 * the HTTP/2 RST_STREAM count, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "webhook/h1_framing.h"
#include "webhook/h2_frames.h"

static void test_h1_framing(void **state)
{
    static const struct {
        const char *head;
        int want;
    } cases[] = {
        {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", TG_H1_FRAMING_OK},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", TG_H1_FRAMING_OK},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", TG_H1_FRAMING_OK},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length:  5 \r\n\r\n", TG_H1_FRAMING_OK},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
         TG_H1_FRAMING_LENGTH_AND_CHUNKED},
        {"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\nCONTENT-LENGTH: 0\r\n\r\n",
         TG_H1_FRAMING_LENGTH_AND_CHUNKED},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", TG_H1_FRAMING_LENGTH_CONFLICT},
        {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 05\r\n\r\n", TG_H1_FRAMING_LENGTH_CONFLICT},
        /* LF-only line ends, no final empty line */
        {"POST / HTTP/1.1\nContent-Length: 1\nContent-Length: 2", TG_H1_FRAMING_LENGTH_CONFLICT},
        /* names that only contain the words, and the request line, do not count */
        {"POST /Content-Length:1 HTTP/1.1\r\nX-Content-Length: 9\r\nContent-Length: 1\r\n\r\n", TG_H1_FRAMING_OK},
        {"POST / HTTP/1.1\r\nX-Transfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", TG_H1_FRAMING_OK},
        /* a folded continuation line is not a header */
        {"POST / HTTP/1.1\r\nX-A: b\r\n Transfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", TG_H1_FRAMING_OK},
        {"", TG_H1_FRAMING_OK},
        {"\r\n\r\n", TG_H1_FRAMING_OK},
        {"GET / HTTP/1.1\r\nno colon here\r\n:\r\n\r\n", TG_H1_FRAMING_OK},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = tg_h1_framing_check(cases[i].head, strlen(cases[i].head));
        if (got != cases[i].want)
            fail_msg("case %zu: got %d want %d", i, got, cases[i].want);
    }
    assert_string_equal(tg_h1_framing_message(TG_H1_FRAMING_LENGTH_CONFLICT), "Content-Length headers that differ");
}

/* A frame header: length, type, flags, stream. */
static size_t frame(uint8_t *out, uint32_t len, uint8_t type, uint32_t stream)
{
    out[0] = (uint8_t)(len >> 16);
    out[1] = (uint8_t)(len >> 8);
    out[2] = (uint8_t)len;
    out[3] = type;
    out[4] = 0;
    out[5] = (uint8_t)(stream >> 24);
    out[6] = (uint8_t)(stream >> 16);
    out[7] = (uint8_t)(stream >> 8);
    out[8] = (uint8_t)stream;
    memset(out + 9, type, len);    /* payload bytes that look like frame types */
    return 9 + len;
}

static void test_h2_frames(void **state)
{
    uint8_t buf[4096];
    size_t n = 0;
    static const size_t chunkings[] = {1, 2, 7, 9, 24, 25, 4096};

    memcpy(buf, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", TG_H2_PREFACE_LEN);
    n = TG_H2_PREFACE_LEN;
    n += frame(buf + n, 12, 0x4, 0);               /* SETTINGS */
    n += frame(buf + n, 4, TG_H2_FRAME_RST_STREAM, 1);
    n += frame(buf + n, 40, 0x1, 3);               /* HEADERS */
    n += frame(buf + n, 300, 0x0, 3);              /* DATA full of 0x00 */
    n += frame(buf + n, 4, TG_H2_FRAME_RST_STREAM, 3);
    n += frame(buf + n, 27, TG_H2_FRAME_RST_STREAM, 5);  /* payload of 0x03 bytes */
    n += frame(buf + n, 0, 0x6, 0);                /* empty PING header */
    n += frame(buf + n, 4, TG_H2_FRAME_RST_STREAM, 7);

    /* the same count however the bytes are split */
    for (size_t k = 0; k < sizeof(chunkings) / sizeof(chunkings[0]); k++) {
        tg_h2_frames f;
        tg_h2_frames_init(&f);
        for (size_t off = 0; off < n; off += chunkings[k])
            tg_h2_frames_feed(&f, buf + off, n - off < chunkings[k] ? n - off : chunkings[k]);
        assert_int_equal(f.frames, 8);
        assert_int_equal(f.resets, 4);
        assert_int_equal(f.skip, 0);
        assert_int_equal(f.head_len, 0);
    }
    /* a frame cut in its header waits for the rest */
    {
        tg_h2_frames f;
        tg_h2_frames_init(&f);
        tg_h2_frames_feed(&f, buf, TG_H2_PREFACE_LEN + 5);
        assert_int_equal(f.frames, 0);
        assert_int_equal(f.head_len, 5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h1_framing),
        cmocka_unit_test(test_h2_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
