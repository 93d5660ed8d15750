/* fuzz_yaml.c - libFuzzer: bytes -> tg_yaml_parse, and for what parses,
 * tg_yaml_emit -> tg_yaml_parse must give back the same tree (the CLI prints
 * Tenants that users apply again). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/yaml.h"

/* json_object_equal, except that NaN equals NaN (".nan" reads back as NaN). */
static int same_tree(json_object *a, json_object *b)
{
    if (json_object_get_type(a) != json_object_get_type(b))
        return 0;
    switch (json_object_get_type(a)) {
    case json_type_double: {
        double x = json_object_get_double(a), y = json_object_get_double(b);

        return (isnan(x) && isnan(y)) || x == y;
    }
    case json_type_array: {
        size_t n = json_object_array_length(a);

        if (n != json_object_array_length(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!same_tree(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return 0;
        return 1;
    }
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return 0;
        json_object_object_foreach(a, key, val) {
            json_object *other;

            if (!json_object_object_get_ex(b, key, &other) || !same_tree(val, other))
                return 0;
        }
        return 1;
    }
    default:
        return json_object_equal(a, b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_object *doc = tg_yaml_parse((const char *)data, size, err, sizeof(err));
    json_object *back;
    size_t len;
    char *text;

    if (doc == NULL)
        return 0;
    text = tg_yaml_emit(doc, &len);
    if (text == NULL || strlen(text) != len)
        abort();
    back = tg_yaml_parse(text, len, err, sizeof(err));
    if (back == NULL || !same_tree(doc, back))
        abort();
    free(text);
    json_object_put(back);
    json_object_put(doc);
    return 0;
}
