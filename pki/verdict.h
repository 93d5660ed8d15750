/* verdict.h - the outcome of a Tenant check: a reason code of PROTOCOL.md section 5
 * and one line saying what was expected and what was found. */
#ifndef TG_PKI_VERDICT_H
#define TG_PKI_VERDICT_H

#include <stddef.h>

typedef enum tg_reason {
    TG_ACCEPTED = 0,
    TG_MALFORMED_TENANT,                /* 1  not a Tenant, missing field, bad base64 */
    TG_WRONG_NAMESPACE,                 /* 2  namespace not a tenant namespace */
    TG_LABEL_MISMATCH,                  /* 2  remote-cluster-id label vs spec.clusterID */
    TG_DUPLICATE,                       /* 2  another Tenant in the namespace / same name */
    TG_INVALID_CLUSTER_ID,              /* 3 */
    TG_INVALID_PUBLIC_KEY,              /* 4 */
    TG_WEAK_KEY,                        /* 4 */
    TG_NONCE_NOT_FOUND,                 /* 5 */
    TG_SIGNATURE_VERIFICATION_FAILED,   /* 6 */
    TG_INVALID_CSR,                     /* 7 */
    TG_CSR_FORBIDDEN_CONTENT,           /* 8 */
    TG_CSR_SUBJECT_MISMATCH,            /* 9 */
    TG_CSR_PUBLIC_KEY_MISMATCH,         /* 10 */
    TG_NAME_MISMATCH,                   /* 2  metadata.name is not spec.clusterID (webhook only) */
    /* ResourceSlices (PROTOCOL.md 5a) */
    TG_MALFORMED_RESOURCE_SLICE,        /* missing consumerClusterID or csr, bad base64 */
    TG_SLICE_TENANT_NOT_FOUND,          /* no Tenant of consumerClusterID in the namespace */
    TG_SLICE_TENANT_DRAINED,            /* that Tenant is Drained */
    TG_FORBIDDEN_CHANGE,                /* group liqo.io changed remote-cluster-id or liqo.io/cordon */
    TG_SLICE_CLAIMS_LOCAL_CLUSTER,      /* a local slice naming this cluster, by an untrusted writer */
    /* one owner per name (PROTOCOL.md 3, pki/name_owner.h) */
    TG_NAME_RESERVED,                   /* spec.clusterID in a reserved form */
    TG_NAME_OWNED,                      /* another issuing path or holder claimed the name (cluster id, slice user) */
    TG_NAME_BOUND,                      /* a per-certificate group bound already (pki/cert_group.h) */
    TG_NAME_REVOKED,                    /* a per-certificate group revoked (pki/cert_group.h) */
    TG_DEFAULT_SLICE_CLASS_DISABLED,    /* a default-class slice while the provider turned that class off */
    /* the consumer's own slice policy (pki/slice_tenant_policy.h) */
    TG_CLASS_NOT_ALLOWED,               /* spec.class not among the consumer's classes */
    TG_TENANT_POLICY_EXCEEDED,          /* a quantity over the consumer's maxPerSlice */
    TG_TENANT_POLICY_INVALID,           /* the consumer's entry is not well formed: nothing allowed */
    TG_REASON_COUNT
} tg_reason;

/* Soft problems: admitted, but the admin should hear about them. */
#define TG_WARN_RAW_PUBLIC_KEY 0x1u     /* legacy raw 32-byte Ed25519 key (Liqo < 1.0.2) */

#define TG_VERDICT_MESSAGE_MAX 384

typedef struct tg_verdict {
    tg_reason reason;                        /* TG_ACCEPTED when admitted */
    int code;                                /* status.code of the denial: 400 or 403 */
    unsigned warnings;                       /* TG_WARN_* bits */
    char message[TG_VERDICT_MESSAGE_MAX];    /* one line, no reason prefix */
} tg_verdict;

/* "SignatureVerificationFailed", ...; "Accepted" for TG_ACCEPTED. Never NULL. */
const char *tg_reason_name(tg_reason r);

void tg_verdict_init(tg_verdict *v);

/* Record a denial with status code 400 (403 for Duplicate, SliceTenantDrained,
 * ForbiddenChange, SliceClaimsLocalCluster, DefaultResourceSliceClassDisabled, ClassNotAllowed,
 * TenantPolicyExceeded and TenantPolicyInvalid, as Liqo answers such refusals: a policy's, not a malformed object).
 * The message is formatted printf-style, newlines and control
 * characters are replaced so the result is always one line. Returns -1 so that
 * checks can `return tg_verdict_deny(...)`. */
int tg_verdict_deny(tg_verdict *v, tg_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same with an explicit status code (placement checks that Liqo answers with 403). */
int tg_verdict_deny_code(tg_verdict *v, int code, tg_reason r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
