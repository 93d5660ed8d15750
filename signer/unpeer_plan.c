/* unpeer_plan.c - see unpeer_plan.h. */
#include "signer/unpeer_plan.h"

int64_t tg_unpeer_wait_ms(time_t deleted_at, time_t now, size_t replicas_left)
{
    if (!replicas_left || deleted_at <= 0)
        return 0;
    /* A clock behind the API server's counts as "just deleted": still bounded,
     * since the deletion time does not move and now catches up. */
    if (now - deleted_at >= TG_UNPEER_GRACE_S)
        return 0;
    return TG_UNPEER_POLL_MS;
}
