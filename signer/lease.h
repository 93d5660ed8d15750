/* lease.h - leader election on a coordination.k8s.io/v1 Lease, the decision
 * part (client-go's leaderelection, reduced): pure, the clock passed in.
 *
 * Remote timestamps are never trusted: a lease counts as expired when its
 * record (holder + resourceVersion) has not changed for lease_ms of OUR time
 * since we first saw it. The holder renews every retry_ms; a leader that has
 * not renewed successfully for renew_deadline_ms stops being the leader (before
 * the lease can expire for the others, since renew_deadline < lease). */
#ifndef TG_SIGNER_LEASE_H
#define TG_SIGNER_LEASE_H

#include <stdint.h>

#define TG_LEASE_HOLDER_MAX 256

typedef enum tg_lease_action {
    TG_LEASE_WAIT = 0,      /* someone else holds a live lease */
    TG_LEASE_ACQUIRE,       /* free or expired: write ourselves as holder */
    TG_LEASE_RENEW,         /* ours: write a new renewTime */
} tg_lease_action;

typedef struct tg_elector {
    char id[TG_LEASE_HOLDER_MAX];          /* our holderIdentity */
    uint64_t lease_ms, renew_deadline_ms, retry_ms;
    /* the record as last observed */
    char holder[TG_LEASE_HOLDER_MAX];
    char rv[64];
    uint64_t observed_at_ms;
    int observed;
    /* our standing */
    int leader;
    uint64_t last_renew_ms;
} tg_elector;

/* 15 s lease, 10 s renew deadline, 2 s retry unless given (0 = default). */
void tg_elector_init(tg_elector *e, const char *id, uint64_t lease_ms, uint64_t renew_deadline_ms,
                     uint64_t retry_ms);

/* What the API returned: holder ("" or NULL when none), resourceVersion. */
void tg_elector_observe(tg_elector *e, const char *holder, const char *rv, uint64_t now_ms);

/* The next step. */
tg_lease_action tg_elector_decide(const tg_elector *e, uint64_t now_ms);

/* The outcome of our ACQUIRE/RENEW write (ok: 1 when the API accepted it, and
 * new_rv its resourceVersion). Returns 1 when leadership was just lost. */
int tg_elector_written(tg_elector *e, int ok, const char *new_rv, uint64_t now_ms);

/* A failed read or a WAIT also ages our leadership; returns 1 when lost. */
int tg_elector_tick(tg_elector *e, uint64_t now_ms);

int tg_elector_is_leader(const tg_elector *e, uint64_t now_ms);

#endif
