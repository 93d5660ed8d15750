/* tenant_plan.h - what the Tenant controller does about a Tenant's
 * certificate (docs/PROTOCOL.md 6), as a pure decision over what it read: the
 * certificate in status and the CSRs made from the Tenant's current request.
 *
 * The certificate in status must certify the key the Tenant holds now: after
 * a key rotation (new publicKey, csr and signature admitted by the webhook)
 * the old key's certificate is replaced at once, not at its renewal point.
 * A denied CSR never blocks a Tenant for good: the controller makes a fresh
 * one, the first time at once, then with a growing delay so an approver that
 * keeps denying does not make it spin. */
#ifndef TG_SIGNER_TENANT_PLAN_H
#define TG_SIGNER_TENANT_PLAN_H

#include <stdint.h>

typedef enum tg_csr_state {
    TG_CSR_NONE = 0,     /* no CSR made from the current request */
    TG_CSR_PENDING,      /* the newest one is neither issued nor denied */
    TG_CSR_ISSUED,       /* the newest one has its certificate */
    TG_CSR_DENIED,       /* the newest one is Denied (or Failed) */
} tg_csr_state;

typedef struct tg_tenant_certs {
    int cur_present;       /* status.authParams.signedCRT is set */
    int cur_for_key;       /* ... and certifies the Tenant's current public key */
    int cur_due;           /* ... and is due for renewal (or does not parse) */
    tg_csr_state csr;      /* the newest CSR made from the Tenant's spec.csr */
    int csr_cert_is_cur;   /* its certificate is the one in status */
    int csr_cert_due;      /* its certificate is due for renewal (or does not parse) */
    int denied;            /* how many CSRs made from spec.csr are denied */
    int64_t denied_age_s;  /* seconds since the newest of them was created */
} tg_tenant_certs;

typedef enum tg_tenant_action {
    TG_PLAN_KEEP = 0,      /* status holds a current certificate for the key */
    TG_PLAN_PUBLISH,       /* write the newest CSR's certificate into status */
    TG_PLAN_CREATE,        /* make a new CSR */
    TG_PLAN_WAIT,          /* a CSR is on its way: its informer event wakes us */
    TG_PLAN_BACKOFF,       /* denied again: make the next CSR after *delay_s */
} tg_tenant_action;

/* Delay before the n-th CSR after denials (n >= 2): TG_DENIED_BACKOFF_S
 * doubling, at most TG_DENIED_BACKOFF_MAX_S. The first comes at once. */
#define TG_DENIED_BACKOFF_S 5
#define TG_DENIED_BACKOFF_MAX_S 600

/* The action; *delay_s (TG_PLAN_BACKOFF only) is how long to wait. */
tg_tenant_action tg_tenant_plan(const tg_tenant_certs *in, int64_t *delay_s);

/* Short text for logs ("keep", "publish", ...). */
const char *tg_tenant_action_name(tg_tenant_action a);

#endif
