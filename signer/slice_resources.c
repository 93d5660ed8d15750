/* slice_resources.c - see slice_resources.h. */
#include "slice_resources.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"

/* Liqo's chart's --default-node-resources (Helm offloading.defaultNodeResources),
 * for a signer started without the flag. */
static const struct {
    const char *name, *value;
} chart_defaults[] = {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}, {"ephemeral-storage", "20Gi"}};

/* obj[name] as a quantity; 0 when absent (*present 0), -1 malformed. */
static int member_milli(json_object *obj, const char *name, __int128 *milli, int *present)
{
    json_object *v = NULL;
    char num[32];
    const char *text;

    *present = 0;
    *milli = 0;
    if (!obj || !json_object_object_get_ex(obj, name, &v) || !v)
        return 0;
    *present = 1;
    if (json_object_is_type(v, json_type_int)) {
        snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(v));
        text = num;
    } else if (json_object_is_type(v, json_type_string)) {
        text = json_object_get_string(v);
    } else {
        return -1;
    }
    return tg_quantity_milli(text, milli);
}

/* One granted resource against the policy. */
static int check_limit(const char *name, __int128 want, json_object *policy, json_object *others, char *why,
                       size_t why_len)
{
    __int128 max, other;
    int present, other_present;
    char a[48], b[48], c[48], d[48];

    if (member_milli(tg_json_path(policy, "maxPerSlice", NULL), name, &max, &present) != 0)
        return snprintf(why, why_len, "the class policy's maxPerSlice.%.64s is not a quantity", name), -1;
    if (present && want > max) {
        tg_quantity_text(want, a, sizeof(a));
        tg_quantity_text(max, b, sizeof(b));
        tg_quantity_text(want - max, c, sizeof(c));
        snprintf(why, why_len, "%.64s: %s asked, at most %s per slice (%s over)", name, a, b, c);
        return -1;
    }
    if (member_milli(tg_json_path(policy, "maxPerTenant", NULL), name, &max, &present) != 0 ||
        member_milli(others, name, &other, &other_present) != 0)
        return snprintf(why, why_len, "the class policy's maxPerTenant.%.64s or an accepted slice's %.64s is "
                        "not a quantity", name, name), -1;
    if (other < 0)
        other = 0;   /* a negative sum never makes room (hostile status, or a slice from before the check) */
    if (present && other + want > max) {
        tg_quantity_text(want, a, sizeof(a));
        tg_quantity_text(other, b, sizeof(b));
        tg_quantity_text(max, c, sizeof(c));
        tg_quantity_text(other + want - max, d, sizeof(d));
        snprintf(why, why_len, "%.64s: %s asked with %s already granted to this consumer, at most %s per consumer "
                 "(%s over)", name, a, b, c, d);
        return -1;
    }
    return 0;
}

/* One "name=quantity" chunk of --default-node-resources into out. */
static int default_chunk(const char *chunk, size_t len, json_object *out, char *err, size_t err_len)
{
    const char *eq = memchr(chunk, '=', len);
    char name[254], value[65];
    __int128 m;

    if (!eq || memchr(eq + 1, '=', len - (size_t)(eq + 1 - chunk)) || eq == chunk)
        return snprintf(err, err_len, "expected name=quantity, found \"%.*s\"", (int)(len > 64 ? 64 : len), chunk),
               -1;
    if ((size_t)(eq - chunk) >= sizeof(name) || len - (size_t)(eq + 1 - chunk) >= sizeof(value))
        return snprintf(err, err_len, "\"%.64s...\": name or quantity too long", chunk), -1;
    snprintf(name, sizeof(name), "%.*s", (int)(eq - chunk), chunk);
    snprintf(value, sizeof(value), "%.*s", (int)(len - (size_t)(eq + 1 - chunk)), eq + 1);
    if (tg_quantity_milli(value, &m) != 0 || m <= 0)
        return snprintf(err, err_len, "%.64s: expected a quantity greater than 0 (4, 500m, 8Gi), found \"%s\"",
                        name, value), -1;
    json_object_object_add(out, name, json_object_new_string(value));
    return 0;
}

json_object *tg_slice_defaults_parse(const char *flag, char *err, size_t err_len)
{
    json_object *out = json_object_new_object();
    const char *p = flag ? flag : "";

    while (*p) {
        size_t len = strcspn(p, ",");
        if (default_chunk(p, len, out, err, err_len) != 0) {
            json_object_put(out);
            return NULL;
        }
        p += len;
        if (*p == ',' && !*++p) {
            snprintf(err, err_len, "expected name=quantity after the last \",\", found nothing");
            json_object_put(out);
            return NULL;
        }
    }
    return out;
}

