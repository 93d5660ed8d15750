/* h2_frames.h - counts the RST_STREAM frames a client sends on an HTTP/2
 * connection, fed the plaintext bytes in the order they arrive (any
 * chunking). It follows frame boundaries only: the 24-byte client preface,
 * then 9-byte frame headers whose 24-bit length says how many payload bytes to
 * skip. h2o parses and judges the frames; this only watches, so it never
 * rejects anything and needs no memory beyond the struct. Pure, no I/O. */
#ifndef TG_WEBHOOK_H2_FRAMES_H
#define TG_WEBHOOK_H2_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define TG_H2_PREFACE_LEN 24
#define TG_H2_FRAME_HEADER_LEN 9
#define TG_H2_FRAME_RST_STREAM 0x3

typedef struct tg_h2_frames {
    uint32_t preface_left;         /* preface bytes still to skip */
    uint32_t skip;                 /* payload bytes of the current frame still to skip */
    uint8_t head[TG_H2_FRAME_HEADER_LEN];
    uint8_t head_len;              /* header bytes collected so far */
    uint64_t frames;               /* whole headers seen */
    uint64_t resets;               /* of them, RST_STREAM */
} tg_h2_frames;

void tg_h2_frames_init(tg_h2_frames *f);

/* Account for the next n bytes of the client's stream. */
void tg_h2_frames_feed(tg_h2_frames *f, const uint8_t *p, size_t n);

#endif
