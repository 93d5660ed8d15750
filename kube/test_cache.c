/* test_cache.c - the informer state machine on recorded API JSON: list,
 * watch events, bookmarks, 410, relist delta, the label index, readers on
 * other threads. Every test runs twice: with objects stored as json-c trees
 * and as compact JSON text (tg_cache_set_compact); the compact-only tests
 * at the end check that both forms show readers and handlers the same
 * objects, and that the compact one is what saves the memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_heap.h"
#include "kube/cache.h"
#include "kube/json.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"

#define INDEX "liqo.io/remote-cluster-id"

/* What the handlers saw, one line each: "add ns/name rv", "update ns/name old->new", "delete ns/name". */
typedef struct log {
    size_t n;
    char line[64][128];
} log_t;

static void key_of(json_object *o, char *buf, size_t len)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    snprintf(buf, len, "%s%s%s", ns ? ns : "", ns ? "/" : "", name ? name : "?");
}

static const char *rv_of(json_object *o)
{
    return tg_json_path_string(o, "metadata", "resourceVersion", NULL);
}

static void on_add(json_object *o, void *data)
{
    log_t *l = data;
    char k[96];
    key_of(o, k, sizeof(k));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "add %s %s", k, rv_of(o));
}

static void on_update(json_object *old_obj, json_object *new_obj, void *data)
{
    log_t *l = data;
    char k[96];
    key_of(new_obj, k, sizeof(k));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "update %s %s->%s", k, rv_of(old_obj), rv_of(new_obj));
}

static void on_delete(json_object *o, void *data)
{
    log_t *l = data;
    char k[96];
    key_of(o, k, sizeof(k));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "delete %s", k);
}

static void assert_log(const log_t *l, const char *const *want, size_t n)
{
    /* Relist deltas come in hash order: compare as sets. */
    assert_int_equal(l->n, n);
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t j = 0; j < l->n; j++)
            found |= strcmp(l->line[j], want[i]) == 0;
        if (!found)
            fail_msg("handler call \"%s\" missing", want[i]);
    }
}

static json_object *load_json(const char *name)
{
    const char *src = getenv("TG_SOURCE_DIR");
    char path[1024], err[256], *text;
    size_t len;
    snprintf(path, sizeof(path), "%s/kube/testdata/%s", src ? src : ".", name);
    if (tg_kube_read_file(path, 1 << 20, &text, &len, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    json_object *o = tg_json_parse(text, len, err, sizeof(err));
    free(text);
    if (o == NULL)
        fail_msg("%s: %s", name, err);
    return o;
}

/* The mode a test runs in comes as its state: a pointer to 0 (trees) or 1 (compact). */
static const int tree_mode = 0, compact_mode = 1;

static tg_cache *cache_new(void **state, const char *index_label)
{
    tg_cache *c = tg_cache_new(index_label);
    assert_non_null(c);
    if (*(const int *)*state)
        assert_int_equal(tg_cache_set_compact(c), 0);
    return c;
}

static json_object *obj(const char *ns, const char *name, const char *rv, const char *cluster)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",%s%s%s\"resourceVersion\":\"%s\",\"labels\":{\"" INDEX "\":\"%s\"}}}",
             name, ns ? "\"namespace\":\"" : "", ns ? ns : "", ns ? "\"," : "", rv, cluster);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

static int list_replace(tg_cache *c, const char *rv, json_object **items, size_t n, tg_cache_handlers *h)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, items[i]);
    char err[200];
    int rc = tg_cache_replace(c, arr, rv, h, err, sizeof(err));
    json_object_put(arr);
    return rc;
}

/* A visitor that copies the nonce out, as the webhook will. */
typedef struct nonce_copy {
    char nonce[128];
    int has_managed_fields;
} nonce_copy;

static void copy_nonce(json_object *o, void *data)
{
    nonce_copy *nc = data;
    const char *n = tg_json_path_string(o, "data", "nonce", NULL);
    snprintf(nc->nonce, sizeof(nc->nonce), "%s", n ? n : "");
    nc->has_managed_fields = tg_json_path(o, "metadata", "managedFields", NULL) != NULL;
}

static void test_list_then_watch(void **state)
{
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, INDEX);
    assert_non_null(c);
    assert_false(tg_cache_synced(c));
    assert_string_equal(tg_cache_resource_version(c), "");

    json_object *list = load_json("list-secrets.json");
    json_object *items = tg_json_path(list, "items", NULL);
    char err[200];
    assert_int_equal(tg_cache_replace(c, items, tg_json_path_string(list, "metadata", "resourceVersion", NULL),
                                      &h, err, sizeof(err)), 0);
    json_object_put(list);   /* the cache holds its own references */
    assert_true(tg_cache_synced(c));
    assert_int_equal(tg_cache_count(c), 2);
    assert_string_equal(tg_cache_resource_version(c), "1200");
    const char *after_list[] = {"add liqo-tenant-cl01/liqo-nonce 1201", "add liqo-tenant-cl03/liqo-nonce 1150"};
    assert_log(&log, after_list, 2);

    nonce_copy nc = {0};
    assert_int_equal(tg_cache_get(c, "liqo-tenant-cl01", "liqo-nonce", copy_nonce, &nc), 1);
    assert_string_equal(nc.nonce, "YWJj");
    assert_false(nc.has_managed_fields);   /* stripped on store */
    assert_int_equal(tg_cache_get(c, "liqo-tenant-cl02", "liqo-nonce", copy_nonce, &nc), 0);
    assert_int_equal(tg_cache_get_by_index(c, "cl03", copy_nonce, &nc), 1);
    assert_string_equal(nc.nonce, "amts");

    /* Now the recorded watch stream, event by event. */
    const char *src = getenv("TG_SOURCE_DIR");
    char path[1024], *stream;
    size_t len;
    snprintf(path, sizeof(path), "%s/kube/testdata/watch-secrets.ndjson", src ? src : ".");
    assert_int_equal(tg_kube_read_file(path, 1 << 20, &stream, &len, err, sizeof(err)), 0);
    char *line = stream, *nl;
    int results[8], nres = 0;
    log.n = 0;
    while ((nl = strchr(line, '\n')) != NULL && nres < 8) {
        json_object *root = tg_json_parse(line, (size_t)(nl - line), err, sizeof(err));
        assert_non_null(root);
        tg_watch_event ev = {.object = tg_json_path(root, "object", NULL)};
        const char *type = tg_json_string(root, "type");
        ev.type = !strcmp(type, "ADDED") ? TG_WATCH_ADDED : !strcmp(type, "MODIFIED") ? TG_WATCH_MODIFIED
                  : !strcmp(type, "DELETED") ? TG_WATCH_DELETED : !strcmp(type, "BOOKMARK") ? TG_WATCH_BOOKMARK
                  : TG_WATCH_ERROR;
        results[nres++] = tg_cache_apply(c, &ev, &h, err, sizeof(err));
        json_object_put(root);
        line = nl + 1;
        if (nres == 2) /* after the BOOKMARK */
            assert_string_equal(tg_cache_resource_version(c), "1250");
    }
    free(stream);
    assert_int_equal(nres, 6);
    for (int i = 0; i < 5; i++)
        assert_int_equal(results[i], TG_CACHE_OK);
    assert_int_equal(results[5], TG_CACHE_GONE);
    assert_non_null(strstr(err, "410"));
    /* The ADDED of an object the list already had at that version is not news. */
    const char *after_watch[] = {"update liqo-tenant-cl01/liqo-nonce 1201->1302", "add liqo-tenant-cl02/liqo-nonce 1303",
                                 "delete liqo-tenant-cl01/liqo-nonce"};
    assert_log(&log, after_watch, 3);
    assert_string_equal(tg_cache_resource_version(c), "1304");   /* ERROR does not move it */
    assert_int_equal(tg_cache_count(c), 2);
    assert_int_equal(tg_cache_get_by_index(c, "cl01", NULL, NULL), 0);
    assert_int_equal(tg_cache_get_by_index(c, "cl02", copy_nonce, &nc), 1);
    assert_string_equal(nc.nonce, "Z2hp");
    tg_cache_free(c);
}

/* After a 410 the relist is the truth: what vanished is deleted, what
 * changed is updated, what is unchanged is silent. */
static void test_relist_delta(void **state)
{
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, INDEX);
    json_object *first[] = {obj("a", "x", "10", "c1"), obj("b", "x", "11", "c2"), obj("c", "x", "12", "c3")};
    assert_int_equal(list_replace(c, "20", first, 3, &h), 0);
    log.n = 0;
    json_object *second[] = {obj("b", "x", "11", "c2"), obj("c", "x", "30", "c9"), obj("d", "x", "31", "c4")};
    assert_int_equal(list_replace(c, "40", second, 3, &h), 0);
    const char *want[] = {"delete a/x", "update c/x 12->30", "add d/x 31"};
    assert_log(&log, want, 3);
    assert_int_equal(tg_cache_count(c), 3);
    assert_string_equal(tg_cache_resource_version(c), "40");
    /* The index followed the label change of c/x. */
    assert_int_equal(tg_cache_get_by_index(c, "c3", NULL, NULL), 0);
    assert_int_equal(tg_cache_get_by_index(c, "c9", NULL, NULL), 1);
    assert_int_equal(tg_cache_get_by_index(c, "c1", NULL, NULL), 0);
    /* An empty relist deletes everything. */
    log.n = 0;
    assert_int_equal(list_replace(c, "50", NULL, 0, &h), 0);
    assert_int_equal(tg_cache_count(c), 0);
    assert_int_equal(log.n, 3);
    tg_cache_free(c);
}

