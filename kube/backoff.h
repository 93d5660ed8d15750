/* backoff.h - how long to wait before reconnecting: exponential, capped,
 * with jitter so that many clients dropped at once do not return at once.
 * Pure: the caller owns the clock and seeds the randomness. */
#ifndef TG_KUBE_BACKOFF_H
#define TG_KUBE_BACKOFF_H

#include <stdint.h>

typedef struct tg_backoff {
    uint64_t base_ms, cap_ms;
    unsigned attempt;
    uint64_t rng;          /* xorshift state; never 0 */
} tg_backoff;

void tg_backoff_init(tg_backoff *b, uint64_t base_ms, uint64_t cap_ms, uint64_t seed);

/* The next delay: d = min(cap, base * 2^attempt), a uniform pick in
 * [d/2, d] ("equal jitter": never zero, never over the cap). */
uint64_t tg_backoff_next(tg_backoff *b);

/* After a success: start again from base. */
void tg_backoff_reset(tg_backoff *b);

#endif
