/* fuzz_nonce_secret.c - libFuzzer: the body of the live nonce read (a Secret
 * list from the API server) through the nonce rule, as on_live_response in
 * kube_lookup.c handles it, and the digest its informer caches. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "webhook/nonce_secret.h"

/* The digest the informer's cache keeps reads as the Secret does (the cache
 * key stands for the namespace and name test). */
static void judge_digest(json_object *secret, tg_nonce_state want, const char *want_nonce, size_t want_len)
{
    char nonce[TG_LOOKUP_NONCE_MAX];
    size_t len = 0;
    tg_nonce_digest *d = tg_nonce_digest_new(secret);

    if (!d)
        return;
    if (tg_nonce_digest_read(d, "cl01", nonce, &len) != want ||
        (want == TG_NONCE_FOUND && (len != want_len || memcmp(nonce, want_nonce, len + 1) != 0)))
        abort();
    tg_nonce_digest_free(d);
}

static void judge(json_object *secret)
{
    char nonce[TG_LOOKUP_NONCE_MAX];
    size_t len = 0;
    tg_nonce_state st = tg_nonce_secret_read(secret, "liqo-tenant-cl01", "cl01", nonce, &len);

    if (st == TG_NONCE_FOUND && (len == 0 || len >= TG_LOOKUP_NONCE_MAX || strlen(nonce) != len))
        abort();
    if (st != TG_NONCE_ABSENT)
        judge_digest(secret, st, nonce, len);
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
