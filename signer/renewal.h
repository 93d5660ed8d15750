/* renewal.h - when a Tenant's certificate must be renewed (PROTOCOL.md 6): once
 * now > NotAfter - lifetime/3. Pure: the clock is passed in. */
#ifndef TG_SIGNER_RENEWAL_H
#define TG_SIGNER_RENEWAL_H

#include <stddef.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

/* NotBefore/NotAfter of one PEM certificate (the first block), read with
 * pki/cert_summary.h. 0, or -1 when it does not parse or NotAfter is not
 * after NotBefore. */
int tg_cert_validity(const unsigned char *pem, size_t len, time_t *not_before, time_t *not_after);

/* 1 when the first PEM certificate certifies key (same key material), 0 when
 * it certifies another key, -1 when it does not parse. A certificate for
 * another key than the Tenant's is replaced at once, whatever its age. */
int tg_cert_key_is(const unsigned char *pem, size_t len, EVP_PKEY *key);

/* Signers backdate NotBefore (kube-controller-manager and ours: 5 min) so
 * that clock skew does not reject a fresh certificate. Counting that slack as
 * lifetime would make short certificates due the moment they are issued and
 * renew in a loop, so the lifetime starts after it: NotBefore +
 * min(TG_RENEWAL_BACKDATE, span / 2). */
#define TG_RENEWAL_BACKDATE 300

/* The renewal time: not_after - lifetime / 3, lifetime as above. */
time_t tg_renewal_at(time_t not_before, time_t not_after);

/* 1 when a certificate valid [not_before, not_after) is due for renewal at now. */
int tg_renewal_due(time_t not_before, time_t not_after, time_t now);

/* Overdue (issue 48 #3): the renewal should have happened at tg_renewal_at
 * and has not, for longer than a grace of grace_pct percent of the lifetime
 * (as above). With renewal at 2/3 of the lifetime, any grace below 33 % falls
 * before NotAfter: the default 10 % leaves 23 % of the lifetime (about 1.6
 * days of 7) to act before the peer loses access. */
#define TG_RENEWAL_GRACE_PCT_DEFAULT 10
#define TG_RENEWAL_GRACE_PCT_MAX 30

/* The time after which the renewal is overdue: renew-at + grace. */
time_t tg_renewal_overdue_at(time_t not_before, time_t not_after, int grace_pct);

/* 1 when a certificate valid [not_before, not_after) is overdue at now. */
int tg_renewal_overdue(time_t not_before, time_t not_after, time_t now, int grace_pct);

#endif
