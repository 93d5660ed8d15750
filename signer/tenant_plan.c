/* tenant_plan.c - see tenant_plan.h. */
#include "signer/tenant_plan.h"

static int64_t denied_backoff(int denied)
{
    int64_t d = TG_DENIED_BACKOFF_S;
    int i;

    if (denied <= 1)
        return 0;
    for (i = 2; i < denied && d < TG_DENIED_BACKOFF_MAX_S; i++)
        d *= 2;
    return d < TG_DENIED_BACKOFF_MAX_S ? d : TG_DENIED_BACKOFF_MAX_S;
}

tg_tenant_action tg_tenant_plan(const tg_tenant_certs *in, int64_t *delay_s)
{
    int64_t left;

    *delay_s = 0;
    if (in->cur_present && in->cur_for_key && !in->cur_due)
        return TG_PLAN_KEEP;
    switch (in->csr) {
    case TG_CSR_PENDING:
        return TG_PLAN_WAIT;
    case TG_CSR_ISSUED:
        /* the one in status, or an older one for the same request (a key
         * rotated back), that is due: renew rather than publish it */
        return in->csr_cert_is_cur || in->csr_cert_due ? TG_PLAN_CREATE : TG_PLAN_PUBLISH;
    case TG_CSR_DENIED:
        left = denied_backoff(in->denied) - (in->denied_age_s > 0 ? in->denied_age_s : 0);
        if (left <= 0)
            return TG_PLAN_CREATE;
        *delay_s = left;
        return TG_PLAN_BACKOFF;
    case TG_CSR_NONE:
    default:
        return TG_PLAN_CREATE;
    }
}

const char *tg_tenant_action_name(tg_tenant_action a)
{
    switch (a) {
    case TG_PLAN_KEEP:
        return "keep";
    case TG_PLAN_PUBLISH:
        return "publish";
    case TG_PLAN_CREATE:
        return "create";
    case TG_PLAN_WAIT:
        return "wait";
    case TG_PLAN_BACKOFF:
        return "backoff";
    }
    return "?";
}
