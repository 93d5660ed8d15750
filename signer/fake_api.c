/* fake_api.c - see fake_api.h. */
#include "signer/fake_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

#define MAX_FAULTS 16

struct tg_api {
    json_object *store;        /* path -> object, in insertion order */
    long rv;                   /* the last resourceVersion handed out */
    int names;                 /* generateName counter */
    json_object *writes;       /* [{method, path, body, status}] */
    size_t ngets;
    struct { char method[8], path[512]; long status; int times; json_object *answer; } faults[MAX_FAULTS];
    int nfaults;
    const char *server;        /* fake_api_serve */
};

static tg_api *served;         /* fake_api_serve */

tg_api *fake_api_new(void)
{
    tg_api *a = calloc(1, sizeof(*a));

    if (a) {
        a->store = json_object_new_object();
        a->writes = json_object_new_array();
    }
    return a;
}

void fake_api_free(tg_api *a)
{
    if (!a)
        return;
    if (served == a)
        served = NULL;
    for (int i = 0; i < a->nfaults; i++)
        json_object_put(a->faults[i].answer);
    json_object_put(a->writes);
    json_object_put(a->store);
    free(a);
}

static json_object *copy_of(json_object *o)
{
    json_object *c = NULL;

    return o && json_object_deep_copy(o, &c, NULL) == 0 ? c : NULL;
}

/* metadata[key] = value (NULL: removed). */
static void set_meta(json_object *obj, const char *key, const char *value)
{
    json_object *meta = tg_json_path(obj, "metadata", NULL);

    if (!meta)
        json_object_object_add(obj, "metadata", meta = json_object_new_object());
    if (value)
        json_object_object_add(meta, key, json_object_new_string(value));
    else
        json_object_object_del(meta, key);
}

static void bump_rv(tg_api *a, json_object *obj)
{
    char rv[32];

    snprintf(rv, sizeof(rv), "%ld", ++a->rv);
    set_meta(obj, "resourceVersion", rv);
}

void fake_api_put_obj(tg_api *a, const char *path, json_object *obj)
{
    char uid[64];

    if (!tg_json_path_string(obj, "metadata", "uid", NULL)) {
        snprintf(uid, sizeof(uid), "uid-%ld", a->rv + 1);
        set_meta(obj, "uid", uid);
    }
    if (!tg_json_path_string(obj, "metadata", "creationTimestamp", NULL))
        set_meta(obj, "creationTimestamp", "2026-11-28T00:00:00Z");
    bump_rv(a, obj);
    json_object_object_add(a->store, path, obj);
}

void fake_api_put(tg_api *a, const char *path, const char *json)
{
    json_object *obj = tg_json_parse(json, strlen(json), NULL, 0);

    if (obj)
        fake_api_put_obj(a, path, obj);
}

json_object *fake_api_object(tg_api *a, const char *path)
{
    json_object *o = NULL;

    return json_object_object_get_ex(a->store, path, &o) ? o : NULL;
}

void fake_api_fail(tg_api *a, const char *method, const char *path, long status, int times)
{
    if (a->nfaults == MAX_FAULTS)
        return;
    snprintf(a->faults[a->nfaults].method, sizeof(a->faults[0].method), "%s", method ? method : "");
    snprintf(a->faults[a->nfaults].path, sizeof(a->faults[0].path), "%s", path);
    a->faults[a->nfaults].status = status;
    a->faults[a->nfaults++].times = times;
}

void fake_api_answer(tg_api *a, const char *method, const char *path, long status, const char *json)
{
    if (a->nfaults == MAX_FAULTS)
        return;
    fake_api_fail(a, method, path, status, 1);
    a->faults[a->nfaults - 1].answer = json ? json_tokener_parse(json) : NULL;
}

/* An injected answer for this call (*got: its body, if any), or 0. */
static long injected(tg_api *a, const char *method, const char *key, json_object **got)
{
    for (int i = 0; i < a->nfaults; i++)
        if (a->faults[i].times > 0 && strcmp(a->faults[i].path, key) == 0 &&
            (!a->faults[i].method[0] || strcmp(a->faults[i].method, method) == 0)) {
            a->faults[i].times--;
            *got = a->faults[i].answer ? json_object_get(a->faults[i].answer) : NULL;
            return a->faults[i].status;
        }
    return 0;
}

json_object *fake_api_writes(tg_api *a) { return a->writes; }
size_t fake_api_ngets(tg_api *a) { return a->ngets; }

void fake_api_serve(tg_api *a, const char *server)
{
    served = a;
    a->server = server;
}

static void record(tg_api *a, const char *method, const char *path, const char *body, long status)
{
    json_object *w = json_object_new_object();

    json_object_object_add(w, "method", json_object_new_string(method));
    json_object_object_add(w, "path", json_object_new_string(path));
    json_object_object_add(w, "body", body ? json_object_new_string(body) : NULL);
    json_object_object_add(w, "status", json_object_new_int64(status));
    json_object_array_add(a->writes, w);
}