static void test_bad_input_leaves_cache_alone(void **state)
{
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, NULL);
    json_object *items[] = {obj("a", "x", "1", "c1")};
    assert_int_equal(list_replace(c, "5", items, 1, &h), 0);
    log.n = 0;

    char err[200];
    /* Not an array, no RV, an item without a name. */
    json_object *notarr = json_object_new_object();
    assert_int_equal(tg_cache_replace(c, notarr, "6", &h, err, sizeof(err)), -1);
    json_object_put(notarr);
    json_object *good[] = {obj("b", "y", "2", "c2")};
    assert_int_equal(list_replace(c, "", good, 1, &h), -1);
    json_object *bad = tg_json_parse("[{\"metadata\":{\"namespace\":\"a\"}}]", 32, NULL, 0);
    assert_non_null(bad);
    assert_int_equal(tg_cache_replace(c, bad, "7", &h, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "item 0"));
    json_object_put(bad);
    assert_int_equal(tg_cache_count(c), 1);
    assert_string_equal(tg_cache_resource_version(c), "5");
    assert_int_equal(log.n, 0);

    /* Events without a name or RV are errors, not crashes. */
    static const char *const events[] = {
        "{\"metadata\":{\"name\":\"x\"}}",
        "{\"metadata\":{\"resourceVersion\":\"9\"}}",
        "{\"metadata\":7}",
        "{}",
    };
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        json_object *o = tg_json_parse(events[i], strlen(events[i]), NULL, 0);
        tg_watch_event ev = {TG_WATCH_MODIFIED, o};
        assert_int_equal(tg_cache_apply(c, &ev, &h, err, sizeof(err)), TG_CACHE_ERROR);
        json_object_put(o);
    }
    /* An ERROR other than 410 asks for a rewatch, not a relist. */
    json_object *st = tg_json_parse("{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd down\"}", 50, NULL, 0);
    assert_non_null(st);
    tg_watch_event ev = {TG_WATCH_ERROR, st};
    assert_int_equal(tg_cache_apply(c, &ev, &h, err, sizeof(err)), TG_CACHE_ERROR);
    assert_non_null(strstr(err, "etcd down"));
    json_object_put(st);
    assert_int_equal(tg_cache_count(c), 1);
    assert_int_equal(log.n, 0);
    tg_cache_free(c);
}

static void test_cluster_scoped_and_deleted_unknown(void **state)
{
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, INDEX);
    json_object *items[] = {obj(NULL, "liqo-tenant-cl01", "3", "cl01")};
    assert_int_equal(list_replace(c, "4", items, 1, &h), 0);
    assert_int_equal(tg_cache_get(c, NULL, "liqo-tenant-cl01", NULL, NULL), 1);
    assert_int_equal(tg_cache_get(c, "", "liqo-tenant-cl01", NULL, NULL), 1);
    /* Deleting what we never had is harmless and silent. */
    json_object *o = obj(NULL, "other", "5", "x");
    tg_watch_event ev = {TG_WATCH_DELETED, o};
    char err[200];
    log.n = 0;
    assert_int_equal(tg_cache_apply(c, &ev, &h, err, sizeof(err)), TG_CACHE_OK);
    assert_int_equal(log.n, 0);
    assert_string_equal(tg_cache_resource_version(c), "5");
    json_object_put(o);
    tg_cache_free(c);
}

/* Two nonce secrets for one cluster: the index must report both (the
 * webhook treats "more than one" as NonceNotFound). */
static void test_index_duplicates(void **state)
{
    tg_cache *c = cache_new(state, INDEX);
    json_object *items[] = {obj("a", "liqo-nonce", "1", "cl01"), obj("b", "liqo-nonce", "2", "cl01")};
    assert_int_equal(list_replace(c, "3", items, 2, NULL), 0);
    assert_int_equal(tg_cache_get_by_index(c, "cl01", NULL, NULL), 2);
    json_object *o = obj("a", "liqo-nonce", "4", "cl01");
    tg_watch_event ev = {TG_WATCH_DELETED, o};
    assert_int_equal(tg_cache_apply(c, &ev, NULL, NULL, 0), TG_CACHE_OK);
    json_object_put(o);
    assert_int_equal(tg_cache_get_by_index(c, "cl01", NULL, NULL), 1);
    tg_cache_free(c);
}

/* An object of index value cl01 whose annotation "ref" is ref. */
static json_object *with_ref(const char *name, const char *ref)
{
    json_object *o = obj("liqo-tenant-cl01", name, "1", "cl01"), *ann = json_object_new_object();

    json_object_object_add(ann, "ref", json_object_new_string(ref));
    json_object_object_add(tg_json_path(o, "metadata", NULL), "annotations", ann);
    return o;
}

typedef struct ref_count {
    const char *want;
    int visited, holding;
} ref_count;

static void count_ref(json_object *o, void *data)
{
    ref_count *r = data;
    const char *ref = tg_json_path_string(o, "metadata", "annotations", "ref", NULL);

    r->visited++;
    r->holding += ref && strcmp(ref, r->want) == 0;
}

/* tg_cache_get_by_index_holding: every object holding the string is
 * visited, in both modes; in compact mode only those (escapes included). */
static void test_index_holding(void **state)
{
    static const char *const refs[] = {"liqo-tenant-cl01/s1", "liqo-tenant-cl01/s2", "a\"b\\c/\u00e9"};
    tg_cache *c = cache_new(state, INDEX);
    int compact = *(const int *)*state;
    json_object *items[3];

    for (size_t i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "csr-%zu", i);
        items[i] = with_ref(name, refs[i]);
    }
    assert_int_equal(list_replace(c, "5", items, 3, NULL), 0);
    for (size_t i = 0; i < 3; i++) {
        ref_count r = {.want = refs[i]};
        size_t n = tg_cache_get_by_index_holding(c, "cl01", refs[i], count_ref, &r);
        assert_int_equal(r.holding, 1);
        assert_int_equal(r.visited, compact ? 1 : 3);
        assert_int_equal(n, (size_t)r.visited);
    }
    ref_count none = {.want = "liqo-tenant-cl01/s3"};
    assert_int_equal(tg_cache_get_by_index_holding(c, "cl01", none.want, count_ref, &none), compact ? 0 : 3);
    assert_int_equal(none.holding, 0);
    tg_cache_free(c);
}

/* Readers on other threads while the writer churns. */
typedef struct reader_arg {
    tg_cache *c;
    volatile int *stop;
    unsigned long hits;
} reader_arg;

static void count_hit(json_object *o, void *data)
{
    reader_arg *a = data;
    if (tg_json_path_string(o, "metadata", "resourceVersion", NULL) != NULL)
        a->hits++;
}

