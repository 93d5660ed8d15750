/* ratelimit.c - see ratelimit.h. */
#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

typedef struct slot {
    tg_peer_key key;               /* len 0: free */
    double tokens;
    uint64_t refilled_ms;
    uint64_t seen_ms;
    uint64_t blocked_until_ms;
    unsigned failures;
} slot;

struct tg_ratelimit {
    tg_ratelimit_config cfg;
    size_t nsets;                  /* a power of two */
    slot *slots;
    unsigned char set_key[crypto_shorthash_KEYBYTES]; /* chosen at start, never shown */
};

tg_ratelimit *tg_ratelimit_new(const tg_ratelimit_config *cfg)
{
    tg_ratelimit *rl = calloc(1, sizeof(*rl));
    size_t want = cfg->sources / TG_RL_WAYS + 1;

    if (!rl)
        return NULL;
    rl->cfg = *cfg;
    if (rl->cfg.burst < 1)
        rl->cfg.burst = 1;
    for (rl->nsets = 1; rl->nsets < want; rl->nsets <<= 1)
        ;
    if (!(rl->slots = calloc(rl->nsets * TG_RL_WAYS, sizeof(slot)))) {
        free(rl);
        return NULL;
    }
    crypto_shorthash_keygen(rl->set_key);
    return rl;
}

void tg_ratelimit_free(tg_ratelimit *rl)
{
    if (!rl)
        return;
    free(rl->slots);
    sodium_memzero(rl->set_key, sizeof(rl->set_key));
    free(rl);
}

/* SipHash-2-4 under a random key: with a hash anyone can compute, eight
 * chosen addresses that fail a few times would fill a victim's set with
 * back-offs and lock it out before it ever asks (issue 44, finding 9). */
static size_t set_of(const tg_ratelimit *rl, const tg_peer_key *key)
{
    unsigned char h[crypto_shorthash_BYTES];
    uint64_t v;

    crypto_shorthash(h, key->bytes, key->len, rl->set_key);
    memcpy(&v, h, sizeof(v));
    return (size_t)(v & (rl->nsets - 1));
}

static int same_key(const tg_peer_key *a, const tg_peer_key *b)
{
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static slot *find(tg_ratelimit *rl, const tg_peer_key *key)
{
    slot *set = rl->slots + set_of(rl, key) * TG_RL_WAYS;
    for (int i = 0; i < TG_RL_WAYS; i++)
        if (set[i].key.len && same_key(&set[i].key, key))
            return &set[i];
    return NULL;
}

/* The slot for a new key: free, else the least recently seen one not in
 * back-off; NULL when all are in back-off. */
static slot *take(tg_ratelimit *rl, const tg_peer_key *key, uint64_t now_ms)
{
    slot *set = rl->slots + set_of(rl, key) * TG_RL_WAYS, *pick = NULL;

    for (int i = 0; i < TG_RL_WAYS; i++) {
        slot *s = &set[i];
        if (!s->key.len) {
            pick = s;
            break;
        }
        if (s->blocked_until_ms > now_ms)
            continue;
        if (!pick || s->seen_ms < pick->seen_ms)
            pick = s;
    }
    if (!pick)
        return NULL;
    memset(pick, 0, sizeof(*pick));
    pick->key = *key;
    pick->tokens = rl->cfg.burst;
    pick->refilled_ms = now_ms;
    return pick;
}

static void refill(const tg_ratelimit *rl, slot *s, uint64_t now_ms)
{
    if (now_ms > s->refilled_ms) {
        s->tokens += (double)(now_ms - s->refilled_ms) * rl->cfg.rate_per_s / 1000.0;
        if (s->tokens > rl->cfg.burst)
            s->tokens = rl->cfg.burst;
        s->refilled_ms = now_ms;
    }
}

int tg_ratelimit_admit(tg_ratelimit *rl, const tg_peer_key *key, uint64_t now_ms, uint64_t *retry_after_ms)
{
    slot *s = find(rl, key);

    if (!s && !(s = take(rl, key, now_ms))) {
        *retry_after_ms = rl->cfg.fail_base_ms ? rl->cfg.fail_base_ms : 1000;
        return -1;
    }
    s->seen_ms = now_ms;
    if (s->blocked_until_ms > now_ms) {
        *retry_after_ms = s->blocked_until_ms - now_ms;
        return -1;
    }
    refill(rl, s, now_ms);
    if (s->tokens < 1.0) {
        double wait = rl->cfg.rate_per_s > 0 ? (1.0 - s->tokens) * 1000.0 / rl->cfg.rate_per_s : 60000.0;
        *retry_after_ms = (uint64_t)wait + 1;
        return -1;
    }
    s->tokens -= 1.0;
    return 0;
}

void tg_ratelimit_failure(tg_ratelimit *rl, const tg_peer_key *key, uint64_t now_ms)
{
    slot *s = find(rl, key);
    uint64_t wait;
    unsigned over;

    if (!s)
        return;
    s->failures++;
    if (s->failures <= rl->cfg.free_failures)
        return;
    over = s->failures - rl->cfg.free_failures - 1;
    wait = rl->cfg.fail_base_ms;
    /* doubling, capped before it can overflow */
    while (over-- > 0 && wait < rl->cfg.fail_max_ms)
        wait *= 2;
    if (wait > rl->cfg.fail_max_ms)
        wait = rl->cfg.fail_max_ms;
    s->blocked_until_ms = now_ms + wait;
}

void tg_ratelimit_success(tg_ratelimit *rl, const tg_peer_key *key)
{
    slot *s = find(rl, key);

    if (s) {
        s->failures = 0;
        s->blocked_until_ms = 0;
    }
}
