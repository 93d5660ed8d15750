/* slice_tenant_policy.c - see slice_tenant_policy.h. */
#include "pki/slice_tenant_policy.h"

#include <stdio.h>
#include <string.h>

#include "pki/quantity.h"

#define SHAPE "expected {\"classes\": [names], \"maxPerSlice\": {name: quantity}, \"maxPerTenant\": {...}}"

const char *tg_tenant_policy_reason(tg_tenant_policy_verdict v)
{
    switch (v) {
    case TG_TPOL_CLASS_NOT_ALLOWED: return "ClassNotAllowed";
    case TG_TPOL_EXCEEDED: return "TenantPolicyExceeded";
    case TG_TPOL_INVALID: return "TenantPolicyInvalid";
    case TG_TPOL_ALLOWED: break;
    }
    return "";
}

int tg_tenant_policy_key(const char *consumer, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s", TG_TENANT_POLICY_KEY_PREFIX, consumer ? consumer : "");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* o[name], or NULL. */
static json_object *member(json_object *o, const char *name)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, name, &v) ? v : NULL;
}

/* A quantity member (a string, or an integer as YAML writes "2"). 0, or -1. */
static int value_milli(json_object *v, __int128 *milli)
{
    char num[32];

    if (v && json_object_is_type(v, json_type_int)) {
        snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(v));
        return tg_quantity_milli(num, milli);
    }
    if (!v || !json_object_is_type(v, json_type_string))
        return -1;
    return tg_quantity_milli(json_object_get_string(v), milli);
}

/* A maximum: an object of quantities >= 0. */
static int valid_maxima(json_object *m, const char *member, char *why, size_t why_len)
{
    __int128 milli;

    if (!json_object_is_type(m, json_type_object))
        return snprintf(why, why_len, "%s: %s is not an object", SHAPE, member), -1;
    json_object_object_foreach(m, name, v) {
        if (value_milli(v, &milli) != 0 || milli < 0)
            return snprintf(why, why_len, "%s: %s.%.64s is not a quantity >= 0", SHAPE, member, name), -1;
    }
    return 0;
}

static int valid_classes(json_object *classes, char *why, size_t why_len)
{
    if (!json_object_is_type(classes, json_type_array))
        return snprintf(why, why_len, "%s: classes is not an array", SHAPE), -1;
    for (size_t i = 0; i < json_object_array_length(classes); i++) {
        json_object *c = json_object_array_get_idx(classes, i);
        if (!c || !json_object_is_type(c, json_type_string) || json_object_get_string_len(c) == 0 ||
            json_object_get_string_len(c) > TG_TENANT_POLICY_CLASS_MAX)
            return snprintf(why, why_len, "%s: classes[%zu] is not a class name", SHAPE, i), -1;
    }
    return 0;
}

/* One member of an entry: a known one, well formed. */
static int valid_member(const char *k, json_object *v, char *why, size_t why_len)
{
    if (strcmp(k, "classes") == 0)
        return valid_classes(v, why, why_len);
    if (strcmp(k, "maxPerSlice") == 0 || strcmp(k, "maxPerTenant") == 0)
        return valid_maxima(v, k, why, why_len);
    return snprintf(why, why_len, "%s, found member \"%.64s\"", SHAPE, k), -1;
}

/* The entry's text as an object of known members only; NULL with why. */
static json_object *parse_entry(const char *entry, char *why, size_t why_len)
{
    json_tokener *tok = json_tokener_new();
    size_t len = strlen(entry);
    json_object *o = tok ? json_tokener_parse_ex(tok, entry, (int)len) : NULL;
    int whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
                json_tokener_get_parse_end(tok) == len;

    if (tok)
        json_tokener_free(tok);
    if (!o || !whole || !json_object_is_type(o, json_type_object)) {
        snprintf(why, why_len, "%s, found %s", SHAPE, o && whole ? "another JSON value" : "no JSON");
        json_object_put(o);
        return NULL;
    }
    json_object_object_foreach(o, k, v) {
        if (valid_member(k, v, why, why_len) != 0) {
            json_object_put(o);
            return NULL;
        }
    }
    return o;
}

static tg_tenant_policy_verdict check_class(json_object *classes, const char *class_, char *why, size_t why_len)
{
    char allowed[256] = "";
    size_t used = 0;

    if (!classes)
        return TG_TPOL_ALLOWED;
    for (size_t i = 0; i < json_object_array_length(classes); i++) {
        const char *c = json_object_get_string(json_object_array_get_idx(classes, i));
        if (strcmp(c, class_) == 0)
            return TG_TPOL_ALLOWED;
        if (used < sizeof(allowed))
            used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s\"%s\"", i ? ", " : "", c);
    }
    snprintf(why, why_len, "spec.class: expected a class this consumer may use [%s], found \"%.64s\"", allowed,
             class_);
    return TG_TPOL_CLASS_NOT_ALLOWED;
}

/* One resource of the slice against both maxima. */
static tg_tenant_policy_verdict check_resource(json_object *e, const char *name, json_object *value,
                                               json_object *others, char *why, size_t why_len)
{
    json_object *max_v = NULL, *other_v = NULL;
    __int128 want, max, other = 0;
    char a[48], b[48], c[48], d[48];

    if (value_milli(value, &want) != 0)
        return snprintf(why, why_len, "%.64s: expected a quantity", name), TG_TPOL_EXCEEDED;
    tg_quantity_text(want, a, sizeof(a));
    if (json_object_object_get_ex(member(e, "maxPerSlice"), name, &max_v) && value_milli(max_v, &max) == 0 &&
        want > max) {
        tg_quantity_text(max, b, sizeof(b));
        tg_quantity_text(want - max, c, sizeof(c));
        snprintf(why, why_len, "%.64s: %s asked, at most %s per slice for this consumer (%s over)", name, a, b, c);
        return TG_TPOL_EXCEEDED;
    }
    if (!others || !json_object_object_get_ex(member(e, "maxPerTenant"), name, &max_v) ||
        value_milli(max_v, &max) != 0)
        return TG_TPOL_ALLOWED;
    if (json_object_object_get_ex(others, name, &other_v) && (value_milli(other_v, &other) != 0 || other < 0))
        other = 0;   /* as the class policy: a negative sum counts as 0 */
    if (other + want > max) {
        tg_quantity_text(other, b, sizeof(b));
        tg_quantity_text(max, c, sizeof(c));
        tg_quantity_text(other + want - max, d, sizeof(d));
        snprintf(why, why_len, "%.64s: %s asked with %s already granted to this consumer, at most %s per consumer "
                 "(%s over)", name, a, b, c, d);
        return TG_TPOL_EXCEEDED;
    }
    return TG_TPOL_ALLOWED;
}

tg_tenant_policy_verdict tg_tenant_policy_check(const char *entry, const char *class_, json_object *resources,
                                                json_object *others, char *why, size_t why_len)
{
    json_object *e;
    tg_tenant_policy_verdict v;

    if (!entry)
        return TG_TPOL_ALLOWED;
    if (!(e = parse_entry(entry, why, why_len)))
        return TG_TPOL_INVALID;
    v = check_class(member(e, "classes"), class_ && *class_ ? class_ : "default", why, why_len);
    if (v == TG_TPOL_ALLOWED && resources && json_object_is_type(resources, json_type_object)) {
        json_object_object_foreach(resources, name, value) {
            if ((v = check_resource(e, name, value, others, why, why_len)) != TG_TPOL_ALLOWED)
                break;
        }
    }
    json_object_put(e);
    return v;
}