static void *reader(void *p)
{
    reader_arg *a = p;
    while (!*a->stop) {
        tg_cache_get(a->c, "ns", "obj", count_hit, a);
        tg_cache_get_by_index(a->c, "cl01", count_hit, a);
        tg_cache_count(a->c);
    }
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    tg_cache *c = cache_new(state, INDEX);
    volatile int stop = 0;
    reader_arg args[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (reader_arg){c, &stop, 0};
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    char rv[32];
    for (int i = 1; i <= 5000; i++) {
        snprintf(rv, sizeof(rv), "%d", i);
        json_object *o = obj("ns", "obj", rv, i % 2 ? "cl01" : "cl02");
        tg_watch_event ev = {i % 3 == 0 ? TG_WATCH_DELETED : TG_WATCH_MODIFIED, o};
        assert_int_equal(tg_cache_apply(c, &ev, NULL, NULL, 0), TG_CACHE_OK);
        json_object_put(o);
    }
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(tg_cache_count(c), 1);   /* 5000 % 3 != 0: the last event was a MODIFIED */
    tg_cache_free(c);
}

/* Real apiserver data: the list before, plus the watch from its version,
 * must give exactly the list after. */
typedef struct feed_ctx {
    tg_cache *c;
    tg_cache_handlers *h;
    int last_rc;
} feed_ctx;

static int feed_event(const tg_watch_event *ev, void *data)
{
    feed_ctx *f = data;
    char err[200];
    f->last_rc = tg_cache_apply(f->c, ev, f->h, err, sizeof(err));
    return f->last_rc == TG_CACHE_OK ? 0 : 1;
}

static void feed_file(feed_ctx *f, const char *name)
{
    const char *src = getenv("TG_SOURCE_DIR");
    char path[1024], err[256], *text;
    size_t len;
    snprintf(path, sizeof(path), "%s/kube/testdata/%s", src ? src : ".", name);
    if (tg_kube_read_file(path, 1 << 20, &text, &len, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    tg_watch_parser p;
    tg_watch_parser_init(&p, 0, feed_event, f);
    f->last_rc = TG_CACHE_OK;
    if (tg_watch_parser_feed(&p, text, len) == 0)
        tg_watch_parser_finish(&p);
    tg_watch_parser_free(&p);
    free(text);
}

static void test_recorded_list_watch_equals_relist(void **state)
{
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, INDEX);
    json_object *before = load_json("recorded-list-before.json");
    char err[200];
    assert_int_equal(tg_cache_replace(c, tg_json_path(before, "items", NULL),
                                      tg_json_path_string(before, "metadata", "resourceVersion", NULL), &h, err,
                                      sizeof(err)), 0);
    json_object_put(before);
    assert_int_equal(tg_cache_count(c), 2);
    log.n = 0;

    feed_ctx f = {c, &h, 0};
    feed_file(&f, "recorded-watch.ndjson");
    assert_int_equal(f.last_rc, TG_CACHE_OK);
    const char *want_log_prefixes[] = {"add rec/liqo-nonce-cl03 ", "update rec/liqo-nonce-cl01 ",
                                       "delete rec/liqo-nonce-cl02", "add rec/other "};
    assert_int_equal(log.n, 4);
    for (size_t i = 0; i < 4; i++)
        if (strncmp(log.line[i], want_log_prefixes[i], strlen(want_log_prefixes[i])) != 0)
            fail_msg("event %zu: \"%s\", want \"%s...\"", i, log.line[i], want_log_prefixes[i]);
    assert_string_equal(tg_cache_resource_version(c), "276");   /* the final BOOKMARK */

    /* Compare with the list taken afterwards: same objects at the same versions. */
    json_object *after = load_json("recorded-list-after.json");
    json_object *items = tg_json_path(after, "items", NULL);
    size_t n = json_object_array_length(items);
    assert_int_equal(tg_cache_count(c), n);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        nonce_copy nc = {0};
        const char *ns = tg_json_path_string(it, "metadata", "namespace", NULL);
        const char *name = tg_json_path_string(it, "metadata", "name", NULL);
        assert_int_equal(tg_cache_get(c, ns, name, copy_nonce, &nc), 1);
        const char *want = tg_json_path_string(it, "data", "nonce", NULL);
        assert_string_equal(nc.nonce, want ? want : "");
    }
    /* And a relist from it is silent: nothing changed. */
    log.n = 0;
    assert_int_equal(tg_cache_replace(c, items, tg_json_path_string(after, "metadata", "resourceVersion", NULL), &h,
                                      err, sizeof(err)), 0);
    assert_int_equal(log.n, 0);
    json_object_put(after);
    assert_int_equal(tg_cache_get_by_index(c, "cl04", NULL, NULL), 1);   /* labelled into the selector */

    /* The real 410 a watch from a compacted-away version gets. */
    feed_file(&f, "recorded-watch-410.ndjson");
    assert_int_equal(f.last_rc, TG_CACHE_GONE);
    tg_cache_free(c);
}

/* What a visitor can still see of a trimmed object, as a "path=value" list. */
typedef struct trimmed {
    char seen[512];
} trimmed;

static void see(trimmed *t, json_object *o, const char *label, const char *const *path3)
{
    json_object *v = tg_json_path(o, path3[0], path3[1], path3[2], NULL);
    size_t n = strlen(t->seen);
    snprintf(t->seen + n, sizeof(t->seen) - n, "%s%s=%s", n ? " " : "", label,
             !v ? "-" : json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "obj");
}

static void on_trimmed(json_object *o, void *data)
{
    trimmed *t = data;
    t->seen[0] = '\0';
    see(t, o, "name", (const char *[]){"metadata", "name", NULL});
    see(t, o, "label", (const char *[]){"metadata", "labels", INDEX});
    see(t, o, "mf", (const char *[]){"metadata", "managedFields", NULL});
    see(t, o, "kind", (const char *[]){"kind", NULL, NULL});
    see(t, o, "nonce", (const char *[]){"data", "nonce", NULL});
    see(t, o, "other", (const char *[]){"data", "other", NULL});
    see(t, o, "cert", (const char *[]){"status", "certificate", NULL});
    see(t, o, "conds", (const char *[]){"status", "conditions", NULL});
    see(t, o, "spec", (const char *[]){"spec", NULL, NULL});
    see(t, o, "deep", (const char *[]){"status", "certificate", "x"});
}

static void on_annotated(json_object *o, void *data)
{
    trimmed *t = data;
    t->seen[0] = '\0';
    see(t, o, "ann", (const char *[]){"metadata", "annotations", "a"});
    see(t, o, "label", (const char *[]){"metadata", "labels", INDEX});
    see(t, o, "nonce", (const char *[]){"data", "nonce", NULL});
}

/* Annotations (kubectl apply's last-applied copy) go with the other untrimmed
 * fields, unless named; a cache without keep paths keeps everything. */
static void test_annotations_follow_keep_paths(void **state)
{
    static const char *const keep_data[] = {"data.nonce", NULL};
    static const char *const keep_ann[] = {"data.nonce", "metadata.annotations", NULL};
    static const struct {
        const char *const *keep;
        const char *want;
    } cases[] = {
        {NULL, "ann=big label=c1 nonce=YWJj"},
        {keep_data, "ann=- label=c1 nonce=YWJj"},
        {keep_ann, "ann=big label=c1 nonce=YWJj"},
    };
    const char *json = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"1\","
                       "\"labels\":{\"" INDEX "\":\"c1\"},\"annotations\":{\"a\":\"big\"}},"
                       "\"data\":{\"nonce\":\"YWJj\"}}";
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_cache *c = cache_new(state, INDEX);
        json_object *o = tg_json_parse(json, strlen(json), NULL, 0);
        tg_watch_event ev = {TG_WATCH_ADDED, o};
        char err[200];
        trimmed t = {{0}};
        assert_non_null(c);
        assert_non_null(o);
        if (cases[i].keep)
            assert_int_equal(tg_cache_keep_fields(c, cases[i].keep), 0);
        assert_int_equal(tg_cache_apply(c, &ev, NULL, err, sizeof(err)), TG_CACHE_OK);
        json_object_put(o);
        assert_int_equal(tg_cache_get(c, "n", "a", on_annotated, &t), 1);
        assert_string_equal(t.seen, cases[i].want);
        tg_cache_free(c);
    }
}

static void on_conditions_text(json_object *o, void *data)
{
    json_object *conds = tg_json_path(o, "status", "conditions", NULL);
    /* serialising breaks the visitor rules only for concurrent readers: none here */
    snprintf(data, 512, "%s", conds ? json_object_to_json_string_ext(conds, JSON_C_TO_STRING_PLAIN) : "-");
}

/* A keep path through a list trims each object in it; other elements stay. */
static void test_keep_fields_through_lists(void **state)
{
    static const char *const keep[] = {"status.conditions.type", "status.conditions.status", NULL};
    const char *json = "{\"metadata\":{\"name\":\"s\",\"namespace\":\"n\",\"resourceVersion\":\"4\"},"
                       "\"status\":{\"resources\":{\"cpu\":\"1\"},\"conditions\":["
                       "{\"type\":\"Authentication\",\"status\":\"Accepted\",\"reason\":\"R\",\"message\":\"long text\"},"
                       "{\"type\":\"Resources\",\"status\":\"Denied\",\"lastTransitionTime\":\"2026-11-25T14:00:00Z\"},"
                       "7,[{\"type\":\"x\",\"reason\":\"y\"}]]}}";
    char seen[512] = "", err[200];
    tg_cache *c = cache_new(state, INDEX);
    json_object *o = tg_json_parse(json, strlen(json), NULL, 0);
    tg_watch_event ev = {TG_WATCH_ADDED, o};

    assert_non_null(o);
    assert_int_equal(tg_cache_keep_fields(c, keep), 0);
    assert_int_equal(tg_cache_apply(c, &ev, NULL, err, sizeof(err)), TG_CACHE_OK);
    json_object_put(o);
    assert_int_equal(tg_cache_get(c, "n", "s", on_conditions_text, seen), 1);
    /* only the members named, in each object of the list; a nested list is not an object of it */
    assert_string_equal(seen, "[{\"type\":\"Authentication\",\"status\":\"Accepted\"},"
                              "{\"type\":\"Resources\",\"status\":\"Denied\"},7,[{\"type\":\"x\",\"reason\":\"y\"}]]");
    tg_cache_free(c);
}

/* What of metadata a visitor or handler sees, as "member=value ..." for the
 * members asked about ("-" when absent, "*" when not a string). */
static void meta_seen(json_object *o, char *out, size_t len)
{
    static const char *const members[] = {"name", "namespace", "resourceVersion", "uid", "creationTimestamp",
                                          "generation", "finalizers", "ownerReferences", "deletionTimestamp",
                                          "annotations", "labels", NULL};
    json_object *meta = tg_json_path(o, "metadata", NULL), *v;
    size_t at = 0;

    out[0] = '\0';
    for (size_t i = 0; members[i] && at < len; i++) {
        const char *text = "-";
        if (meta && json_object_object_get_ex(meta, members[i], &v))
            text = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "*";
        at += (size_t)snprintf(out + at, len - at, "%s%s=%s", i ? " " : "", members[i], text);
    }
}

static void on_meta_seen(json_object *o, void *data)
{
    meta_seen(o, data, 400);
}

static void on_meta_added(json_object *o, void *data)
{
    meta_seen(o, data, 400);
}

/* tg_cache_keep_metadata: of metadata only the cache's own members, the
 * deletion mark and the named ones stay, in the visitors and the handlers,
 * from a list and from a watch; the annotations still follow keep_fields. */
static void test_keep_metadata(void **state)
{
    static const char *const meta_labels[] = {"labels", "uid", NULL};
    static const char *const keep[] = {"spec.x", NULL}, *const keep_ann[] = {"spec.x", "metadata.annotations", NULL};
    const char *json = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"7\",\"uid\":\"u1\","
                       "\"creationTimestamp\":\"2026-12-07T00:00:00Z\",\"generation\":3,\"finalizers\":[\"f\"],"
                       "\"ownerReferences\":[{\"uid\":\"o\"}],\"deletionTimestamp\":\"2026-12-07T00:00:01Z\","
                       "\"annotations\":{\"a\":\"b\"},\"labels\":{\"l\":\"v\"},\"managedFields\":[{}]},"
                       "\"spec\":{\"x\":1,\"y\":2}}";
    const char *want = "name=a namespace=n resourceVersion=7 uid=u1 creationTimestamp=- generation=- finalizers=- "
                       "ownerReferences=- deletionTimestamp=2026-12-07T00:00:01Z annotations=- labels=*";
    const char *want_ann = "name=a namespace=n resourceVersion=7 uid=u1 creationTimestamp=- generation=- "
                           "finalizers=- ownerReferences=- deletionTimestamp=2026-12-07T00:00:01Z annotations=* "
                           "labels=*";

    for (int variant = 0; variant < 4; variant++) {
        int via_watch = variant & 1, annotations = variant >> 1;
        char seen[400] = "", added[400] = "", err[200];
        tg_cache_handlers h = {.on_add = on_meta_added, .data = added};
        tg_cache *c = cache_new(state, NULL);
        json_object *o = tg_json_parse(json, strlen(json), NULL, 0);

        assert_non_null(c);
        assert_non_null(o);
        assert_int_equal(tg_cache_keep_fields(c, annotations ? keep_ann : keep), 0);
        assert_int_equal(tg_cache_keep_metadata(c, meta_labels), 0);
        assert_int_equal(tg_cache_keep_metadata(c, meta_labels), -1);   /* once only */
        if (via_watch) {
            tg_watch_event ev = {TG_WATCH_ADDED, o};
            assert_int_equal(tg_cache_apply(c, &ev, &h, err, sizeof(err)), TG_CACHE_OK);
            json_object_put(o);
        } else {
            assert_int_equal(list_replace(c, "10", &o, 1, &h), 0);
        }
        assert_int_equal(tg_cache_get(c, "n", "a", on_meta_seen, seen), 1);
        assert_string_equal(seen, annotations ? want_ann : want);
        assert_string_equal(added, annotations ? want_ann : want);
        tg_cache_free(c);
    }
}

