/* slice_policy_memo.c - see slice_policy_memo.h. The facts live in the
 * signer's settled table (settled.h) as short texts: they expire on their
 * own and need no lock of their own. */
#include "signer/slice_policy_memo.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "signer/workqueue.h"

/* An object larger than this is read live every time (a policy with
 * thousands of tenant entries): parsing it back would cost what a GET saves. */
#define MEMO_MAX 65536

/* The last time handed out: every call gets a later one than any call
 * before it, in any thread. Two events in the same microsecond are then
 * still ordered as they happened: a read that starts after its slice was
 * noted as seen (the first pass does both) serves the slice's later passes,
 * where equal times would have to count as "not after". */
static _Atomic uint64_t last_us;

uint64_t rs_memo_now_us(void)
{
    struct timespec ts;
    uint64_t now, prev;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    prev = atomic_load(&last_us);
    do {
        if (now <= prev)
            now = prev + 1;
    } while (!atomic_compare_exchange_weak(&last_us, &prev, now));
    return now;
}

/* The key of a request's first-seen time; -1 without a uid (or too long). */
static int seen_key(json_object *slice, char *key, size_t len)
{
    const char *uid = tg_json_path_string(slice, "metadata", "uid", NULL);
    json_object *gen = tg_json_path(slice, "metadata", "generation", NULL);
    int n;

    if (!uid || !*uid)
        return -1;
    n = snprintf(key, len, "memo-seen/%s/%" PRId64, uid, gen ? json_object_get_int64(gen) : (int64_t)0);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The mark of key as microseconds, or 0. */
static uint64_t marked_us(tg_signer *s, const char *key)
{
    char text[32];

    if (!tg_settled_marked(s->settled, key, text, sizeof(text), tg_wq_now_ms()))
        return 0;
    return strtoull(text, NULL, 10);
}

static void mark_us(tg_signer *s, const char *key, uint64_t us, long ttl_ms)
{
    char text[32];
    uint64_t now = tg_wq_now_ms();

    snprintf(text, sizeof(text), "%" PRIu64, us);
    tg_settled_mark(s->settled, key, text, now, now + (uint64_t)ttl_ms);
}

void rs_memo_note_seen(tg_signer *s, json_object *slice)
{
    char key[400];

    if (s->settled && seen_key(slice, key, sizeof(key)) == 0 && !marked_us(s, key))
        mark_us(s, key, rs_memo_now_us(), MEMO_SEEN_MS);
}

uint64_t rs_memo_seen_us(tg_signer *s, json_object *slice)
{
    char key[400];
    uint64_t us;

    if (!s->settled || seen_key(slice, key, sizeof(key)) != 0)
        return 0;
    if (!(us = marked_us(s, key))) {
        us = rs_memo_now_us();
        mark_us(s, key, us, MEMO_SEEN_MS);
    }
    return us;
}

/* 0, or -1 when the key does not fit (never truncated: two objects must
 * never share a key). */
static int memo_key(const char *what, const char *part, char *key, size_t len)
{
    int n = snprintf(key, len, "memo/%s/%s", what, part);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rs_memo_get(tg_signer *s, const char *what, uint64_t seen_us, json_object **obj)
{
    char *text, *rest, key[1200], changed[1200];
    uint64_t start;
    int got = 0;

    *obj = NULL;
    if (!s->settled || !seen_us || memo_key(what, "read", key, sizeof(key)) != 0 ||
        memo_key(what, "changed", changed, sizeof(changed)) != 0)
        return 0;
    if ((text = tg_settled_marked_text(s->settled, key, tg_wq_now_ms())) != NULL) {
        start = strtoull(text, &rest, 10);
        /* strictly after: the read began once the request was already
         * there, and after the last change a watch showed */
        if (start > seen_us && start > marked_us(s, changed) && *rest == ' ') {
            if (strcmp(rest + 1, "null") == 0)
                got = 1;
            else
                got = (*obj = tg_json_parse(rest + 1, strlen(rest + 1), NULL, 0)) != NULL;
        }
    }
    free(text);
    return got;
}

void rs_memo_put(tg_signer *s, const char *what, uint64_t start_us, json_object *obj)
{
    const char *json = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : "null";
    char *text, old[32], key[1200];
    size_t len = strlen(json) + 32;
    uint64_t now = tg_wq_now_ms(), age_ms = (rs_memo_now_us() - start_us) / 1000u;

    if (!s->settled || len >= MEMO_MAX || age_ms >= MEMO_SERVE_MS || memo_key(what, "read", key, sizeof(key)) != 0)
        return;
    /* an older read finishing late does not replace a newer one */
    if (tg_settled_marked(s->settled, key, old, sizeof(old), now) && strtoull(old, NULL, 10) >= start_us)
        return;
    if (!(text = malloc(len)))
        return;
    snprintf(text, len, "%" PRIu64 " %s", start_us, json);
    tg_settled_mark(s->settled, key, text, now, now + (uint64_t)MEMO_SERVE_MS - age_ms);
    free(text);
}

void rs_memo_changed(tg_signer *s, const char *what)
{
    char key[1200];

    if (!s->settled || memo_key(what, "changed", key, sizeof(key)) != 0)
        return;
    mark_us(s, key, rs_memo_now_us(), MEMO_SEEN_MS);
    if (memo_key(what, "read", key, sizeof(key)) == 0)
        tg_settled_forget(s->settled, key);
}
