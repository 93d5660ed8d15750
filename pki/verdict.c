/* verdict.c - reason names and statuses (reasons.def) and one-line denial messages. */
#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int status;
} reasons[TG_REASON_COUNT] = {
#define TG_REASON(id, name, status, web, auth, signer, meaning) TG_REASON_IF_##web##signer([TG_##id] = {name, status}, )
#include "pki/reasons.def"
#undef TG_REASON
};

const char *tg_reason_name(tg_reason r)
{
    return (unsigned)r < TG_REASON_COUNT ? reasons[r].name : "Unknown";
}

int tg_reason_status(tg_reason r)
{
    return (unsigned)r < TG_REASON_COUNT ? reasons[r].status : 500;
}

void tg_verdict_init(tg_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->reason = TG_ACCEPTED;
    v->code = 200;
}

static int verdict_vdeny(tg_verdict *v, int code, tg_reason r, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int verdict_vdeny(tg_verdict *v, int code, tg_reason r, const char *fmt, va_list ap)
{
    v->reason = r;
    v->code = code;
    vsnprintf(v->message, sizeof(v->message), fmt, ap);
    /* A denial is shown by kubectl and written to logs: keep it on one line and
     * free of terminal control characters whatever the Tenant contained. */
    for (char *p = v->message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return -1;
}

int tg_verdict_deny(tg_verdict *v, tg_reason r, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    /* a condition reason (status 0) is no HTTP answer: a refusal all the same */
    rc = verdict_vdeny(v, tg_reason_status(r) >= 400 ? tg_reason_status(r) : 400, r, fmt, ap);
    va_end(ap);
    return rc;
}

int tg_verdict_deny_code(tg_verdict *v, int code, tg_reason r, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = verdict_vdeny(v, code, r, fmt, ap);
    va_end(ap);
    return rc;
}
