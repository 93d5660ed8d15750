/* reason.h - why the auth server answered as it did: the reason codes of
 * docs/auth.md ("Reason codes"), each with its HTTP status. Every answer
 * names one; metrics and logs use the same names. */
#ifndef TG_AUTH_REASON_H
#define TG_AUTH_REASON_H

typedef enum tg_auth_reason {
    TG_AUTH_ISSUED = 0,            /* 202 identity issued */
    TG_AUTH_IDS,                   /* 200 GET /ids */
    TG_AUTH_MALFORMED_REQUEST,     /* 400 not JSON, a field missing or of the wrong type */
    TG_AUTH_INVALID_CLUSTER_ID,    /* 400 cluster.clusterID is not a cluster id */
    TG_AUTH_INVALID_CSR,           /* 400 the CSR does not parse, or its self-signature fails */
    TG_AUTH_CSR_SUBJECT_MISMATCH,  /* 400 not exactly CN=<clusterID>, O=liqo.io, or extra content */
    TG_AUTH_UNSUPPORTED_KEY,       /* 400 the CSR's key is not Ed25519, RSA or ECDSA */
    TG_AUTH_WEAK_KEY,              /* 400 RSA under 2048 bits, an EC curve other than P-256/P-384 */
    TG_AUTH_EMPTY_TOKEN,           /* 401 no token, authentication on */
    TG_AUTH_TOKEN_MISMATCH,        /* 401 a token that is not the one */
    TG_AUTH_ALREADY_ISSUED,        /* 403 this cluster already has an identity */
    TG_AUTH_NOT_FOUND,             /* 404 */
    TG_AUTH_METHOD_NOT_ALLOWED,    /* 405 */
    TG_AUTH_PAYLOAD_TOO_LARGE,     /* 413 body over TG_AUTH_MAX_BODY */
    TG_AUTH_RATE_LIMITED,          /* 429 too many requests, or failures, from this address */
    TG_AUTH_HEADERS_TOO_LARGE,     /* 431 request line and headers over TG_AUTH_MAX_HEAD */
    TG_AUTH_ISSUANCE_FAILED,       /* 500 the API server refused or did not answer a step */
    TG_AUTH_TOKEN_UNAVAILABLE,     /* 503 the token Secret has not been read yet */
    TG_AUTH_CERTIFICATE_TIMEOUT,   /* 504 approved, but no certificate in time */
    /* v1 one-string peering (POST /v1/nonce, /v1/tenant) */
    TG_AUTH_NONCE_ISSUED,          /* 200 the nonce of the consumer's tenant namespace */
    TG_AUTH_TENANT_SIGNED,         /* 201 Tenant created and signed: the Identity's parameters */
    TG_AUTH_INVALID_TOKEN,         /* 401 unknown, expired, revoked, used or wrong bootstrap token: one answer */
    TG_AUTH_TENANT_REFUSED,        /* 403 the API server (tenantgate-webhook) refused the Tenant */
    TG_AUTH_TOKEN_EXHAUSTED,       /* 403 the token made its bound of tenant namespaces for other ids */
    TG_AUTH_TENANT_EXISTS,         /* 409 a Tenant for this consumer exists already */
    TG_AUTH_PROVIDER_TIMEOUT,      /* 504 no nonce, or no signed Tenant, in time */
    /* one owner per name (name_check.h) */
    TG_AUTH_NAME_RESERVED,         /* 403 the id is in a reserved form (system:, liqo-peer-user-, ...) */
    TG_AUTH_NAME_BOUND,            /* 403 a binding tenantgate did not make for this id names it */
    TG_AUTH_NAME_OWNED,            /* 403 another issuing path or holder owns the id */
    TG_AUTH_REASON_COUNT
} tg_auth_reason;

/* "Issued", "TokenMismatch", ...; never NULL. */
const char *tg_auth_reason_name(tg_auth_reason r);

/* Its HTTP status. */
int tg_auth_reason_status(tg_auth_reason r);

#endif
