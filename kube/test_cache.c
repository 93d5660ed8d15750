/* test_cache.c - the informer state machine on recorded API JSON: list,
 * watch events, bookmarks, 410, relist delta, the label index, readers on
 * other threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    tg_cache *c = tg_cache_new(INDEX);
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
    tg_cache *c = tg_cache_new(INDEX);
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
    tg_cache *c = tg_cache_new(NULL);
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
    tg_cache *c = tg_cache_new(INDEX);
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
    tg_cache *c = tg_cache_new(INDEX);
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
    tg_cache *c = tg_cache_new(INDEX);
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
    tg_cache *c = tg_cache_new(INDEX);
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

static void test_keep_fields(void **state)
{
    (void)state;
    static const char *const keep[] = {"data.nonce", "status.certificate", "status.certificate.x", NULL};
    static const struct {
        const char *json;
        const char *want;   /* what the visitor sees once stored */
    } cases[] = {
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"1\","
         "\"labels\":{\"" INDEX "\":\"c1\"},\"managedFields\":[{}]},\"data\":{\"nonce\":\"YWJj\",\"other\":\"eA==\"}}",
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
        tg_cache *c = tg_cache_new(INDEX);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_then_watch),
        cmocka_unit_test(test_relist_delta),
        cmocka_unit_test(test_bad_input_leaves_cache_alone),
        cmocka_unit_test(test_cluster_scoped_and_deleted_unknown),
        cmocka_unit_test(test_index_duplicates),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_recorded_list_watch_equals_relist),
        cmocka_unit_test(test_keep_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