int tg_slice_resources_decide(json_object *defaults, json_object *request, json_object *policy, json_object *others,
                              json_object **granted, char *why, size_t why_len)
{
    json_object *g = json_object_new_object();
    __int128 m;
    int present;

    *granted = NULL;
    if (tg_slice_request_nonpositive(request, why, why_len)) {
        json_object_put(g);
        return -1;
    }
    if (defaults) {
        json_object_object_foreach(defaults, dname, dvalue)
            json_object_object_add(g, dname, json_object_get(dvalue));
    } else {
        for (size_t i = 0; i < sizeof(chart_defaults) / sizeof(chart_defaults[0]); i++)
            json_object_object_add(g, chart_defaults[i].name, json_object_new_string(chart_defaults[i].value));
    }
    if (request && json_object_is_type(request, json_type_object)) {
        json_object_object_foreach(request, name, value) {
            if (member_milli(request, name, &m, &present) != 0) {
                snprintf(why, why_len, "spec.resources.%.64s: expected a quantity", name);
                goto fail;
            }
            json_object_object_add(g, name, json_object_get(value));
        }
    }
    json_object_object_foreach(g, gname, gvalue) {
        (void)gvalue;
        if (member_milli(g, gname, &m, &present) != 0 || check_limit(gname, m, policy, others, why, why_len) != 0)
            goto fail;
    }
    *granted = g;
    return 0;
fail:
    json_object_put(g);
    return -1;
}

int tg_slice_request_nonpositive(json_object *request, char *why, size_t why_len)
{
    __int128 m;
    int present;

    if (!request || !json_object_is_type(request, json_type_object))
        return 0;
    json_object_object_foreach(request, name, value) {
        /* below a thousandth ("1n") rounds to 0: too small to grant, refused too */
        if (member_milli(request, name, &m, &present) == 0 && m <= 0) {
            snprintf(why, why_len, "spec.resources.%.64s: %.64s asked, expected a quantity greater than 0", name,
                     json_object_get_string(value));
            return 1;
        }
    }
    return 0;
}

int tg_slice_resources_add(json_object *others, json_object *add)
{
    char text[64];
    __int128 a, b;
    int present, rc = 0;

    if (!add || !json_object_is_type(add, json_type_object))
        return 0;
    json_object_object_foreach(add, name, value) {
        (void)value;
        if (member_milli(add, name, &a, &present) != 0 || member_milli(others, name, &b, &present) != 0) {
            rc = -1;
            continue;
        }
        if (a < 0)
            a = 0;   /* never lowers the total */
        tg_quantity_text(a + b, text, sizeof(text));
        json_object_object_add(others, name, json_object_new_string(text));
    }
    return rc;
}

int tg_slice_resources_verdict(const tg_slice_provider *prov, const char *class_, tg_slice_tenant_state tenant,
                               const char *cur_status,
                               json_object *request, json_object *policy, json_object *others,
                               json_object **granted, char *reason, size_t reason_len, char *why, size_t why_len)
{
    *granted = NULL;
    if (class_ && *class_ && strcmp(class_, "default") != 0)
        return 0;   /* another class: its own controller decides (Liqo) */
    if (tenant == TG_SLICE_T_DRAINED) {
        snprintf(reason, reason_len, "%s", TG_RES_DENY_DRAINED);
        snprintf(why, why_len, "the consumer's Tenant is Drained");
        return -1;
    }
    if (tenant == TG_SLICE_T_CORDONED) {
        if (cur_status && *cur_status)
            return 0;   /* decided before the cordon: it stays (Liqo) */
        snprintf(reason, reason_len, "%s", TG_RES_DENY_CORDONED);
        snprintf(why, why_len, "the consumer's Tenant is Cordoned: no new slices");
        return -1;
    }
    if (prov && prov->default_class_disabled) {
        /* Liqo's reason and words (its remoteresourceslice controller), then what was expected */
        snprintf(reason, reason_len, "%s", TG_RES_DENY_CLASS_DISABLED);
        snprintf(why, why_len, "the default ResourceSlice class has been administratively disabled on the provider: "
                 "expected a class the provider offers in spec.class, found %s", class_ && *class_ ? "\"default\"" : "none");
        return -1;
    }
    if (tg_slice_request_nonpositive(request, why, why_len)) {
        snprintf(reason, reason_len, "%s", TG_RES_DENY_QUANTITY);
        return -1;
    }
    if (tg_slice_resources_decide(prov ? prov->defaults : NULL, request, policy, others, granted, why, why_len) != 0) {
        snprintf(reason, reason_len, "%s", TG_RES_DENY_POLICY);
        return -1;
    }
    return 1;
}
