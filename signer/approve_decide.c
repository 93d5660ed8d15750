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
#include "pki/slice.h"
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

/* ---------- ResourceSlices ---------- */

#define LABEL_REPLICATED "liqo.io/replicated"
#define LABEL_ORIGIN_ID "liqo.io/originID"

/* The consumer id a replicated slice names, after its labels agree; NULL after deny. */
static const char *slice_consumer(json_object *slice, tg_approve_decision *d)
{
    const char *consumer = tg_json_path_string(slice, "spec", "consumerClusterID", NULL);
    const char *replicated = tg_json_path_string(slice, "metadata", "labels", LABEL_REPLICATED, NULL);
    const char *origin = tg_json_path_string(slice, "metadata", "labels", LABEL_ORIGIN_ID, NULL);

    if (!consumer || !*consumer) {
        deny(d, tg_reason_name(TG_MALFORMED_RESOURCE_SLICE), "expected spec.consumerClusterID, found none");
        return NULL;
    }
    if (!tg_cluster_id_valid(consumer)) {
        deny(d, tg_reason_name(TG_INVALID_CLUSTER_ID), "spec.consumerClusterID: expected a cluster id, found \"%.64s\"",
             consumer);
        return NULL;
    }
    if (!replicated || strcmp(replicated, "true") != 0 || !origin || strcmp(origin, consumer) != 0) {
        deny(d, tg_reason_name(TG_LABEL_MISMATCH), "expected labels %s=true and %s=%s, found %s and %.64s",
             LABEL_REPLICATED, LABEL_ORIGIN_ID, consumer, replicated ? replicated : "none", origin ? origin : "none");
        return NULL;
    }
    return consumer;
}

/* The Tenant of consumer in ns: present, not being deleted, not Drained; its
 * key (NULL for TolerateNoHandshake) into *key. 0, or -1 after deny. */
static int slice_tenant(json_object *tenant, const char *ns, const char *consumer, const tg_approve_policy *p,
                        tg_tenant *t, tg_approve_decision *d)
{
    tg_verdict v;

    if (!tenant)
        return deny(d, tg_reason_name(TG_SLICE_TENANT_NOT_FOUND), "expected a Tenant of %s in namespace %s, found none",
                    consumer, ns);
    if (tg_json_path(tenant, "metadata", "deletionTimestamp", NULL))
        return deny(d, TG_DENY_TENANT_DELETED, "Tenant %s is being deleted", consumer);
    tg_verdict_init(&v);
    if (tg_tenant_from_json(tenant, t, &v) != 0)
        return deny(d, tg_reason_name(v.reason), "the Tenant of %s: %s", consumer, v.message);
    if (strcmp(t->cluster_id, consumer) != 0)
        return deny(d, tg_reason_name(TG_SLICE_TENANT_NOT_FOUND), "expected a Tenant of %s, found one of %.64s",
                    consumer, t->cluster_id);
    if (t->condition == TG_CONDITION_DRAINED)
        return deny(d, tg_reason_name(TG_SLICE_TENANT_DRAINED),
                    "expected the Tenant of %s to be Active or Cordoned, found Drained", consumer);
    if (t->authz_policy == TG_POLICY_TOLERATE_NO_HANDSHAKE && !p->allow_no_handshake)
        return deny(d, tg_reason_name(TG_MALFORMED_TENANT), "the Tenant of %s is TolerateNoHandshake, not allowed here",
                    consumer);
    if (t->authz_policy != TG_POLICY_TOLERATE_NO_HANDSHAKE && t->public_key.len == 0)
        return deny(d, tg_reason_name(TG_CSR_PUBLIC_KEY_MISMATCH), "the Tenant of %s has no spec.publicKey", consumer);
    return 0;
}

