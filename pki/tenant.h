/* tenant.h - a decoded Tenant and the admission decision over it (PROTOCOL.md 5,
 * steps 3, 4 and 6-10). Pure: no I/O, no clock, no global state. The webhook
 * and `kubectl-tenantgate check` both call tg_tenant_check(); placement (step 2)
 * and the nonce lookup (step 5) need a cluster and are done by their callers. */
#ifndef TG_PKI_TENANT_H
#define TG_PKI_TENANT_H

#include <stddef.h>

#include "verdict.h"

typedef struct tg_bytes {
    unsigned char *data;   /* owned by whoever filled the tg_tenant */
    size_t len;
} tg_bytes;

typedef enum tg_authz_policy {
    TG_POLICY_KEYS_EXCHANGE = 0,          /* default */
    TG_POLICY_TOLERATE_NO_HANDSHAKE,
} tg_authz_policy;

typedef enum tg_tenant_condition {
    TG_CONDITION_ACTIVE = 0,              /* default */
    TG_CONDITION_CORDONED,
    TG_CONDITION_DRAINED,
} tg_tenant_condition;

typedef struct tg_tenant {
    /* metadata: NULL when absent */
    char *name;
    char *namespace_;
    char *label_cluster_id;        /* metadata.labels["liqo.io/remote-cluster-id"] */
    /* spec */
    char *cluster_id;              /* required */
    tg_authz_policy authz_policy;
    tg_bytes public_key;           /* base64-decoded: raw 32-byte Ed25519 key or PEM PKIX text */
    tg_bytes csr;                  /* base64-decoded: PEM CERTIFICATE REQUEST text */
    tg_bytes signature;            /* base64-decoded raw signature */
    char *proxy_url;               /* optional */
    tg_tenant_condition condition;
} tg_tenant;

typedef struct tg_check_opts {
    int allow_no_handshake;        /* operator's explicit switch for TolerateNoHandshake */
} tg_check_opts;

/* The decision. `nonce` is the nonce text as issued (88 base64 characters), or
 * NULL when the caller found none: then the result is TG_NONCE_NOT_FOUND unless
 * an earlier step already failed. Returns 0 when admitted, -1 when denied; the
 * verdict says why, and carries warnings either way. */
int tg_tenant_check(const tg_tenant *t, const char *nonce, size_t nonce_len,
                    const tg_check_opts *opts, tg_verdict *v);

/* Step 3 alone: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$, at most 63 characters. */
int tg_cluster_id_valid(const char *id);

/* Frees every owned field and zeroes the struct. */
void tg_tenant_clear(tg_tenant *t);

#endif
