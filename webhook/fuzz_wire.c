/* fuzz_wire.c - libFuzzer: bytes from a client through the two wire watchers
 * the server runs before h2o's own parsers: the HTTP/1.1 head framing check
 * (whole input) and the HTTP/2 frame counter (the input cut into chunks whose
 * sizes come from the input itself). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "webhook/h1_framing.h"
#include "webhook/h2_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_h2_frames f;
    size_t off = 0, i = 0;
    int v = tg_h1_framing_check((const char *)data, size);

    if (v < TG_H1_FRAMING_OK || v > TG_H1_FRAMING_LENGTH_CONFLICT)
        abort();
    tg_h2_frames_init(&f);
    while (off < size) {
        size_t chunk = 1 + data[i++ % size] % 64;
        if (chunk > size - off)
            chunk = size - off;
        tg_h2_frames_feed(&f, data + off, chunk);
        off += chunk;
    }
    /* every frame needs at least a whole header after the preface */
    if (f.resets > f.frames || (size < TG_H2_PREFACE_LEN && f.frames != 0) ||
        f.frames * TG_H2_FRAME_HEADER_LEN > size)
        abort();
    return 0;
}
