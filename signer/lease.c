/* lease.c - see lease.h. */
#include "signer/lease.h"

#include <stdio.h>
#include <string.h>

void tg_elector_init(tg_elector *e, const char *id, uint64_t lease_ms, uint64_t renew_deadline_ms,
                     uint64_t retry_ms)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->id, sizeof(e->id), "%s", id);
    e->lease_ms = lease_ms ? lease_ms : 15000;
    e->renew_deadline_ms = renew_deadline_ms ? renew_deadline_ms : 10000;
    e->retry_ms = retry_ms ? retry_ms : 2000;
}

void tg_elector_observe(tg_elector *e, const char *holder, const char *rv, uint64_t now_ms)
{
    if (!holder)
        holder = "";
    if (!rv)
        rv = "";
    if (!e->observed || strcmp(holder, e->holder) != 0 || strcmp(rv, e->rv) != 0) {
        snprintf(e->holder, sizeof(e->holder), "%s", holder);
        snprintf(e->rv, sizeof(e->rv), "%s", rv);
        e->observed_at_ms = now_ms;
        e->observed = 1;
    }
    /* Someone else holds it: whatever we believed, we are not the leader. */
    if (strcmp(holder, e->id) != 0)
        e->leader = 0;
}

tg_lease_action tg_elector_decide(const tg_elector *e, uint64_t now_ms)
{
    if (!e->observed || e->holder[0] == '\0')
        return TG_LEASE_ACQUIRE;
    if (strcmp(e->holder, e->id) == 0)
        return TG_LEASE_RENEW;
    if (now_ms >= e->observed_at_ms + e->lease_ms)
        return TG_LEASE_ACQUIRE;
    return TG_LEASE_WAIT;
}

int tg_elector_tick(tg_elector *e, uint64_t now_ms)
{
    if (e->leader && now_ms > e->last_renew_ms + e->renew_deadline_ms) {
        e->leader = 0;
        return 1;
    }
    return 0;
}

int tg_elector_written(tg_elector *e, int ok, const char *new_rv, uint64_t now_ms)
{
    if (ok) {
        e->leader = 1;
        e->last_renew_ms = now_ms;
        tg_elector_observe(e, e->id, new_rv, now_ms);
        return 0;
    }
    return tg_elector_tick(e, now_ms);
}

int tg_elector_is_leader(const tg_elector *e, uint64_t now_ms)
{
    return e->leader && now_ms <= e->last_renew_ms + e->renew_deadline_ms;
}
