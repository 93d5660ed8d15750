/* quantity.c - see quantity.h. */
#include "pki/quantity.h"

#include <stdio.h>
#include <string.h>

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
