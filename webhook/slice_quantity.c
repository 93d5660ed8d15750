/* slice_quantity.c - see slice_quantity.h. */
#include "slice_quantity.h"

#include <stdio.h>
#include <string.h>

#define TEXT_MAX 64
#define DIGITS_MAX 30
#define EXP_DIGITS_MAX 3
/* Powers of ten of the range: [10^-9, 10^27). */
#define LEAD_MIN (-9)
#define LEAD_MAX 26

/* Decimal suffixes (power of ten) and binary ones (power of two). */
static const struct {
    const char *s;
    int exp10, exp2;
} suffixes[] = {{"", 0, 0},   {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
                {"G", 9, 0},  {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
                {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}};

/* The mantissa: digits with one optional point. *lead is the power of ten
 * of its first non-zero digit (set only when *nonzero), *ndigits counts all. */
static const char *mantissa(const char *p, int *lead, int *nonzero, int *ndigits)
{
    int whole = 0, first_whole = -1, frac = 0;

    for (; *p >= '0' && *p <= '9'; p++, whole++)
        if (*p != '0' && first_whole < 0)
            first_whole = whole;
    if (first_whole >= 0) {
        *nonzero = 1;
        *lead = whole - 1 - first_whole;
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) {
            frac++;
            if (*p != '0' && !*nonzero) {
                *nonzero = 1;
                *lead = -frac;
            }
        }
    *ndigits = whole + frac;
    return p;
}

/* The suffix or exponent after the mantissa: its power of ten (a binary
 * suffix's rounded down). -1 when it is neither. */
static int suffix_exp10(const char *p, int *exp10)
{
    /* The suffixes first: "1E" and "1Ei" are exa and exbi, "1E3" an exponent. */
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(p, suffixes[i].s) == 0) {
            /* 2^(10k) is 10^(3k) times at most 1.16: near enough for a range. */
            *exp10 = suffixes[i].exp10 + suffixes[i].exp2 * 3 / 10;
            return 0;
        }
    if (*p == 'e' || *p == 'E') {
        int neg = 0, n = 0, v = 0;

        p++;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        for (; *p >= '0' && *p <= '9'; p++, n++)
            if (n < EXP_DIGITS_MAX)
                v = v * 10 + (*p - '0');
        if (n == 0 || n > EXP_DIGITS_MAX || *p)
            return -1;
        *exp10 = neg ? -v : v;
        return 0;
    }
    return -1;
}

tg_quantity_class tg_quantity_classify(const char *text)
{
    const char *p = text;
    int neg = 0, lead = 0, nonzero = 0, ndigits = 0, exp10 = 0;

    if (!text || !*text || strlen(text) > TEXT_MAX)
        return TG_QUANTITY_MALFORMED;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    p = mantissa(p, &lead, &nonzero, &ndigits);
    if (ndigits == 0 || ndigits > DIGITS_MAX || suffix_exp10(p, &exp10) != 0)
        return TG_QUANTITY_MALFORMED;
    if (!nonzero)
        return TG_QUANTITY_ZERO;
    if (neg)
        return TG_QUANTITY_NEGATIVE;
    if (lead + exp10 < LEAD_MIN || lead + exp10 > LEAD_MAX)
        return TG_QUANTITY_OUT_OF_RANGE;
    return TG_QUANTITY_POSITIVE;
}

static const char *class_text(tg_quantity_class c)
{
    switch (c) {
    case TG_QUANTITY_ZERO:
        return "zero";
    case TG_QUANTITY_NEGATIVE:
        return "a negative quantity";
    case TG_QUANTITY_OUT_OF_RANGE:
        return "a quantity out of range";
    default:
        return "no quantity";
    }
}

/* One member of spec.resources: a string or an integer (int-or-string). */
static int check_member(const char *name, json_object *val, tg_verdict *v)
{
    char num[32];
    const char *text = NULL;
    tg_quantity_class c = TG_QUANTITY_MALFORMED;

    if (val && json_object_is_type(val, json_type_int)) {
        snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(val));
        text = num;
    } else if (val && json_object_is_type(val, json_type_string)) {
        text = json_object_get_string(val);
    }
    if (text)
        c = tg_quantity_classify(text);
    if (c == TG_QUANTITY_POSITIVE)
        return 0;
    return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                           "spec.resources.%.63s: expected a positive quantity from 1n to below 1e27 "
                           "(such as 4, 500m or 8Gi), found %s%s%.64s%s",
                           name, class_text(c), text ? " \"" : "", text ? text : "", text ? "\"" : "");
}

int tg_slice_quantities_check(json_object *resources, tg_verdict *v)
{
    if (!resources)
        return 0;
    if (!json_object_is_type(resources, json_type_object))
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                               "spec.resources: expected an object of quantities, found %s",
                               json_type_to_name(json_object_get_type(resources)));
    json_object_object_foreach(resources, name, val)
    {
        if (check_member(name, val, v) != 0)
            return -1;
    }
    return 0;
}
