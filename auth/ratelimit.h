/* ratelimit.h - per-source request budget and failure back-off for the auth
 * server (brute-force guard). Each source address has a token bucket
 * (rate_per_s, burst) and a count of consecutive failures: after the
 * free_failures-th one it is refused until fail_base_ms * 2^(n - free) has
 * passed (at most fail_max_ms); a success clears the count.
 *
 * Bounded memory: a fixed set-associative table (sets of TG_RL_WAYS). A new
 * address takes a free or the least recently seen slot of its set; a slot in
 * back-off is never taken, so flooding from other addresses does not wipe a
 * back-off. When a whole set is in back-off the new address is refused too
 * (fail closed). The set of an address is a keyed hash (SipHash-2-4, a
 * random key per process), so nobody can pick addresses that share a set.
 * Pure but for that key (libsodium's CSPRNG: sodium_init() first); the
 * caller gives the time; one thread. */
#ifndef TG_AUTH_RATELIMIT_H
#define TG_AUTH_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/peers.h"

#define TG_RL_WAYS 8

typedef struct tg_ratelimit_config {
    double rate_per_s;             /* requests refilled a second */
    double burst;                  /* bucket size (>= 1) */
    unsigned free_failures;        /* failures allowed before the back-off starts */
    uint64_t fail_base_ms;
    uint64_t fail_max_ms;
    size_t sources;                /* slots, rounded up to a power of two times TG_RL_WAYS */
} tg_ratelimit_config;

typedef struct tg_ratelimit tg_ratelimit;

/* Keys: tg_peer_net_key_of() (common/peers.h), IPv6 by its /64, as the
 * per-peer connection cap counts them. */

tg_ratelimit *tg_ratelimit_new(const tg_ratelimit_config *cfg);
void tg_ratelimit_free(tg_ratelimit *rl);

/* A request from key at now_ms: 0 (a token taken), or -1 when refused, with
 * *retry_after_ms how long until it would be admitted (at least 1). */
int tg_ratelimit_admit(tg_ratelimit *rl, const tg_peer_key *key, uint64_t now_ms, uint64_t *retry_after_ms);

/* The outcome of an admitted request: a failure (wrong token, malformed)
 * extends the back-off, a success clears it. */
void tg_ratelimit_failure(tg_ratelimit *rl, const tg_peer_key *key, uint64_t now_ms);
void tg_ratelimit_success(tg_ratelimit *rl, const tg_peer_key *key);

#endif
