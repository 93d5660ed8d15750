/* renewal_trial.h - try a renewed kubeconfig before it replaces the one in
 * use (issue 48 #3): a SelfSubjectReview on the provider's API server with
 * it, which every authenticated user may create, must answer with the user
 * name the certificate was issued for. A renewal that would lock the
 * consumer out (a certificate the provider does not accept, a CA bundle that
 * does not verify its server) is then never written: the old kubeconfig
 * keeps working until its own expiry, and the failure is counted by reason.
 *
 * The call runs on the worker thread through the remote pool's own-loop
 * client (remote_pool.h), like the replicator's calls to providers; the main
 * loop is never blocked. Nothing of the kubeconfig is logged or quoted. */
#ifndef TG_SIGNER_RENEWAL_TRIAL_H
#define TG_SIGNER_RENEWAL_TRIAL_H

#include <stddef.h>

#include "pki/verdict.h"
#include "signer/remote_pool.h"

/* Reasons of a failed trial (the reason label of
 * tenantgate_signer_renewal_trial_failures_total; docs/signer.md). */
#define TG_TRIAL_UNUSABLE tg_reason_name(TG_KUBECONFIG_UNUSABLE)    /* it does not parse, or its certificate has no CN */
#define TG_TRIAL_UNREACHABLE tg_reason_name(TG_SERVER_UNREACHABLE)  /* no HTTP answer: connection or TLS verification failed */
#define TG_TRIAL_UNAUTHORIZED tg_reason_name(TG_TRIAL_UNAUTHORIZED) /* 401: the provider does not accept the certificate */
#define TG_TRIAL_REFUSED tg_reason_name(TG_REVIEW_REFUSED)          /* any other status than 201 */
#define TG_TRIAL_WRONG_USER tg_reason_name(TG_UNEXPECTED_USER)      /* authenticated, as someone else than the certificate's CN */

/* The subject CN of the first PEM certificate into cn (cn_len bytes). 0, or
 * -1 when it does not parse, has no CN, or the CN does not fit. */
int tg_cert_common_name(const unsigned char *pem, size_t len, char *cn, size_t cn_len);

/* Try kubeconfig (YAML, in memory) as user want_user. key names the trial
 * client in the pool (dropped afterwards: a trial's client is not reused).
 * 0 when the API server answers with want_user; else -1 with *reason one of
 * the TG_TRIAL_* codes and why (one line, without key material). */
int tg_renewal_trial(tg_remote_pool *pool, const char *key, const char *kubeconfig, size_t len,
                     const char *want_user, const char **reason, char *why, size_t why_len);

#endif
