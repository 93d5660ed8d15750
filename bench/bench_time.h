/* bench_time.h - what the bench drivers share: this thread's CPU time (what
 * `openssl speed` counts too: on a shared machine wall time would mostly
 * measure the neighbours) and sorting of samples for their median. */
#ifndef TG_BENCH_TIME_H
#define TG_BENCH_TIME_H

/* Seconds of CPU this thread has used. */
double tg_bench_cpu_seconds(void);

/* qsort comparison of two doubles, ascending. */
int tg_bench_cmp_double(const void *a, const void *b);

#endif
