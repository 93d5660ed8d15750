/* conn_slots.h - the server-wide connection limit of an HTTPS server, with
 * eviction: past the limit, a newcomer takes the slot of the oldest open
 * connection that may be evicted, so a flood of connections that hold a slot
 * without a request being answered never locks out a client that sends one
 * (issue 44, finding 8). Only when none may be evicted is the newcomer
 * refused. What "may be evicted" means is the server's: tenantgate-auth marks
 * a connection busy while one of its requests is in the handler; the webhook
 * keeps a connection that has had a request (kube-apiserver's own, kept
 * alive) and evicts one that has not (webhook/conns.c).
 *
 * An evicted connection still counts until the server has closed it (a loop
 * turn later), and libuv accepts a whole backlog in one turn, each newcomer
 * evicting one: past the limit by tg_slots_slack() newcomers are refused
 * even when more could be evicted. Pure bookkeeping, loop thread only: the
 * caller closes what the evict callback names.
 *
 * Two layers: tg_slots_take() counts and limits (one loop: tenantgate-auth);
 * a server whose limit spans several loops (the webhook's workers) keeps its
 * own count, and uses tg_slots_add() and tg_slots_evict_oldest() for the
 * list and the choice. */
#ifndef TG_COMMON_CONN_SLOTS_H
#define TG_COMMON_CONN_SLOTS_H

/* One connection's slot, embedded in the server's connection record. */
typedef struct tg_slot {
    struct tg_slot *prev, *next;   /* accept order: the oldest first */
    int busy;                      /* requests in the handler (or, webhook: had one) */
    int evicted;                   /* the evict callback was called */
} tg_slot;

typedef struct tg_slots tg_slots;
/* Close the connection of s (asynchronously: it is released later). 1 when
 * done; 0 when it could not be (s is no candidate any more either way). */
typedef int (*tg_slot_evict_cb)(tg_slots *ss, tg_slot *s);

struct tg_slots {
    tg_slot list;                  /* anchor */
    long open;                     /* taken and not released, evicted ones included */
    long max;
    long evicted_total;
    tg_slot_evict_cb evict;
    void *data;
};

void tg_slots_init(tg_slots *ss, long max, tg_slot_evict_cb evict, void *data);

/* Past the limit max, how many more may be open (evicted, not yet closed)
 * before newcomers are refused: max(max, 256). */
long tg_slots_slack(long max);

/* Count s (zeroed by the caller) as open: 0 when under the limit or after
 * evicting the oldest connection that is neither busy nor evicted already;
 * -1 when there is no room (s not counted). */
int tg_slots_take(tg_slots *ss, tg_slot *s);

/* Count s as open, newest, whatever the limit. */
void tg_slots_add(tg_slots *ss, tg_slot *s);

/* Evict the oldest candidate (neither busy nor evicted). 1 when one was. */
int tg_slots_evict_oldest(tg_slots *ss);

/* The connection of s closed (after a successful take). */
void tg_slots_release(tg_slots *ss, tg_slot *s);

/* A request of s entered the handler / was answered or dropped. */
void tg_slot_request_begin(tg_slot *s);
void tg_slot_request_end(tg_slot *s);

#endif
