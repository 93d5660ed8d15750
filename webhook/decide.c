/* decide.c - validate and mutate decisions for Tenants. */
#include "decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/name_owner.h"
#include "pki/tenant.h"
#include "webhook/nonce_secret.h"
#include "webhook/placement.h"

#include <openssl/crypto.h>

void tg_decision_init(tg_decision *d)
{
    memset(d, 0, sizeof(*d));
    tg_verdict_init(&d->verdict);
    d->reason = tg_reason_name(TG_ACCEPTED);
    d->response.allowed = 1;
}

void tg_decision_clear(tg_decision *d)
{
    free(d->patch);
    d->patch = NULL;
}

/* An answer that is not a verdict (429, 5xx) says when to ask again: the API
 * server passes status.details.retryAfterSeconds on as a Retry-After header,
 * and client-go (kubectl) retries such a request by itself, up to 10 times.
 * So a kubectl apply made while the webhook is still syncing, or while its
 * live reads are busy, waits for the answer instead of failing. */
static int retry_after_for(int code)
{
    return code == 429 || code >= 500 ? TG_RETRY_AFTER_SECONDS : 0;
}

/* Fill the response from the verdict: the message always starts with the
 * reason code so scripts and humans can match on it. */
void tg_decision_finish(tg_decision *d)
{
    tg_review_response *r = &d->response;

    d->reason = tg_reason_name(d->verdict.reason);
    r->allowed = d->verdict.reason == TG_ACCEPTED;
    /* No warnings: a raw Ed25519 key is the form every Liqo version reads (our
     * consumer's default too), and a PEM one is just as valid. */
    r->nwarnings = 0;
    if (!r->allowed) {
        r->code = d->verdict.code;
        snprintf(d->message, sizeof(d->message), "%s: %s", d->reason, d->verdict.message);
        r->message = d->message;
        r->reason = r->code == 403 ? "Forbidden" : (r->code >= 500 ? "InternalError" : "BadRequest");
        r->retry_after_s = retry_after_for(r->code);
    }
}

void tg_decide_error(tg_decision *d, tg_reason reason, const char *message)
{
    int code = tg_reason_status(reason);

    tg_decision_init(d);
    d->reason = tg_reason_name(reason);
    d->response.allowed = 0;
    d->response.code = code;
    snprintf(d->message, sizeof(d->message), "%s: %s", d->reason, message);
    /* same one-line rule as verdicts */
    for (char *p = d->message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    d->response.message = d->message;
    d->response.reason = code >= 500 ? "InternalError" : (code == 429 ? "TooManyRequests" : "BadRequest");
    d->response.retry_after_s = retry_after_for(code);
}

/* Only CREATE and UPDATE of the tenants resource itself; DELETE and /status
 * are not ours to judge (PROTOCOL.md 5). */
static int intercepted(const tg_review_request *req)
{
    return (req->op == TG_OP_CREATE || req->op == TG_OP_UPDATE) &&
           strcmp(req->resource_group, TG_TENANT_GROUP) == 0 &&
           strcmp(req->resource, TG_TENANT_RESOURCE) == 0 && req->sub_resource[0] == '\0';
}

#define SHOWN TG_SHOWN

/* An UPDATE whose proof is what was already admitted (PROTOCOL.md 5): compare the
 * base64 text of publicKey, csr and signature in oldObject and object. */
static int proof_unchanged(const tg_review_request *req)
{
    static const char *const fields[] = {"publicKey", "csr", "signature"};

    if (req->op != TG_OP_UPDATE || !req->old_object || !req->object)
        return 0;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const char *a = tg_json_path_string(req->object, "spec", fields[i], NULL);
        const char *b = tg_json_path_string(req->old_object, "spec", fields[i], NULL);
        if (!a || !b || strcmp(a, b) != 0)
            return 0;
    }
    return 1;
}

/* Liqo names a Tenant after the consumer (PROTOCOL.md 3): a copy under another
 * name, in a second namespace labelled for the same cluster, would otherwise
 * pass every other check. generateName gives a name that is never the id
 * (the API server fills it in before validation, or leaves it empty). */
