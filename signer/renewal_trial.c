/* renewal_trial.c - see renewal_trial.h. */
#include "signer/renewal_trial.h"

#include <stdio.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kube/whoami.h"

#define REVIEW_BODY "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}"

int tg_cert_common_name(const unsigned char *pem, size_t len, char *cn, size_t cn_len)
{
    BIO *b;
    X509 *x;
    int n = -1;

    if (!pem || len == 0 || len > (1u << 20) || !(b = BIO_new_mem_buf(pem, (int)len)))
        return -1;
    x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    if (!x)
        return -1;
    n = X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, (int)cn_len);
    X509_free(x);
    /* a CN that was cut (n >= cn_len) or has a NUL inside would name someone else */
    return n > 0 && (size_t)n < cn_len && strlen(cn) == (size_t)n ? 0 : -1;
}

/* One SelfSubjectReview on api; the reason code of a failure, or NULL. */
static const char *review(tg_api *api, const char *want_user, char *why, size_t why_len)
{
    json_object *body = json_tokener_parse(REVIEW_BODY), *out = NULL;
    char user[TG_WHOAMI_MAX + 1], err[256] = "";
    const char *reason = NULL;
    long st;

    st = tg_api_call(api, "POST", TG_WHOAMI_PATH, TG_KUBE_CT_JSON, body, &out, err, sizeof(err));
    json_object_put(body);
    if (st < 0) {
        reason = TG_TRIAL_UNREACHABLE;
        snprintf(why, why_len, "POST %s: %s", TG_WHOAMI_PATH, err);
    } else if (st == 401) {
        reason = TG_TRIAL_UNAUTHORIZED;
        snprintf(why, why_len, "POST %s: expected 201 as %s, found 401: the certificate is not accepted",
                 TG_WHOAMI_PATH, want_user);
    } else if (st != 201 && st != 200) {
        reason = TG_TRIAL_REFUSED;
        snprintf(why, why_len, "POST %s: expected 201, found HTTP %ld", TG_WHOAMI_PATH, st);
    } else if (tg_whoami_from_review(out, user, err, sizeof(err)) != 0) {
        reason = TG_TRIAL_REFUSED;
        snprintf(why, why_len, "%s", err);
    } else if (strcmp(user, want_user) != 0) {
        reason = TG_TRIAL_WRONG_USER;
        snprintf(why, why_len, "SelfSubjectReview: expected user %s, found %.256s", want_user, user);
    }
    json_object_put(out);
    return reason;
}

int tg_renewal_trial(tg_remote_pool *pool, const char *key, const char *kubeconfig, size_t len,
                     const char *want_user, const char **reason, char *why, size_t why_len)
{
    tg_remote_client c;

    *reason = NULL;
    if (tg_remote_pool_take(pool, key, kubeconfig, len, &c, why, why_len) != 0)
        *reason = TG_TRIAL_UNUSABLE;
    else
        *reason = review(c.api, want_user, why, why_len);
    tg_remote_pool_give(pool, &c);
    tg_remote_pool_drop(pool, key);
    return *reason ? -1 : 0;
}
