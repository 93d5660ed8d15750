/* slice.c - a ResourceSlice's user name and CSR. */
#include "slice.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "csr.h"
#include "csr_check.h"
#include "keys_internal.h"

#define HASH_HEX 12

int tg_slice_user_name(const char *name, const char *consumer_id, char *out, size_t out_len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    size_t n;

    if (name == NULL || consumer_id == NULL || !*name || !*consumer_id)
        return -1;
    n = strlen(name);
    if (n + 1 + HASH_HEX + 1 > out_len)
        return -1;
    if (!EVP_Digest(consumer_id, strlen(consumer_id), md, &md_len, EVP_sha256(), NULL))
        return -1;
    memcpy(out, name, n);
    out[n] = '-';
    for (int i = 0; i < HASH_HEX / 2; i++)
        snprintf(out + n + 1 + 2 * i, 3, "%02x", md[i]);
    return 0;
}

char *tg_slice_csr_build(EVP_PKEY *key, const char *name, const char *consumer_id, size_t *pem_len)
{
    return tg_slice_csr_build_group(key, name, consumer_id, NULL, pem_len);
}

char *tg_slice_csr_build_group(EVP_PKEY *key, const char *name, const char *consumer_id, const char *group,
                               size_t *pem_len)
{
    char cn[TG_SLICE_USER_MAX];

    if (tg_slice_user_name(name, consumer_id, cn, sizeof(cn)) != 0)
        return NULL;
    /* the group in place of O=<consumer>: see tg_slice_csr_check */
    return group ? tg_csr_build_subject(key, cn, group, pem_len) : tg_csr_build_subject(key, cn, consumer_id, pem_len);
}

int tg_slice_csr_check(const tg_bytes *csr, const char *name, const char *consumer_id, const tg_bytes *tenant_key,
                       tg_verdict *v)
{
    char cn[TG_SLICE_USER_MAX];
    tg_csr_subject want = {.cn = cn,
                           .cn_source = "<metadata.name>-<sha256(spec.consumerClusterID)[:12]>",
                           .org = consumer_id,
                           .org_source = "spec.consumerClusterID",
                           .any_key = tenant_key == NULL,
                           /* or the slice user's own per-certificate group in
                            * its place (docs/revocation.md "Slices") */
                           .allow_cert_group = 1,
                           .group_replaces_org = 1};
    tg_pubkey key = {0};
    int was_raw = 0, have_key = 0, rc;
    tg_verdict kv;

    if (csr == NULL || csr->data == NULL || csr->len == 0)
        return tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a PEM CERTIFICATE REQUEST, found none");
    if (tg_slice_user_name(name, consumer_id, cn, sizeof(cn)) != 0)
        return tg_verdict_deny(v, TG_MALFORMED_RESOURCE_SLICE,
                               "expected metadata.name and spec.consumerClusterID, found %s missing or too long",
                               name && *name ? "spec.consumerClusterID" : "metadata.name");
    if (tenant_key != NULL) {
        tg_verdict_init(&kv);
        if (tg_pubkey_parse(tenant_key->data, tenant_key->len, &was_raw, &kv, &key) != 0)
            return tg_verdict_deny(v, TG_CSR_PUBLIC_KEY_MISMATCH,
                                   "spec.csr: expected the key of the consumer's Tenant, found a Tenant whose "
                                   "spec.publicKey is unusable (%s)",
                                   tg_reason_name(kv.reason));
        have_key = 1;
    }
    rc = tg_csr_check_subject(csr->data, csr->len, &want, have_key ? key.spki_der : NULL, have_key ? key.spki_len : 0,
                              have_key ? &key : NULL, v, NULL);
    if (rc != 0 && v->reason == TG_CSR_PUBLIC_KEY_MISMATCH)
        /* The generic message speaks of spec.publicKey, which a slice has not. */
        snprintf(v->message, sizeof(v->message),
                 "spec.csr: expected the key of the Tenant of %.63s (its spec.publicKey), found another key",
                 consumer_id);
    if (have_key)
        tg_pubkey_clear(&key);
    return rc;
}

int tg_slice_class_is_default(const char *class_)
{
    return !class_ || !*class_ || strcmp(class_, "default") == 0;
}

int tg_slice_class_check(const char *class_, int default_enabled, tg_verdict *v)
{
    if (default_enabled || !tg_slice_class_is_default(class_))
        return 0;
    return tg_verdict_deny(v, TG_DEFAULT_SLICE_CLASS_DISABLED,
                           "spec.class: expected a class the provider offers, found %s%.*s%s: the default "
                           "ResourceSlice class is disabled on this provider (--default-resource-slice-class-"
                           "enabled=false)",
                           class_ && *class_ ? "\"" : "", 63, class_ && *class_ ? class_ : "none (the default class)",
                           class_ && *class_ ? "\"" : "");
}