static int check_name(const tg_review_request *req, const tg_tenant *t, tg_verdict *v)
{
    const char *name = req->name[0] ? req->name : (t->name ? t->name : "");

    /* An invalid or missing id is step 3's (or 1's) to report. */
    if (!tg_cluster_id_valid(t->cluster_id) || strcmp(name, t->cluster_id) == 0)
        return 0;
    if (!name[0])
        return tg_verdict_deny(v, TG_NAME_MISMATCH,
                               "expected metadata.name to equal spec.clusterID \"%s\", found none "
                               "(generateName is not supported)",
                               t->cluster_id);
    return tg_verdict_deny(v, TG_NAME_MISMATCH, "expected metadata.name to equal spec.clusterID \"%s\", found \"%.*s\"",
                           t->cluster_id, SHOWN, name);
}

/* The consumer's ControlPlane user is its cluster id: it must not be the
 * user of a ResourceSlice already there (<slice>-<12 hex>), whose
 * certificate would then act as this consumer. */
static int check_slice_user(const tg_lookup *lk, const char *cluster_id, tg_verdict *v)
{
    char where[TG_LOOKUP_WHERE_MAX];

    if (!tg_cluster_id_valid(cluster_id) || !lk->ops->slice_user_exists(lk, cluster_id, where))
        return 0;
    return tg_verdict_deny_code(v, 403, TG_DUPLICATE,
                                "expected spec.clusterID %s to be no ResourceSlice's user, found the user of "
                                "ResourceSlice %.*s",
                                cluster_id, (int)sizeof(where), where);
}

/* One owner per name (PROTOCOL.md 3): the cluster id becomes the consumer's
 * ControlPlane user. Not in a reserved form, and not a name another issuing
 * path or holder claimed (tenantgate-auth's /identity/certificate, a slice):
 * a claim of the Tenant flow for this very id is a re-authentication. */
static int check_name_owner(const tg_lookup *lk, const char *cluster_id, tg_verdict *v)
{
    char why[200], path[16], holder[TG_LOOKUP_WHERE_MAX];

    if (!tg_cluster_id_valid(cluster_id))
        return 0;   /* InvalidClusterID, later */
    if (tg_name_reserved(cluster_id, NULL, why, sizeof(why)))
        return tg_verdict_deny_code(v, 403, TG_NAME_RESERVED, "spec.clusterID: %s, found \"%s\"", why, cluster_id);
    if (!lk->ops->name_claim || lk->ops->name_claim(lk, cluster_id, path, holder) != TG_LOOKUP_FOUND ||
        (tg_name_path_parse(path) == TG_NAME_PATH_TENANT && strcmp(holder, cluster_id) == 0))
        return 0;
    return tg_verdict_deny_code(v, 403, TG_NAME_OWNED,
                                "expected spec.clusterID %s to be unclaimed or claimed by the Tenant flow for itself, "
                                "found NameClaim of path %.15s holder %.*s",
                                cluster_id, path, SHOWN, holder);
}

/* Step 2. The namespace is the request's (an object may omit it on CREATE). */
static int check_placement(const tg_review_request *req, const tg_tenant *t, const char *ns,
                           const tg_lookup *lk, tg_verdict *v)
{
    const char *name = req->name[0] ? req->name : (t->name ? t->name : "");

    if (tg_placement_tenant_namespace(lk, ns, v) != 0)
        return -1;
    if (!t->label_cluster_id || strcmp(t->label_cluster_id, t->cluster_id) != 0)
        return tg_verdict_deny_code(v, 400, TG_LABEL_MISMATCH,
                                    "expected label %s=%.*s (spec.clusterID), found %s%.*s%s",
                                    TG_LABEL_REMOTE_CLUSTER_ID, SHOWN, t->cluster_id,
                                    t->label_cluster_id ? "\"" : "", SHOWN,
                                    t->label_cluster_id ? t->label_cluster_id : "no such label",
                                    t->label_cluster_id ? "\"" : "");
    if (tg_placement_owner(lk, ns, t->cluster_id, "spec.clusterID", v) != 0)
        return -1;

    if (req->op == TG_OP_CREATE) {
        size_t n = lk->ops->tenants_in_namespace(lk, ns);
        if (n > 0)
            return tg_verdict_deny_code(v, 403, TG_DUPLICATE,
                                        "expected no other Tenant in namespace %.*s, found %zu", SHOWN, ns,
                                        n);
        if (name[0] && lk->ops->tenant_name_exists(lk, name))
            return tg_verdict_deny_code(v, 403, TG_DUPLICATE,
                                        "expected no other Tenant named %.*s in any namespace, found one",
                                        SHOWN, name);
        if (check_slice_user(lk, t->cluster_id, v) != 0 || check_name_owner(lk, t->cluster_id, v) != 0)
            return -1;
    }
    /* After the duplicates, so that both stay reachable. The name cannot
     * change after CREATE: an UPDATE that keeps the proof of a Tenant admitted
     * before this rule existed is let through. */
    if ((req->op == TG_OP_CREATE || !proof_unchanged(req)) && check_name(req, t, v) != 0)
        return -1;
    return 0;
}

