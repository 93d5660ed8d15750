/* fuzz_tenant_doc.c - libFuzzer: bytes -> tg_doc_parse -> tg_tenant_from_json
 * -> tg_tenant_check, the path a user's or an attacker's Tenant takes through
 * `kubectl-tenantgate check` and the webhook. Beyond "no crash, no leak" it
 * checks the contracts callers rely on: a refusal has a reason of the right
 * kind and a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/tenant_json.h"
#include "kube/yaml.h"
#include "pki/nonce.h"
#include "pki/tenant.h"

/* The nonce of the seed vectors, so seeds built from them reach the
 * signature and CSR checks. */
static const char nonce[] =
    "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";

static void check_verdict(const tg_verdict *v)
{
    if ((unsigned)v->reason >= TG_REASON_COUNT)
        abort();
    if (v->reason != TG_ACCEPTED && v->message[0] == '\0')
        abort();
    for (const char *p = v->message; *p; p++)
        if ((unsigned char)*p < 0x20)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_object *doc = tg_doc_parse((const char *)data, size, err, sizeof(err));
    tg_tenant t;
    tg_verdict v;

    if (doc == NULL) {
        if (err[0] == '\0')
            abort();                 /* a failure must say why */
        return 0;
    }
    tg_verdict_init(&v);
    if (tg_tenant_from_json(doc, &t, &v) != 0) {
        if (v.reason != TG_MALFORMED_TENANT)
            abort();
        check_verdict(&v);
        if (t.cluster_id != NULL || t.csr.data != NULL)
            abort();                 /* refused: nothing handed back */
    } else {
        /* Both settings of the operator's switch, as the last input byte says. */
        tg_check_opts opts = { .allow_no_handshake = size > 0 && (data[size - 1] & 1) };

        tg_tenant_check(&t, nonce, TG_NONCE_TEXT_LEN, &opts, &v);
        check_verdict(&v);
        tg_tenant_clear(&t);
    }
    json_object_put(doc);
    return 0;
}