static void test_keep_fields(void **state)
{
    static const char *const keep[] = {"data.nonce", "status.certificate", "status.certificate.x", NULL};
    static const struct {
        const char *json;
        const char *want;   /* what the visitor sees once stored */
    } cases[] = {
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"1\","
         "\"labels\":{\"" INDEX "\":\"c1\"},\"annotations\":{\"a\":\"last-applied copy\"},\"managedFields\":[{}]},"
         "\"data\":{\"nonce\":\"YWJj\",\"other\":\"eA==\"}}",
         "name=a label=c1 mf=- kind=- nonce=YWJj other=- cert=- conds=- spec=- deep=-"},
        {"{\"kind\":\"CertificateSigningRequest\",\"metadata\":{\"name\":\"b\",\"namespace\":\"n\",\"resourceVersion\":\"2\","
         "\"labels\":{\"" INDEX "\":\"c1\"}},\"spec\":{\"request\":\"UkVR\"},"
         "\"status\":{\"certificate\":\"Q0VSVA==\",\"conditions\":[{\"type\":\"Approved\"}]}}",
         "name=b label=c1 mf=- kind=- nonce=- other=- cert=Q0VSVA== conds=- spec=- deep=-"},
        /* a kept path whose value is not an object: kept as it is; odd shapes are not a crash */
        {"{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\",\"resourceVersion\":\"3\"},\"data\":7,\"status\":[1]}",
         "name=c label=- mf=- kind=- nonce=- other=- cert=- conds=- spec=- deep=-"},
    };
    for (int via_watch = 0; via_watch < 2; via_watch++) {
        tg_cache *c = cache_new(state, INDEX);
        assert_non_null(c);
        assert_int_equal(tg_cache_keep_fields(c, keep), 0);
        assert_int_equal(tg_cache_keep_fields(c, keep), -1);   /* once only */
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            json_object *o = tg_json_parse(cases[i].json, strlen(cases[i].json), NULL, 0);
            char err[200];
            assert_non_null(o);
            if (via_watch) {
                tg_watch_event ev = {TG_WATCH_ADDED, o};
                assert_int_equal(tg_cache_apply(c, &ev, NULL, err, sizeof(err)), TG_CACHE_OK);
                json_object_put(o);
            } else {
                assert_int_equal(list_replace(c, "10", &o, 1, NULL), 0);
            }
            trimmed t = {{0}};
            const char *name = i == 0 ? "a" : i == 1 ? "b" : "c";
            assert_int_equal(tg_cache_get(c, "n", name, on_trimmed, &t), 1);
            assert_string_equal(t.seen, cases[i].want);
        }
        /* the index still works on trimmed objects (a list replaces: only "c" is left) */
        trimmed t = {{0}};
        assert_int_equal(tg_cache_get_by_index(c, "c1", on_trimmed, &t), via_watch ? 2 : 0);
        tg_cache_free(c);
    }
}

/* Handlers that record what the objects say, not just their keys: the
 * index label and the nonce of the old and the new object. */
static void fields_of(json_object *o, char *buf, size_t len)
{
    char k[96];
    const char *label = tg_json_path_string(o, "metadata", "labels", INDEX, NULL);
    const char *nonce = tg_json_path_string(o, "data", "nonce", NULL);
    key_of(o, k, sizeof(k));
    snprintf(buf, len, "%.28s(%.12s,%.12s)", k, label ? label : "-", nonce ? nonce : "-");
}

static void on_add_fields(json_object *o, void *data)
{
    log_t *l = data;
    char f[64];
    fields_of(o, f, sizeof(f));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "add %s", f);
}

static void on_update_fields(json_object *old_obj, json_object *new_obj, void *data)
{
    log_t *l = data;
    char fo[64], fn[64];
    fields_of(old_obj, fo, sizeof(fo));
    fields_of(new_obj, fn, sizeof(fn));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "update %.55s -> %.55s", fo, fn);
}

static void on_delete_fields(json_object *o, void *data)
{
    log_t *l = data;
    char f[64];
    fields_of(o, f, sizeof(f));
    snprintf(l->line[l->n++], sizeof(l->line[0]), "delete %s", f);
}

static json_object *secret(const char *name, const char *rv, const char *cluster, const char *nonce)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"%s\","
             "\"labels\":{\"" INDEX "\":\"%s\"},\"managedFields\":[{\"manager\":\"kubectl\"}]},"
             "\"data\":{\"nonce\":\"%s\",\"other\":\"eA==\"}}",
             name, rv, cluster, nonce);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

/* Collect the nonces a reader sees, in any order, as a sorted "a b" string. */
typedef struct nonces_seen {
    size_t n;
    char v[8][32];
} nonces_seen;

static void collect_nonce(json_object *o, void *data)
{
    nonces_seen *ns = data;
    const char *n = tg_json_path_string(o, "data", "nonce", NULL);
    if (ns->n < 8)
        snprintf(ns->v[ns->n++], sizeof(ns->v[0]), "%s", n ? n : "-");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void nonces_join(nonces_seen *ns, char *buf, size_t len)
{
    qsort(ns->v, ns->n, sizeof(ns->v[0]), cmp_str);
    buf[0] = '\0';
    for (size_t i = 0; i < ns->n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? " " : "", ns->v[i]);
    }
}

/* Watch events and relists that move objects between index values: the
 * handlers get the right old and new objects (with the fields kept, without
 * the pruned ones) and the index follows every label change. */
static void test_index_and_handlers_follow_changes(void **state)
{
    enum { EV, LIST };
    static const struct step {
        int what;
        int type;                  /* EV: the watch event type */
        const char *objs;          /* EV: "name rv cluster nonce"; LIST: such quadruples, ';'-separated */
        const char *want[4];       /* handler calls (a set), NULL-terminated */
        const char *index[3][2];   /* index value -> the nonces it yields, sorted */
    } steps[] = {
        {EV, TG_WATCH_ADDED, "a 1 c1 n1", {"add ns/a(c1,n1)"}, {{"c1", "n1"}, {"c2", ""}}},
        {EV, TG_WATCH_ADDED, "b 2 c1 m1", {"add ns/b(c1,m1)"}, {{"c1", "m1 n1"}, {"c2", ""}}},
        {EV, TG_WATCH_MODIFIED, "a 3 c2 n2", {"update ns/a(c1,n1) -> ns/a(c2,n2)"}, {{"c1", "m1"}, {"c2", "n2"}}},
        /* same RV again: not news, and the index is unchanged */
        {EV, TG_WATCH_MODIFIED, "a 3 c2 n2", {NULL}, {{"c1", "m1"}, {"c2", "n2"}}},
        {EV, TG_WATCH_MODIFIED, "b 4 c2 m2", {"update ns/b(c1,m1) -> ns/b(c2,m2)"}, {{"c1", ""}, {"c2", "m2 n2"}}},
        {EV, TG_WATCH_DELETED, "b 5 c2 m2", {"delete ns/b(c2,m2)"}, {{"c1", ""}, {"c2", "n2"}}},
        {EV, TG_WATCH_ADDED, "c 6 c3 k1", {"add ns/c(c3,k1)"}, {{"c2", "n2"}, {"c3", "k1"}}},
        /* a relist: a changed (label back to c1), c vanished, d is new */
        {LIST, 0, "a 7 c1 n3;d 8 c3 j1",
         {"update ns/a(c2,n2) -> ns/a(c1,n3)", "delete ns/c(c3,k1)", "add ns/d(c3,j1)"},
         {{"c1", "n3"}, {"c2", ""}, {"c3", "j1"}}},
        /* the same list again: silent */
        {LIST, 0, "a 7 c1 n3;d 8 c3 j1", {NULL}, {{"c1", "n3"}, {"c3", "j1"}}},
    };
    static const char *const keep[] = {"data.nonce", NULL};
    log_t log = {0};
    tg_cache_handlers h = {on_add_fields, on_update_fields, on_delete_fields, &log};
    tg_cache *c = cache_new(state, INDEX);
    assert_int_equal(tg_cache_keep_fields(c, keep), 0);

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const struct step *st = &steps[i];
        json_object *objs[4];
        size_t nobj = 0;
        char copy[128], *save = NULL;
        snprintf(copy, sizeof(copy), "%s", st->objs);
        for (char *q = strtok_r(copy, ";", &save); q && nobj < 4; q = strtok_r(NULL, ";", &save)) {
            char name[16], rv[16], cl[16], nonce[16];
            assert_int_equal(sscanf(q, "%15s %15s %15s %15s", name, rv, cl, nonce), 4);
            objs[nobj++] = secret(name, rv, cl, nonce);
        }
        log.n = 0;
        if (st->what == EV) {
            tg_watch_event ev = {st->type, objs[0]};
            char err[200];
            assert_int_equal(tg_cache_apply(c, &ev, &h, err, sizeof(err)), TG_CACHE_OK);
            json_object_put(objs[0]);
        } else {
            assert_int_equal(list_replace(c, "100", objs, nobj, &h), 0);
        }
        size_t nwant = 0;
        while (nwant < 4 && st->want[nwant])
            nwant++;
        assert_log(&log, st->want, nwant);
        for (size_t j = 0; j < 3 && st->index[j][0]; j++) {
            nonces_seen seen = {0};
            char got[128];
            size_t n = tg_cache_get_by_index(c, st->index[j][0], collect_nonce, &seen);
            assert_int_equal(n, seen.n);
            nonces_join(&seen, got, sizeof(got));
            if (strcmp(got, st->index[j][1]) != 0)
                fail_msg("step %zu: index %s gives \"%s\", want \"%s\"", i, st->index[j][0], got, st->index[j][1]);
        }
    }
    /* Pruned on store: "other" and managedFields are gone in either mode. */
    trimmed t = {{0}};
    assert_int_equal(tg_cache_get(c, "ns", "a", on_trimmed, &t), 1);
    assert_string_equal(t.seen, "name=a label=c1 mf=- kind=- nonce=n3 other=- cert=- conds=- spec=- deep=-");
    tg_cache_free(c);
}

/* The metadata indexes (namespace, name) on a stream of events and relists:
 * each step's counts and the objects each lookup visits, against what a walk
 * of the cache would find. The webhook's duplicate checks read these. */
