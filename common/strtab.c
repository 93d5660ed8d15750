/* strtab.c - see strtab.h. Deletion shifts the items that follow back
 * (no tombstones), so a lookup stops at the first empty slot and the table
 * never needs a rebuild to forget deleted keys. */
#include "common/strtab.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 16u

struct tg_strtab {
    void **slots;
    size_t nslots, count;   /* nslots: a power of two */
    const char *(*key_of)(const void *item);
    unsigned char seed[crypto_shorthash_KEYBYTES];
};

static size_t home_of(const tg_strtab *t, const char *key)
{
    unsigned char h[crypto_shorthash_BYTES];
    uint64_t v;

    crypto_shorthash(h, (const unsigned char *)key, strlen(key), t->seed);
    memcpy(&v, h, sizeof(v));
    return (size_t)v & (t->nslots - 1);
}

tg_strtab *tg_strtab_new(const char *(*key_of)(const void *item))
{
    tg_strtab *t;

    if (!key_of || sodium_init() < 0 || !(t = calloc(1, sizeof(*t))))
        return NULL;
    if (!(t->slots = calloc(MIN_SLOTS, sizeof(*t->slots)))) {
        free(t);
        return NULL;
    }
    t->nslots = MIN_SLOTS;
    t->key_of = key_of;
    randombytes_buf(t->seed, sizeof(t->seed));
    return t;
}

void tg_strtab_free(tg_strtab *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot_of(const tg_strtab *t, const char *key)
{
    size_t i = home_of(t, key);

    while (t->slots[i] && strcmp(t->key_of(t->slots[i]), key) != 0)
        i = (i + 1) & (t->nslots - 1);
    return i;
}

void *tg_strtab_get(const tg_strtab *t, const char *key)
{
    return key ? t->slots[slot_of(t, key)] : NULL;
}

/* Twice the slots; on failure the table stays as it was. */
static int grow(tg_strtab *t)
{
    tg_strtab bigger = *t;

    bigger.nslots = t->nslots * 2;
    if (!(bigger.slots = calloc(bigger.nslots, sizeof(*bigger.slots))))
        return -1;
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i])
            bigger.slots[slot_of(&bigger, t->key_of(t->slots[i]))] = t->slots[i];
    free(t->slots);
    t->slots = bigger.slots;
    t->nslots = bigger.nslots;
    return 0;
}

int tg_strtab_add(tg_strtab *t, void *item)
{
    if (!item || ((t->count + 1) * 4 > t->nslots * 3 && grow(t) != 0))
        return -1;
    t->slots[slot_of(t, t->key_of(item))] = item;
    t->count++;
    return 0;
}

/* 1 when an item whose home is home may sit at slot at after the hole at
 * hole: home is not cyclically in (hole, at]. */
static int may_fill(size_t home, size_t hole, size_t at)
{
    return hole <= at ? (home <= hole || home > at) : (home <= hole && home > at);
}

void *tg_strtab_take(tg_strtab *t, const char *key)
{
    size_t hole, at, mask = t->nslots - 1;
    void *item;

    if (!key || !(item = t->slots[hole = slot_of(t, key)]))
        return NULL;
    t->slots[hole] = NULL;
    t->count--;
    /* Move back each later item of the run that may sit in the hole. */
    for (at = (hole + 1) & mask; t->slots[at]; at = (at + 1) & mask) {
        if (may_fill(home_of(t, t->key_of(t->slots[at])), hole, at)) {
            t->slots[hole] = t->slots[at];
            t->slots[at] = NULL;
            hole = at;
        }
    }
    return item;
}

size_t tg_strtab_count(const tg_strtab *t)
{
    return t->count;
}

void *tg_strtab_next(const tg_strtab *t, size_t *at)
{
    while (*at < t->nslots) {
        void *item = t->slots[(*at)++];
        if (item)
            return item;
    }
    return NULL;
}
