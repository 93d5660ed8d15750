/* h2_frames.c - see h2_frames.h. */
#include "h2_frames.h"

#include <string.h>

void tg_h2_frames_init(tg_h2_frames *f)
{
    memset(f, 0, sizeof(*f));
    f->preface_left = TG_H2_PREFACE_LEN;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* A whole frame header: count it and skip its payload. */
static void on_frame_header(tg_h2_frames *f)
{
    f->skip = (uint32_t)f->head[0] << 16 | (uint32_t)f->head[1] << 8 | f->head[2];
    f->frames++;
    if (f->head[3] == TG_H2_FRAME_RST_STREAM)
        f->resets++;
    f->head_len = 0;
}

void tg_h2_frames_feed(tg_h2_frames *f, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t take;
        if (f->preface_left > 0) {
            take = min_size(f->preface_left, n);
            f->preface_left -= (uint32_t)take;
        } else if (f->skip > 0) {
            take = min_size(f->skip, n);
            f->skip -= (uint32_t)take;
        } else {
            take = min_size(TG_H2_FRAME_HEADER_LEN - f->head_len, n);
            memcpy(f->head + f->head_len, p, take);
            f->head_len += (uint8_t)take;
            if (f->head_len == TG_H2_FRAME_HEADER_LEN)
                on_frame_header(f);
        }
        p += take;
        n -= take;
    }
}
