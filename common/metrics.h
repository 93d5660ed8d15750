/* metrics.h - a Prometheus registry: counters, gauges and histograms with
 * label sets, rendered in the text exposition format (version 0.0.4).
 *
 * Registration happens at start-up (one thread). After that, any thread may
 * look up a series (a family plus label values: a short mutex-protected
 * search, creating the series on first use) and update it with atomics; keep
 * the returned series pointer to skip the search on hot paths. Series live as
 * long as the registry. */
#ifndef TG_COMMON_METRICS_H
#define TG_COMMON_METRICS_H

#include <stddef.h>

typedef struct tg_metrics tg_metrics;
typedef struct tg_metric_family tg_metric_family;
typedef struct tg_metric_series tg_metric_series;

#define TG_METRICS_MAX_LABELS 4
#define TG_METRICS_MAX_BUCKETS 24

tg_metrics *tg_metrics_new(void);
void tg_metrics_free(tg_metrics *m);

/* name: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: [a-zA-Z_][a-zA-Z0-9_]*, at most
 * TG_METRICS_MAX_LABELS. NULL on a bad name or duplicate family. */
tg_metric_family *tg_metrics_counter(tg_metrics *m, const char *name, const char *help,
                                     size_t nlabels, const char *const *label_names);
tg_metric_family *tg_metrics_gauge(tg_metrics *m, const char *name, const char *help,
                                   size_t nlabels, const char *const *label_names);
/* bounds: strictly increasing upper bounds; +Inf is implied. */
tg_metric_family *tg_metrics_histogram(tg_metrics *m, const char *name, const char *help,
                                       size_t nlabels, const char *const *label_names,
                                       size_t nbounds, const double *bounds);

/* The series for these label values (nlabels of them, as registered), created
 * on first use. NULL only when out of memory. */
tg_metric_series *tg_metric_series_get(tg_metric_family *f, const char *const *label_values);

void tg_counter_add(tg_metric_series *s, double v);   /* v >= 0; negatives ignored */
/* A counter that mirrors a count kept elsewhere (an informer's failures):
 * raise the series to total. A lower total is ignored, so the series never
 * goes down. One writer per series. */
void tg_counter_raise(tg_metric_series *s, double total);
void tg_gauge_set(tg_metric_series *s, double v);
void tg_gauge_add(tg_metric_series *s, double v);
void tg_histogram_observe(tg_metric_series *s, double v);

/* Read back (for tests and for readiness logic). */
double tg_metric_value(tg_metric_series *s);          /* counter/gauge value; histogram sum */
unsigned long long tg_histogram_count(tg_metric_series *s);

/* Text exposition of every family, in registration order; series in creation
 * order. malloc'd NUL-terminated text, *len excludes the NUL; NULL on ENOMEM. */
char *tg_metrics_render(tg_metrics *m, size_t *len);

#define TG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
