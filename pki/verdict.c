/* verdict.c - reason names and one-line denial messages. */
#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const reason_names[TG_REASON_COUNT] = {
    [TG_ACCEPTED] = "Accepted",
    [TG_MALFORMED_TENANT] = "MalformedTenant",
    [TG_WRONG_NAMESPACE] = "WrongNamespace",
    [TG_LABEL_MISMATCH] = "LabelMismatch",
    [TG_DUPLICATE] = "Duplicate",
    [TG_INVALID_CLUSTER_ID] = "InvalidClusterID",
    [TG_INVALID_PUBLIC_KEY] = "InvalidPublicKey",
    [TG_WEAK_KEY] = "WeakKey",
    [TG_NONCE_NOT_FOUND] = "NonceNotFound",
    [TG_SIGNATURE_VERIFICATION_FAILED] = "SignatureVerificationFailed",
    [TG_INVALID_CSR] = "InvalidCSR",
    [TG_CSR_FORBIDDEN_CONTENT] = "CSRForbiddenContent",
    [TG_CSR_SUBJECT_MISMATCH] = "CSRSubjectMismatch",
    [TG_CSR_PUBLIC_KEY_MISMATCH] = "CSRPublicKeyMismatch",
    [TG_NAME_MISMATCH] = "NameMismatch",
    [TG_MALFORMED_RESOURCE_SLICE] = "MalformedResourceSlice",
    [TG_SLICE_TENANT_NOT_FOUND] = "SliceTenantNotFound",
    [TG_SLICE_TENANT_DRAINED] = "SliceTenantDrained",
    [TG_FORBIDDEN_CHANGE] = "ForbiddenChange",
    [TG_SLICE_CLAIMS_LOCAL_CLUSTER] = "SliceClaimsLocalCluster",
    [TG_NAME_RESERVED] = "NameReserved",
    [TG_NAME_OWNED] = "NameOwned",
    [TG_NAME_BOUND] = "NameBound",
    [TG_NAME_REVOKED] = "NameRevoked",
    [TG_DEFAULT_SLICE_CLASS_DISABLED] = "DefaultResourceSliceClassDisabled",
    [TG_CLASS_NOT_ALLOWED] = "ClassNotAllowed",
    [TG_TENANT_POLICY_EXCEEDED] = "TenantPolicyExceeded",
    [TG_TENANT_POLICY_INVALID] = "TenantPolicyInvalid",
};

const char *tg_reason_name(tg_reason r)
{
    if ((unsigned)r >= TG_REASON_COUNT)
        return "Unknown";
    return reason_names[r];
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
    rc = verdict_vdeny(v, r == TG_DUPLICATE || r == TG_SLICE_TENANT_DRAINED || r == TG_FORBIDDEN_CHANGE ||
                                  r == TG_SLICE_CLAIMS_LOCAL_CLUSTER || r == TG_DEFAULT_SLICE_CLASS_DISABLED ||
                                  r == TG_CLASS_NOT_ALLOWED || r == TG_TENANT_POLICY_EXCEEDED ||
                                  r == TG_TENANT_POLICY_INVALID
                              ? 403
                              : 400,
                       r, fmt, ap);
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