/* The decoded spec.csr of a slice (PEM text, malloc'd); NULL after deny. */
static unsigned char *slice_request(json_object *slice, size_t *len, tg_approve_decision *d)
{
    const char *b64 = tg_json_path_string(slice, "spec", "csr", NULL);
    char err[128];
    unsigned char *pem;

    if (!b64 || !*b64) {
        deny(d, tg_reason_name(TG_MALFORMED_RESOURCE_SLICE), "expected spec.csr, found none");
        return NULL;
    }
    if (!(pem = tg_base64_decode(b64, strlen(b64), len, err, sizeof(err))))
        deny(d, tg_reason_name(TG_MALFORMED_RESOURCE_SLICE), "spec.csr: expected base64, found %s", err);
    return pem;
}

/* slice_request and the subject/key checks; the request (malloc'd) or NULL after deny. */
static unsigned char *slice_checked_request(json_object *slice, json_object *tenant, const tg_approve_policy *p,
                                            size_t *len, tg_approve_decision *d)
{
    const char *ns = tg_json_path_string(slice, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(slice, "metadata", "name", NULL);
    const char *consumer;
    char want_ns[128];
    unsigned char *pem = NULL;
    tg_tenant t;
    tg_verdict v;
    tg_bytes csr;

    memset(&t, 0, sizeof(t));
    if (!(consumer = slice_consumer(slice, d)))
        return NULL;
    snprintf(want_ns, sizeof(want_ns), TG_TENANT_NAMESPACE_PREFIX "%s", consumer);
    if (!ns || strcmp(ns, want_ns) != 0) {
        deny(d, tg_reason_name(TG_WRONG_NAMESPACE), "expected the slice in %s (the tenant namespace of %s), found %.64s",
             want_ns, consumer, ns ? ns : "none");
        return NULL;
    }
    if (slice_tenant(tenant, ns, consumer, p, &t, d) != 0 || !(pem = slice_request(slice, len, d)))
        goto out;
    tg_verdict_init(&v);
    csr = (tg_bytes){.data = pem, .len = *len};
    if (tg_slice_csr_check(&csr, name ? name : "", consumer,
                           t.authz_policy == TG_POLICY_TOLERATE_NO_HANDSHAKE ? NULL : &t.public_key, &v) != 0) {
        deny(d, tg_reason_name(v.reason), "%s", v.message);
        free(pem);
        pem = NULL;
    }
out:
    tg_tenant_clear(&t);
    return pem;
}

int tg_slice_auth_decide(json_object *slice, json_object *tenant, const tg_approve_policy *policy,
                         tg_approve_decision *out)
{
    size_t len = 0;
    unsigned char *pem;

    memset(out, 0, sizeof(*out));
    if (!slice) {
        deny(out, TG_DENY_NO_SLICE, "expected a ResourceSlice, found none");
        return 0;
    }
    if (!(pem = slice_checked_request(slice, tenant, policy, &len, out)))
        return 0;
    free(pem);
    out->approve = 1;
    snprintf(out->reason, sizeof(out->reason), "%s", TG_APPROVE_REASON_SLICE);
    snprintf(out->message, sizeof(out->message), "spec.csr matches the Tenant of %s",
             tg_json_path_string(slice, "spec", "consumerClusterID", NULL));
    return 1;
}

int tg_approve_decide_slice(json_object *csr, json_object *slice, json_object *tenant,
                            const tg_approve_policy *policy, tg_approve_decision *out)
{
    const char *label = tg_json_path_string(csr, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    const char *ref = tg_json_path_string(csr, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
    const char *consumer;
    unsigned char *want = NULL, *got = NULL;
    size_t want_len = 0, got_len = 0;

    memset(out, 0, sizeof(*out));
    if (check_signer(csr, policy, out) != 0 || check_usages(csr, out) != 0)
        return 0;
    if (!slice) {
        deny(out, TG_DENY_NO_SLICE, "expected an admitted ResourceSlice %.300s, found none", ref ? ref : "(none named)");
        return 0;
    }
    if (tg_json_path(slice, "metadata", "deletionTimestamp", NULL)) {
        deny(out, TG_DENY_SLICE_DELETED, "ResourceSlice %.300s is being deleted", ref ? ref : "?");
        return 0;
    }
    consumer = tg_json_path_string(slice, "spec", "consumerClusterID", NULL);
    if (!label || !consumer || strcmp(label, consumer) != 0) {
        deny(out, tg_reason_name(TG_LABEL_MISMATCH), "expected label %s=%.64s, found %.64s", TG_LABEL_REMOTE_CLUSTER_ID,
             consumer ? consumer : "?", label ? label : "none");
        return 0;
    }
    if (!(want = slice_checked_request(slice, tenant, policy, &want_len, out)))
        return 0;
    if ((got = csr_request(csr, &got_len, out))) {
        /* Same subject and key is not enough: only the admitted request is signed. */
        if (got_len != want_len || memcmp(got, want, got_len) != 0)
            deny(out, TG_DENY_REQUEST_SLICE, "expected the request of ResourceSlice %.300s, found a different one",
                 ref ? ref : "?");
        else {
            out->approve = 1;
            snprintf(out->reason, sizeof(out->reason), "%s", TG_APPROVE_REASON_SLICE);
            snprintf(out->message, sizeof(out->message), "request matches ResourceSlice %.300s of %s, validated",
                     ref ? ref : "?", consumer);
        }
    }
    free(got);
    free(want);
    return out->approve;
}

int tg_slice_user_slice_name(const char *user, char *name, size_t len)
{
    size_t n = user ? strlen(user) : 0, i;

    if (n < 1 + 1 + 12 || user[n - 13] != '-' || n - 13 >= len)
        return -1;
    for (i = n - 12; i < n; i++)
        if (!((user[i] >= '0' && user[i] <= '9') || (user[i] >= 'a' && user[i] <= 'f')))
            return -1;
    memcpy(name, user, n - 13);
    name[n - 13] = '\0';
    return 0;
}

static size_t array_len(json_object *a)
{
    return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

int tg_approve_slice_user_free(json_object *slice, json_object *tenants, tg_approve_decision *out)
{
    const char *name = tg_json_path_string(slice, "metadata", "name", NULL);
    const char *consumer = tg_json_path_string(slice, "spec", "consumerClusterID", NULL);
    char user[TG_SLICE_USER_MAX];
    size_t i;

    if (!out->approve || tg_slice_user_name(name, consumer, user, sizeof(user)) != 0)
        return out->approve;
    for (i = 0; i < array_len(tenants); i++) {
        json_object *t = json_object_array_get_idx(tenants, i);
        const char *tname = tg_json_path_string(t, "metadata", "name", NULL);
        const char *tcid = tg_json_path_string(t, "spec", "clusterID", NULL);
        const char *tns = tg_json_path_string(t, "metadata", "namespace", NULL);

        if ((tname && strcmp(tname, user) == 0) || (tcid && strcmp(tcid, user) == 0))
            return deny(out, TG_DENY_USER_TAKEN, "expected slice user %s to be nobody else's, found it the cluster id "
                        "of Tenant %.64s/%.64s (its ControlPlane user)", user, tns ? tns : "?", tname ? tname : "?"), 0;
    }
    return out->approve;
}

int tg_approve_cluster_id_free(const char *cid, json_object *slices, tg_approve_decision *out)
{
    char user[TG_SLICE_USER_MAX];
    size_t i;

    if (!out->approve || !cid)
        return out->approve;
    for (i = 0; i < array_len(slices); i++) {
        json_object *sl = json_object_array_get_idx(slices, i);
        const char *name = tg_json_path_string(sl, "metadata", "name", NULL);
        const char *consumer = tg_json_path_string(sl, "spec", "consumerClusterID", NULL);
        const char *ns = tg_json_path_string(sl, "metadata", "namespace", NULL);

        if (tg_slice_user_name(name, consumer, user, sizeof(user)) == 0 && strcmp(user, cid) == 0)
            return deny(out, TG_DENY_USER_TAKEN, "expected cluster id %.64s to be nobody else's, found it the user of "
                        "ResourceSlice %.64s/%.253s of %.64s", cid, ns ? ns : "?", name, consumer), 0;
    }
    return out->approve;
}

int tg_csr_made_by(json_object *csr, const char *user)
{
    const char *by;

    if (user == NULL)
        return 1;
    by = tg_json_path_string(csr, "spec", "username", NULL);
    return by != NULL && strcmp(by, user) == 0;
}
