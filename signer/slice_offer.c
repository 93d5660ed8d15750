/* slice_offer.c - see slice_offer.h. */
#include "signer/slice_offer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

#define CLASS_NAME_MAX 253
#define DEFAULT_SUFFIX ";default"

static json_object *class_entry(const char *name_key, const char *name, size_t len, int is_default)
{
    json_object *e = json_object_new_object();

    json_object_object_add(e, name_key, json_object_new_string_len(name, (int)len));
    if (is_default)   /* Liqo's field is omitempty: absent when false */
        json_object_object_add(e, "default", json_object_new_boolean(1));
    return e;
}

/* One chunk ("name" or "name;default") appended to out; 0, or -1 with err. */
static int class_chunk(const char *chunk, size_t len, const char *name_key, json_object *out, char *err,
                       size_t err_len)
{
    const char *semi = memchr(chunk, ';', len);
    size_t name_len = semi ? (size_t)(semi - chunk) : len;

    if (semi && (len - name_len != strlen(DEFAULT_SUFFIX) || memcmp(semi, DEFAULT_SUFFIX, len - name_len) != 0))
        return snprintf(err, err_len, "expected name or name;default, found \"%.*s\"", (int)(len > 64 ? 64 : len),
                        chunk), -1;
    if (name_len == 0 || name_len > CLASS_NAME_MAX)
        return snprintf(err, err_len, "expected a class name of 1 to %d characters, found \"%.*s\"", CLASS_NAME_MAX,
                        (int)(len > 64 ? 64 : len), chunk), -1;
    json_object_array_add(out, class_entry(name_key, chunk, name_len, semi != NULL));
    return 0;
}

json_object *tg_slice_class_list_parse(const char *flag, const char *name_key, char *err, size_t err_len)
{
    json_object *out = json_object_new_array();
    const char *p = flag ? flag : "";

    while (*p) {
        size_t len = strcspn(p, ",");
        if (len > 0 && class_chunk(p, len, name_key, out, err, err_len) != 0) {
            json_object_put(out);
            return NULL;
        }
        p += len + (p[len] == ',');
    }
    return out;
}

static int by_name(const void *a, const void *b)
{
    const char *x = tg_json_string(*(json_object *const *)a, "storageClassName");
    const char *y = tg_json_string(*(json_object *const *)b, "storageClassName");

    return strcmp(x ? x : "", y ? y : "");
}

json_object *tg_slice_storage_classes(json_object *list, const char *real_name)
{
    json_object *items = tg_json_path(list, "items", NULL), *out = json_object_new_array();
    size_t n = items && json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;

    for (size_t i = 0; i < n; i++) {
        json_object *sc = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(sc, "metadata", "name", NULL);
        const char *ann = tg_json_path_string(sc, "metadata", "annotations", "storageclass.kubernetes.io/is-default-class",
                                              NULL);
        int is_default = real_name && *real_name ? strcmp(name ? name : "", real_name) == 0
                                                 : ann && strcmp(ann, "true") == 0;
        if (name && *name)
            json_object_array_add(out, class_entry("storageClassName", name, strlen(name), is_default));
    }
    json_object_array_sort(out, by_name);
    return out;
}
