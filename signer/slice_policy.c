/* slice_policy.c - the class policy of a slice, read from the policy ConfigMap (slice_policy.h). */
#include "signer/slice_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "pki/slice_tenant_policy.h"
#include "signer/slice_policy_memo.h"

/* The policy ConfigMap's data (a new object, or NULL: none). 0, or -1 with
 * c->err on a failed read. Live, or as a read that started after this slice
 * was first seen left it (slice_policy_memo.h): a quota an admin tightens
 * holds for the next slice decided. */
static int policy_data(slice_ctx *c, json_object **data)
{
    char path[1024];
    json_object *cm = NULL;
    uint64_t seen = rs_memo_seen_us(c->s, c->slice), start;
    long r;

    if (rs_memo_get(c->s, MEMO_POLICY, seen, data))
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", c->s->slice_policy_ns, c->s->slice_policy_name);
    start = rs_memo_now_us();
    if ((r = tg_api_get(c->api, path, &cm, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    if ((*data = tg_json_path(cm, "data", NULL)))
        json_object_get(*data);
    json_object_put(cm);
    rs_memo_put(c->s, MEMO_POLICY, start, *data);
    return 0;
}

/* The consumer's entry (data[tenant.<consumer>]) of data, copied; NULL when none. */
static char *tenant_entry_of(json_object *data, const char *consumer, int *oom)
{
    char key[sizeof(TG_TENANT_POLICY_KEY_PREFIX) + 64];
    const char *text;
    char *copy;

    if (!data || !consumer || tg_tenant_policy_key(consumer, key, sizeof(key)) != 0 ||
        !(text = tg_json_path_string(data, key, NULL)))
        return NULL;
    *oom = !(copy = strdup(text));
    return copy;
}

int rs_class_policy(slice_ctx *c, const char *class_, json_object **policy, char **tenant_entry, char *why,
                    size_t why_len, int *bad)
{
    json_object *cm = NULL;
    const char *text;
    int oom = 0;

    *policy = NULL;
    *tenant_entry = NULL;
    *bad = 0;
    if (!c->s->slice_policy_ns || !c->s->slice_policy_name)
        return 0;
    if (policy_data(c, &cm) != 0)
        return -1;
    *tenant_entry = tenant_entry_of(cm, c->consumer, &oom);
    if (oom) {
        json_object_put(cm);
        snprintf(c->err, sizeof(c->err), "out of memory");
        return -1;
    }
    text = cm ? tg_json_path_string(cm, class_ && *class_ ? class_ : "default", NULL) : NULL;
    if (text && !(*policy = tg_json_parse(text, strlen(text), NULL, 0))) {
        *bad = 1;
        snprintf(why, why_len, "the policy ConfigMap %s/%s: data.%.64s is not JSON", c->s->slice_policy_ns,
                 c->s->slice_policy_name, class_ && *class_ ? class_ : "default");
    }
    json_object_put(cm);
    return 0;
}

int rs_is_default_class(const char *class_)
{
    return !class_ || !*class_ || strcmp(class_, "default") == 0;
}
