/* fake_api.c - see fake_api.h. */
#include "signer/fake_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

typedef struct fault {
    char *method, *path;
    long status;
    int times;
} fault;

struct tg_api {
    json_object *store;        /* path -> object, in insertion order */
    long rv;                   /* the last resourceVersion handed out */
    int names;                 /* generateName counter */
    fake_write *writes;
    size_t nwrites, ngets;
    fault faults[16];
    int nfaults;
    const char *server;        /* fake_api_serve */
};

#define MAX_SERVED 4
static tg_api *served[MAX_SERVED];

tg_api *fake_api_new(void)
{
    tg_api *a = calloc(1, sizeof(*a));

    if (a)
        a->store = json_object_new_object();
    return a;
}

void fake_api_free(tg_api *a)
{
    if (!a)
        return;
    for (int i = 0; i < MAX_SERVED; i++)
        if (served[i] == a)
            served[i] = NULL;
    for (size_t i = 0; i < a->nwrites; i++) {
        free(a->writes[i].method);
        free(a->writes[i].path);
        free(a->writes[i].body);
    }
    for (int i = 0; i < a->nfaults; i++) {
        free(a->faults[i].method);
        free(a->faults[i].path);
    }
    free(a->writes);
    json_object_put(a->store);
    free(a);
}

static void set_meta(json_object *obj, const char *key, const char *value)
{
    json_object *meta = tg_json_path(obj, "metadata", NULL);

    if (!meta) {
        meta = json_object_new_object();
        json_object_object_add(obj, "metadata", meta);
    }
    json_object_object_add(meta, key, value ? json_object_new_string(value) : NULL);
    if (!value)
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
    fault *f;

    if (a->nfaults == (int)(sizeof(a->faults) / sizeof(a->faults[0])))
        return;
    f = &a->faults[a->nfaults++];
    f->method = method ? strdup(method) : NULL;
    f->path = strdup(path);
    f->status = status;
    f->times = times;
}

size_t fake_api_nwrites(tg_api *a) { return a->nwrites; }
const fake_write *fake_api_write(tg_api *a, size_t i) { return i < a->nwrites ? &a->writes[i] : NULL; }
size_t fake_api_ngets(tg_api *a) { return a->ngets; }

