/* log_budget.h - at most N log lines per time window, and how many were
 * held back, so that hostile traffic (a flood of reviews that do not even
 * parse) cannot turn each request into a log line. Pure: the caller passes
 * the time; one budget per thread. */
#ifndef TG_WEBHOOK_LOG_BUDGET_H
#define TG_WEBHOOK_LOG_BUDGET_H

#include <stdint.h>

typedef struct tg_log_budget {
    uint64_t window_ms;            /* length of a window */
    uint32_t per_window;           /* lines allowed in one */
    uint64_t window_start;
    uint32_t used;                 /* lines in the current window */
    uint64_t held;                 /* lines held back since the last report */
} tg_log_budget;

void tg_log_budget_init(tg_log_budget *b, uint64_t window_ms, uint32_t per_window);

/* May a line be written at now_ms? 1, or 0 (counted as held back). When a
 * new window starts, *report gets the lines held back before it (0 when
 * none), for one summary line; report may be NULL. */
int tg_log_budget_take(tg_log_budget *b, uint64_t now_ms, uint64_t *report);

#endif
