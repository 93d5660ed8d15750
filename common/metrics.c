/* metrics.c - Prometheus registry and text exposition. */
#include "metrics.h"
#include "strbuf.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum family_type { FAMILY_COUNTER, FAMILY_GAUGE, FAMILY_HISTOGRAM } family_type;

struct tg_metric_series {
    tg_metric_series *next;
    tg_metric_family *family;
    char *label_values[TG_METRICS_MAX_LABELS];
    _Atomic uint64_t value_bits;              /* double: counter/gauge value, histogram sum */
    _Atomic unsigned long long count;         /* histogram observations */
    /* A histogram's nbounds + 1 (the last is +Inf), not cumulative; none for
     * a counter or gauge: a series a Tenant (the certificate expiry) costs
     * 70 bytes instead of 260. */
    _Atomic unsigned long long buckets[];
};

struct tg_metric_family {
    tg_metric_family *next;
    family_type type;
    char *name;
    char *help;
    size_t nlabels;
    char *label_names[TG_METRICS_MAX_LABELS];
    size_t nbounds;
    double bounds[TG_METRICS_MAX_BUCKETS];
    pthread_mutex_t lock;                     /* guards the series list */
    tg_metric_series *series, **series_tail;
};

struct tg_metrics {
    pthread_mutex_t lock;                     /* guards the family list */
    tg_metric_family *families, **families_tail;
};

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static void atomic_add_double(_Atomic uint64_t *bits, double v)
{
    uint64_t old = atomic_load_explicit(bits, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(bits, &old, double_bits(bits_double(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

static int name_valid(const char *s, int allow_colon)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (allow_colon && c == ':') || (p != s && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

tg_metrics *tg_metrics_new(void)
{
    tg_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->lock, NULL);
    m->families_tail = &m->families;
    return m;
}

static void family_free(tg_metric_family *f)
{
    tg_metric_series *s, *next;

    for (s = f->series; s; s = next) {
        next = s->next;
        for (size_t i = 0; i < f->nlabels; i++)
            free(s->label_values[i]);
        free(s);
    }
    for (size_t i = 0; i < f->nlabels; i++)
        free(f->label_names[i]);
    free(f->name);
    free(f->help);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

void tg_metrics_free(tg_metrics *m)
{
    tg_metric_family *f, *next;

    if (!m)
        return;
    for (f = m->families; f; f = next) {
        next = f->next;
        family_free(f);
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static tg_metric_family *family_add(tg_metrics *m, family_type type, const char *name,
                                    const char *help, size_t nlabels,
                                    const char *const *label_names, size_t nbounds,
                                    const double *bounds)
{
    tg_metric_family *f;

    if (!name_valid(name, 1) || nlabels > TG_METRICS_MAX_LABELS || nbounds > TG_METRICS_MAX_BUCKETS)
        return NULL;
    for (size_t i = 0; i < nlabels; i++)
        if (!name_valid(label_names[i], 0) || strncmp(label_names[i], "__", 2) == 0 ||
            (type == FAMILY_HISTOGRAM && strcmp(label_names[i], "le") == 0))
            return NULL;
    for (size_t i = 0; i < nbounds; i++)
        if (isnan(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
            return NULL;

    f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    pthread_mutex_init(&f->lock, NULL);
    f->series_tail = &f->series;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    f->nlabels = nlabels;
    for (size_t i = 0; i < nlabels; i++)
        if (!(f->label_names[i] = strdup(label_names[i])))
            goto fail;
    /* a +Inf bound given explicitly is the implied one */
    if (nbounds > 0 && isinf(bounds[nbounds - 1]))
        nbounds--;
    f->nbounds = nbounds;
    if (nbounds)
        memcpy(f->bounds, bounds, nbounds * sizeof(double));
    if (!f->name || !f->help)
        goto fail;

    pthread_mutex_lock(&m->lock);
    for (tg_metric_family *g = m->families; g; g = g->next)
        if (strcmp(g->name, name) == 0) {
            pthread_mutex_unlock(&m->lock);
            family_free(f);
            return NULL;
        }
    *m->families_tail = f;
    m->families_tail = &f->next;
    pthread_mutex_unlock(&m->lock);
    return f;

fail:
    family_free(f);
    return NULL;
}

tg_metric_family *tg_metrics_counter(tg_metrics *m, const char *name, const char *help,
                                     size_t nlabels, const char *const *label_names)
{
    return family_add(m, FAMILY_COUNTER, name, help, nlabels, label_names, 0, NULL);
}

tg_metric_family *tg_metrics_gauge(tg_metrics *m, const char *name, const char *help,
                                   size_t nlabels, const char *const *label_names)
{
    return family_add(m, FAMILY_GAUGE, name, help, nlabels, label_names, 0, NULL);
}

tg_metric_family *tg_metrics_histogram(tg_metrics *m, const char *name, const char *help,
                                       size_t nlabels, const char *const *label_names,
                                       size_t nbounds, const double *bounds)
{
    return family_add(m, FAMILY_HISTOGRAM, name, help, nlabels, label_names, nbounds, bounds);
}

static int series_matches(const tg_metric_series *s, size_t n, const char *const *values)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s->label_values[i], values[i] ? values[i] : "") != 0)
            return 0;
    return 1;
}

tg_metric_series *tg_metric_series_get(tg_metric_family *f, const char *const *label_values)
{
    tg_metric_series *s;

    pthread_mutex_lock(&f->lock);
    for (s = f->series; s; s = s->next)
        if (series_matches(s, f->nlabels, label_values))
            goto out;
    s = calloc(1, sizeof(*s) + (f->type == FAMILY_HISTOGRAM ? f->nbounds + 1 : 0) * sizeof(s->buckets[0]));
    if (!s)
        goto out;
    s->family = f;
    for (size_t i = 0; i < f->nlabels; i++)
        if (!(s->label_values[i] = strdup(label_values[i] ? label_values[i] : ""))) {
            for (size_t j = 0; j < i; j++)
                free(s->label_values[j]);
            free(s);
            s = NULL;
            goto out;
        }
    *f->series_tail = s;
    f->series_tail = &s->next;
out:
    pthread_mutex_unlock(&f->lock);
    return s;
}

void tg_counter_add(tg_metric_series *s, double v)
{
    if (s && v > 0)
        atomic_add_double(&s->value_bits, v);
}

void tg_counter_raise(tg_metric_series *s, double total)
{
    if (s)
        tg_counter_add(s, total - tg_metric_value(s));
}

void tg_gauge_set(tg_metric_series *s, double v)
{
    if (s)
        atomic_store_explicit(&s->value_bits, double_bits(v), memory_order_relaxed);
}

void tg_gauge_add(tg_metric_series *s, double v)
{
    if (s)
        atomic_add_double(&s->value_bits, v);
}

void tg_histogram_observe(tg_metric_series *s, double v)
{
    size_t i;

    if (!s || isnan(v) || s->family->type != FAMILY_HISTOGRAM)
        return;   /* a counter's or gauge's series has no buckets */
    for (i = 0; i < s->family->nbounds; i++)
        if (v <= s->family->bounds[i])
            break;
    /* i == nbounds is the +Inf bucket */
    atomic_fetch_add_explicit(&s->buckets[i], 1, memory_order_relaxed);
    atomic_add_double(&s->value_bits, v);
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
}

double tg_metric_value(tg_metric_series *s)
{
    return bits_double(atomic_load_explicit(&s->value_bits, memory_order_relaxed));
}

unsigned long long tg_histogram_count(tg_metric_series *s)
{
    return atomic_load_explicit(&s->count, memory_order_relaxed);
}

/* ---- rendering ---- */

typedef tg_strbuf sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) { tg_strbuf_put(b, s, n); }
static void sb_str(sbuf *b, const char *s) { tg_strbuf_str(b, s); }

/* HELP text escapes \ and newline; label values also escape the double quote. */
static void sb_escaped(sbuf *b, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            sb_put(b, "\\\\", 2);
        else if (*s == '\n')
            sb_put(b, "\\n", 2);
        else if (quote && *s == '"')
            sb_put(b, "\\\"", 2);
        else
            sb_put(b, s, 1);
    }
}

/* Shortest text that reads back as the same double; Prometheus spellings for
 * the special values. */
static void sb_number(sbuf *b, double v)
{
    char tmp[40];

    if (isnan(v)) {
        sb_str(b, "NaN");
        return;
    }
    if (isinf(v)) {
        sb_str(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(tmp, sizeof(tmp), "%.0f", v);   /* 10, not 1e+01 */
        sb_str(b, tmp);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    sb_str(b, tmp);
}

static void sb_labels(sbuf *b, const tg_metric_family *f, const tg_metric_series *s,
                      const char *le)
{
    int first = 1;

    if (f->nlabels == 0 && !le)
        return;
    sb_put(b, "{", 1);
    for (size_t i = 0; i < f->nlabels; i++) {
        if (!first)
            sb_put(b, ",", 1);
        first = 0;
        sb_str(b, f->label_names[i]);
        sb_put(b, "=\"", 2);
        sb_escaped(b, s->label_values[i], 1);
        sb_put(b, "\"", 1);
    }
    if (le) {
        if (!first)
            sb_put(b, ",", 1);
        sb_put(b, "le=\"", 4);
        sb_str(b, le);
        sb_put(b, "\"", 1);
    }
    sb_put(b, "}", 1);
}

static void render_series(sbuf *b, const tg_metric_family *f, tg_metric_series *s)
{
    if (f->type != FAMILY_HISTOGRAM) {
        sb_str(b, f->name);
        sb_labels(b, f, s, NULL);
        sb_put(b, " ", 1);
        sb_number(b, tg_metric_value(s));
        sb_put(b, "\n", 1);
        return;
    }

    /* Buckets are cumulative in the exposition. Reads are not one atomic
     * snapshot; the count is taken from the buckets so +Inf == _count always. */
    unsigned long long cumulative = 0;
    for (size_t i = 0; i <= f->nbounds; i++) {
        sbuf le = {0};
        cumulative += atomic_load_explicit(&s->buckets[i], memory_order_relaxed);
        if (i < f->nbounds)
            sb_number(&le, f->bounds[i]);
        else
            sb_str(&le, "+Inf");
        sb_str(b, f->name);
        sb_str(b, "_bucket");
        sb_labels(b, f, s, le.oom ? "?" : le.p);
        free(le.p);
        sb_put(b, " ", 1);
        sb_number(b, (double)cumulative);
        sb_put(b, "\n", 1);
    }
    sb_str(b, f->name);
    sb_str(b, "_sum");
    sb_labels(b, f, s, NULL);
    sb_put(b, " ", 1);
    sb_number(b, tg_metric_value(s));
    sb_put(b, "\n", 1);
    sb_str(b, f->name);
    sb_str(b, "_count");
    sb_labels(b, f, s, NULL);
    sb_put(b, " ", 1);
    sb_number(b, (double)cumulative);
    sb_put(b, "\n", 1);
}

char *tg_metrics_render(tg_metrics *m, size_t *len)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};
    sbuf b = {0};

    sb_put(&b, "", 0);
    pthread_mutex_lock(&m->lock);
    for (tg_metric_family *f = m->families; f; f = f->next) {
        sb_str(&b, "# HELP ");
        sb_str(&b, f->name);
        sb_put(&b, " ", 1);
        sb_escaped(&b, f->help, 0);
        sb_str(&b, "\n# TYPE ");
        sb_str(&b, f->name);
        sb_put(&b, " ", 1);
        sb_str(&b, type_names[f->type]);
        sb_put(&b, "\n", 1);
        pthread_mutex_lock(&f->lock);
        for (tg_metric_series *s = f->series; s; s = s->next)
            render_series(&b, f, s);
        pthread_mutex_unlock(&f->lock);
    }
    pthread_mutex_unlock(&m->lock);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.p;
}
