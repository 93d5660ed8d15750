/* verdict.h - the outcome of a Tenant check: a reason code of PROTOCOL.md section 5
 * and one line saying what was expected and what was found. */
#ifndef TG_PKI_VERDICT_H
#define TG_PKI_VERDICT_H

#include <stddef.h>

/* The reason codes the webhook and the signer answer with: the rows of
 * pki/reasons.def whose webhook or signer column is Y, as TG_<ID>. */
#define TG_REASON_IF_YY(...) __VA_ARGS__
#define TG_REASON_IF_YN(...) __VA_ARGS__
#define TG_REASON_IF_NY(...) __VA_ARGS__
#define TG_REASON_IF_NN(...)

typedef enum tg_reason {
#define TG_REASON(id, name, status, web, auth, signer, meaning) TG_REASON_IF_##web##signer(TG_##id, )
#include "pki/reasons.def"
#undef TG_REASON
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

/* Its HTTP status (reasons.def); 0 for a condition reason, 500 out of range. */
int tg_reason_status(tg_reason r);

void tg_verdict_init(tg_verdict *v);

/* Record a denial with the reason's status code of reasons.def (403 for a
 * policy's refusal, as Liqo answers those; 400 for a malformed object). The message is formatted printf-style, newlines and control
 * characters are replaced so the result is always one line. Returns -1 so that
 * checks can `return tg_verdict_deny(...)`. */
int tg_verdict_deny(tg_verdict *v, tg_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same with an explicit status code (placement checks that Liqo answers with 403). */
int tg_verdict_deny_code(tg_verdict *v, int code, tg_reason r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