typedef struct keys_seen {
    char keys[256];
} keys_seen;

static void collect_key(json_object *o, void *data)
{
    keys_seen *ks = data;
    char k[96];
    key_of(o, k, sizeof(k));
    /* Insert sorted, so that bucket order does not matter. */
    char *list[16];
    size_t n = 0;
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", ks->keys);
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save))
        list[n++] = t;
    list[n++] = k;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(list[j - 1], list[j]) > 0; j--) {
            char *x = list[j];
            list[j] = list[j - 1];
            list[j - 1] = x;
        }
    size_t at = 0;
    char out[256] = "";
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s", i ? " " : "", list[i]);
    memcpy(ks->keys, out, sizeof(out));
}

typedef struct walk_match {
    const char *ns, *name;
    keys_seen seen;
} walk_match;

static void walk_visit(json_object *o, void *data)
{
    walk_match *w = data;
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    if ((w->ns && ns && strcmp(ns, w->ns) == 0) || (w->name && name && strcmp(name, w->name) == 0))
        collect_key(o, &w->seen);
}

static void test_metadata_indexes(void **state)
{
    enum { EV, LIST };
    static const struct step {
        int what;
        int type;                  /* EV: the watch event type */
        const char *objs;          /* "ns/name rv" ('-' for no namespace), ';'-separated for LIST */
        const char *by_ns[3][2];   /* namespace -> the keys it yields, sorted */
        const char *by_name[3][2]; /* name -> the keys it yields, sorted */
    } steps[] = {
        {EV, TG_WATCH_ADDED, "t1/a 1", {{"t1", "t1/a"}, {"t2", ""}}, {{"a", "t1/a"}, {"b", ""}}},
        {EV, TG_WATCH_ADDED, "t2/a 2", {{"t1", "t1/a"}, {"t2", "t2/a"}}, {{"a", "t1/a t2/a"}}},
        {EV, TG_WATCH_ADDED, "t1/b 3", {{"t1", "t1/a t1/b"}, {"t2", "t2/a"}}, {{"a", "t1/a t2/a"}, {"b", "t1/b"}}},
        /* a modification keeps the object in its buckets, once */
        {EV, TG_WATCH_MODIFIED, "t1/a 4", {{"t1", "t1/a t1/b"}}, {{"a", "t1/a t2/a"}}},
        {EV, TG_WATCH_DELETED, "t1/a 5", {{"t1", "t1/b"}, {"t2", "t2/a"}}, {{"a", "t2/a"}, {"b", "t1/b"}}},
        /* deleting what is not there changes nothing */
        {EV, TG_WATCH_DELETED, "t9/a 6", {{"t9", ""}, {"t1", "t1/b"}}, {{"a", "t2/a"}}},
        /* cluster-scoped: by name only */
        {EV, TG_WATCH_ADDED, "-/a 7", {{"", ""}, {"t1", "t1/b"}}, {{"a", "a t2/a"}}},
        /* a relist: t2/a and -/a vanish, t3/c is new, t1/b stays */
        {LIST, 0, "t1/b 3;t3/c 8", {{"t1", "t1/b"}, {"t2", ""}, {"t3", "t3/c"}}, {{"a", ""}, {"b", "t1/b"}, {"c", "t3/c"}}},
        {LIST, 0, "", {{"t1", ""}, {"t3", ""}}, {{"b", ""}, {"c", ""}}},
    };
    tg_cache *c = cache_new(state, INDEX);
    assert_int_equal(tg_cache_index_metadata(c, TG_CACHE_BY_NAMESPACE | TG_CACHE_BY_NAME), 0);

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const struct step *st = &steps[i];
        json_object *objs[4];
        size_t nobj = 0;
        char copy[128], *save = NULL;
        snprintf(copy, sizeof(copy), "%s", st->objs);
        for (char *q = strtok_r(copy, ";", &save); q && nobj < 4; q = strtok_r(NULL, ";", &save)) {
            char ns[16], name[16], rv[16];
            assert_int_equal(sscanf(q, "%15[^/]/%15s %15s", ns, name, rv), 3);
            objs[nobj++] = obj(strcmp(ns, "-") ? ns : NULL, name, rv, "c1");
        }
        if (st->what == EV) {
            tg_watch_event ev = {st->type, objs[0]};
            char err[200];
            assert_int_equal(tg_cache_apply(c, &ev, NULL, err, sizeof(err)), TG_CACHE_OK);
            json_object_put(objs[0]);
        } else {
            assert_int_equal(list_replace(c, "100", objs, nobj, NULL), 0);
        }
        for (int by = 0; by < 2; by++) {
            for (size_t j = 0; j < 3; j++) {
                const char *const *want = by ? st->by_name[j] : st->by_ns[j];
                if (!want[0])
                    break;
                keys_seen seen = {""};
                walk_match w = {.ns = by ? NULL : want[0], .name = by ? want[0] : NULL};
                size_t count = by ? tg_cache_get_by_name(c, want[0], NULL, NULL)
                                  : tg_cache_get_by_namespace(c, want[0], NULL, NULL);
                size_t visited = by ? tg_cache_get_by_name(c, want[0], collect_key, &seen)
                                    : tg_cache_get_by_namespace(c, want[0], collect_key, &seen);
                tg_cache_foreach(c, walk_visit, &w);
                if (strcmp(seen.keys, want[1]) != 0 || strcmp(w.seen.keys, want[1]) != 0)
                    fail_msg("step %zu: by %s %s gives \"%s\" (a walk: \"%s\"), want \"%s\"", i,
                             by ? "name" : "namespace", want[0], seen.keys, w.seen.keys, want[1]);
                size_t nwant = want[1][0] ? 1 : 0;
                for (const char *p = want[1]; *p; p++)
                    nwant += *p == ' ';
                assert_int_equal(count, nwant);
                assert_int_equal(visited, nwant);
            }
        }
    }
    /* The label index is still its own. */
    assert_int_equal(tg_cache_get_by_index(c, "c1", NULL, NULL), 0);
    tg_cache_free(c);

    /* Without the call there is no index (0, not a walk); after data, refused. */
    c = cache_new(state, INDEX);
    json_object *one[] = {obj("t1", "a", "1", "c1")};
    assert_int_equal(list_replace(c, "2", one, 1, NULL), 0);
    assert_int_equal(tg_cache_get_by_namespace(c, "t1", NULL, NULL), 0);
    assert_int_equal(tg_cache_get_by_name(c, "a", NULL, NULL), 0);
    assert_int_equal(tg_cache_index_metadata(c, TG_CACHE_BY_NAME), -1);
    tg_cache_free(c);
}

/* A list in pages, staged then committed, stores what one replace of the
 * whole list stores, with the same handler calls; a malformed page stages
 * nothing and, discarded, leaves the cache as it was. */
static void test_paged_list_stage_commit(void **state)
{
    static const struct {
        const char *pages[3];      /* "ns/name rv cluster" items, ';'-separated; "BAD": an unnamed item */
        int stage_rc[3];
        int commit;                /* 1: commit after the pages; 0: discard */
        const char *want[6];       /* handler calls (a set) */
        size_t count;              /* objects after */
        const char *index[2];      /* label value -> how many, "value=n" */
    } cases[] = {
        {{"a/x 1 c1;b/x 2 c2", "c/x 3 c1", "d/y 4 c3"}, {0, 0, 0}, 1,
         {"add a/x 1", "add b/x 2", "add c/x 3", "add d/y 4"}, 4, {"c1=2", "c3=1"}},
        /* the same objects again, one changed, one gone: a relist's delta */
        {{"a/x 1 c1", "", "c/x 5 c2;d/y 4 c3"}, {0, 0, 0}, 1,
         {"update c/x 3->5", "delete b/x"}, 3, {"c1=1", "c2=1"}},
        /* a bad second page: discarded, nothing changes */
        {{"e/x 6 c1", "BAD", NULL}, {0, -1, 0}, 0, {NULL}, 3, {"c1=1", "c2=1"}},
        /* an empty list empties the cache */
        {{"", NULL, NULL}, {0, 0, 0}, 1, {"delete a/x", "delete c/x", "delete d/y"}, 0, {"c1=0", "c3=0"}},
    };
    log_t log = {0};
    tg_cache_handlers h = {on_add, on_update, on_delete, &log};
    tg_cache *c = cache_new(state, INDEX);

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        log.n = 0;
        for (size_t p = 0; p < 3 && cases[k].pages[p]; p++) {
            json_object *arr = json_object_new_array();
            char copy[128], *save = NULL, err[200] = "";
            snprintf(copy, sizeof(copy), "%s", cases[k].pages[p]);
            for (char *q = strtok_r(copy, ";", &save); q; q = strtok_r(NULL, ";", &save)) {
                char ns[16], name[16], rv[16], cl[16];
                if (strcmp(q, "BAD") == 0) {
                    json_object_array_add(arr, tg_json_parse("{\"metadata\":{}}", 15, NULL, 0));
                    continue;
                }
                assert_int_equal(sscanf(q, "%15[^/]/%15s %15s %15s", ns, name, rv, cl), 4);
                json_object_array_add(arr, obj(ns, name, rv, cl));
            }
            assert_int_equal(tg_cache_stage(c, arr, err, sizeof(err)), cases[k].stage_rc[p]);
            if (cases[k].stage_rc[p] != 0)
                assert_non_null(strstr(err, "no metadata.name"));
            json_object_put(arr);   /* the caller frees each page at once */
            if (cases[k].stage_rc[p] != 0)
                break;
        }
        char err[200];
        if (cases[k].commit)
            assert_int_equal(tg_cache_commit(c, "100", &h, err, sizeof(err)), 0);
        else
            tg_cache_discard(c);
        size_t nwant = 0;
        while (nwant < 6 && cases[k].want[nwant])
            nwant++;
        assert_log(&log, cases[k].want, nwant);
        assert_int_equal(tg_cache_count(c), cases[k].count);
        for (size_t i = 0; i < 2 && cases[k].index[i]; i++) {
            char value[16];
            size_t n;
            assert_int_equal(sscanf(cases[k].index[i], "%15[^=]=%zu", value, &n), 2);
            assert_int_equal(tg_cache_get_by_index(c, value, NULL, NULL), n);
        }
    }
    assert_true(tg_cache_synced(c));
    /* A commit without a resourceVersion fails and empties the staging. */
    json_object *one = json_object_new_array();
    json_object_array_add(one, obj("z", "x", "9", "c1"));
    char err[200];
    assert_int_equal(tg_cache_stage(c, one, err, sizeof(err)), 0);
    json_object_put(one);
    assert_int_equal(tg_cache_commit(c, NULL, &h, err, sizeof(err)), -1);
    assert_int_equal(tg_cache_commit(c, "101", &h, err, sizeof(err)), 0);
    assert_int_equal(tg_cache_count(c), 0);
    tg_cache_free(c);
}

