/* whoami.c - see whoami.h. */
#include "kube/whoami.h"

#include <stdlib.h>
#include <string.h>

#include "kube/errbuf.h"
#include "kube/json.h"

#define REVIEW_BODY "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}"

int tg_whoami_from_review(json_object *review, char user[TG_WHOAMI_MAX + 1], char *why, size_t why_len)
{
    json_object *name = tg_json_path(review, "status", "userInfo", "username", NULL);
    const char *s;
    size_t n;

    user[0] = '\0';
    if (name == NULL || !json_object_is_type(name, json_type_string)) {
        tg_errf(why, why_len, "the SelfSubjectReview answer has no status.userInfo.username");
        return -1;
    }
    s = json_object_get_string(name);
    n = strlen(s);
    if (n == 0 || n > TG_WHOAMI_MAX || n != (size_t)json_object_get_string_len(name)) {
        tg_errf(why, why_len, "status.userInfo.username: expected 1-%d bytes without NUL, found %zu bytes",
                TG_WHOAMI_MAX, (size_t)json_object_get_string_len(name));
        return -1;
    }
    memcpy(user, s, n + 1);
    return 0;
}

long tg_whoami(tg_kube_client *c, char user[TG_WHOAMI_MAX + 1], char *why, size_t why_len)
{
    tg_kube_request_opts opts = {.method = "POST", .path = TG_WHOAMI_PATH, .body = REVIEW_BODY,
                                 .body_len = sizeof(REVIEW_BODY) - 1, .content_type = TG_KUBE_CT_JSON};
    char terr[256];
    char *body = NULL;
    size_t body_len = 0;
    json_object *review;
    long status;

    user[0] = '\0';
    status = tg_kube_request_sync(c, &opts, &body, &body_len, terr, sizeof(terr));
    if (status != 201 && status != 200) {
        if (status < 0)
            tg_errf(why, why_len, "POST %s: %s", TG_WHOAMI_PATH, terr);
        else
            tg_errf(why, why_len, "POST %s: HTTP %ld", TG_WHOAMI_PATH, status);
        free(body);
        return status;
    }
    review = tg_json_parse(body, body_len, terr, sizeof(terr));
    free(body);
    if (review == NULL) {
        tg_errf(why, why_len, "the SelfSubjectReview answer is not JSON: %s", terr);
        return -1;
    }
    if (tg_whoami_from_review(review, user, why, why_len) != 0)
        status = -1;
    json_object_put(review);
    return status;
}
