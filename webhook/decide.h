/* decide.h - the admission decisions, pure: an AdmissionReview request and
 * the cluster facts (lookup.h) in, the answer out. No I/O, no clock.
 *
 * Validation order (PROTOCOL.md 5): 1 decode (MalformedTenant), 2 placement
 * (WrongNamespace, LabelMismatch, Duplicate, NameMismatch on CREATE and on an
 * UPDATE that changes the proof), then tg_tenant_check() for 3, 4 and
 * 6-10 with the nonce of step 5 looked up in between: the Secret liqo-nonce
 * of the Tenant's own namespace (nonce_secret.h), nothing else. */
#ifndef TG_WEBHOOK_DECIDE_H
#define TG_WEBHOOK_DECIDE_H

#include <stddef.h>

#include "pki/verdict.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

#define TG_TENANT_GROUP "authentication.liqo.io"
#define TG_TENANT_RESOURCE "tenants"

/* status.details.retryAfterSeconds of an answer that is not a verdict. */
#define TG_RETRY_AFTER_SECONDS 1

typedef struct tg_decide_opts {
    int allow_no_handshake;        /* --allow-no-handshake */
    /* Second pass after the caller's live read of the nonce (need_live_nonce):
     * live_nonce_done = 1 and live_nonce the text found, or NULL; then
     * live_nonce_state says what the read found instead (for the message). */
    int live_nonce_done;
    const char *live_nonce;
    size_t live_nonce_len;
    tg_nonce_state live_nonce_state;
} tg_decide_opts;

#define TG_DECISION_TEXT_MAX (TG_VERDICT_MESSAGE_MAX + 64)

typedef struct tg_decision {
    int intercepted;               /* a Tenant CREATE/UPDATE we judged */
    int need_live_nonce;           /* cache had no nonce: read it live, decide again */
    int crypto_skipped;            /* UPDATE with unchanged publicKey/csr/signature */
    const char *reason;            /* reason name for logs and metrics: tg_reason_name() */
    tg_verdict verdict;
    tg_review_response response;   /* points into this struct */
    char message[TG_DECISION_TEXT_MAX];
    /* For the live read of Secret <nonce_namespace>/liqo-nonce: both "" when
     * not valid DNS labels (then no read). */
    char cluster_id[TG_LABEL_VALUE_MAX];
    char nonce_namespace[TG_LABEL_VALUE_MAX];
    char *patch;                   /* owned JSONPatch text (mutate) */
} tg_decision;

/* /validate/tenants. Fills d; d->response is the answer unless
 * d->need_live_nonce, in which case the caller reads Secret
 * d->nonce_namespace/liqo-nonce for d->cluster_id live and calls again with
 * opts->live_nonce_done set. */
void tg_decide_validate(const tg_review_request *req, const tg_lookup *lk,
                        const tg_decide_opts *opts, tg_decision *d);

/* /mutate/tenants: adds metadata.labels["liqo.io/remote-cluster-id"] =
 * spec.clusterID when missing. Never denies: validation judges. It does not
 * name a Tenant either: one created with generateName is refused by
 * validation (NameMismatch) rather than silently renamed. */
void tg_decide_mutate(const tg_review_request *req, tg_decision *d);

/* A denial that is not a Tenant verdict (a review we could not read:
 * MalformedTenant; an internal error: CacheNotSynced, LiveReadFailed,
 * InternalError; too busy: LiveReadBusy), with the reason's status of
 * pki/reasons.def. 429 and 5xx carry TG_RETRY_AFTER_SECONDS. */
void tg_decide_error(tg_decision *d, tg_reason reason, const char *message);

void tg_decision_clear(tg_decision *d);

/* For the other decisions (slice_decide.h): an allowed decision to start
 * from, and the response filled from d->verdict. */
void tg_decision_init(tg_decision *d);
void tg_decision_finish(tg_decision *d);

#endif
