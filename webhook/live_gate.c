/* live_gate.c - see live_gate.h. A handful of slots, searched linearly: the
 * gate holds at most TG_LIVE_GATE_SLOTS namespaces by design. */
#include "live_gate.h"

#include <string.h>

void tg_live_gate_init(tg_live_gate *g, uint64_t min_interval_ms)
{
    memset(g, 0, sizeof(*g));
    g->min_interval_ms = min_interval_ms;
}

static uint64_t due_at(const tg_live_gate *g, const tg_live_slot *s)
{
    return s->started_ms + g->min_interval_ms;
}

/* A resting slot whose interval is over holds nothing any more. */
static void expire(tg_live_gate *g, tg_live_slot *s, uint64_t now_ms)
{
    if (s->state == TG_LIVE_SLOT_RESTING && now_ms >= due_at(g, s))
        s->state = TG_LIVE_SLOT_FREE;
}

static tg_live_slot *find(tg_live_gate *g, const char *ns, uint64_t now_ms)
{
    for (int i = 0; i < TG_LIVE_GATE_SLOTS; i++) {
        tg_live_slot *s = &g->slots[i];

        expire(g, s, now_ms);
        if (s->state != TG_LIVE_SLOT_FREE && strcmp(s->ns, ns) == 0)
            return s;
    }
    return NULL;
}

static tg_live_slot *take_free(tg_live_gate *g)
{
    for (int i = 0; i < TG_LIVE_GATE_SLOTS; i++)
        if (g->slots[i].state == TG_LIVE_SLOT_FREE)
            return &g->slots[i];
    return NULL;
}

/* Lists are built by prepending (a flood of waiters costs O(1) each) and
 * handed back in the order the waiters joined. */
static tg_live_waiter *reversed(tg_live_waiter *w)
{
    tg_live_waiter *out = NULL;

    while (w) {
        tg_live_waiter *next = w->next;

        w->next = out;
        out = w;
        w = next;
    }
    return out;
}

static void push(tg_live_waiter **list, tg_live_waiter *w)
{
    w->next = *list;
    *list = w;
}

tg_live_admit tg_live_gate_join(tg_live_gate *g, const char *ns, tg_live_waiter *w, uint64_t now_ms)
{
    tg_live_slot *s;

    if (strlen(ns) >= sizeof(s->ns))
        return TG_LIVE_BUSY;
    if ((s = find(g, ns, now_ms)) != NULL) {
        /* In flight or not, this review waits for a read yet to start. */
        if (s->state == TG_LIVE_SLOT_RESTING)
            s->state = TG_LIVE_SLOT_SCHEDULED;
        push(&s->queued, w);
        return TG_LIVE_QUEUED;
    }
    if ((s = take_free(g)) == NULL)
        return TG_LIVE_BUSY;
    memcpy(s->ns, ns, strlen(ns) + 1);
    s->state = TG_LIVE_SLOT_IN_FLIGHT;
    s->started_ms = now_ms;
    s->waiting = NULL;
    s->queued = NULL;
    push(&s->waiting, w);
    return TG_LIVE_READ_NOW;
}

tg_live_waiter *tg_live_gate_finish(tg_live_gate *g, const char *ns, uint64_t now_ms)
{
    tg_live_slot *s = find(g, ns, now_ms);
    tg_live_waiter *answered;

    if (s == NULL || s->state != TG_LIVE_SLOT_IN_FLIGHT)
        return NULL;
    answered = reversed(s->waiting);
    s->waiting = NULL;
    s->state = s->queued ? TG_LIVE_SLOT_SCHEDULED : TG_LIVE_SLOT_RESTING;
    expire(g, s, now_ms);
    return answered;
}

const char *tg_live_gate_due(tg_live_gate *g, uint64_t now_ms, uint64_t *wait_ms)
{
    uint64_t wait = UINT64_MAX;

    for (int i = 0; i < TG_LIVE_GATE_SLOTS; i++) {
        tg_live_slot *s = &g->slots[i];

        expire(g, s, now_ms);
        if (s->state != TG_LIVE_SLOT_SCHEDULED)
            continue;
        if (now_ms >= due_at(g, s)) {
            s->state = TG_LIVE_SLOT_IN_FLIGHT;
            s->started_ms = now_ms;
            s->waiting = s->queued;
            s->queued = NULL;
            *wait_ms = 0;
            return s->ns;
        }
        if (due_at(g, s) - now_ms < wait)
            wait = due_at(g, s) - now_ms;
    }
    *wait_ms = wait;
    return NULL;
}

tg_live_waiter *tg_live_gate_drain(tg_live_gate *g)
{
    tg_live_waiter *all = NULL;

    for (int i = 0; i < TG_LIVE_GATE_SLOTS; i++) {
        tg_live_slot *s = &g->slots[i];
        tg_live_waiter *lists[2] = {s->waiting, s->queued};

        for (int l = 0; l < 2; l++)
            while (lists[l]) {
                tg_live_waiter *next = lists[l]->next;

                push(&all, lists[l]);
                lists[l] = next;
            }
        s->waiting = s->queued = NULL;
        s->state = TG_LIVE_SLOT_FREE;
    }
    return all;
}
