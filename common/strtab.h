/* strtab.h - a hash set of pointers, each item found by a string it holds
 * (the key_of function gives it): open addressing, linear probing, one
 * pointer a slot at a load of at most 3/4.
 *
 * Why not json-c's linkhash: an lh_entry is 40 bytes and its table grows at
 * a load of 0.66, so an item costs 60 to 120 bytes; here 11 to 21. The
 * informer caches hold one item per cached object and one per index value:
 * at 10,000 Tenants that is over 90,000 items.
 *
 * The hash is SipHash (libsodium's crypto_shorthash) under a random key
 * per table: the keys are object names that namespace owners choose, and a
 * linear probe degrades with collisions, so nobody may be able to aim at one.
 *
 * Not thread-safe: the caller locks. */
#ifndef TG_COMMON_STRTAB_H
#define TG_COMMON_STRTAB_H

#include <stddef.h>

typedef struct tg_strtab tg_strtab;

/* key_of(item): the item's key, stable while the item is in the table.
 * Returns NULL when out of memory. */
tg_strtab *tg_strtab_new(const char *(*key_of)(const void *item));

/* Frees the table, not the items (walk them with tg_strtab_next first). */
void tg_strtab_free(tg_strtab *t);

/* The item whose key is key, or NULL. */
void *tg_strtab_get(const tg_strtab *t, const char *key);

/* Adds item, whose key must not be in the table. Returns 0, or -1 when out
 * of memory (nothing added). */
int tg_strtab_add(tg_strtab *t, void *item);

/* Removes and returns the item whose key is key, or NULL. */
void *tg_strtab_take(tg_strtab *t, const char *key);

size_t tg_strtab_count(const tg_strtab *t);

/* A walk: *at starts at 0; each call returns the next item, NULL at the end.
 * The table must not change during a walk (collect, then take). */
void *tg_strtab_next(const tg_strtab *t, size_t *at);

#endif
