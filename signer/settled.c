/* settled.c - a key -> (resourceVersion, dependency, due) table under one
 * mutex. Each record is one allocation (key and texts inside it) chained
 * in a bucket array that doubles at one record a bucket: at 10,000 Tenants
 * the table holds tens of thousands of records, where json-c's linkhash
 * cost 40 bytes an entry at a load of at most 0.66 (5 MB of buckets, and
 * both arrays alive while it grew). Expired records go on lookup and in a
 * sweep every SWEEP_EVERY puts, so the table follows the number of live
 * objects, not the history. */
#include "signer/settled.h"

#include "common/fnv1a.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_EVERY 512
#define MIN_BUCKETS 256u

typedef struct settled_rec {
    struct settled_rec *next;   /* bucket chain */
    uint64_t due_ms;
    const char *rv;     /* NULL for a mark; points into key[] */
    const char *dep_a;  /* a mark's text; points into key[] */
    const char *dep_b;  /* may be NULL; points into key[] */
    char key[];         /* the key, then rv, dep_a, dep_b, each NUL-terminated */
} settled_rec;

struct tg_settled {
    pthread_mutex_t mu;
    settled_rec **buckets;
    size_t nbuckets, count;   /* nbuckets: a power of two */
    unsigned puts;
};

tg_settled *tg_settled_new(void)
{
    tg_settled *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    if (!(t->buckets = calloc(MIN_BUCKETS, sizeof(*t->buckets)))) {
        free(t);
        return NULL;
    }
    t->nbuckets = MIN_BUCKETS;
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void tg_settled_free(tg_settled *t)
{
    settled_rec *r, *next;

    if (!t)
        return;
    for (size_t i = 0; i < t->nbuckets; i++)
        for (r = t->buckets[i]; r; r = next) {
            next = r->next;
            free(r);
        }
    free(t->buckets);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* Copy s (if any) to *at, returning where it now is. */
static const char *put_text(char **at, const char *s)
{
    char *d = *at;
    size_t n;

    if (!s)
        return NULL;
    n = strlen(s) + 1;
    memcpy(d, s, n);
    *at += n;
    return d;
}

static settled_rec *rec_new(const char *key, const char *rv, const char *dep_a, const char *dep_b, uint64_t due_ms)
{
    size_t n = strlen(key) + 1 + (rv ? strlen(rv) + 1 : 0) + (dep_a ? strlen(dep_a) + 1 : 0) +
               (dep_b ? strlen(dep_b) + 1 : 0);
    settled_rec *r = malloc(sizeof(*r) + n);
    char *at;

    if (!r)
        return NULL;
    r->next = NULL;
    r->due_ms = due_ms;
    at = r->key;
    put_text(&at, key);
    r->rv = put_text(&at, rv);
    r->dep_a = put_text(&at, dep_a);
    r->dep_b = put_text(&at, dep_b);
    return r;
}

/* Under mu: where the link to key's record is (or the end of its chain). */
static settled_rec **slot_of(tg_settled *t, const char *key)
{
    settled_rec **pp = &t->buckets[tg_fnv1a_str(key) & (t->nbuckets - 1)];

    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* Under mu: unlink and free the record *pp. */
static void unlink_rec(tg_settled *t, settled_rec **pp)
{
    settled_rec *r = *pp;

    *pp = r->next;
    free(r);
    t->count--;
}

/* Under mu: drop every record whose time has passed. */
static void sweep(tg_settled *t, uint64_t now_ms)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        settled_rec **pp = &t->buckets[i];
        while (*pp) {
            if ((*pp)->due_ms <= now_ms)
                unlink_rec(t, pp);
            else
                pp = &(*pp)->next;
        }
    }
}

/* Under mu: twice the buckets once there is a record a bucket (out of
 * memory: chains get longer, nothing is lost). */
static void grow(tg_settled *t)
{
    size_t nb = t->nbuckets * 2;
    settled_rec **b, *r, *next;

    if (t->count < t->nbuckets || !(b = calloc(nb, sizeof(*b))))
        return;
    for (size_t i = 0; i < t->nbuckets; i++)
        for (r = t->buckets[i]; r; r = next) {
            size_t at = tg_fnv1a_str(r->key) & (nb - 1);
            next = r->next;
            r->next = b[at];
            b[at] = r;
        }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nb;
}

/* Under mu: replace key's record by r (owned by the table afterwards). */
static void store(tg_settled *t, settled_rec *r, uint64_t now_ms)
{
    settled_rec **pp;

    if (++t->puts % SWEEP_EVERY == 0)
        sweep(t, now_ms);
    pp = slot_of(t, r->key);
    if (*pp)
        unlink_rec(t, pp);
    pp = &t->buckets[tg_fnv1a_str(r->key) & (t->nbuckets - 1)];
    r->next = *pp;
    *pp = r;
    t->count++;
    grow(t);
}

int tg_settled_put(tg_settled *t, const char *key, const char *rv, const char *dep_a, const char *dep_b,
                   uint64_t now_ms, uint64_t due_ms)
{
    settled_rec *r;

    if (!key || !rv || !dep_a)
        return -1;
    if (!(r = rec_new(key, rv, dep_a, dep_b, due_ms)))
        return -1;
    pthread_mutex_lock(&t->mu);
    store(t, r, now_ms);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int tg_settled_mark(tg_settled *t, const char *key, const char *value, uint64_t now_ms, uint64_t due_ms)
{
    settled_rec *r;

    if (!key || !(r = rec_new(key, NULL, value ? value : "", NULL, due_ms)))
        return -1;
    pthread_mutex_lock(&t->mu);
    store(t, r, now_ms);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

static int dep_matches(const settled_rec *r, const char *dep)
{
    return dep && ((r->dep_a && strcmp(r->dep_a, dep) == 0) || (r->dep_b && strcmp(r->dep_b, dep) == 0));
}

uint64_t tg_settled_check(tg_settled *t, const char *key, const char *rv, const char *dep, uint64_t now_ms)
{
    settled_rec **pp, *r;
    uint64_t left = 0;

    if (!key)
        return 0;
    pthread_mutex_lock(&t->mu);
    if ((r = *(pp = slot_of(t, key)))) {
        if (r->due_ms <= now_ms)
            unlink_rec(t, pp);
        else if (r->rv && rv && strcmp(r->rv, rv) == 0 && dep_matches(r, dep))
            left = r->due_ms - now_ms;
    }
    pthread_mutex_unlock(&t->mu);
    return left;
}

/* Under mu: key's mark while before its due time, else NULL (an expired
 * record is dropped; a settled record is not a mark). */
static const settled_rec *live_mark(tg_settled *t, const char *key, uint64_t now_ms)
{
    settled_rec **pp = slot_of(t, key), *r = *pp;

    if (r && r->due_ms <= now_ms) {
        unlink_rec(t, pp);
        return NULL;
    }
    return r && !r->rv ? r : NULL;
}

int tg_settled_marked(tg_settled *t, const char *key, char *value, size_t value_len, uint64_t now_ms)
{
    const settled_rec *r;

    if (!key)
        return 0;
    pthread_mutex_lock(&t->mu);
    if ((r = live_mark(t, key, now_ms)) && value && value_len)
        snprintf(value, value_len, "%s", r->dep_a ? r->dep_a : "");
    pthread_mutex_unlock(&t->mu);
    return r != NULL;
}

char *tg_settled_marked_text(tg_settled *t, const char *key, uint64_t now_ms)
{
    const settled_rec *r;
    char *text = NULL;

    if (!key)
        return NULL;
    pthread_mutex_lock(&t->mu);
    if ((r = live_mark(t, key, now_ms)))
        text = strdup(r->dep_a ? r->dep_a : "");
    pthread_mutex_unlock(&t->mu);
    return text;
}

void tg_settled_forget(tg_settled *t, const char *key)
{
    if (!t || !key)
        return;
    settled_rec **pp;

    pthread_mutex_lock(&t->mu);
    if (*(pp = slot_of(t, key)))
        unlink_rec(t, pp);
    pthread_mutex_unlock(&t->mu);
}

size_t tg_settled_count(tg_settled *t)
{
    size_t n;

    pthread_mutex_lock(&t->mu);
    n = t->count;
    pthread_mutex_unlock(&t->mu);
    return n;
}