/* Step 5's denial says which Secret was looked at and what was there. */
static void deny_nonce(const tg_tenant *t, const char *ns, tg_nonce_state st, tg_verdict *v)
{
    unsigned warnings = v->warnings;

    tg_verdict_deny(v, TG_NONCE_NOT_FOUND,
                    "expected Secret %.*s/%s labelled %s=true and %s=%.*s with a non-empty data.%s, %s", SHOWN, ns,
                    TG_NONCE_SECRET_NAME, TG_LABEL_NONCE, TG_LABEL_REMOTE_CLUSTER_ID, SHOWN, t->cluster_id,
                    TG_NONCE_DATA_KEY, tg_nonce_state_found(st));
    v->warnings = warnings;
}

void tg_decide_validate(const tg_review_request *req, const tg_lookup *lk,
                        const tg_decide_opts *opts, tg_decision *d)
{
    tg_tenant t = {0};
    tg_check_opts check_opts = {.allow_no_handshake = opts ? opts->allow_no_handshake : 0};
    const char *ns;
    char nonce[TG_LOOKUP_NONCE_MAX];
    const char *nonce_text = NULL;
    size_t nonce_len = 0;
    tg_nonce_state nonce_state = TG_NONCE_ABSENT;

    tg_decision_init(d);
    if (!intercepted(req)) {
        d->reason = tg_reason_name(TG_NOT_INTERCEPTED);
        return;
    }
    d->intercepted = 1;

    /* 1: decode. */
    if (!req->object) {
        tg_verdict_deny(&d->verdict, TG_MALFORMED_TENANT, "request.object: expected a Tenant, found none");
        goto out;
    }
    if (tg_tenant_from_json(req->object, &t, &d->verdict) != 0)
        goto out;
    ns = req->namespace_[0] ? req->namespace_ : (t.namespace_ ? t.namespace_ : "");
    /* Only valid names may reach the live read's URL (a namespace name is a
     * DNS label: the cluster id's pattern). */
    if (tg_cluster_id_valid(t.cluster_id) && tg_cluster_id_valid(ns)) {
        snprintf(d->cluster_id, sizeof(d->cluster_id), "%s", t.cluster_id);
        snprintf(d->nonce_namespace, sizeof(d->nonce_namespace), "%s", ns);
    }

    /* Everything past here reads the caches: without them we cannot tell, and
     * an error (not a denial reason) lets failurePolicy decide. */
    if (!lk->ops->synced(lk) || !lk->ops->slice_user_exists) {
        tg_tenant_clear(&t);
        tg_decide_error(d, TG_CACHE_NOT_SYNCED, "cache not synced, retry later");
        d->intercepted = 1;
        return;
    }

    /* 2: placement. */
    if (check_placement(req, &t, ns, lk, &d->verdict) != 0)
        goto out;

    /* UPDATE that keeps the proof: only the cheap checks. */
    if (t.authz_policy == TG_POLICY_KEYS_EXCHANGE && proof_unchanged(req)) {
        d->crypto_skipped = 1;
        if (!tg_cluster_id_valid(t.cluster_id))
            tg_verdict_deny(&d->verdict, TG_INVALID_CLUSTER_ID,
                            "spec.clusterID: expected ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ of at most 63 "
                            "characters, found \"%.*s\"",
                            SHOWN, t.cluster_id);
        goto out;
    }

    /* 5: the nonce of this namespace, from the cache, else from the caller's
     * live read. */
    if (t.authz_policy == TG_POLICY_KEYS_EXCHANGE) {
        if (opts && opts->live_nonce_done) {
            nonce_text = opts->live_nonce;
            nonce_len = opts->live_nonce ? opts->live_nonce_len : 0;
            nonce_state = opts->live_nonce ? TG_NONCE_FOUND : opts->live_nonce_state;
        } else if (t.cluster_id &&
                   (nonce_state = lk->ops->nonce_secret(lk, ns, t.cluster_id, nonce, &nonce_len)) == TG_NONCE_FOUND) {
            nonce_text = nonce;
        }
    }

    /* 3, 4, 6-10. */
    tg_tenant_check(&t, nonce_text, nonce_len, &check_opts, &d->verdict);
    if (d->verdict.reason == TG_NONCE_NOT_FOUND) {
        deny_nonce(&t, ns, nonce_state == TG_NONCE_FOUND ? TG_NONCE_EMPTY : nonce_state, &d->verdict);
        if (!(opts && opts->live_nonce_done) && d->cluster_id[0])
            d->need_live_nonce = 1;
    } else if (d->verdict.reason == TG_SIGNATURE_VERIFICATION_FAILED && nonce_text == nonce && d->cluster_id[0]) {
        /* The cached nonce may be one a rotation has just replaced (the
         * signer rotates it when a Tenant is deleted, and a consumer that
         * authenticates at once signs the new one): ask the API server
         * before calling the signature wrong. */
        d->need_live_nonce = 1;
    }

out:
    /* The nonce is a secret: do not leave it on the stack. */
    OPENSSL_cleanse(nonce, sizeof(nonce));
    tg_tenant_clear(&t);
    tg_decision_finish(d);
}