/* Segments after the group/version prefix: an odd count names a collection. */
static int is_collection(const char *key)
{
    int n = 0;

    for (const char *p = key; *p; p++)
        n += *p == '/';
    return (n - (strncmp(key, "/apis/", 6) == 0 ? 3 : 2)) % 2 == 1;
}

/* The labelSelector of a query, URL-decoded, into text. */
static void selector_of(const char *query, char *text, size_t len)
{
    const char *sel = query ? strstr(query, "labelSelector=") : NULL;
    size_t j = 0;
    unsigned c;

    for (sel = sel ? sel + strlen("labelSelector=") : ""; *sel && *sel != '&' && j + 1 < len; sel++) {
        if (*sel == '%' && sscanf(sel + 1, "%2x", &c) == 1) {
            text[j++] = (char)c;
            sel += 2;
        } else {
            text[j++] = *sel;
        }
    }
    text[j] = '\0';
}

/* 1 when obj's labels satisfy the query's equality selector ("k=v,k2"). */
static int selected(json_object *obj, const char *query)
{
    char text[512], *term, *save = NULL;

    selector_of(query, text, sizeof(text));
    for (term = strtok_r(text, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(term, '=');
        const char *v;
        if (eq)
            *eq = '\0';
        v = tg_json_path_string(obj, "metadata", "labels", term, NULL);
        if (!v || (eq && strcmp(v, eq + 1) != 0))
            return 0;
    }
    return 1;
}

static long do_get(tg_api *a, const char *key, const char *query, json_object **out)
{
    json_object *o = fake_api_object(a, key), *items;
    size_t klen = strlen(key);

    a->ngets++;
    if (o || !is_collection(key)) {
        *out = copy_of(o);
        return o ? 200 : 404;
    }
    items = json_object_new_array();
    json_object_object_foreach(a->store, path, obj) {
        if (strncmp(path, key, klen) == 0 && path[klen] == '/' && !strchr(path + klen + 1, '/') && selected(obj, query))
            json_object_array_add(items, copy_of(obj));
    }
    *out = json_object_new_object();
    json_object_object_add(*out, "items", items);
    return 200;
}

/* RFC 7386: null removes, objects merge, anything else replaces. */
static void merge_patch(json_object *target, json_object *patch)
{
    json_object_object_foreach(patch, k, v) {
        json_object *cur = json_object_object_get(target, k);
        if (!v)
            json_object_object_del(target, k);
        else if (json_object_is_type(v, json_type_object) && json_object_is_type(cur, json_type_object))
            merge_patch(cur, v);
        else
            json_object_object_add(target, k, copy_of(v));
    }
}

static int has_finalizers(json_object *o)
{
    json_object *f = tg_json_path(o, "metadata", "finalizers", NULL);

    return f && json_object_is_type(f, json_type_array) && json_object_array_length(f) > 0;
}

/* obj[key] = a copy of value, or no key when value is NULL. */
static void set_member(json_object *obj, const char *key, json_object *value)
{
    if (value)
        json_object_object_add(obj, key, copy_of(value));
    else
        json_object_object_del(obj, key);
}

/* The object after a PUT or PATCH of body: through a subresource (sub) only
 * status changes, through the object itself status never does, and a PUT
 * keeps the fields the server owns. */
static json_object *updated(json_object *stored, int put, int sub, json_object *body)
{
    static const char *const owned[] = {"uid", "creationTimestamp", "deletionTimestamp"};
    json_object *next = copy_of(put && !sub ? body : stored), *st = json_object_object_get(body, "status"), *cur;

    if (sub && !put && json_object_is_type(st, json_type_object)) {
        if (!json_object_is_type(cur = json_object_object_get(next, "status"), json_type_object))
            json_object_object_add(next, "status", cur = json_object_new_object());
        merge_patch(cur, st);
    } else if (sub) {
        set_member(next, "status", st);
    } else if (put) {
        set_member(next, "status", json_object_object_get(stored, "status"));
        for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
            set_meta(next, owned[i], tg_json_path_string(stored, "metadata", owned[i], NULL));
    } else {
        json_object *patch = copy_of(body);
        json_object_object_del(patch, "status");
        merge_patch(next, patch);
        json_object_put(patch);
    }
    return next;
}

/* PUT or PATCH of key; 409 when the body names another resourceVersion. */
static long do_update(tg_api *a, int put, const char *key, int sub, json_object *body, json_object **out)
{
    json_object *stored = fake_api_object(a, key), *next;
    const char *want = tg_json_path_string(body, "metadata", "resourceVersion", NULL);

    if (!stored)
        return 404;
    if (!json_object_is_type(body, json_type_object))
        return 400;
    if (want && *want && strcmp(want, tg_json_path_string(stored, "metadata", "resourceVersion", NULL)) != 0)
        return 409;
    next = updated(stored, put, sub, body);
    bump_rv(a, next);
    *out = copy_of(next);
    if (tg_json_path(next, "metadata", "deletionTimestamp", NULL) && !has_finalizers(next)) {
        json_object_object_del(a->store, key);   /* the last finalizer went */
        json_object_put(next);
    } else {
        json_object_object_add(a->store, key, next);
    }
    return 200;
}

static long do_post(tg_api *a, const char *key, json_object *body, json_object **out)
{
    const char *name = tg_json_path_string(body, "metadata", "name", NULL);
    const char *gen = tg_json_path_string(body, "metadata", "generateName", NULL);
    char path[1024], made[300];
    json_object *obj;

    if (!name && gen && snprintf(made, sizeof(made), "%s%05d", gen, ++a->names) > 0)
        name = made;
    if (!name)
        return 422;
    snprintf(path, sizeof(path), "%s/%s", key, name);
    if (fake_api_object(a, path))
        return 409;
    set_meta(obj = copy_of(body), "name", name);
    fake_api_put_obj(a, path, obj);
    *out = copy_of(obj);
    return 201;
}

/* Removed, or only marked while finalizers hold it; body's preconditions.uid must match. */
static long do_delete(tg_api *a, const char *key, json_object *body, json_object **out)
{
    json_object *stored = fake_api_object(a, key);
    const char *uid = tg_json_path_string(body, "preconditions", "uid", NULL);

    if (!stored)
        return 404;
    if (uid && strcmp(uid, tg_json_path_string(stored, "metadata", "uid", NULL)) != 0)
        return 409;
    if (!has_finalizers(stored)) {
        json_object_object_del(a->store, key);
        return 200;
    }
    if (!tg_json_path(stored, "metadata", "deletionTimestamp", NULL)) {
        set_meta(stored, "deletionTimestamp", "2026-11-28T00:00:01Z");
        bump_rv(a, stored);
    }
    *out = copy_of(stored);
    return 200;
}

static long dispatch(tg_api *a, const char *method, const char *key, const char *query, tg_kube_content_type ct,
                     json_object *body, json_object **out)
{
    char base[1024];
    const char *slash = strrchr(key, '/');
    int sub = strcmp(slash, "/status") == 0 || strcmp(slash, "/approval") == 0;
    int put = strcmp(method, "PUT") == 0;

    snprintf(base, sizeof(base), "%.*s", (int)(sub ? slash - key : (long)strlen(key)), key);
    if (strcmp(method, "GET") == 0)
        return do_get(a, key, query, out);
    if (strcmp(method, "POST") == 0)
        return do_post(a, key, body, out);
    if (strcmp(method, "DELETE") == 0)
        return do_delete(a, key, body, out);
    if (!put && strcmp(method, "PATCH") != 0)
        return 405;
    /* server-side apply of a whole object: created when absent, else merged
     * (the fields a reconciler applies are the fields it owns) */
    if (!put && !sub && ct == TG_KUBE_CT_APPLY && !fake_api_object(a, base)) {
        fake_api_put_obj(a, base, copy_of(body));
        *out = copy_of(fake_api_object(a, base));
        return 201;
    }
    if (!put && ct != TG_KUBE_CT_MERGE_PATCH && ct != TG_KUBE_CT_APPLY)
        return 415;   /* the only patches the reconcilers send */
    return do_update(a, put, base, sub, body, out);
}

long tg_api_call(tg_api *a, const char *method, const char *path, tg_kube_content_type ct, json_object *body,
                 json_object **out, char *err, size_t err_len)
{
    const char *q = strchr(path, '?');
    json_object *got = NULL;
    char key[1024];
    long st;

    if (out)
        *out = NULL;
    snprintf(key, sizeof(key), "%.*s", (int)(q ? q - path : (long)strlen(path)), path);
    if (!(st = injected(a, method, key, &got)))
        st = dispatch(a, method, key, q ? q + 1 : NULL, ct, body, &got);
    if (strcmp(method, "GET") != 0)
        /* the bytes tg_api_call sends: no "\/" */
        record(a, method, path,
               body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                    : NULL,
               st);
    if (st < 0 || st >= 300)
        snprintf(err, err_len, "%s %s: %s %ld (fake)", method, path, st < 0 ? "transport error" : "HTTP", st);
    if (out && st >= 200 && st < 300)
        *out = got;
    else
        json_object_put(got);
    return st < 0 ? -1 : st;
}

long tg_api_get(tg_api *a, const char *path, json_object **out, char *err, size_t err_len)
{
    return tg_api_call(a, "GET", path, TG_KUBE_CT_JSON, NULL, out, err, err_len);
}

void tg_api_event(tg_api *a, json_object *obj, const char *type, const char *reason, const char *message)
{
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    char what[600];

    (void)type;
    snprintf(what, sizeof(what), "%s/%s %s", ns ? ns : "", name ? name : "", reason);
    record(a, "EVENT", what, message, 201);
}

tg_api *tg_api_new(const tg_kube_config *cfg, char *err, size_t err_len)
{
    if (served && cfg->server && strcmp(served->server, cfg->server) == 0)
        return served;
    snprintf(err, err_len, "no fake API server at %s", cfg->server ? cfg->server : "(none)");
    return NULL;
}

/* The fakes are the tests' to free (fake_api_free). */
void tg_api_free(tg_api *a) { (void)a; }
