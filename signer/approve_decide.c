/* approve_decide.c - see approve_decide.h. Each check is a small function
 * that either passes or fills the decision with its reason. */
#include "signer/approve_decide.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/tenant.h"

static int deny(tg_approve_decision *d, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int deny(tg_approve_decision *d, const char *reason, const char *fmt, ...)
{
    va_list ap;
    char *p;

    d->approve = 0;
    snprintf(d->reason, sizeof(d->reason), "%s", reason);
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof(d->message), fmt, ap);
    va_end(ap);
    for (p = d->message; *p; p++)   /* one line, whatever a name contained */
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return -1;
}

static int check_signer(json_object *csr, const tg_approve_policy *p, tg_approve_decision *d)
{
    const char *s = tg_json_path_string(csr, "spec", "signerName", NULL);

    if (!s || strcmp(s, p->signer_name) != 0)
        return deny(d, TG_DENY_SIGNER, "expected signerName %s, found %s", p->signer_name, s ? s : "none");
    return 0;
}

/* Exactly {digital signature, client auth} plus optionally key encipherment. */
static int check_usages(json_object *csr, tg_approve_decision *d)
{
    json_object *u = tg_json_path(csr, "spec", "usages", NULL);
    int ds = 0, ca = 0, ke = 0;
    size_t i, n;

    if (!u || !json_object_is_type(u, json_type_array))
        return deny(d, TG_DENY_USAGES, "expected usages [digital signature, key encipherment, client auth], "
                                       "found none");
    n = json_object_array_length(u);
    for (i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(u, i);
        const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
        int *seen = !s ? NULL
                    : strcmp(s, "digital signature") == 0 ? &ds
                    : strcmp(s, "client auth") == 0       ? &ca
                    : strcmp(s, "key encipherment") == 0  ? &ke
                                                          : NULL;
        if (!seen || *seen)
            return deny(d, TG_DENY_USAGES, "expected usages [digital signature, key encipherment, client auth], "
                                           "found %s%s%s", seen ? "a repeated " : "", seen ? "" : "unexpected ",
                        s ? s : "a non-string usage");
        *seen = 1;
    }
    if (!ds || !ca)
        return deny(d, TG_DENY_USAGES, "expected usages digital signature and client auth, found %s missing",
                    !ds ? "digital signature" : "client auth");
    return 0;
}

/* The decoded spec.request (PEM text); NULL after deny. */
static unsigned char *csr_request(json_object *csr, size_t *len, tg_approve_decision *d)
{
    const char *b64 = tg_json_path_string(csr, "spec", "request", NULL);
    char err[128];
    unsigned char *pem;

    if (!b64) {
        deny(d, TG_DENY_MALFORMED, "expected spec.request, found none");
        return NULL;
    }
    if (!(pem = tg_base64_decode(b64, strlen(b64), len, err, sizeof(err))))
        deny(d, TG_DENY_MALFORMED, "spec.request is not base64: %s", err);
    return pem;
}

static int check_request(const tg_tenant *t, const unsigned char *pem, size_t len, tg_approve_decision *d)
{
    tg_verdict v;
    int was_raw = 0;
    EVP_PKEY *key;
    unsigned char *spki;
    size_t spki_len = 0;
    int r;

    tg_verdict_init(&v);
    if (!(key = tg_public_key_parse(t->public_key.data, t->public_key.len, &was_raw, &v)))
        return deny(d, tg_reason_name(v.reason), "%s", v.message);
    spki = tg_key_public_der(key, &spki_len);
    EVP_PKEY_free(key);
    if (!spki)
        return deny(d, tg_reason_name(TG_INVALID_PUBLIC_KEY), "cannot encode the Tenant's public key");
    r = tg_csr_check(pem, len, t->cluster_id, spki, spki_len, &v, NULL);
    free(spki);
    if (r != 0)
        return deny(d, tg_reason_name(v.reason), "%s", v.message);
    /* The same key and subject is not enough: only the request the Tenant
     * carried (and the webhook admitted) is signed. */
    if (len != t->csr.len || memcmp(pem, t->csr.data, len) != 0)
        return deny(d, TG_DENY_REQUEST, "expected the request of Tenant %s, found a different one",
                    t->cluster_id);
    return 0;
}

int tg_approve_decide(json_object *csr, json_object *tenant, const char *nonce,
                      const tg_approve_policy *policy, tg_approve_decision *out)
{
    tg_tenant t;
    tg_verdict v;
    tg_check_opts copts = {.allow_no_handshake = policy->allow_no_handshake};
    unsigned char *pem = NULL;
    size_t pem_len = 0;
    const char *label = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    memset(out, 0, sizeof(*out));
    memset(&t, 0, sizeof(t));
    if (check_signer(csr, policy, out) != 0 || check_usages(csr, out) != 0)
        return 0;
    if (!tenant) {
        deny(out, TG_DENY_NO_TENANT, "expected a Tenant for cluster %s, found none", label ? label : "(no label)");
        return 0;
    }
    if (tg_json_path(tenant, "metadata", "deletionTimestamp", NULL)) {
        deny(out, TG_DENY_TENANT_DELETED, "Tenant %s is being deleted", label ? label : "?");
        return 0;
    }
    tg_verdict_init(&v);
    if (tg_tenant_from_json(tenant, &t, &v) != 0 ||
        tg_tenant_check(&t, nonce, nonce ? strlen(nonce) : 0, &copts, &v) != 0) {
        deny(out, tg_reason_name(v.reason), "Tenant no longer passes: %s", v.message);
        goto done;
    }
    if (t.authz_policy == TG_POLICY_TOLERATE_NO_HANDSHAKE && t.csr.len == 0) {
        deny(out, TG_DENY_REQUEST, "Tenant %s carries no CSR", t.cluster_id);
        goto done;
    }
    if (label && strcmp(label, t.cluster_id) != 0) {
        deny(out, tg_reason_name(TG_LABEL_MISMATCH), "expected label %s=%s, found %s", TG_LABEL_REMOTE_CLUSTER_ID,
             t.cluster_id, label);
        goto done;
    }
    if (!(pem = csr_request(csr, &pem_len, out)) || check_request(&t, pem, pem_len, out) != 0)
        goto done;
    out->approve = 1;
    snprintf(out->reason, sizeof(out->reason), "%s", TG_APPROVE_REASON);
    snprintf(out->message, sizeof(out->message), "request matches Tenant %s, validated", t.cluster_id);
done:
    free(pem);
    tg_tenant_clear(&t);
    return out->approve;
}
