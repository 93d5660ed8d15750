/* slice_policy_memo.h - when one live read of the slice policy ConfigMap
 * may decide more than one slice.
 *
 * A GET is linearizable: a read that started after a slice was first seen
 * (its watch event, or the first pass that met it) started after the slice
 * was created, so it reflects every policy change committed before that: a
 * quota an admin tightens holds for the very next slice. The last read is
 * kept with the time it started, and serves every slice (uid and
 * generation: a changed spec is a new request) first seen before that
 * time; a slice seen later reads again. In a burst that is one read per
 * batch of the queue, not one per pass. A change of the ConfigMap seen by
 * its watch (rs_policy_changed) retires every read that started before it,
 * and a read serves for POLICY_MEMO_MS at most. Internal to the signer. */
#ifndef TG_SIGNER_SLICE_POLICY_MEMO_H
#define TG_SIGNER_SLICE_POLICY_MEMO_H

#include <stdint.h>

#include <json-c/json.h>

#include "signer/signer.h"

/* A kept read serves this long at most after it started. */
#define POLICY_MEMO_MS 30000
/* How long a slice's first-seen time is kept (a pass that finds none
 * takes its own start: later than the truth, so only safer). */
#define POLICY_SEEN_MS 600000

/* The slice (its uid and generation) is seen now, unless seen before. */
void rs_policy_note_seen(tg_signer *s, json_object *slice);

/* The microseconds (monotonic) the slice was first seen; noted now when
 * not known. 0 when it cannot be told (no uid): no kept read serves it. */
uint64_t rs_policy_seen_us(tg_signer *s, json_object *slice);

/* The ConfigMap's data as the last read that started after seen_us saw
 * it: 1 with *data (a new object or NULL: no ConfigMap or no data), or 0:
 * read live. */
int rs_policy_memo_get(tg_signer *s, uint64_t seen_us, json_object **data);

/* Keep a live read (data NULL: none) that started at start_us. */
void rs_policy_memo_put(tg_signer *s, uint64_t start_us, json_object *data);

/* The ConfigMap changed (its watch): no read started before now serves. */
void rs_policy_changed(tg_signer *s);

uint64_t rs_policy_now_us(void);

#endif
