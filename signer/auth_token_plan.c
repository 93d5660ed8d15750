/* auth_token_plan.c - see auth_token_plan.h. */
#include "signer/auth_token_plan.h"

#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

static const char *const names[] = {
    [TG_AUTH_NONE] = "None",
    [TG_AUTH_PENDING] = "Pending",
    [TG_AUTH_EMPTY_DENIED] = "EmptyDenied",
    [TG_AUTH_ESTABLISHED] = "Established",
    [TG_AUTH_DENIED] = "Denied",
};

const char *tg_auth_status_name(tg_auth_status st)
{
    return st <= TG_AUTH_DENIED ? names[st] : "None";
}

tg_auth_status tg_auth_status_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return (tg_auth_status)i;
    return TG_AUTH_NONE;
}

tg_auth_status tg_auth_outcome(long http_status, int token_empty)
{
    if (http_status == 200 || http_status == 201 || http_status == 202)
        return TG_AUTH_ESTABLISHED;
    if (http_status == 401 || http_status == 403)
        return token_empty ? TG_AUTH_EMPTY_DENIED : TG_AUTH_DENIED;
    return TG_AUTH_PENDING;
}

int tg_auth_status_final(tg_auth_status st)
{
    return st == TG_AUTH_ESTABLISHED || st == TG_AUTH_DENIED || st == TG_AUTH_EMPTY_DENIED;
}

void tg_auth_token_digest(const char *token, size_t len, char out[17])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)token, len, md);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}
