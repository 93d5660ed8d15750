/* slice_policy_memo.c - see slice_policy_memo.h. The facts live in the
 * signer's settled table (settled.h) as short texts: they expire on their
 * own and need no lock of their own. */
#include "signer/slice_policy_memo.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "signer/workqueue.h"

#define MEMO_KEY "slice-policy/read"
#define CHANGED_KEY "slice-policy/changed"
/* A policy larger than this is read live every time (thousands of tenant
 * entries): parsing it back would cost what a GET saves. */
#define MEMO_MAX 65536

uint64_t rs_policy_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int seen_key(json_object *slice, char *key, size_t len)
{
    const char *uid = tg_json_path_string(slice, "metadata", "uid", NULL);
    json_object *gen = tg_json_path(slice, "metadata", "generation", NULL);

    if (!uid || !*uid)
        return -1;
    snprintf(key, len, "slice-policy/seen/%s/%" PRId64, uid, gen ? json_object_get_int64(gen) : (int64_t)0);
    return 0;
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

void rs_policy_note_seen(tg_signer *s, json_object *slice)
{
    char key[400];

    if (s->settled && seen_key(slice, key, sizeof(key)) == 0 && !marked_us(s, key))
        mark_us(s, key, rs_policy_now_us(), POLICY_SEEN_MS);
}

uint64_t rs_policy_seen_us(tg_signer *s, json_object *slice)
{
    char key[400];
    uint64_t us;

    if (!s->settled || seen_key(slice, key, sizeof(key)) != 0)
        return 0;
    if (!(us = marked_us(s, key))) {
        us = rs_policy_now_us();
        mark_us(s, key, us, POLICY_SEEN_MS);
    }
    return us;
}

int rs_policy_memo_get(tg_signer *s, uint64_t seen_us, json_object **data)
{
    char *text, *rest;
    uint64_t start;
    int got = 0;

    *data = NULL;
    if (!s->settled || !seen_us || !(text = malloc(MEMO_MAX)))
        return 0;
    if (tg_settled_marked(s->settled, MEMO_KEY, text, MEMO_MAX, tg_wq_now_ms()) && strlen(text) < MEMO_MAX - 1) {
        start = strtoull(text, &rest, 10);
        /* strictly after: the read began once the slice was already there,
         * and after the last change the watch showed */
        if (start > seen_us && start > marked_us(s, CHANGED_KEY) && *rest == ' ') {
            if (strcmp(rest + 1, "null") == 0)
                got = 1;
            else
                got = (*data = tg_json_parse(rest + 1, strlen(rest + 1), NULL, 0)) != NULL;
        }
    }
    free(text);
    return got;
}

void rs_policy_memo_put(tg_signer *s, uint64_t start_us, json_object *data)
{
    const char *json = data ? json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN) : "null";
    char *text, old[32];
    size_t len = strlen(json) + 32;
    uint64_t now = tg_wq_now_ms(), age_ms = (rs_policy_now_us() - start_us) / 1000u;

    if (!s->settled || len >= MEMO_MAX || age_ms >= POLICY_MEMO_MS)
        return;
    /* an older read finishing late does not replace a newer one */
    if (tg_settled_marked(s->settled, MEMO_KEY, old, sizeof(old), now) && strtoull(old, NULL, 10) >= start_us)
        return;
    if (!(text = malloc(len)))
        return;
    snprintf(text, len, "%" PRIu64 " %s", start_us, json);
    tg_settled_mark(s->settled, MEMO_KEY, text, now, now + (uint64_t)POLICY_MEMO_MS - age_ms);
    free(text);
}

void rs_policy_changed(tg_signer *s)
{
    if (s->settled) {
        mark_us(s, CHANGED_KEY, rs_policy_now_us(), POLICY_SEEN_MS);
        tg_settled_forget(s->settled, MEMO_KEY);
    }
}
