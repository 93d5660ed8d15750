/* fuzz_nonce_secret.c - libFuzzer: the body of the live nonce read (a Secret
 * list from the API server) through the nonce rule, as on_live_response in
 * kube_lookup.c handles it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "webhook/nonce_secret.h"

static void judge(json_object *secret)
{
    char nonce[TG_LOOKUP_NONCE_MAX];
    size_t len = 0;

    if (tg_nonce_secret_read(secret, "liqo-tenant-cl01", "cl01", nonce, &len) == TG_NONCE_FOUND &&
        (len == 0 || len >= TG_LOOKUP_NONCE_MAX || strlen(nonce) != len))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *list = tg_json_parse((const char *)data, size, NULL, 0);
    json_object *items;

    if (!list)
        return 0;
    judge(list);
    items = tg_json_path(list, "items", NULL);
    if (items && json_object_is_type(items, json_type_array))
        for (size_t i = 0; i < json_object_array_length(items); i++)
            judge(json_object_array_get_idx(items, i));
    json_object_put(list);
    return 0;
}
