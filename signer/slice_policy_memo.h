/* slice_policy_memo.h - when one live read may decide more than one slice:
 * the slice policy ConfigMap for the ResourceSlice controller, a consumer's
 * Tenant and own NameClaim for the approver's slice CSRs (judged by when
 * their slice was first seen: the CSR is the signer's, made for it).
 *
 * A GET is linearizable: a read that started after a request was first
 * seen (a slice's watch event, a CSR's, or the first pass that met it)
 * started after the request was created, so it reflects every change of
 * the object committed before that: a quota an admin tightens holds for
 * the very next slice, a Tenant drained refuses the next slice's CSR. The
 * last read of each object is kept with the time it started, and serves
 * every request first seen before that time (a slice by uid and
 * generation: a changed spec is a new request); a request seen later reads
 * again. In a burst that is one read per batch of the queue, not one per
 * pass. A change of the object seen by a watch (rs_memo_changed) retires
 * every read that started before it, and a read serves MEMO_SERVE_MS at
 * most. Internal to the signer. */
#ifndef TG_SIGNER_SLICE_POLICY_MEMO_H
#define TG_SIGNER_SLICE_POLICY_MEMO_H

#include <stdint.h>

#include <json-c/json.h>

#include "signer/signer.h"

/* A kept read serves this long at most after it started. */
#define MEMO_SERVE_MS 30000
/* How long a request's first-seen time is kept (a pass that finds none
 * takes its own start: later than the truth, so only safer). */
#define MEMO_SEEN_MS 600000

/* The object a kept read is of (settled-table keys). */
#define MEMO_POLICY "slice-policy"

/* The request (its uid and generation) is seen now, unless seen before. */
void rs_memo_note_seen(tg_signer *s, json_object *request);

/* The microseconds (monotonic) the request was first seen; noted now when
 * not known. 0 when it cannot be told (no uid): no kept read serves it. */
uint64_t rs_memo_seen_us(tg_signer *s, json_object *request);

/* The object `what` as the last read that started after seen_us saw it: 1
 * with *obj (a new object, or NULL: it was not there), or 0: read live. */
int rs_memo_get(tg_signer *s, const char *what, uint64_t seen_us, json_object **obj);

/* Keep a live read of `what` (obj NULL: not there) that started at start_us. */
void rs_memo_put(tg_signer *s, const char *what, uint64_t start_us, json_object *obj);

/* `what` changed (a watch showed it): no read started before now serves. */
void rs_memo_changed(tg_signer *s, const char *what);

/* Microseconds (monotonic), strictly later on every call, in any thread. */
uint64_t rs_memo_now_us(void);

/* The policy ConfigMap changed. */
static inline void rs_policy_changed(tg_signer *s)
{
    rs_memo_changed(s, MEMO_POLICY);
}

#endif
