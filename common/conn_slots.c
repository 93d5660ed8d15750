/* conn_slots.c - see conn_slots.h. */
#include "conn_slots.h"

#include <string.h>

#define EVICT_SLACK_MIN 256

void tg_slots_init(tg_slots *ss, long max, tg_slot_evict_cb evict, void *data)
{
    memset(ss, 0, sizeof(*ss));
    ss->list.prev = ss->list.next = &ss->list;
    ss->max = max;
    ss->evict = evict;
    ss->data = data;
}

/* The oldest connection that has no request in the handler: it is closed
 * for the newcomer. 1 when one was. */
static int evict_oldest_idle(tg_slots *ss)
{
    for (tg_slot *s = ss->list.next; s != &ss->list; s = s->next) {
        if (s->busy || s->evicted)
            continue;
        s->evicted = 1;
        ss->evicted_total++;
        ss->evict(ss, s);
        return 1;
    }
    return 0;
}

int tg_slots_take(tg_slots *ss, tg_slot *s)
{
    long slack = ss->max > EVICT_SLACK_MIN ? ss->max : EVICT_SLACK_MIN;

    if (ss->open >= ss->max && (ss->open >= ss->max + slack || !evict_oldest_idle(ss)))
        return -1;
    s->prev = ss->list.prev;
    s->next = &ss->list;
    ss->list.prev->next = s;
    ss->list.prev = s;
    ss->open++;
    return 0;
}

void tg_slots_release(tg_slots *ss, tg_slot *s)
{
    s->prev->next = s->next;
    s->next->prev = s->prev;
    s->prev = s->next = NULL;
    ss->open--;
}

void tg_slot_request_begin(tg_slot *s)
{
    s->busy++;
}

void tg_slot_request_end(tg_slot *s)
{
    if (s->busy > 0)
        s->busy--;
}
