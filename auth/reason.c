/* reason.c - see reason.h. */
#include "reason.h"

static const struct {
    const char *name;
    int status;
} reasons[TG_AUTH_REASON_COUNT] = {
    [TG_AUTH_ISSUED] = {"Issued", 202},
    [TG_AUTH_IDS] = {"Ids", 200},
    [TG_AUTH_MALFORMED_REQUEST] = {"MalformedRequest", 400},
    [TG_AUTH_INVALID_CLUSTER_ID] = {"InvalidClusterID", 400},
    [TG_AUTH_INVALID_CSR] = {"InvalidCSR", 400},
    [TG_AUTH_CSR_SUBJECT_MISMATCH] = {"CSRSubjectMismatch", 400},
    [TG_AUTH_UNSUPPORTED_KEY] = {"UnsupportedKey", 400},
    [TG_AUTH_WEAK_KEY] = {"WeakKey", 400},
    [TG_AUTH_EMPTY_TOKEN] = {"EmptyToken", 401},
    [TG_AUTH_TOKEN_MISMATCH] = {"TokenMismatch", 401},
    [TG_AUTH_ALREADY_ISSUED] = {"IdentityAlreadyIssued", 403},
    [TG_AUTH_NOT_FOUND] = {"NotFound", 404},
    [TG_AUTH_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", 405},
    [TG_AUTH_PAYLOAD_TOO_LARGE] = {"PayloadTooLarge", 413},
    [TG_AUTH_RATE_LIMITED] = {"RateLimited", 429},
    [TG_AUTH_HEADERS_TOO_LARGE] = {"HeadersTooLarge", 431},
    [TG_AUTH_ISSUANCE_FAILED] = {"IssuanceFailed", 500},
    [TG_AUTH_TOKEN_UNAVAILABLE] = {"TokenUnavailable", 503},
    [TG_AUTH_CERTIFICATE_TIMEOUT] = {"CertificateTimeout", 504},
    [TG_AUTH_NONCE_ISSUED] = {"NonceIssued", 200},
    [TG_AUTH_TENANT_SIGNED] = {"TenantSigned", 201},
    [TG_AUTH_INVALID_TOKEN] = {"InvalidToken", 401},
    [TG_AUTH_TENANT_REFUSED] = {"TenantRefused", 403},
    [TG_AUTH_TOKEN_EXHAUSTED] = {"TokenExhausted", 403},
    [TG_AUTH_TENANT_EXISTS] = {"TenantExists", 409},
    [TG_AUTH_PROVIDER_TIMEOUT] = {"ProviderTimeout", 504},
    [TG_AUTH_NAME_RESERVED] = {"NameReserved", 403},
    [TG_AUTH_NAME_BOUND] = {"NameBound", 403},
    [TG_AUTH_NAME_OWNED] = {"NameOwned", 403},
};

const char *tg_auth_reason_name(tg_auth_reason r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reasons[r].name : "Unknown";
}

int tg_auth_reason_status(tg_auth_reason r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reasons[r].status : 500;
}
