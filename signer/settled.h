/* settled.h - what the reconcilers already settled, so an event caused by
 * their own write costs no API round trip.
 *
 * A reconcile that leaves an object needing nothing records the object's
 * resourceVersion after its own writes, the state of what it depends on (a
 * short text such as "csr-name:issued"), and until when that holds. A later
 * reconcile of the same key whose informer view shows exactly that version
 * and dependency is skipped. Anything else (another writer, a new CSR, the
 * time passed, an unknown key) runs the full reconcile, which reads the live
 * object: the record only ever saves work, it never decides anything.
 *
 * The same table also remembers short-lived facts by key ("CSR x was just
 * created for this Tenant"), with tg_settled_mark / tg_settled_marked.
 *
 * Thread-safe; the clock is passed in (milliseconds, monotonic). */
#ifndef TG_SIGNER_SETTLED_H
#define TG_SIGNER_SETTLED_H

#include <stddef.h>
#include <stdint.h>

typedef struct tg_settled tg_settled;

tg_settled *tg_settled_new(void);
void tg_settled_free(tg_settled *t);

/* key needs nothing until due_ms while its object is at rv and its
 * dependency reads dep_a or dep_b (dep_b may be NULL). Replaces an earlier
 * record of key. Returns 0, or -1 when out of memory (nothing recorded). */
int tg_settled_put(tg_settled *t, const char *key, const char *rv, const char *dep_a, const char *dep_b,
                   uint64_t now_ms, uint64_t due_ms);

/* The milliseconds left (>= 1) when key was settled at exactly rv with dep
 * one of the recorded dependencies and due_ms is still ahead; 0 otherwise.
 * A record past its due time is dropped; one that does not match is kept:
 * an informer view older than our own write catches up to it later, and a
 * resourceVersion never comes back once the object moved past it. */
uint64_t tg_settled_check(tg_settled *t, const char *key, const char *rv, const char *dep, uint64_t now_ms);

/* Remember key, with a short text (copied), until due_ms: a fact with no
 * version. */
int tg_settled_mark(tg_settled *t, const char *key, const char *value, uint64_t now_ms, uint64_t due_ms);

/* 1 while a mark of key is before its due time, with its text copied to
 * value (value_len bytes, truncated); else 0. */
int tg_settled_marked(tg_settled *t, const char *key, char *value, size_t value_len, uint64_t now_ms);

/* The text of key's mark while it is before its due time, as a malloc'd
 * copy of its own size; else NULL (or out of memory). For large texts (a
 * kept copy of an object): a reader needs no buffer of the largest size,
 * whose malloc would make glibc consolidate its small free chunks. */
char *tg_settled_marked_text(tg_settled *t, const char *key, uint64_t now_ms);

void tg_settled_forget(tg_settled *t, const char *key);

/* Records held (expired ones are dropped lazily, on lookup and on put). */
size_t tg_settled_count(tg_settled *t);

#endif
