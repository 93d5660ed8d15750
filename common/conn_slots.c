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

long tg_slots_slack(long max)
{
    return max > EVICT_SLACK_MIN ? max : EVICT_SLACK_MIN;
}

/* The oldest connection that has no request in the handler is closed for
 * the newcomer; one that cannot be closed is no candidate any more. */
int tg_slots_evict_oldest(tg_slots *ss)
{
    for (tg_slot *s = ss->list.next; s != &ss->list; s = s->next) {
        if (s->busy || s->evicted)
            continue;
        s->evicted = 1;
        if (ss->evict(ss, s)) {
            ss->evicted_total++;
            return 1;
        }
    }
    return 0;
}

void tg_slots_add(tg_slots *ss, tg_slot *s)
{
    s->prev = ss->list.prev;
    s->next = &ss->list;
    ss->list.prev->next = s;
    ss->list.prev = s;
    ss->open++;
}

int tg_slots_take(tg_slots *ss, tg_slot *s)
{
    if (ss->open >= ss->max && (ss->open >= ss->max + tg_slots_slack(ss->max) || !tg_slots_evict_oldest(ss)))
        return -1;
    tg_slots_add(ss, s);
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
