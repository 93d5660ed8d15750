/* reason.c - see reason.h. */
#include "reason.h"

static const struct {
    const char *name;
    int status;
} reasons[TG_AUTH_REASON_COUNT] = {
#define TG_REASON(id, name, status, web, auth, signer, meaning) TG_AUTH_REASON_IF_##auth([TG_AUTH_##id] = {name, status}, )
#include "pki/reasons.def"
#undef TG_REASON
};

const char *tg_auth_reason_name(tg_auth_reason r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reasons[r].name : "Unknown";
}

int tg_auth_reason_status(tg_auth_reason r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reasons[r].status : 500;
}
