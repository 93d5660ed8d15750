/* rc_stash.c - the object a reconcile's own write returned, kept a short
 * while (a settled mark of its JSON text) so that the next reconcile which
 * finds the informer at exactly that resourceVersion reads it instead of
 * GETting the same version again (reconcile_common.h). A resourceVersion
 * names one version of one object, so the stash is that object, not a guess;
 * writes made from it still carry the version, and a 409 sends the next
 * reconcile back to a live read. */
#include "signer/reconcile_common.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

/* Larger objects are not stashed: a Tenant with its status or a CSR is a few KB. */
#define STASH_MAX 16384

void rc_stash_put(tg_signer *s, const char *key, json_object *obj, long ttl_ms)
{
    json_object *meta = tg_json_path(obj, "metadata", NULL);
    json_object *mf = NULL;
    const char *text;
    uint64_t now = tg_wq_now_ms();

    if (!s->settled || !obj || !meta || !tg_json_path_string(obj, "metadata", "resourceVersion", NULL))
        return;
    if (json_object_object_get_ex(meta, "managedFields", &mf)) {   /* the bulk of an answer, read by no one */
        json_object_get(mf);
        json_object_object_del(meta, "managedFields");
    }
    text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
    if (text && strlen(text) < STASH_MAX - 1)
        tg_settled_mark(s->settled, key, text, now, now + (uint64_t)ttl_ms);
    else
        tg_settled_forget(s->settled, key);
    if (mf)
        json_object_object_add(meta, "managedFields", mf);
}

json_object *rc_stash_get(tg_signer *s, const char *key, const char *rv)
{
    char *text;
    json_object *obj = NULL;
    const char *got;

    if (!s->settled || !rv || !*rv || !(text = malloc(STASH_MAX)))
        return NULL;
    if (tg_settled_marked(s->settled, key, text, STASH_MAX, tg_wq_now_ms()) && strlen(text) < STASH_MAX - 1 &&
        (obj = tg_json_parse(text, strlen(text), NULL, 0)) &&
        (!(got = tg_json_path_string(obj, "metadata", "resourceVersion", NULL)) || strcmp(got, rv) != 0)) {
        json_object_put(obj);   /* another version: the informer has moved on (or not caught up) */
        obj = NULL;
    }
    free(text);
    return obj;
}

void rc_stash_forget(tg_signer *s, const char *key)
{
    if (s->settled)
        tg_settled_forget(s->settled, key);
}