void tg_decide_mutate(const tg_review_request *req, tg_decision *d)
{
    json_object *labels, *metadata, *patch = NULL, *op = NULL, *value = NULL;
    const char *cluster_id, *text;
    char path[128];

    tg_decision_init(d);
    if (!intercepted(req) || !req->object) {
        d->reason = tg_reason_name(TG_NOT_INTERCEPTED);
        return;
    }
    d->intercepted = 1;
    d->reason = tg_reason_name(TG_UNCHANGED);
    cluster_id = tg_json_path_string(req->object, "spec", "clusterID", NULL);
    /* A missing or invalid id is for validation to reject with its reason;
     * copying it into a label would only produce a less clear API error. */
    if (!cluster_id || !tg_cluster_id_valid(cluster_id))
        return;
    metadata = tg_json_path(req->object, "metadata", NULL);
    labels = tg_json_path(req->object, "metadata", "labels", NULL);
    if (labels && json_object_is_type(labels, json_type_object) &&
        json_object_object_get_ex(labels, TG_LABEL_REMOTE_CLUSTER_ID, NULL))
        return;                      /* present: validation compares it */

    /* JSON Pointer: "/" inside the key is "~1" (RFC 6901). */
    if (labels && json_object_is_type(labels, json_type_object)) {
        snprintf(path, sizeof(path), "/metadata/labels/liqo.io~1remote-cluster-id");
        value = json_object_new_string(cluster_id);
    } else if (metadata && json_object_is_type(metadata, json_type_object)) {
        snprintf(path, sizeof(path), "/metadata/labels");
        value = json_object_new_object();
        if (value)
            json_object_object_add(value, TG_LABEL_REMOTE_CLUSTER_ID, json_object_new_string(cluster_id));
    } else {
        return;                      /* no metadata: not an object the API server stores */
    }
    patch = json_object_new_array();
    op = json_object_new_object();
    if (!patch || !op || !value)
        goto oom;
    json_object_object_add(op, "op", json_object_new_string("add"));
    json_object_object_add(op, "path", json_object_new_string(path));
    json_object_object_add(op, "value", value);
    value = NULL;
    json_object_array_add(patch, op);
    op = NULL;
    text = json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!text || !(d->patch = strdup(text)))
        goto oom;
    d->response.patch = d->patch;
    d->response.patch_len = strlen(d->patch);
    d->reason = tg_reason_name(TG_LABEL_ADDED);
    json_object_put(patch);
    return;
oom:
    json_object_put(value);
    json_object_put(op);
    json_object_put(patch);
    tg_decide_error(d, TG_INTERNAL_ERROR, "out of memory building the patch");
}
