/* workqueue.c - see workqueue.h. Keys live in a chained hash table; queued
 * keys also sit on one of two FIFO lists (the first line, then the rest),
 * delayed keys in a binary min-heap on their ready time (client-go's
 * delaying queue keeps one too): a burst leaves tens
 * of thousands of keys waiting out their backoff, and a list scanned on every
 * get, under the queue's mutex, cost a tenth of the signer's CPU at 1,000
 * slices. An entry is freed once it is idle and has no failures left to
 * remember. */
#include "signer/workqueue.h"

#include "common/fnv1a.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBUCKETS 1024u

typedef enum wq_state { WQ_IDLE = 0, WQ_QUEUED, WQ_DELAYED, WQ_IN_FLIGHT, WQ_IN_FLIGHT_DIRTY } wq_state;

typedef struct wq_item {
    struct wq_item *hnext;            /* hash chain */
    struct wq_item *prev, *next;      /* the ready list */
    wq_state state;
    uint64_t ready_at;                /* WQ_DELAYED (and the dirty re-add time) */
    uint64_t seq;                     /* WQ_DELAYED: ties on ready_at go first come, first served */
    size_t slot;                      /* WQ_DELAYED: its index in the heap */
    unsigned failures;
    int first;                        /* WQ_QUEUED: on the first line; in flight: goes there when done */
    char key[];
} wq_item;

typedef struct wq_list {
    wq_item *head, *tail;
    size_t n;
} wq_list;

struct tg_workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    wq_item *buckets[NBUCKETS];
    wq_list ready;                    /* work that starts more */
    wq_list first;                    /* work that finishes what was started: taken before ready */
    unsigned first_run;               /* keys taken from first in a row while ready waited */
    wq_item **heap;                   /* the delayed keys, earliest ready_at on top */
    size_t nheap, heap_cap;
    uint64_t next_seq;
    size_t in_flight;
    int shutting_down;
    uint64_t base_ms, max_ms;
    double qps, burst, tokens;
    uint64_t bucket_last_ms;          /* when tokens was computed */
    int bucket_started;
};

uint64_t tg_wq_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static unsigned hash_key(const char *s)
{
    return tg_fnv1a_str(s) % NBUCKETS;
}

static void list_push(wq_list *l, wq_item *it)
{
    it->next = NULL;
    it->prev = l->tail;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    l->n++;
}

static void list_remove(wq_list *l, wq_item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        l->tail = it->prev;
    it->prev = it->next = NULL;
    l->n--;
}

/* ---------- the delayed keys' heap ---------- */

static int earlier(const wq_item *a, const wq_item *b)
{
    return a->ready_at < b->ready_at || (a->ready_at == b->ready_at && a->seq < b->seq);
}

static void heap_set(tg_workqueue *q, size_t i, wq_item *it)
{
    q->heap[i] = it;
    it->slot = i;
}

static void sift_up(tg_workqueue *q, size_t i)
{
    wq_item *it = q->heap[i];

    while (i > 0 && earlier(it, q->heap[(i - 1) / 2])) {
        heap_set(q, i, q->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(q, i, it);
}

static void sift_down(tg_workqueue *q, size_t i)
{
    wq_item *it = q->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->nheap)
            break;
        if (c + 1 < q->nheap && earlier(q->heap[c + 1], q->heap[c]))
            c++;
        if (!earlier(q->heap[c], it))
            break;
        heap_set(q, i, q->heap[c]);
        i = c;
    }
    heap_set(q, i, it);
}

static int heap_push(tg_workqueue *q, wq_item *it)
{
    if (q->nheap == q->heap_cap) {
        size_t cap = q->heap_cap ? q->heap_cap * 2 : 64;
        wq_item **h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return -1;
        q->heap = h;
        q->heap_cap = cap;
    }
    it->seq = q->next_seq++;
    heap_set(q, q->nheap++, it);
    sift_up(q, it->slot);
    return 0;
}

static void heap_remove(tg_workqueue *q, wq_item *it)
{
    size_t i = it->slot;
    wq_item *last = q->heap[--q->nheap];

    if (last == it)
        return;
    heap_set(q, i, last);
    if (i > 0 && earlier(last, q->heap[(i - 1) / 2]))
        sift_up(q, i);
    else
        sift_down(q, i);
}

static wq_item *find(tg_workqueue *q, const char *key, int create)
{
    unsigned b = hash_key(key);
    wq_item *it;
    size_t n;

    for (it = q->buckets[b]; it; it = it->hnext)
        if (strcmp(it->key, key) == 0)
            return it;
    if (!create)
        return NULL;
    n = strlen(key);
    if (!(it = calloc(1, sizeof(*it) + n + 1)))
        return NULL;
    memcpy(it->key, key, n + 1);
    it->hnext = q->buckets[b];
    q->buckets[b] = it;
    return it;
}

