/* slice_plan.h - what the provider's ResourceSlice controller
 * (remoteresourceslice, PROTOCOL.md 6a) does with what it reads from the
 * informer caches, as pure decisions with table tests:
 *
 *  - the slice's certificate, from the CSRs made for its current request
 *    (the CSR informer's cache, plus what this process made and the cache
 *    does not show yet);
 *  - for the maxPerTenant sum, where a sibling slice's grant is taken from:
 *    the slice informer's cache, or the record of this process's own last
 *    Resources write, or (when neither is known) a live read. */
#ifndef TG_SIGNER_SLICE_PLAN_H
#define TG_SIGNER_SLICE_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* A pending CSR older than this is replaced. */
#define TG_SLICE_CSR_STALE_S 300
/* A denied CSR is shown (Authentication=Denied) this long, then replaced. */
#define TG_SLICE_DENIED_RETRY_S 60

typedef struct tg_slice_csr_view {
    int found;          /* a CSR made for the slice's current request is in the cache */
    int issued;         /* the newest one carries status.certificate */
    int usable;         /* ... which parses, certifies the request's key and is not due */
    int decided;        /* its conditions: 1 Approved, -1 Denied or Failed, 0 none */
    int64_t age_s;      /* seconds since it was created */
    int ours_unseen;    /* a CSR this process made for the request is not in the cache yet */
} tg_slice_csr_view;

typedef enum tg_slice_csr_action {
    TG_SLICE_CSR_USE = 0,    /* publish the newest CSR's certificate */
    TG_SLICE_CSR_WAIT,       /* pending, or approved and not issued yet: its informer event wakes us */
    TG_SLICE_CSR_DENIED,     /* denied less than TG_SLICE_DENIED_RETRY_S ago: show why, retry then */
    TG_SLICE_CSR_CREATE,     /* none, stale, denied long ago, or its certificate unusable: a new CSR */
    TG_SLICE_CSR_WAIT_CACHE, /* ours is on its way into the cache: make none, look again shortly */
} tg_slice_csr_action;

tg_slice_csr_action tg_slice_csr_plan(const tg_slice_csr_view *v);

/* What this process last wrote as a slice's Resources verdict, while it
 * remembers it (its own writes only; it is the one writer: leader election). */
typedef enum tg_slice_grant_record {
    TG_GRANT_NONE = 0,     /* no record: the cache holds our last write, if any */
    TG_GRANT_ACCEPTED,     /* Accepted, with the recorded status.resources */
    TG_GRANT_DENIED,       /* Denied (or no longer granted) */
    TG_GRANT_UNKNOWN,      /* a write whose outcome we do not know (failed call, record lost) */
} tg_slice_grant_record;

typedef enum tg_slice_sibling_source {
    TG_SIBLING_SKIP = 0,   /* counts nothing */
    TG_SIBLING_CACHE,      /* the cached status: counted if its Resources is Accepted */
    TG_SIBLING_RECORD,     /* the recorded grant */
    TG_SIBLING_LIVE,       /* not known here: the whole sum from a live LIST */
} tg_slice_sibling_source;

/* A sibling slice (same consumer and namespace, not the one decided) as the
 * cache shows it: being deleted, of the default class, and our record. */
tg_slice_sibling_source tg_slice_sibling_source_of(int deleting, int default_class, tg_slice_grant_record rec);

/* The record of a Resources verdict this process wrote, as a text (kept in
 * settled.h's marks): "<resourceVersion>\t<A|D|?><granted JSON>", where the
 * resourceVersion is the one the write produced ("" when not known: such a
 * record holds until it expires) and the JSON, for A, the slice's
 * status.resources. Into buf (len bytes): 0, or -1 when it does not fit
 * (record TG_GRANT_UNKNOWN then: "\t?" always fits in 3 bytes). */
int tg_slice_grant_encode(char *buf, size_t len, const char *rv, tg_slice_grant_record rec, const char *granted_json);

/* A record read back into a buffer of buf_len bytes, for a slice the cache
 * shows at cached_rv (NULL: unknown). When the cache shows that very write,
 * the record is spent: TG_GRANT_NONE and *spent = 1 (the caller drops it).
 * Otherwise the record; for TG_GRANT_ACCEPTED *granted_json points into
 * value. A value without the tab, of an unknown kind, or filling its buffer
 * (perhaps cut short) is TG_GRANT_UNKNOWN. */
tg_slice_grant_record tg_slice_grant_decode(const char *value, size_t buf_len, const char *cached_rv,
                                            const char **granted_json, int *spent);

/* Short text for logs and tests. */
const char *tg_slice_csr_action_name(tg_slice_csr_action a);

#endif
