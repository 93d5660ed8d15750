/* reason.h - why the auth server answered as it did: the reason codes of
 * docs/auth.md ("Reason codes"), each with its HTTP status, from the one
 * table of every program's reason codes (pki/reasons.def). Every answer
 * names one; metrics and logs use the same names. */
#ifndef TG_AUTH_REASON_H
#define TG_AUTH_REASON_H

#define TG_AUTH_REASON_IF_Y(...) __VA_ARGS__
#define TG_AUTH_REASON_IF_N(...)

/* The rows of pki/reasons.def whose auth column is Y, as TG_AUTH_<ID>. */
typedef enum tg_auth_reason {
#define TG_REASON(id, name, status, web, auth, signer, meaning) TG_AUTH_REASON_IF_##auth(TG_AUTH_##id, )
#include "pki/reasons.def"
#undef TG_REASON
    TG_AUTH_REASON_COUNT
} tg_auth_reason;

/* "Issued", "TokenMismatch", ...; never NULL. */
const char *tg_auth_reason_name(tg_auth_reason r);

/* Its HTTP status. */
int tg_auth_reason_status(tg_auth_reason r);

#endif
