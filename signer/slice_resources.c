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

/* No real quantity comes near: keeps every sum and product far from overflow. */
#define MILLI_MAX ((__int128)1 << 100)
/* the largest intermediate of tg_quantity_milli: __int128 holds 2^127 - 1 */
#define QUANTITY_STEP_MAX ((__int128)1 << 126)

static const char *digits(const char *p, __int128 *v, int *n, int *frac, int in_frac)
{
    while (*p >= '0' && *p <= '9') {
        if (*v < MILLI_MAX)
            *v = *v * 10 + (*p - '0');
        (*n)++;
        if (in_frac)
            (*frac)++;
        p++;
    }
    return p;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static __int128 pow10i(int e)
{
    __int128 r = 1;
    while (e-- > 0 && r < MILLI_MAX)
        r *= 10;
    return r;
}

int tg_quantity_milli(const char *q, __int128 *milli)
{
    static const struct {
        const char *s;
        int shift10, exp10;        /* binary: 2^shift10; decimal: 10^exp10 (from -9) */
    } suffixes[] = {{"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0}, {"Ei", 60, 0},
                    {"n", 0, -9},  {"u", 0, -6},  {"m", 0, -3},  {"k", 0, 3},   {"M", 0, 6},   {"G", 0, 9},
                    {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18},  {"", 0, 0}};
    const char *p = q;
    __int128 mant = 0;
    int neg = 0, n = 0, frac = 0, exp10 = 0, shift = 0;

    if (!q || !*q || strlen(q) > 64)
        return -1;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    p = digits(p, &mant, &n, &frac, 0);
    if (*p == '.')
        p = digits(p + 1, &mant, &n, &frac, 1);
    if (n == 0 || n > 30)
        return -1;
    /* "E" and "Ei" are suffixes (exa, exbi); an exponent has digits after it */
    if ((*p == 'e' || *p == 'E') && (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
        int eneg = 0, en = 0, ev = 0;
        p++;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        for (; *p >= '0' && *p <= '9' && en < 3; p++, en++)
            ev = ev * 10 + (*p - '0');
        if (en == 0 || *p)
            return -1;
        exp10 = eneg ? -ev : ev;
    } else {
        size_t i = 0;
        for (; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
            if (strcmp(p, suffixes[i].s) == 0)
                break;
        if (i == sizeof(suffixes) / sizeof(suffixes[0]))
            return -1;
        shift = suffixes[i].shift10;
        exp10 = suffixes[i].exp10;
    }
    /* Zeros ending the fraction carry no value: dropped, "1.000000Ei" keeps
     * its mantissa small for the steps below. */
    while (frac > 0 && mant % 10 == 0)
        mant /= 10, frac--;
    /* value = mant * 10^(exp10 - frac) * 2^shift, in thousandths: +3. */
    exp10 += 3 - frac;
    if (exp10 > 30 || exp10 < -30)
        return -1;
    /* A 30-digit mantissa times 2^60 or 10^30 overflows __int128: refuse a
     * step that would, before taking it. What it refuses is far above
     * MILLI_MAX or more digits of precision than any quantity needs. */
    if (mant > (QUANTITY_STEP_MAX >> shift))
        return -1;
    mant <<= shift;
    if (exp10 >= 0) {
        __int128 scale = pow10i(exp10);
        if (mant > QUANTITY_STEP_MAX / scale)
            return -1;
        mant *= scale;
    } else {
        mant /= pow10i(-exp10);      /* below a thousandth: rounded down, as sums go */
    }
    if (mant > MILLI_MAX)
        return -1;
    *milli = neg ? -mant : mant;
    return 0;
}

void tg_quantity_text(__int128 milli, char *buf, size_t len)
{
    char digits_buf[64];
    int i = (int)sizeof(digits_buf) - 1, neg = milli < 0, whole = milli % 1000 == 0;
    __int128 v = neg ? -milli : milli;
    const char *unit = whole ? "" : "m";

    if (whole)
        v /= 1000;
    /* Memory-sized values read better in Gi/Mi (no cpu or pod count is a
     * multiple of 2^20). */
    if (whole && v >= ((__int128)1 << 30) && v % ((__int128)1 << 30) == 0)
        v >>= 30, unit = "Gi";
    else if (whole && v >= ((__int128)1 << 20) && v % ((__int128)1 << 20) == 0)
        v >>= 20, unit = "Mi";
    digits_buf[i] = '\0';
    do {
        digits_buf[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v > 0 && i > 1);
    snprintf(buf, len, "%s%s%s", neg ? "-" : "", digits_buf + i, unit);
}

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
