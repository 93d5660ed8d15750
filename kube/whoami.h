/* whoami.h - the name the API server knows this process by, asked once with a
 * SelfSubjectReview (authentication.k8s.io/v1, GA since Kubernetes 1.28; every
 * authenticated user may create one).
 *
 * The signer needs it to tell the CSRs its controllers made from copies
 * someone else made with the same labels: the API server writes the creator
 * into spec.username, and nobody can choose what goes there.
 *
 * The decoding is pure (unit-tested); tg_whoami is the request over a client. */
#ifndef TG_KUBE_WHOAMI_H
#define TG_KUBE_WHOAMI_H

#include <stddef.h>
#include <json-c/json.h>

#include "kube/client.h"

#define TG_WHOAMI_PATH "/apis/authentication.k8s.io/v1/selfsubjectreviews"
/* Kubernetes user names have no set limit; a longer one is refused rather
 * than cut, since a cut name could equal someone else's. */
#define TG_WHOAMI_MAX 512

/* status.userInfo.username of a SelfSubjectReview answer into user (at most
 * TG_WHOAMI_MAX bytes plus NUL). 0, or -1 with why (one line). */
int tg_whoami_from_review(json_object *review, char user[TG_WHOAMI_MAX + 1], char *why, size_t why_len);

/* POST the review synchronously on c's loop (before the loop runs other
 * work). Returns the HTTP status (201 on success, with user filled; -1 when no
 * answer arrived), with why on failure. */
long tg_whoami(tg_kube_client *c, char user[TG_WHOAMI_MAX + 1], char *why, size_t why_len);

#endif
