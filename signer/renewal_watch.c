/* renewal_watch.c - see renewal_watch.h. */
#include "signer/renewal_watch.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "signer/renewal.h"
#include "signer/rfc3339.h"

tg_overdue_view tg_overdue_view_of(time_t not_before, time_t not_after, time_t now, int grace_pct)
{
    tg_overdue_view v = {.renew_at = tg_renewal_at(not_before, not_after),
                         .overdue_at = tg_renewal_overdue_at(not_before, not_after, grace_pct),
                         .not_after = not_after};

    v.overdue = now > v.overdue_at;
    return v;
}

/* The message: the times an operator needs, never anything secret. */
static void message(const tg_overdue_view *v, char *buf, size_t len)
{
    char na[32], at[32], od[32];

    rc_rfc3339(v->not_after, na, sizeof(na));
    rc_rfc3339(v->renew_at, at, sizeof(at));
    rc_rfc3339(v->overdue_at, od, sizeof(od));
    if (v->overdue)
        snprintf(buf, len, "the certificate in use expires at %s: expected a renewed one since %s, none "
                 "arrived by %s", na, at, od);
    else
        snprintf(buf, len, "the certificate in use expires at %s; renewal due at %s, overdue after %s", na, at, od);
}

static int same(json_object *c, const char *key, const char *want)
{
    const char *have = tg_json_string(c, key);

    return have && strcmp(have, want) == 0;
}

json_object *tg_overdue_conditions(json_object *conditions, const tg_overdue_view *v, time_t now, int *flipped)
{
    const char *status = v->overdue ? "True" : "False", *reason = v->overdue ? TG_OVERDUE_NOT_RENEWED : TG_OVERDUE_ON_TIME;
    json_object *out = json_object_new_array(), *ours = NULL, *c;
    char msg[512], ts[32];
    size_t i, n = json_object_is_type(conditions, json_type_array) ? json_object_array_length(conditions) : 0;

    message(v, msg, sizeof(msg));
    for (i = 0; i < n; i++) {
        c = json_object_array_get_idx(conditions, i);
        if (same(c, "type", TG_COND_RENEWAL_OVERDUE))
            ours = c;
        else
            json_object_array_add(out, json_object_get(c));
    }
    *flipped = !ours || !same(ours, "status", status);
    if (ours && !*flipped && same(ours, "reason", reason) && same(ours, "message", msg) &&
        tg_json_string(ours, "lastTransitionTime")) {
        json_object_put(out);
        return NULL;
    }
    c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string(TG_COND_RENEWAL_OVERDUE));
    json_object_object_add(c, "status", json_object_new_string(status));
    json_object_object_add(c, "reason", json_object_new_string(reason));
    json_object_object_add(c, "message", json_object_new_string(msg));
    if (!*flipped && tg_json_string(ours, "lastTransitionTime"))
        snprintf(ts, sizeof(ts), "%s", tg_json_string(ours, "lastTransitionTime"));
    else
        rc_rfc3339(now, ts, sizeof(ts));
    json_object_object_add(c, "lastTransitionTime", json_object_new_string(ts));
    json_object_array_add(out, c);
    return out;
}
