/* backoff.c - capped exponential backoff with equal jitter. */
#include "kube/backoff.h"

void tg_backoff_init(tg_backoff *b, uint64_t base_ms, uint64_t cap_ms, uint64_t seed)
{
    b->base_ms = base_ms ? base_ms : 1;
    b->cap_ms = cap_ms < b->base_ms ? b->base_ms : cap_ms;
    b->attempt = 0;
    b->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

uint64_t tg_backoff_next(tg_backoff *b)
{
    uint64_t d = b->base_ms;
    /* Double without overflowing: stop as soon as the cap is reached. */
    for (unsigned i = 0; i < b->attempt && d < b->cap_ms; i++)
        d *= 2;
    if (d > b->cap_ms)
        d = b->cap_ms;
    if (b->attempt < 64)
        b->attempt++;
    uint64_t half = d / 2;
    return half + xorshift64(&b->rng) % (d - half + 1);
}

void tg_backoff_reset(tg_backoff *b)
{
    b->attempt = 0;
}