/* A digest follows its object through adds, updates, relists and deletes,
 * and each one made is freed exactly once. */
static int digests_alive;

static void *label_digest(json_object *o)
{
    const char *v = tg_json_string(tg_json_path(o, "metadata", "labels", NULL), INDEX);
    char *d = v && strcmp(v, "none") != 0 ? strdup(v) : NULL;
    digests_alive += d != NULL;
    return d;
}

static void label_digest_free(void *d)
{
    digests_alive--;
    free(d);
}

static void copy_digest(const void *d, void *data)
{
    snprintf(data, 16, "%s", d ? (const char *)d : "(none)");
}

/* One step of the digest tables: the object ns/a at rv with its label, as a
 * watch event of type, or (type -1) as a relist of that one object. */
static void apply_step(tg_cache *c, int type, const char *rv, const char *cluster)
{
    json_object *o = obj("ns", "a", rv, cluster);

    if (type < 0) {
        json_object *items[] = {o};
        assert_int_equal(list_replace(c, "50", items, 1, NULL), 0);
    } else {
        tg_watch_event ev = {type, o};
        assert_int_equal(tg_cache_apply(c, &ev, NULL, NULL, 0), TG_CACHE_OK);
        json_object_put(o);
    }
}

static void test_digest_follows_object(void **state)
{
    static const struct {
        int type;                  /* a watch event, or -1: a relist of the one object */
        const char *cluster;       /* its label ("none": no digest) */
        const char *want;          /* tg_cache_get_digest: the digest, "(none)", or NULL: not there */
        int alive;
    } steps[] = {
        {TG_WATCH_ADDED, "c1", "c1", 1},
        {TG_WATCH_MODIFIED, "c2", "c2", 1},
        {TG_WATCH_MODIFIED, "none", "(none)", 0},
        {-1, "c3", "c3", 1},
        {TG_WATCH_DELETED, "c3", NULL, 0},
        {TG_WATCH_ADDED, "c4", "c4", 1},
    };
    tg_cache *c = cache_new(state, INDEX);
    assert_int_equal(tg_cache_set_digest(c, label_digest, label_digest_free), 0);
    digests_alive = 0;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        char rv[8], got[16] = "";
        snprintf(rv, sizeof(rv), "%zu", i + 1);
        apply_step(c, steps[i].type, rv, steps[i].cluster);
        int found = tg_cache_get_digest(c, "ns", "a", copy_digest, got);
        assert_int_equal(found, steps[i].want != NULL);
        if (steps[i].want)
            assert_string_equal(got, steps[i].want);
        assert_int_equal(digests_alive, steps[i].alive);
    }
    tg_cache_free(c);
    assert_int_equal(digests_alive, 0);
    /* Only before the first list. */
    c = cache_new(state, INDEX);
    json_object *one[] = {obj("ns", "a", "1", "c1")};
    assert_int_equal(list_replace(c, "2", one, 1, NULL), 0);
    assert_int_equal(tg_cache_set_digest(c, label_digest, label_digest_free), -1);
    tg_cache_free(c);
}

/* Digest only: an object with a digest keeps no text (its visitors see it
 * as not found, counts and existence still see it), one without keeps its
 * text and reads as before; relists compare resourceVersions as always. */
static int label_visited;

static void visit_label_seen(json_object *o, void *data)
{
    (void)o;
    (void)data;
    label_visited++;
}

static void test_digest_only(void **state)
{
    static const struct {
        int type;                  /* a watch event, or -1: a relist of the one object */
        const char *rv, *cluster;  /* its resourceVersion and label ("none": no digest) */
        const char *want;          /* tg_cache_get_digest: the digest, "(none)", or NULL: not there */
        int visited;               /* tg_cache_get's visitor called (text kept) */
        int alive;                 /* digests made and not yet freed */
    } steps[] = {
        {TG_WATCH_ADDED, "1", "c1", "c1", 0, 1},
        {-1, "1", "c1", "c1", 0, 1},               /* unchanged: no new digest */
        {TG_WATCH_MODIFIED, "2", "none", "(none)", 1, 0},
        {TG_WATCH_MODIFIED, "3", "c2", "c2", 0, 1},
        {-1, "4", "c3", "c3", 0, 1},
        {TG_WATCH_DELETED, "5", "c3", NULL, 0, 0},
        {TG_WATCH_ADDED, "6", "none", "(none)", 1, 0},
    };
    tg_cache *c = cache_new(state, INDEX);
    int compact = *(const int *)*state;

    /* Compact mode and a digest function first. */
    assert_int_equal(tg_cache_keep_digest_only(c), -1);
    assert_int_equal(tg_cache_set_digest(c, label_digest, label_digest_free), 0);
    assert_int_equal(tg_cache_keep_digest_only(c), compact ? 0 : -1);
    if (!compact) {
        tg_cache_free(c);
        return;
    }
    digests_alive = 0;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        char got[16] = "";
        apply_step(c, steps[i].type, steps[i].rv, steps[i].cluster);
        int there = steps[i].want != NULL;
        assert_int_equal(tg_cache_get_digest(c, "ns", "a", copy_digest, got), there);
        if (there)
            assert_string_equal(got, steps[i].want);
        label_visited = 0;
        assert_int_equal(tg_cache_get(c, "ns", "a", visit_label_seen, NULL), steps[i].visited);
        assert_int_equal(label_visited, steps[i].visited);
        assert_int_equal(tg_cache_get(c, "ns", "a", NULL, NULL), there);
        assert_int_equal(tg_cache_get_by_index(c, steps[i].cluster, NULL, NULL), (size_t)there);
        assert_int_equal(tg_cache_count(c), (size_t)there);
        assert_int_equal(digests_alive, steps[i].alive);
    }
    tg_cache_free(c);
    assert_int_equal(digests_alive, 0);
    /* Only before the first list. */
    c = cache_new(state, INDEX);
    assert_int_equal(tg_cache_set_digest(c, label_digest, label_digest_free), 0);
    json_object *one[] = {obj("ns", "a", "1", "c1")};
    assert_int_equal(list_replace(c, "2", one, 1, NULL), 0);
    assert_int_equal(tg_cache_keep_digest_only(c), -1);
    tg_cache_free(c);
}

/* Handlers may be left out: a missing one is skipped, never replaced by
 * another (an update is not reported as an add). */
