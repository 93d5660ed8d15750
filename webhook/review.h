/* review.h - AdmissionReview (admission.k8s.io v1 and v1beta1): the request
 * the API server sends, and the response we answer with (always HTTP 200). */
#ifndef TG_WEBHOOK_REVIEW_H
#define TG_WEBHOOK_REVIEW_H

#include <stddef.h>
#include <json-c/json.h>

typedef enum tg_review_version {
    TG_REVIEW_V1 = 0,
    TG_REVIEW_V1BETA1,
} tg_review_version;

typedef enum tg_review_op {
    TG_OP_OTHER = 0,
    TG_OP_CREATE,
    TG_OP_UPDATE,
    TG_OP_DELETE,
    TG_OP_CONNECT,
} tg_review_op;

/* Every string borrows from root and lives until tg_review_request_clear().
 * Absent optional strings are "" so callers need no NULL checks. */
typedef struct tg_review_request {
    json_object *root;             /* owned */
    tg_review_version version;
    const char *uid;               /* never empty after a successful parse */
    const char *resource_group;    /* request.resource */
    const char *resource;
    const char *sub_resource;      /* request.subResource */
    const char *kind;              /* request.kind.kind */
    const char *name;              /* request.name */
    const char *namespace_;        /* request.namespace */
    const char *operation;         /* as sent, for logs */
    tg_review_op op;
    int dry_run;
    json_object *object;           /* request.object or NULL */
    json_object *old_object;       /* request.oldObject or NULL */
    json_object *user_groups;      /* request.userInfo.groups (an array) or NULL */
    const char *user_name;         /* request.userInfo.username */
} tg_review_request;

/* 1 when request.userInfo.groups holds group. */
int tg_review_user_in_group(const tg_review_request *req, const char *group);

/* Parse and validate a review. Returns 0, or -1 with err (one line, no
 * content of the body beyond names) when the body is not a usable
 * AdmissionReview. Even on failure, req->version and req->uid are set from
 * whatever could be read, so the answer can still echo them ("" uid when
 * none). Always call tg_review_request_clear() afterwards. */
int tg_review_parse(const char *body, size_t len, tg_review_request *req, char *err, size_t err_len);
void tg_review_request_clear(tg_review_request *req);

#define TG_REVIEW_MAX_WARNINGS 4

typedef struct tg_review_response {
    int allowed;
    int code;                      /* status.code of a denial (400, 403, 500) */
    const char *message;           /* status.message of a denial: "Reason: one line" */
    const char *reason;            /* status.reason, optional (e.g. "Forbidden") */
    int retry_after_s;             /* > 0: status.details.retryAfterSeconds, which the API
                                    * server turns into a Retry-After header, and client-go
                                    * (kubectl) then retries the request by itself */
    const char *warnings[TG_REVIEW_MAX_WARNINGS];
    size_t nwarnings;
    const char *patch;             /* JSONPatch document (raw JSON), or NULL */
    size_t patch_len;
} tg_review_response;

/* The AdmissionReview answer, in the request's version. malloc'd, NUL-
 * terminated; NULL only when out of memory. */
char *tg_review_response_json(tg_review_version version, const char *uid,
                              const tg_review_response *resp, size_t *len);

#endif