void fake_api_serve(tg_api *a, const char *server)
{
    int i, free_slot = -1;

    for (i = 0; i < MAX_SERVED; i++) {
        if (served[i] && strcmp(served[i]->server, server) == 0)
            served[i] = NULL;   /* the newest fake serves it (a failed test may leave one behind) */
        if (!served[i] && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0) {
        served[free_slot] = a;
        a->server = server;
    }
}

static void record(tg_api *a, const char *method, const char *path, const char *body, long status)
{
    fake_write *w = realloc(a->writes, (a->nwrites + 1) * sizeof(*w));

    if (!w)
        return;
    a->writes = w;
    w = &a->writes[a->nwrites++];
    w->method = strdup(method);
    w->path = strdup(path);
    w->body = body ? strdup(body) : NULL;
    w->status = status;
}

/* An injected answer for this call, or 0. */
static long injected(tg_api *a, const char *method, const char *key)
{
    for (int i = 0; i < a->nfaults; i++) {
        fault *f = &a->faults[i];
        if (f->times > 0 && strcmp(f->path, key) == 0 && (!f->method || strcmp(f->method, method) == 0)) {
            f->times--;
            return f->status;
        }
    }
    return 0;
}

/* Segments after the group/version prefix: odd names a collection. */
static int is_collection(const char *key)
{
    int n = 0, skip = strncmp(key, "/apis/", 6) == 0 ? 3 : 2;

    for (const char *p = key; *p; p++)
        n += *p == '/';
    return (n - skip) % 2 == 1;
}

/* 1 when obj's labels satisfy an equality selector "k=v,k2=v2" (URL-encoded). */
static int selected(json_object *obj, const char *query)
{
    const char *sel = query ? strstr(query, "labelSelector=") : NULL;
    char text[512], *term, *save = NULL;
    size_t j = 0;

    if (!sel)
        return 1;
    for (sel += strlen("labelSelector="); *sel && *sel != '&' && j + 1 < sizeof(text); sel++) {
        unsigned c;
        if (*sel == '%' && sscanf(sel + 1, "%2x", &c) == 1) {
            text[j++] = (char)c;
            sel += 2;
        } else {
            text[j++] = *sel;
        }
    }
    text[j] = '\0';
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

static json_object *copy_of(json_object *o)
{
    json_object *c = NULL;

    return json_object_deep_copy(o, &c, NULL) == 0 ? c : NULL;
}

static long do_get(tg_api *a, const char *key, const char *query, json_object **out)
{
    json_object *o = fake_api_object(a, key), *items;
    size_t klen = strlen(key);

    a->ngets++;
    if (o || !is_collection(key)) {
        *out = o ? copy_of(o) : NULL;
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

static int stale(json_object *stored, json_object *body)
{
    const char *want = tg_json_path_string(body, "metadata", "resourceVersion", NULL);

    return want && *want && strcmp(want, tg_json_path_string(stored, "metadata", "resourceVersion", NULL)) != 0;
}

static int has_finalizers(json_object *o)
{
    json_object *f = tg_json_path(o, "metadata", "finalizers", NULL);

    return f && json_object_is_type(f, json_type_array) && json_object_array_length(f) > 0;
}

/* What a PUT keeps of the stored metadata: the fields the server owns. */
static void keep_system_fields(json_object *next, json_object *stored)
{
    static const char *const owned[] = {"uid", "creationTimestamp", "deletionTimestamp"};

    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        set_meta(next, owned[i], tg_json_path_string(stored, "metadata", owned[i], NULL));
}

/* The object after a PUT or PATCH of body (sub: through /status or
 * /approval, where only status changes; else status never does). */
static json_object *updated(json_object *stored, const char *method, int sub, json_object *body)
{
    json_object *next = copy_of(stored), *status = json_object_object_get(body, "status"), *cur;

    if (sub && strcmp(method, "PUT") == 0) {
        json_object_object_add(next, "status", copy_of(status));
    } else if (sub) {
        if (!(cur = json_object_object_get(next, "status")) || !json_object_is_type(status, json_type_object))
            json_object_object_add(next, "status", copy_of(status));
        else
            merge_patch(cur, status);
    } else if (strcmp(method, "PUT") == 0) {
        json_object_put(next);
        next = copy_of(body);
        json_object_object_add(next, "status", copy_of(json_object_object_get(stored, "status")));
        keep_system_fields(next, stored);
    } else {
        json_object *patch = copy_of(body);
        json_object_object_del(patch, "status");
        merge_patch(next, patch);
        json_object_put(patch);
    }
    return next;
}

/* PUT or PATCH of key; 409 when the body names another resourceVersion. */
static long do_update(tg_api *a, const char *method, const char *key, int sub, json_object *body, json_object **out)
{
    json_object *stored = fake_api_object(a, key), *next;

    if (!stored)
        return 404;
    if (!body || !json_object_is_type(body, json_type_object))
        return 400;
    if (stale(stored, body))
        return 409;
    next = updated(stored, method, sub, body);
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

    if (!name && gen) {
        snprintf(made, sizeof(made), "%s%05d", gen, ++a->names);
        name = made;
    }
    if (!name)
        return 422;
    snprintf(path, sizeof(path), "%s/%s", key, name);
    if (fake_api_object(a, path))
        return 409;
    obj = copy_of(body);
    set_meta(obj, "name", name);
    fake_api_put_obj(a, path, obj);
    *out = copy_of(obj);
    return 201;
}

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
    int sub = slash && (strcmp(slash, "/status") == 0 || strcmp(slash, "/approval") == 0) &&
              (size_t)(slash - key) < sizeof(base);

    snprintf(base, sizeof(base), "%.*s", sub ? (int)(slash - key) : (int)strlen(key), key);
    if (strcmp(method, "GET") == 0)
        return do_get(a, key, query, out);
    if (strcmp(method, "POST") == 0)
        return do_post(a, key, body, out);
    if (strcmp(method, "DELETE") == 0)
        return do_delete(a, key, body, out);
    if (strcmp(method, "PATCH") == 0 && ct != TG_KUBE_CT_MERGE_PATCH)
        return 415;
    if (strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0)
        return do_update(a, method, base, sub, body, out);
    return 405;
}

long tg_api_call(tg_api *a, const char *method, const char *path, tg_kube_content_type ct, json_object *body,
                 json_object **out, char *err, size_t err_len)
{
    char key[1024];
    const char *q = strchr(path, '?');
    json_object *got = NULL;
    long st;

    if (out)
        *out = NULL;
    snprintf(key, sizeof(key), "%.*s", q ? (int)(q - path) : (int)strlen(path), path);
    if (!(st = injected(a, method, key)))
        st = dispatch(a, method, key, q ? q + 1 : NULL, ct, body, &got);
    if (strcmp(method, "GET") != 0)
        record(a, method, path, body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL, st);
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
    char what[600];
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);

    snprintf(what, sizeof(what), "%s/%s %s", ns ? ns : "", name ? name : "", reason);
    record(a, "EVENT", what, message, 201);
    (void)type;
}

tg_api *tg_api_new(const tg_kube_config *cfg, char *err, size_t err_len)
{
    for (int i = 0; i < MAX_SERVED; i++)
        if (served[i] && cfg->server && strcmp(served[i]->server, cfg->server) == 0)
            return served[i];
    snprintf(err, err_len, "no fake API server at %s", cfg->server ? cfg->server : "(none)");
    return NULL;
}

/* The fakes are the tests' (fake_api_free). */
void tg_api_free(tg_api *a) { (void)a; }
