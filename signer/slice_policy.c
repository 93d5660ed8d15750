/* slice_policy.c - the class policy of a slice, read from the policy ConfigMap (slice_policy.h). */
#include "signer/slice_policy.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"

/* The policy ConfigMap's data is remembered this long (a settled mark): a
 * burst of slices reads it once, not once a pass; an edit applies after at
 * most this, as an informer's would after its lag. */
#define POLICY_MEMO_MS 2000
#define POLICY_MEMO_KEY "slice-policy"

/* The data of the policy ConfigMap as last read: 1 with *data (a new
 * object, NULL: no ConfigMap), 0 when not remembered. */
static int policy_remembered(tg_signer *s, json_object **data)
{
    char value[8192];

    *data = NULL;
    if (!s->settled || !tg_settled_marked(s->settled, POLICY_MEMO_KEY, value, sizeof(value), tg_wq_now_ms()))
        return 0;
    if (strlen(value) >= sizeof(value) - 1 || (value[0] != '0' && value[0] != '1'))
        return 0;   /* cut short or not ours: read it again */
    if (value[0] == '0')
        return 1;
    return (*data = tg_json_parse(value + 1, strlen(value + 1), NULL, 0)) != NULL;
}

/* Remember data (NULL: no ConfigMap) when it fits the mark. */
static void policy_remember(tg_signer *s, json_object *data)
{
    const char *text = data ? json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN) : "";
    char value[8192];
    uint64_t now = tg_wq_now_ms();
    int n = snprintf(value, sizeof(value), "%c%s", data ? '1' : '0', text);

    if (s->settled && n > 0 && (size_t)n < sizeof(value) - 1)
        tg_settled_mark(s->settled, POLICY_MEMO_KEY, value, now, now + POLICY_MEMO_MS);
}

/* The policy ConfigMap's data (a new object, or NULL: none). 0, or -1 with
 * c->err on a failed read. */
static int policy_data(slice_ctx *c, json_object **data)
{
    char path[1024];
    json_object *cm = NULL;
    long r;

    if (policy_remembered(c->s, data))
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", c->s->slice_policy_ns, c->s->slice_policy_name);
    if ((r = tg_api_get(c->api, path, &cm, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    if ((*data = tg_json_path(cm, "data", NULL)))
        json_object_get(*data);
    json_object_put(cm);
    policy_remember(c->s, *data);
    return 0;
}

/* The policy of the slice's class from the policy ConfigMap (data[<class>],
 * JSON); NULL when there is none. -1 with c->err on a failed read;
 * *bad set (and why) when the ConfigMap's entry is not JSON. */
int rs_class_policy(slice_ctx *c, const char *class_, json_object **policy, char *why, size_t why_len, int *bad)
{
    json_object *cm = NULL;
    const char *text;

    *policy = NULL;
    *bad = 0;
    if (!c->s->slice_policy_ns || !c->s->slice_policy_name)
        return 0;
    if (policy_data(c, &cm) != 0)
        return -1;
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
