/* fuzz_review.c - libFuzzer: the bytes of a request body through the
 * AdmissionReview parser, the three decisions and the answer's JSON, as a worker
 * handles them. The lookups say yes to placement and hand out the seed's
 * nonce, so inputs reach the crypto checks. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "webhook/decide.h"
#include "webhook/review.h"
#include "webhook/slice_decide.h"

/* the nonce of the seed vectors (public test data, not a secret) */
static const char seed_nonce[] =
    "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";

static int f_synced(const tg_lookup *lk) { return 1; }

static int f_label(const tg_lookup *lk, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX],
                   int *ns_exists)
{
    *ns_exists = 1;
    /* the namespace's cluster label mirrors its name: liqo-tenant-<id> */
    if (strcmp(key, TG_LABEL_TENANT_NAMESPACE) == 0) {
        snprintf(value, TG_LABEL_VALUE_MAX, "true");
        return TG_LOOKUP_FOUND;
    }
    if (strncmp(ns, "liqo-tenant-", 12) == 0 && strlen(ns + 12) < TG_LABEL_VALUE_MAX) {
        snprintf(value, TG_LABEL_VALUE_MAX, "%s", ns + 12);
        return TG_LOOKUP_FOUND;
    }
    return TG_LOOKUP_NOT_FOUND;
}

static size_t f_count(const tg_lookup *lk, const char *ns) { return 0; }
static int f_exists(const tg_lookup *lk, const char *name) { return 0; }

static int f_nonce(const tg_lookup *lk, const char *ns, const char *id, char nonce[TG_LOOKUP_NONCE_MAX],
                   size_t *len)
{
    memcpy(nonce, seed_nonce, sizeof(seed_nonce));
    *len = sizeof(seed_nonce) - 1;
    return TG_NONCE_FOUND;
}

/* The consumer's Tenant exists, with the key of the corpus's slice CSRs: replicated
 * slices reach the CSR check. */
static const char seed_key_pem[] = "-----BEGIN PUBLIC KEY-----\n"
                                   "MCowBQYDK2VwAyEAyUKHDpY3ZEVfQcVT0vKp/I14bsElgu3ChSge3tzxjyc=\n"
                                   "-----END PUBLIC KEY-----\n";

static int f_tenant(const tg_lookup *lk, const char *ns, const char *id, tg_lookup_tenant *out)
{
    memset(out, 0, sizeof(*out));
    out->drained = id[0] == 'd';
    out->no_handshake = id[0] == 'n';
    if (!(out->public_key = malloc(sizeof(seed_key_pem))))
        return TG_LOOKUP_NOT_FOUND;
    memcpy(out->public_key, seed_key_pem, sizeof(seed_key_pem));
    out->public_key_len = sizeof(seed_key_pem) - 1;
    return TG_LOOKUP_FOUND;
}

static int f_slice_user(const tg_lookup *lk, const char *user, char where[TG_LOOKUP_WHERE_MAX]) { return 0; }

static const tg_lookup_ops ops = {
    .synced = f_synced,
    .namespace_label = f_label,
    .tenants_in_namespace = f_count,
    .tenant_name_exists = f_exists,
    .nonce_secret = f_nonce,
    .tenant_for_cluster = f_tenant,
    .local_slice_name_exists = f_exists,
    .tenant_cluster_id_exists = f_exists,
    .slice_user_exists = f_slice_user,
};

static void answer(const tg_review_request *req, const tg_decision *d)
{
    size_t len = 0;
    char *text = tg_review_response_json(req->version, req->uid, &d->response, &len);
    json_object *back;

    if (!text)
        abort();
    /* our answer is always strict JSON with the reason first in a denial */
    back = tg_json_parse(text, len, NULL, 0);
    if (!back)
        abort();
    if (!d->response.allowed && strncmp(d->response.message, d->reason, strlen(d->reason)) != 0)
        abort();
    json_object_put(back);
    free(text);
}

static tg_local_writers writers = {.n = 2, .entries = {{.group = 1, .name = "system:masters"}, {.name = "admin"}}};
static const tg_slice_opts slice_opts = {.cluster_id = "cool-firefly", .local_writers = &writers};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const tg_lookup lk = {.ops = &ops, .data = NULL};
    tg_decide_opts opts = {.allow_no_handshake = size & 1};
    tg_review_request req;
    tg_decision d;
    char err[256];

    if (tg_review_parse((const char *)data, size, &req, err, sizeof(err)) != 0) {
        tg_decide_error(&d, TG_MALFORMED_TENANT, err);
        answer(&req, &d);
        tg_review_request_clear(&req);
        return 0;
    }
    tg_decide_validate(&req, &lk, &opts, &d);
    if (d.need_live_nonce) {
        tg_decision_clear(&d);
        opts.live_nonce_done = 1;
        tg_decide_validate(&req, &lk, &opts, &d);
    }
    answer(&req, &d);
    tg_decision_clear(&d);
    tg_decide_mutate(&req, &d);
    answer(&req, &d);
    tg_decision_clear(&d);
    /* with this cluster's id known and a trusted writer, and with neither (fail closed) */
    tg_decide_validate_slice(&req, &lk, size & 2 ? &slice_opts : NULL, &d);
    answer(&req, &d);
    tg_decision_clear(&d);
    tg_review_request_clear(&req);
    return 0;
}