/* Drop an idle entry that remembers nothing. */
static void maybe_release(tg_workqueue *q, wq_item *it)
{
    wq_item **pp;

    if (it->state != WQ_IDLE || it->failures)
        return;
    for (pp = &q->buckets[hash_key(it->key)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == it) {
            *pp = it->hnext;
            free(it);
            return;
        }
    }
}

static int key_ok(const char *key)
{
    size_t n = key ? strlen(key) : 0;

    return n > 0 && n < TG_WQ_KEY_MAX;
}

tg_workqueue *tg_wq_new(const tg_wq_opts *opts)
{
    tg_workqueue *q = calloc(1, sizeof(*q));
    pthread_condattr_t ca;

    if (!q)
        return NULL;
    q->base_ms = opts && opts->base_delay_ms ? opts->base_delay_ms : 5;
    q->max_ms = opts && opts->max_delay_ms ? opts->max_delay_ms : 1000u * 1000u;
    q->qps = opts && opts->qps > 0 ? opts->qps : 10;
    q->burst = opts && opts->burst > 0 ? opts->burst : 100;
    q->tokens = q->burst;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);   /* matches tg_wq_now_ms */
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    return q;
}

void tg_wq_free(tg_workqueue *q)
{
    size_t i;

    if (!q)
        return;
    for (i = 0; i < NBUCKETS; i++) {
        wq_item *it = q->buckets[i], *next;
        for (; it; it = next) {
            next = it->hnext;
            free(it);
        }
    }
    free(q->heap);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static wq_list *line_of(tg_workqueue *q, const wq_item *it)
{
    return it->first ? &q->first : &q->ready;
}

/* Queue or delay it (caller holds the lock). at <= now means ready now;
 * first: in the line taken first. */
static int add_locked(tg_workqueue *q, const char *key, uint64_t at, uint64_t now, int first)
{
    wq_item *it;

    if (!key_ok(key) || q->shutting_down)
        return -1;
    if (!(it = find(q, key, 1)))
        return -1;
    switch (it->state) {
    case WQ_QUEUED:
        if (first && !it->first) {   /* move up to the first line */
            list_remove(&q->ready, it);
            it->first = 1;
            list_push(&q->first, it);
        }
        return 0;
    case WQ_IN_FLIGHT:
    case WQ_IN_FLIGHT_DIRTY:
        /* Never hand it to a second worker: remember it, and the earliest time. */
        if (it->state == WQ_IN_FLIGHT) {
            it->ready_at = at;
            it->first = first;
        } else {
            if (at < it->ready_at)
                it->ready_at = at;
            it->first |= first;
        }
        it->state = WQ_IN_FLIGHT_DIRTY;
        return 0;
    case WQ_DELAYED:
        if (at >= it->ready_at)
            return 0;
        heap_remove(q, it);
        break;
    case WQ_IDLE:
        break;
    }
    it->ready_at = at;
    /* Out of memory for the heap: sooner rather than never. */
    if (at > now && heap_push(q, it) == 0) {
        it->state = WQ_DELAYED;
        it->first = 0;   /* a delayed key comes back in the other line */
    } else {
        it->state = WQ_QUEUED;
        it->first = first;
        list_push(line_of(q, it), it);
    }
    pthread_cond_broadcast(&q->cv);
    return 0;
}

int tg_wq_add(tg_workqueue *q, const char *key, uint64_t now_ms)
{
    int r;

    pthread_mutex_lock(&q->mu);
    r = add_locked(q, key, now_ms, now_ms, 0);
    pthread_mutex_unlock(&q->mu);
    return r;
}

int tg_wq_add_first(tg_workqueue *q, const char *key, uint64_t now_ms)
{
    int r;

    pthread_mutex_lock(&q->mu);
    r = add_locked(q, key, now_ms, now_ms, 1);
    pthread_mutex_unlock(&q->mu);
    return r;
}

int tg_wq_add_after(tg_workqueue *q, const char *key, uint64_t delay_ms, uint64_t now_ms)
{
    int r;

    pthread_mutex_lock(&q->mu);
    r = add_locked(q, key, now_ms + delay_ms, now_ms, 0);
    pthread_mutex_unlock(&q->mu);
    return r;
}

/* Take one token from the bucket; the wait until that token exists (0 when
 * there was one). Tokens may go negative: each waiter reserves its own. */
static uint64_t bucket_take(tg_workqueue *q, uint64_t now)
{
    if (!q->bucket_started) {
        q->bucket_started = 1;
        q->bucket_last_ms = now;
    }
    if (now > q->bucket_last_ms) {
        q->tokens += (double)(now - q->bucket_last_ms) * q->qps / 1000.0;
        if (q->tokens > q->burst)
            q->tokens = q->burst;
        q->bucket_last_ms = now;
    }
    q->tokens -= 1.0;
    if (q->tokens >= 0)
        return 0;
    return (uint64_t)(-q->tokens * 1000.0 / q->qps + 0.999);
}

uint64_t tg_wq_add_rate_limited(tg_workqueue *q, const char *key, uint64_t now_ms)
{
    wq_item *it;
    uint64_t d, b;
    unsigned f;

    pthread_mutex_lock(&q->mu);
    if (!key_ok(key) || !(it = find(q, key, 1))) {
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    f = it->failures++;
    d = q->base_ms;
    while (f-- > 0 && d < q->max_ms)
        d *= 2;
    if (d > q->max_ms)
        d = q->max_ms;
    b = bucket_take(q, now_ms);
    if (b > d)
        d = b;
    add_locked(q, key, now_ms + d, now_ms, 0);
    pthread_mutex_unlock(&q->mu);
    return d;
}

void tg_wq_forget(tg_workqueue *q, const char *key)
{
    wq_item *it;

    pthread_mutex_lock(&q->mu);
    if (key_ok(key) && (it = find(q, key, 0))) {
        it->failures = 0;
        maybe_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

unsigned tg_wq_failures(tg_workqueue *q, const char *key)
{
    wq_item *it;
    unsigned f = 0;

    pthread_mutex_lock(&q->mu);
    if (key_ok(key) && (it = find(q, key, 0)))
        f = it->failures;
    pthread_mutex_unlock(&q->mu);
    return f;
}

/* Move delayed keys whose time has come to the ready list, earliest first. */
static void promote(tg_workqueue *q, uint64_t now)
{
    while (q->nheap > 0 && q->heap[0]->ready_at <= now) {
        wq_item *it = q->heap[0];
        heap_remove(q, it);
        it->state = WQ_QUEUED;
        list_push(&q->ready, it);
    }
}

/* The first line's head, but the other's after TG_WQ_FIRST_RUN in a row. */
static wq_item *next_key(tg_workqueue *q)
{
    if (q->first.head && (!q->ready.head || q->first_run < TG_WQ_FIRST_RUN)) {
        q->first_run = q->ready.head ? q->first_run + 1 : 0;
        return q->first.head;
    }
    q->first_run = 0;
    return q->ready.head;
}

static int get_locked(tg_workqueue *q, uint64_t now, char out[TG_WQ_KEY_MAX])
{
    wq_item *it;

    promote(q, now);
    if (!(it = next_key(q)))
        return 0;
    list_remove(line_of(q, it), it);
    it->first = 0;
    it->state = WQ_IN_FLIGHT;
    q->in_flight++;
    memcpy(out, it->key, strlen(it->key) + 1);
    return 1;
}

int tg_wq_get(tg_workqueue *q, uint64_t now_ms, char out[TG_WQ_KEY_MAX])
{
    int r;

    pthread_mutex_lock(&q->mu);
    r = q->shutting_down ? 0 : get_locked(q, now_ms, out);
    pthread_mutex_unlock(&q->mu);
    return r;
}

static uint64_t next_ready_locked(tg_workqueue *q, uint64_t now)
{
    if (q->ready.head || q->first.head)
        return 0;
    if (q->nheap == 0)
        return UINT64_MAX;
    return q->heap[0]->ready_at > now ? q->heap[0]->ready_at - now : 0;
}

int tg_wq_get_wait(tg_workqueue *q, char out[TG_WQ_KEY_MAX])
{
    int r = 0;

    pthread_mutex_lock(&q->mu);
    while (!q->shutting_down) {
        uint64_t now = tg_wq_now_ms(), in;
        if ((r = get_locked(q, now, out)))
            break;
        in = next_ready_locked(q, now);
        if (in == UINT64_MAX) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += (time_t)(in / 1000);
            ts.tv_nsec += (long)(in % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return r;
}

void tg_wq_done(tg_workqueue *q, const char *key, uint64_t now_ms)
{
    wq_item *it;

    pthread_mutex_lock(&q->mu);
    if (key_ok(key) && (it = find(q, key, 0)) &&
        (it->state == WQ_IN_FLIGHT || it->state == WQ_IN_FLIGHT_DIRTY)) {
        int dirty = it->state == WQ_IN_FLIGHT_DIRTY, first = it->first;
        uint64_t at = it->ready_at;
        q->in_flight--;
        it->state = WQ_IDLE;
        if (dirty && !q->shutting_down)
            add_locked(q, key, at, now_ms, first);
        else
            maybe_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

void tg_wq_shutdown(tg_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutting_down = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

size_t tg_wq_len(tg_workqueue *q)
{
    size_t n;

    pthread_mutex_lock(&q->mu);
    n = q->ready.n + q->first.n + q->nheap;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t tg_wq_in_flight(tg_workqueue *q)
{
    size_t n;

    pthread_mutex_lock(&q->mu);
    n = q->in_flight;
    pthread_mutex_unlock(&q->mu);
    return n;
}

uint64_t tg_wq_next_ready_in(tg_workqueue *q, uint64_t now_ms)
{
    uint64_t r;

    pthread_mutex_lock(&q->mu);
    r = next_ready_locked(q, now_ms);
    pthread_mutex_unlock(&q->mu);
    return r;
}