static void test_partial_handlers(void **state)
{
    static const struct {
        int add, update, del;
        size_t want;               /* calls for: add, update, delete of one object */
    } cases[] = {
        {1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {1, 1, 1, 3}, {0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        log_t log = {0};
        tg_cache_handlers h = {cases[i].add ? on_add_fields : NULL, cases[i].update ? on_update_fields : NULL,
                               cases[i].del ? on_delete_fields : NULL, &log};
        tg_cache *c = cache_new(state, INDEX);
        static const int types[] = {TG_WATCH_ADDED, TG_WATCH_MODIFIED, TG_WATCH_DELETED};
        for (int t = 0; t < 3; t++) {
            char rv[8];
            snprintf(rv, sizeof(rv), "%d", t + 1);
            json_object *o = secret("a", rv, "c1", "n1");
            tg_watch_event ev = {types[t], o};
            assert_int_equal(tg_cache_apply(c, &ev, &h, NULL, 0), TG_CACHE_OK);
            json_object_put(o);
        }
        assert_int_equal(log.n, cases[i].want);
        /* and in order, each the one its event calls for */
        const int present[] = {cases[i].add, cases[i].update, cases[i].del};
        static const char *const word[] = {"add ", "update ", "delete "};
        for (size_t t = 0, j = 0; t < 3; t++)
            if (present[t])
                assert_true(strncmp(log.line[j++], word[t], strlen(word[t])) == 0);
        tg_cache_free(c);
    }
}

/* --- compact mode only --- */

static void test_set_compact_only_before_use(void **state)
{
    tg_cache *c = tg_cache_new(NULL);
    json_object *items[] = {obj("a", "x", "1", "c1")};
    assert_int_equal(list_replace(c, "5", items, 1, NULL), 0);
    assert_int_equal(tg_cache_set_compact(c), -1);   /* trees are stored already */
    tg_cache_free(c);

    c = tg_cache_new(NULL);
    assert_int_equal(tg_cache_set_compact(c), 0);
    items[0] = obj("a", "x", "1", "c1");
    assert_int_equal(list_replace(c, "5", items, 1, NULL), 0);
    assert_int_equal(tg_cache_set_compact(c), 0);    /* already compact: harmless */
    tg_cache_free(c);
}

/* What a visitor copies out: a deep copy it owns. */
static void copy_tree(json_object *o, void *data)
{
    json_object **out = data;
    *out = NULL;
    assert_int_equal(json_object_deep_copy(o, out, NULL), 0);
}

typedef struct compare_ctx {
    tg_cache *tree;
    size_t compared;
} compare_ctx;

/* Visiting the compact cache: the tree cache must hold an equal object. */
static void compare_with_tree(json_object *o, void *data)
{
    compare_ctx *cc = data;
    json_object *want = NULL;
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    assert_non_null(name);
    assert_int_equal(tg_cache_get(cc->tree, ns, name, copy_tree, &want), 1);
    if (!json_object_equal(want, o))
        fail_msg("compact %s differs:\n  tree    %s\n  compact %s", name, json_object_to_json_string(want),
                 json_object_to_json_string(o));
    json_object_put(want);
    cc->compared++;
}

/* Readers see in compact mode exactly the fields they see in tree mode: every
 * JSON type, escapes, UTF-8, big numbers, slashes, deep nesting, and the
 * recorded apiserver objects, with and without keep_fields. */
static void test_compact_shows_same_objects(void **state)
{
    static const char *const docs[] = {
        "{\"metadata\":{\"name\":\"types\",\"namespace\":\"n\",\"resourceVersion\":\"1\"},"
        "\"spec\":{\"ints\":[0,-1,9223372036854775807,-9223372036854775808,18446744073709551615],"
        "\"reals\":[1.5,1e3,-0.0,2.50,1.7976931348623157e308],\"b\":[true,false,null],"
        "\"s\":\"q\\\"b\\\\s/l\\u00e9 \\u2603 \\ud83d\\ude00 \\u0001\\n\\t\\u0000end\",\"e\":{},\"a\":[[],[{}]]},"
        "\"data\":{\"nonce\":\"YWJj/+==\"}}",
        "{\"metadata\":{\"name\":\"deep\",\"resourceVersion\":\"2\",\"labels\":{\"" INDEX "\":\"c1\"}},"
        "\"status\":{\"certificate\":\"LS0tLS1CRUdJTi/+/+==\",\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}",
        "{\"metadata\":{\"name\":\"empty\",\"namespace\":\"n\",\"resourceVersion\":\"3\",\"labels\":{},\"annotations\":{\"k\":\"\"}}}",
    };
    static const char *const files[] = {"list-secrets.json", "recorded-list-before.json", "recorded-list-after.json"};
    static const char *const keep[] = {"data.nonce", "status.certificate", NULL};

    for (int with_keep = 0; with_keep < 2; with_keep++) {
        for (size_t f = 0; f <= sizeof(files) / sizeof(files[0]); f++) {
            tg_cache *c[2];
            for (int m = 0; m < 2; m++) {
                c[m] = tg_cache_new(INDEX);
                assert_non_null(c[m]);
                if (m)
                    assert_int_equal(tg_cache_set_compact(c[m]), 0);
                if (with_keep)
                    assert_int_equal(tg_cache_keep_fields(c[m], keep), 0);
                /* Each cache gets its own copy: storing strips the caller's tree. */
                json_object *list, *items;
                if (f < sizeof(files) / sizeof(files[0])) {
                    list = load_json(files[f]);
                    items = tg_json_path(list, "items", NULL);
                } else {
                    list = items = json_object_new_array();
                    for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
                        json_object *o = tg_json_parse(docs[d], strlen(docs[d]), NULL, 0);
                        assert_non_null(o);
                        json_object_array_add(items, o);
                    }
                }
                char err[200];
                assert_int_equal(tg_cache_replace(c[m], items, "9", NULL, err, sizeof(err)), 0);
                json_object_put(list);
            }
            compare_ctx cc = {c[0], 0};
            size_t n = tg_cache_count(c[0]);
            assert_true(n > 0);
            assert_int_equal(tg_cache_count(c[1]), n);
            assert_int_equal(tg_cache_foreach(c[1], compare_with_tree, &cc), n);
            assert_int_equal(cc.compared, n);
            assert_int_equal(tg_cache_get_by_index(c[1], "c1", compare_with_tree, &cc),
                             tg_cache_get_by_index(c[0], "c1", NULL, NULL));
            tg_cache_free(c[0]);
            tg_cache_free(c[1]);
        }
    }
}

/* Visitors may not keep what they are shown: in compact mode the tree is
 * freed after the call, so a second reader gets its own fresh copy. */
static void take_pointer(json_object *o, void *data)
{
    *(json_object **)data = o;
}

static void test_compact_visitor_gets_fresh_tree(void **state)
{
    tg_cache *c = tg_cache_new(INDEX);
    assert_int_equal(tg_cache_set_compact(c), 0);
    json_object *items[] = {secret("a", "1", "c1", "n1")};
    json_object *given = items[0];
    json_object_get(given);
    assert_int_equal(list_replace(c, "5", items, 1, NULL), 0);
    json_object *first = NULL;
    assert_int_equal(tg_cache_get(c, "ns", "a", take_pointer, &first), 1);
    assert_non_null(first);
    assert_ptr_not_equal(first, given);   /* not the caller's tree: that one is the caller's to free */
    json_object_put(given);
    /* And what was stored survives the caller freeing its tree. */
    nonce_copy nc = {0};
    assert_int_equal(tg_cache_get(c, "ns", "a", copy_nonce, &nc), 1);
    assert_string_equal(nc.nonce, "n1");
    tg_cache_free(c);
}

/* --- memory: what the compact mode is for --- */


/* A base64 string of len characters, different for every seed (as real
 * certificates are), slashes and pluses included. */
static void fake_base64(char *out, size_t len, unsigned seed)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        out[i] = alphabet[(x >> 16) & 63];
    }
    out[len] = '\0';
}

/* A Tenant and a tenant CSR as the API server sends them; the signer's
 * caches keep metadata (minus managedFields) and status.certificate. */
static json_object *tenant_like(unsigned i)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"Tenant\",\"metadata\":{"
             "\"name\":\"cl%04u\",\"namespace\":\"liqo-tenant-cl%04u\",\"uid\":\"6f1c%04u-3b2a-4c7e-9d1f-0a2b3c4d5e6f\","
             "\"resourceVersion\":\"%u\",\"generation\":1,\"creationTimestamp\":\"2026-11-21T16:00:00Z\","
             "\"labels\":{\"" INDEX "\":\"cl%04u\",\"liqo.io/tenant\":\"true\"},"
             "\"finalizers\":[\"liqo.io/tenant\"],"
             "\"managedFields\":[{\"manager\":\"liqoctl\",\"operation\":\"Apply\",\"apiVersion\":\"v1beta1\","
             "\"time\":\"2026-11-21T16:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:csr\":{}}}}]},"
             "\"spec\":{\"clusterID\":\"cl%04u\",\"csr\":\"%0400u\",\"publicKey\":\"%044u\",\"signature\":\"%088u\"},"
             "\"status\":{\"authParams\":{\"signedCRT\":\"%0200u\"}}}",
             i, i, i, 1000 + i, i, i, i, i, i, i);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

static json_object *csr_like(unsigned i)
{
    char text[8192], cert[1401], req[1025];
    fake_base64(cert, sizeof(cert) - 1, i);
    fake_base64(req, sizeof(req) - 1, i + 100000);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\",\"metadata\":{"
             "\"name\":\"liqo-tenant-cl%04u-x7k2p\",\"uid\":\"0a1b%04u-2c3d-4e5f-8a9b-0c1d2e3f4a5b\","
             "\"resourceVersion\":\"%u\",\"creationTimestamp\":\"2026-11-21T16:00:01Z\","
             "\"labels\":{\"" INDEX "\":\"cl%04u\",\"liqo.io/tenant-csr\":\"true\","
             "\"liqo.io/tenant-namespace\":\"liqo-tenant-cl%04u\"},"
             "\"managedFields\":[{\"manager\":\"tenantgate-signer\",\"operation\":\"Update\",\"subresource\":\"status\"}]},"
             "\"spec\":{\"request\":\"%s\",\"signerName\":\"kubernetes.io/kube-apiserver-client\","
             "\"usages\":[\"client auth\"],\"username\":\"system:serviceaccount:liqo:liqo-controller-manager\"},"
             "\"status\":{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\",\"reason\":\"LiqoApproved\"}],"
             "\"certificate\":\"%s\"}}",
             i, i, 2000 + i, i, i, req, cert);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

#define MEM_OBJECTS 1000
/* test_compact_bytes_per_object's bounds (bytes per Tenant-like object) */
#define TENANT_ENTRY_MAX 560
#define TENANT_PROJECTED_MAX 430

typedef struct cache_cost {
    size_t tenants, csrs;   /* bytes held by each cache of MEM_OBJECTS */
} cache_cost;

static tg_cache *fill(int compact, const char *const *keep, const char *index_label, json_object *(*make)(unsigned))
{
    tg_cache *c = tg_cache_new(index_label);
    assert_non_null(c);
    if (compact)
        assert_int_equal(tg_cache_set_compact(c), 0);
    assert_int_equal(tg_cache_keep_fields(c, keep), 0);
    json_object *items = json_object_new_array();
    for (unsigned i = 0; i < MEM_OBJECTS; i++)
        json_object_array_add(items, make(i));
    char err[200];
    assert_int_equal(tg_cache_replace(c, items, "5000", NULL, err, sizeof(err)), 0);
    json_object_put(items);   /* as the informer does: the cache keeps what it needs */
    assert_int_equal(tg_cache_count(c), MEM_OBJECTS);
    return c;
}

static void copy_cert(json_object *o, void *data)
{
    const char *cert = tg_json_path_string(o, "status", "certificate", NULL);
    snprintf(data, 1401, "%s", cert ? cert : "");
}

static cache_cost measure(int compact)
{
    static const char *const keep_nothing[] = {NULL}, *const keep_csr[] = {"status.certificate", NULL};
    cache_cost cost;
    size_t before = tg_test_heap_in_use();
    tg_cache *tenants = fill(compact, keep_nothing, NULL, tenant_like);
    size_t mid = tg_test_heap_in_use();
    tg_cache *csrs = fill(compact, keep_csr, INDEX, csr_like);
    size_t after = tg_test_heap_in_use();
    cost.tenants = mid > before ? mid - before : 0;
    cost.csrs = after > mid ? after - mid : 0;

    /* What was stored is what the reconcilers read. */
    char cert[1401], want[1401];
    fake_base64(want, sizeof(want) - 1, 777);
    assert_int_equal(tg_cache_get_by_index(csrs, "cl0777", copy_cert, cert), 1);
    assert_string_equal(cert, want);
    assert_int_equal(tg_cache_get(tenants, "liqo-tenant-cl0042", "cl0042", NULL, NULL), 1);
    tg_cache_free(tenants);
    tg_cache_free(csrs);
    return cost;
}

