/* api_kept.c - our own writes, kept and settled (api.h), over the signer's
 * settled table: kept copies are marks (the object's JSON text) under the
 * object's path, settled records are keyed by the caller. Above the
 * transport (tg_api_call), so the process and the unit tests' fake API
 * server share it. */
#include "signer/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "signer/workqueue.h"

/* Larger objects are not kept: a Tenant with its status or a CSR is a few KB. */
#define KEPT_MAX 16384

/* The userdata of an object served from a kept copy: a 409 on a write of it
 * means the object moved on since our write, not a conflict to report. */
static const char from_kept;

void tg_api_keep(tg_settled *kept, const char *path, json_object *obj, long keep_ms)
{
    json_object *meta = tg_json_path(obj, "metadata", NULL);
    json_object *mf = NULL;
    const char *text;
    uint64_t now = tg_wq_now_ms();

    if (!kept || !obj || !meta || keep_ms <= 0 || !tg_json_path_string(obj, "metadata", "resourceVersion", NULL))
        return;
    if (json_object_object_get_ex(meta, "managedFields", &mf)) {   /* the bulk of an answer, read by no one */
        json_object_get(mf);
        json_object_object_del(meta, "managedFields");
    }
    text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
    if (text && strlen(text) < KEPT_MAX - 1)
        tg_settled_mark(kept, path, text, now, now + (uint64_t)keep_ms);
    else
        tg_settled_forget(kept, path);
    if (mf)
        json_object_object_add(meta, "managedFields", mf);
}

void tg_api_forget(tg_settled *kept, const char *path)
{
    if (kept)
        tg_settled_forget(kept, path);
}

json_object *tg_api_kept(tg_settled *kept, const char *path, const char *rv)
{
    char *text;
    json_object *obj = NULL;
    const char *got;

    if (!kept || !rv || !*rv || !(text = tg_settled_marked_text(kept, path, tg_wq_now_ms())))
        return NULL;
    if ((obj = tg_json_parse(text, strlen(text), NULL, 0)) &&
        (!(got = tg_json_path_string(obj, "metadata", "resourceVersion", NULL)) || strcmp(got, rv) != 0)) {
        json_object_put(obj);   /* another version: the informer has moved on (or not caught up) */
        obj = NULL;
    }
    free(text);
    if (obj)
        json_object_set_userdata(obj, (void *)&from_kept, NULL);
    return obj;
}

long tg_api_get_at(tg_api *a, tg_settled *kept, const char *path, const char *rv, int flags, json_object **out,
                   char *err, size_t err_len)
{
    char live[1200];

    if ((*out = tg_api_kept(kept, path, rv)))
        return 200;
    /* "Not older than what our informer saw": the API server answers from
     * its watch cache instead of a quorum read of etcd. */
    snprintf(live, sizeof(live), "%s%s%s", path, rv && *rv && !(flags & TG_API_LIVE) ? "?resourceVersion=" : "",
             rv && !(flags & TG_API_LIVE) ? rv : "");
    return tg_api_get(a, live, out, err, err_len);
}

/* The path the object of a write is kept under: a POST's collection and the
 * answer's name, or the path without its query and subresource. */
static void object_path(char *key, size_t len, const char *method, const char *path, json_object *answer)
{
    static const char *const subs[] = {"/status", "/approval"};
    size_t n = strcspn(path, "?"), i, sl;

    if (strcmp(method, "POST") == 0) {
        const char *name = tg_json_path_string(answer, "metadata", "name", NULL);
        snprintf(key, len, "%.*s/%s", (int)n, path, name ? name : "");
        return;
    }
    for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        sl = strlen(subs[i]);
        if (n > sl && strncmp(path + n - sl, subs[i], sl) == 0)
            n -= sl;
    }
    snprintf(key, len, "%.*s", (int)n, path);
}

long tg_api_write(tg_api *a, tg_settled *kept, const char *method, const char *path, tg_kube_content_type ct,
                  json_object *body, long keep_ms, json_object **out, char *err, size_t err_len)
{
    json_object *answer = NULL;
    char key[1200];
    long st;

    if (out)
        *out = NULL;
    if (strcmp(method, "POST") != 0) {
        object_path(key, sizeof(key), method, path, NULL);
        tg_api_forget(kept, key);   /* its version is past once we write */
    }
    st = tg_api_call(a, method, path, ct, body, &answer, err, err_len);
    if (st == 409 && body && json_object_get_userdata(body) == &from_kept) {
        json_object_put(answer);
        return TG_API_STALE;
    }
    if (st >= 200 && st < 300 && keep_ms > 0 && answer) {
        object_path(key, sizeof(key), method, path, answer);
        tg_api_keep(kept, key, answer, keep_ms);
    }
    if (out)
        *out = answer;
    else
        json_object_put(answer);
    return st;
}

void tg_api_settle(tg_settled *kept, const char *key, const char *rv, const char *dep_a, const char *dep_b, long ms)
{
    uint64_t now = tg_wq_now_ms();

    if (kept && rv && ms > 0)
        tg_settled_put(kept, key, rv, dep_a, dep_b, now, now + (uint64_t)ms);
}

long tg_api_settled(tg_settled *kept, const char *key, const char *rv, const char *dep)
{
    return kept && rv && *rv ? (long)tg_settled_check(kept, key, rv, dep, tg_wq_now_ms()) : 0;
}

void tg_api_note_made(tg_settled *kept, const char *key, const char *made, long ms)
{
    uint64_t now = tg_wq_now_ms();

    if (kept && made && *made)
        tg_settled_mark(kept, key, made, now, now + (uint64_t)ms);
}

int tg_api_made_unseen(tg_settled *kept, const char *key, const char *newest)
{
    char ours[256];

    if (!kept || !tg_settled_marked(kept, key, ours, sizeof(ours), tg_wq_now_ms()))
        return 0;
    if (newest && *newest && strcmp(ours, newest) == 0) {
        tg_settled_forget(kept, key);   /* the informer has caught up with it */
        return 0;
    }
    return 1;
}
