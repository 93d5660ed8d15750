/* log_budget.c - see log_budget.h. */
#include "log_budget.h"

#include <string.h>

void tg_log_budget_init(tg_log_budget *b, uint64_t window_ms, uint32_t per_window)
{
    memset(b, 0, sizeof(*b));
    b->window_ms = window_ms;
    b->per_window = per_window;
}

int tg_log_budget_take(tg_log_budget *b, uint64_t now_ms, uint64_t *report)
{
    if (report)
        *report = 0;
    if (now_ms - b->window_start >= b->window_ms || now_ms < b->window_start) {
        b->window_start = now_ms;
        b->used = 0;
        if (report)
            *report = b->held;
        b->held = 0;
    }
    if (b->used < b->per_window) {
        b->used++;
        return 1;
    }
    b->held++;
    return 0;
}
