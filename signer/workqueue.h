/* workqueue.h - the controllers' rate-limited work queue, as client-go has it.
 *
 * Keys are strings ("tenant/liqo-tenant-c1/c1"). A key is in at most one of
 * these states: queued (waiting for a worker), delayed (ready at a given
 * time), in flight (a worker holds it), in flight and dirty (re-added while
 * held: queued again when the worker says done). So a key queued twice is
 * processed once, and never by two workers at once.
 *
 * Rate limiting (tg_wq_add_rate_limited): the longer of a per-key
 * exponential backoff (base * 2^failures, capped: 5 ms -> 1000 s by default)
 * and an overall token bucket (qps, burst). tg_wq_forget resets the key's
 * failures after a success.
 *
 * Two ready lines: keys added with tg_wq_add_first (work that finishes what a
 * pass started: a CSR waiting for its decision, a key woken because what it
 * waits on changed) are taken before keys added with tg_wq_add (work that
 * starts more). A burst of 10,000 Tenants in one line made every Tenant's CSR
 * wait behind every other Tenant's first pass, and what those passes keep for
 * their next one (api.h) piled up and expired unread. One key in
 * TG_WQ_FIRST_RUN + 1 comes from the other line when both wait, so new work
 * is never starved.
 *
 * The clock is passed in (milliseconds, monotonic) so the logic is testable;
 * every function takes the queue's mutex, so any thread may call them.
 * tg_wq_get_wait blocks until a key is ready or the queue is shut down. */
#ifndef TG_SIGNER_WORKQUEUE_H
#define TG_SIGNER_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

#define TG_WQ_KEY_MAX 320
#define TG_WQ_FIRST_RUN 8

typedef struct tg_workqueue tg_workqueue;

typedef struct tg_wq_opts {
    uint64_t base_delay_ms;   /* 0: 5 ms */
    uint64_t max_delay_ms;    /* 0: 1000 s */
    double qps;               /* overall bucket refill rate; 0: 10 */
    double burst;             /* bucket size; 0: 100 */
} tg_wq_opts;

/* opts may be NULL for the defaults. NULL when out of memory. */
tg_workqueue *tg_wq_new(const tg_wq_opts *opts);
void tg_wq_free(tg_workqueue *q);

/* Queue key now (deduplicated; a delayed key is made ready now). Returns 0,
 * or -1 for an empty/too long key or out of memory. */
int tg_wq_add(tg_workqueue *q, const char *key, uint64_t now_ms);

/* As tg_wq_add, in the line taken first (a key already queued in the other
 * line moves; one in flight is queued first once done). */
int tg_wq_add_first(tg_workqueue *q, const char *key, uint64_t now_ms);

/* Queue key at now + delay_ms (an earlier pending time wins). */
int tg_wq_add_after(tg_workqueue *q, const char *key, uint64_t delay_ms, uint64_t now_ms);

/* Queue key after its backoff (counts a failure). Returns the delay used. */
uint64_t tg_wq_add_rate_limited(tg_workqueue *q, const char *key, uint64_t now_ms);

/* The key succeeded: forget its failures. */
void tg_wq_forget(tg_workqueue *q, const char *key);

/* Failures counted for key since the last forget. */
unsigned tg_wq_failures(tg_workqueue *q, const char *key);

/* Take a ready key (oldest first, in its line) into out and mark it in flight. Returns 1,
 * or 0 when none is ready now. */
int tg_wq_get(tg_workqueue *q, uint64_t now_ms, char out[TG_WQ_KEY_MAX]);

/* Block until a key is ready (using the monotonic clock), then as tg_wq_get.
 * Returns 0 once tg_wq_shutdown was called. */
int tg_wq_get_wait(tg_workqueue *q, char out[TG_WQ_KEY_MAX]);

/* The worker finished key: if it was re-added meanwhile it is queued again. */
void tg_wq_done(tg_workqueue *q, const char *key, uint64_t now_ms);

/* Wake every tg_wq_get_wait and make it return 0. */
void tg_wq_shutdown(tg_workqueue *q);

/* Keys waiting (queued + delayed), and keys in flight. */
size_t tg_wq_len(tg_workqueue *q);
size_t tg_wq_in_flight(tg_workqueue *q);

/* Milliseconds until the next delayed key is ready (0 if one is ready now),
 * UINT64_MAX when nothing waits. */
uint64_t tg_wq_next_ready_in(tg_workqueue *q, uint64_t now_ms);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t tg_wq_now_ms(void);

#endif
