/* settled.c - a key -> (resourceVersion, dependency, due) table under one
 * mutex. Records are small and one per object, so a json-c linkhash keyed by
 * the record's own copy of the key is enough; expired records go on lookup
 * and in a sweep every SWEEP_EVERY puts, so the table follows the number of
 * live objects, not the history. */
#include "signer/settled.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_EVERY 512

typedef struct settled_rec {
    uint64_t due_ms;
    char *rv;       /* NULL for a mark */
    char *dep_a;    /* a mark's text */
    char *dep_b;    /* may be NULL */
    char key[];     /* the table's key points here */
} settled_rec;

struct tg_settled {
    pthread_mutex_t mu;
    struct lh_table *recs;   /* key -> settled_rec (owned) */
    unsigned puts;
};

static void rec_free(settled_rec *r)
{
    if (!r)
        return;
    free(r->rv);
    free(r->dep_a);
    free(r->dep_b);
    free(r);
}

static void on_rec_free(struct lh_entry *e)
{
    rec_free(lh_entry_v(e));
}

tg_settled *tg_settled_new(void)
{
    tg_settled *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    if (!(t->recs = lh_kchar_table_new(256, on_rec_free))) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void tg_settled_free(tg_settled *t)
{
    if (!t)
        return;
    lh_table_free(t->recs);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

static char *dup_or_null(const char *s, int *oom)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = strdup(s)))
        *oom = 1;
    return d;
}

static settled_rec *rec_new(const char *key, const char *rv, const char *dep_a, const char *dep_b, uint64_t due_ms)
{
    size_t kl = strlen(key);
    settled_rec *r = calloc(1, sizeof(*r) + kl + 1);
    int oom = 0;

    if (!r)
        return NULL;
    memcpy(r->key, key, kl + 1);
    r->due_ms = due_ms;
    r->rv = dup_or_null(rv, &oom);
    r->dep_a = dup_or_null(dep_a, &oom);
    r->dep_b = dup_or_null(dep_b, &oom);
    if (oom) {
        rec_free(r);
        return NULL;
    }
    return r;
}

/* Under mu: drop every record whose time has passed. */
static void sweep(tg_settled *t, uint64_t now_ms)
{
    struct lh_entry *e, *next;

    for (e = t->recs->head; e; e = next) {
        next = e->next;
        if (((settled_rec *)lh_entry_v(e))->due_ms <= now_ms)
            lh_table_delete_entry(t->recs, e);
    }
}

/* Under mu: replace key's record by r (owned by the table afterwards). */
static int store(tg_settled *t, settled_rec *r, uint64_t now_ms)
{
    int rc;

    lh_table_delete(t->recs, r->key);
    if (++t->puts % SWEEP_EVERY == 0)
        sweep(t, now_ms);
    if ((rc = lh_table_insert(t->recs, r->key, r)) != 0)
        rec_free(r);
    return rc == 0 ? 0 : -1;
}

int tg_settled_put(tg_settled *t, const char *key, const char *rv, const char *dep_a, const char *dep_b,
                   uint64_t now_ms, uint64_t due_ms)
{
    settled_rec *r;
    int rc;

    if (!key || !rv || !dep_a)
        return -1;
    if (!(r = rec_new(key, rv, dep_a, dep_b, due_ms)))
        return -1;
    pthread_mutex_lock(&t->mu);
    rc = store(t, r, now_ms);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int tg_settled_mark(tg_settled *t, const char *key, const char *value, uint64_t now_ms, uint64_t due_ms)
{
    settled_rec *r;
    int rc;

    if (!key || !(r = rec_new(key, NULL, value ? value : "", NULL, due_ms)))
        return -1;
    pthread_mutex_lock(&t->mu);
    rc = store(t, r, now_ms);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

static int dep_matches(const settled_rec *r, const char *dep)
{
    return dep && ((r->dep_a && strcmp(r->dep_a, dep) == 0) || (r->dep_b && strcmp(r->dep_b, dep) == 0));
}

uint64_t tg_settled_check(tg_settled *t, const char *key, const char *rv, const char *dep, uint64_t now_ms)
{
    struct lh_entry *e;
    settled_rec *r;
    uint64_t left = 0;

    if (!key)
        return 0;
    pthread_mutex_lock(&t->mu);
    if ((e = lh_table_lookup_entry(t->recs, key))) {
        r = lh_entry_v(e);
        if (r->due_ms <= now_ms)
            lh_table_delete_entry(t->recs, e);
        else if (r->rv && rv && strcmp(r->rv, rv) == 0 && dep_matches(r, dep))
            left = r->due_ms - now_ms;
    }
    pthread_mutex_unlock(&t->mu);
    return left;
}

int tg_settled_marked(tg_settled *t, const char *key, char *value, size_t value_len, uint64_t now_ms)
{
    struct lh_entry *e;
    settled_rec *r;
    int marked = 0;

    if (!key)
        return 0;
    pthread_mutex_lock(&t->mu);
    if ((e = lh_table_lookup_entry(t->recs, key))) {
        r = lh_entry_v(e);
        if (r->due_ms <= now_ms) {
            lh_table_delete_entry(t->recs, e);
        } else if (!r->rv) {
            marked = 1;
            if (value && value_len)
                snprintf(value, value_len, "%s", r->dep_a ? r->dep_a : "");
        }
    }
    pthread_mutex_unlock(&t->mu);
    return marked;
}

void tg_settled_forget(tg_settled *t, const char *key)
{
    if (!t || !key)
        return;
    pthread_mutex_lock(&t->mu);
    lh_table_delete(t->recs, key);
    pthread_mutex_unlock(&t->mu);
}

size_t tg_settled_count(tg_settled *t)
{
    size_t n;

    pthread_mutex_lock(&t->mu);
    n = (size_t)lh_table_length(t->recs);
    pthread_mutex_unlock(&t->mu);
    return n;
}
