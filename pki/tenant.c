/* tenant.c - the admission decision over a decoded Tenant (PROTOCOL.md 5). */
#include "tenant.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "csr_check.h"
#include "keys_internal.h"
#include "nonce.h"

#define CLUSTER_ID_MAX 63
/* Untrusted ids are echoed in messages: cap them. */
#define SHOWN_MAX 64

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int tg_cluster_id_valid(const char *id)
{
    size_t n;

    if (id == NULL)
        return 0;
    n = strlen(id);
    if (n == 0 || n > CLUSTER_ID_MAX || !is_lower_alnum(id[0]) || !is_lower_alnum(id[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_lower_alnum(id[i]) && id[i] != '-')
            return 0;
    return 1;
}

/* Step 3, and the presence of spec.clusterID it needs (step 1). */
static int check_cluster_id(const tg_tenant *t, tg_verdict *v)
{
    if (t->cluster_id == NULL)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "expected spec.clusterID, found none");
    if (!tg_cluster_id_valid(t->cluster_id)) {
        size_t n = strlen(t->cluster_id);
        return tg_verdict_deny(v, TG_INVALID_CLUSTER_ID,
                               "spec.clusterID: expected at most %d characters of [a-z0-9-], starting and ending "
                               "alphanumeric, found \"%.*s%s\" (%zu characters)",
                               CLUSTER_ID_MAX, SHOWN_MAX, t->cluster_id, n > SHOWN_MAX ? "..." : "", n);
    }
    return 0;
}

/* Step 1 for the fields only the handshake needs. */
static int check_handshake_fields(const tg_tenant *t, tg_verdict *v)
{
    static const struct {
        size_t offset;
        const char *name;
    } fields[] = {
        {offsetof(tg_tenant, public_key), "spec.publicKey"},
        {offsetof(tg_tenant, csr), "spec.csr"},
        {offsetof(tg_tenant, signature), "spec.signature"},
    };

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const tg_bytes *b = (const tg_bytes *)((const char *)t + fields[i].offset);
        if (b->data == NULL || b->len == 0)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                                   "expected %s for authzPolicy KeysExchange, found none", fields[i].name);
    }
    return 0;
}

int tg_tenant_check(const tg_tenant *t, const char *nonce, size_t nonce_len,
                    const tg_check_opts *opts, tg_verdict *v)
{
    tg_pubkey key;
    int was_raw = 0, rc = -1;

    tg_verdict_init(v);
    if (t == NULL)
        return tg_verdict_deny(v, TG_MALFORMED_TENANT, "expected a Tenant, found nothing");

    if (t->authz_policy == TG_POLICY_TOLERATE_NO_HANDSHAKE) {
        if (opts == NULL || !opts->allow_no_handshake)
            return tg_verdict_deny(v, TG_MALFORMED_TENANT,
                                   "spec.authzPolicy: expected KeysExchange (this provider has TolerateNoHandshake "
                                   "disabled), found TolerateNoHandshake");
        return check_cluster_id(t, v);
    }

    if (check_cluster_id(t, v) != 0 || check_handshake_fields(t, v) != 0)
        return -1;

    /* Step 4. */
    if (tg_pubkey_parse(t->public_key.data, t->public_key.len, &was_raw, v, &key) != 0)
        return -1;
    if (was_raw)
        v->warnings |= TG_WARN_RAW_PUBLIC_KEY;

    /* Step 5: the caller looked the nonce up. */
    if (nonce == NULL || nonce_len == 0) {
        tg_verdict_deny(v, TG_NONCE_NOT_FOUND,
                        "expected a nonce issued for cluster %.*s (secret liqo-nonce in its tenant namespace), found none",
                        SHOWN_MAX, t->cluster_id);
        goto out;
    }

    /* Step 6. */
    if (!tg_pubkey_verify(&key, (const unsigned char *)nonce, nonce_len, t->signature.data, t->signature.len)) {
        tg_verdict_deny(v, TG_SIGNATURE_VERIFICATION_FAILED,
                        "spec.signature: expected a signature of the issued nonce by spec.publicKey, found %zu bytes "
                        "that do not verify",
                        t->signature.len);
        goto out;
    }

    /* Steps 7-10. */
    rc = tg_csr_check_with_key(t->csr.data, t->csr.len, t->cluster_id, key.spki_der, key.spki_len, &key, v, NULL);
out:
    tg_pubkey_clear(&key);
    return rc;
}

void tg_tenant_clear(tg_tenant *t)
{
    if (t == NULL)
        return;
    free(t->name);
    free(t->namespace_);
    free(t->label_cluster_id);
    free(t->cluster_id);
    free(t->public_key.data);
    free(t->csr.data);
    free(t->signature.data);
    free(t->proxy_url);
    memset(t, 0, sizeof(*t));
}
