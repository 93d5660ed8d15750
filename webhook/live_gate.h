/* live_gate.h - how many live reads of nonce Secrets one worker sends to the
 * API server, and when. Pure bookkeeping: no I/O, no clock of its own.
 *
 * A live read happens only on a cache miss, just before a NonceNotFound. Who
 * can send AdmissionReviews (anyone who reaches the webhook's port, or may
 * create Tenants in a tenant namespace without a nonce) could otherwise make
 * the webhook open one API connection per review. The gate bounds that:
 *   - one read of a namespace at a time: reviews that arrive while one is in
 *     flight wait for the next read, never for the one in flight, so every
 *     answer comes from a read that started after its review arrived (a nonce
 *     created just before the Tenant is still found);
 *   - reads of one namespace start at least min_interval_ms apart;
 *   - at most TG_LIVE_GATE_SLOTS namespaces are being read or waited for at
 *     once; a review for one more is refused (TG_LIVE_BUSY). */
#ifndef TG_WEBHOOK_LIVE_GATE_H
#define TG_WEBHOOK_LIVE_GATE_H

#include <stdint.h>

#include "webhook/lookup.h"

#define TG_LIVE_GATE_SLOTS 32

/* A review waiting for a read; the caller owns it (embedded in its own
 * record) and gets it back from tg_live_gate_finish or _drain. */
typedef struct tg_live_waiter {
    struct tg_live_waiter *next;
} tg_live_waiter;

typedef enum tg_live_admit {
    TG_LIVE_READ_NOW,   /* start a read of ns now; its end is tg_live_gate_finish */
    TG_LIVE_QUEUED,     /* a later read answers it: see tg_live_gate_due */
    TG_LIVE_BUSY,       /* every slot is taken: answer without a read */
} tg_live_admit;

typedef enum tg_live_slot_state {
    TG_LIVE_SLOT_FREE,
    TG_LIVE_SLOT_IN_FLIGHT,   /* a read is out; `waiting` are answered by it */
    TG_LIVE_SLOT_SCHEDULED,   /* `queued` wait for the next read, due at started_ms + interval */
    TG_LIVE_SLOT_RESTING,     /* no one waits; held until started_ms + interval */
} tg_live_slot_state;

typedef struct tg_live_slot {
    tg_live_slot_state state;
    char ns[TG_LABEL_VALUE_MAX];
    uint64_t started_ms;           /* when the last read of ns started */
    tg_live_waiter *waiting;       /* answered by the read in flight */
    tg_live_waiter *queued;        /* answered by the next read */
} tg_live_slot;

typedef struct tg_live_gate {
    uint64_t min_interval_ms;
    tg_live_slot slots[TG_LIVE_GATE_SLOTS];
} tg_live_gate;

void tg_live_gate_init(tg_live_gate *g, uint64_t min_interval_ms);

/* A review for namespace ns (a DNS label, shorter than TG_LABEL_VALUE_MAX)
 * at now_ms. BUSY also for a name too long to hold. */
tg_live_admit tg_live_gate_join(tg_live_gate *g, const char *ns, tg_live_waiter *w, uint64_t now_ms);

/* The read of ns ended (answered or failed): the waiters it answers, in the
 * order they joined; NULL when no read of ns was in flight. */
tg_live_waiter *tg_live_gate_finish(tg_live_gate *g, const char *ns, uint64_t now_ms);

/* A namespace whose next read is due at now_ms, marked in flight (start it,
 * and call again: there may be more), or NULL. *wait_ms is then how long
 * until the next one falls due, UINT64_MAX when none is scheduled. */
const char *tg_live_gate_due(tg_live_gate *g, uint64_t now_ms, uint64_t *wait_ms);

/* Empties the gate: every waiter it still holds (in flight or queued). */
tg_live_waiter *tg_live_gate_drain(tg_live_gate *g);

#endif