static void test_compact_memory(void **state)
{
    /* Warm up what allocates once per process (the parser's cached tokener). */
    json_object_put(tenant_like(0));
    tg_cache_free(fill(1, (const char *const[]){NULL}, NULL, tenant_like));

    cache_cost tree = measure(0);
    cache_cost compact = measure(1);
    size_t tree_total = tree.tenants + tree.csrs, compact_total = compact.tenants + compact.csrs;
    printf("[ cache    ] %d Tenant-like + %d CSR-like objects, bytes per object (Tenant / CSR / pair):\n"
           "[ cache    ]   tree    %zu / %zu / %zu\n"
           "[ cache    ]   compact %zu / %zu / %zu\n",
           MEM_OBJECTS, MEM_OBJECTS, tree.tenants / MEM_OBJECTS, tree.csrs / MEM_OBJECTS, tree_total / MEM_OBJECTS,
           compact.tenants / MEM_OBJECTS, compact.csrs / MEM_OBJECTS, compact_total / MEM_OBJECTS);
    assert_true(compact_total > 0);
    if (!(compact_total * 2 < tree_total))
        fail_msg("compact mode holds %zu bytes, not under half of tree mode's %zu", compact_total, tree_total);
    /* Each kind on its own, too: the CSRs are mostly one long string. */
    assert_true(compact.tenants * 2 < tree.tenants);
    assert_true(compact.csrs * 2 < tree.csrs);
}

/* The bytes a compact cache holds per object, set up as the signer's
 * Tenant cache is (informers.c: spec.clusterID, the namespace index, labels,
 * uid and creation time of metadata), over MEM_OBJECTS Tenant-like objects;
 * meta NULL: all of metadata. */
static size_t tenant_cache_cost(const char *const *meta)
{
    static const char *const keep[] = {"spec.clusterID", NULL};
    size_t before = tg_test_heap_in_use();
    tg_cache *c = tg_cache_new(NULL);
    json_object *items = json_object_new_array();
    char err[200];

    assert_non_null(c);
    assert_int_equal(tg_cache_set_compact(c), 0);
    assert_int_equal(tg_cache_keep_fields(c, keep), 0);
    assert_int_equal(tg_cache_index_metadata(c, TG_CACHE_BY_NAMESPACE), 0);
    if (meta)
        assert_int_equal(tg_cache_keep_metadata(c, meta), 0);
    for (unsigned i = 0; i < MEM_OBJECTS; i++)
        json_object_array_add(items, tenant_like(i));
    assert_int_equal(tg_cache_stage(c, items, err, sizeof(err)), 0);
    json_object_put(items);
    assert_int_equal(tg_cache_commit(c, "5000", NULL, err, sizeof(err)), 0);
    size_t after = tg_test_heap_in_use();
    /* the members kept outside the text read back */
    assert_int_equal(tg_cache_get_by_namespace(c, "liqo-tenant-cl0042", NULL, NULL), 1);
    char seen[400] = "";
    assert_int_equal(tg_cache_get(c, "liqo-tenant-cl0042", "cl0042", on_meta_seen, seen), 1);
    assert_non_null(strstr(seen, "name=cl0042 namespace=liqo-tenant-cl0042 resourceVersion=1042 "));
    tg_cache_free(c);
    return after > before ? (after - before) / MEM_OBJECTS : 0;
}

/* Issue 47: 10,000 consumers in 40 MB. A cache entry's own cost (entry,
 * key, index, the text's repeated name, namespace and version) is much of
 * what a trimmed object costs: bound it per object. glibc, 1,000 objects:
 * 788 bytes before (key, index values and the whole text in allocations of
 * their own), 662 once the entry holds its key and the text leaves out what
 * the key and version say, 531 with metadata projected to the labels; 514
 * and 388 once the entries and index buckets are found through
 * common/strtab.h instead of json-c's linkhash. */
static void test_compact_bytes_per_object(void **state)
{
    static const char *const meta[] = {"labels", NULL};   /* as the signer keeps nonces */
    (void)state;
    json_object_put(tenant_like(0));   /* warm up the tokener */
    size_t all = tenant_cache_cost(NULL), projected = tenant_cache_cost(meta);
    printf("[ cache    ] Tenant cache as the signer's, bytes per object: %zu, metadata projected %zu\n", all,
           projected);
    if (all > TENANT_ENTRY_MAX)
        fail_msg("a Tenant costs %zu bytes in the cache, over %d", all, TENANT_ENTRY_MAX);
    if (projected > TENANT_PROJECTED_MAX)
        fail_msg("a projected Tenant costs %zu bytes in the cache, over %d", projected, TENANT_PROJECTED_MAX);
}

/* tg_cache_shrink_field: a test shrink, "len:<n>" of the value; "keep"
 * makes nothing (as out of memory would). */
static char *shrink_len(const char *value)
{
    char *out = malloc(32);
    if (out == NULL || strcmp(value, "keep") == 0) {
        free(out);
        return NULL;
    }
    snprintf(out, 32, "len:%zu", strlen(value));
    return out;
}

static json_object *with_cert(const char *rv, const char *status)
{
    char text[512];
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"%s\"},"
             "\"spec\":{\"x\":1},\"status\":%s}", rv, status);
    json_object *o = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(o);
    return o;
}

static void copy_status(json_object *o, void *data)
{
    json_object *st = tg_json_path(o, "status", NULL);
    snprintf(data, 128, "%s", st ? json_object_to_json_string_ext(st, JSON_C_TO_STRING_PLAIN) : "none");
}

static char shrunk_added[128];
static void on_add_status(json_object *o, void *data)
{
    (void)data;
    copy_status(o, shrunk_added);
}

/* The stored object and the handlers' new one carry the shrunk value;
 * what is not a string at that path, or what the function makes nothing
 * of, stays as it came; the other fields are untouched. */
static void test_shrink_field(void **state)
{
    static const struct {
        const char *status, *want;
    } steps[] = {
        {"{\"certificate\":\"QUJDRA==\",\"conditions\":[]}", "{\"certificate\":\"len:8\",\"conditions\":[]}"},
        {"{\"conditions\":[]}", "{\"conditions\":[]}"},
        {"{\"certificate\":7}", "{\"certificate\":7}"},
        {"{\"certificate\":\"keep\"}", "{\"certificate\":\"keep\"}"},
        {"\"certificate\"", "\"certificate\""},
        {"{\"certificate\":\"\"}", "{\"certificate\":\"len:0\"}"},
    };
    tg_cache *c = cache_new(state, NULL);
    tg_cache_handlers h = {.on_add = on_add_status, .on_update = NULL};
    char got[128], rv[16];

    assert_int_equal(tg_cache_shrink_field(c, "status.certificate", shrink_len), 0);
    assert_int_equal(tg_cache_shrink_field(c, "status.other", shrink_len), -1);   /* once */
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        tg_cache *fresh = cache_new(state, NULL);
        assert_int_equal(tg_cache_shrink_field(fresh, "status.certificate", shrink_len), 0);
        json_object *items[] = {with_cert("1", steps[i].status)};
        shrunk_added[0] = '\0';
        assert_int_equal(list_replace(fresh, "1", items, 1, &h), 0);
        assert_int_equal(tg_cache_get(fresh, "ns", "a", copy_status, got), 1);
        assert_string_equal(got, steps[i].want);
        assert_string_equal(shrunk_added, steps[i].want);
        tg_cache_free(fresh);
        /* and through watch events, one after another */
        snprintf(rv, sizeof(rv), "%zu", i + 2);
        tg_watch_event ev = {i ? TG_WATCH_MODIFIED : TG_WATCH_ADDED, with_cert(rv, steps[i].status)};
        assert_int_equal(tg_cache_apply(c, &ev, NULL, NULL, 0), TG_CACHE_OK);
        json_object_put(ev.object);
        assert_int_equal(tg_cache_get(c, "ns", "a", copy_status, got), 1);
        assert_string_equal(got, steps[i].want);
    }
    tg_cache_free(c);
}

/* Both modes run the same behaviour tests. */
#define CACHE_TESTS(mode)                                                      \
    cmocka_unit_test_prestate(test_list_then_watch, (void *)(mode)),           \
    cmocka_unit_test_prestate(test_relist_delta, (void *)(mode)),              \
    cmocka_unit_test_prestate(test_bad_input_leaves_cache_alone, (void *)(mode)), \
    cmocka_unit_test_prestate(test_cluster_scoped_and_deleted_unknown, (void *)(mode)), \
    cmocka_unit_test_prestate(test_index_duplicates, (void *)(mode)),          \
    cmocka_unit_test_prestate(test_index_holding, (void *)(mode)),             \
    cmocka_unit_test_prestate(test_concurrent_readers, (void *)(mode)),        \
    cmocka_unit_test_prestate(test_recorded_list_watch_equals_relist, (void *)(mode)), \
    cmocka_unit_test_prestate(test_keep_fields, (void *)(mode)),               \
    cmocka_unit_test_prestate(test_keep_metadata, (void *)(mode)),             \
    cmocka_unit_test_prestate(test_keep_fields_through_lists, (void *)(mode)), \
    cmocka_unit_test_prestate(test_annotations_follow_keep_paths, (void *)(mode)), \
    cmocka_unit_test_prestate(test_index_and_handlers_follow_changes, (void *)(mode)), \
    cmocka_unit_test_prestate(test_metadata_indexes, (void *)(mode)),          \
    cmocka_unit_test_prestate(test_paged_list_stage_commit, (void *)(mode)),   \
    cmocka_unit_test_prestate(test_digest_follows_object, (void *)(mode)),     \
    cmocka_unit_test_prestate(test_digest_only, (void *)(mode)),               \
    cmocka_unit_test_prestate(test_shrink_field, (void *)(mode)),              \
    cmocka_unit_test_prestate(test_partial_handlers, (void *)(mode))

int main(void)
{
    const struct CMUnitTest tree_tests[] = {CACHE_TESTS(&tree_mode)};
    const struct CMUnitTest compact_tests[] = {
        CACHE_TESTS(&compact_mode),
        cmocka_unit_test(test_set_compact_only_before_use),
        cmocka_unit_test(test_compact_shows_same_objects),
        cmocka_unit_test(test_compact_visitor_gets_fresh_tree),
        cmocka_unit_test(test_compact_memory),
        cmocka_unit_test(test_compact_bytes_per_object),
    };
    int failed = cmocka_run_group_tests_name("tree", tree_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("compact", compact_tests, NULL, NULL);
    return failed;
}
