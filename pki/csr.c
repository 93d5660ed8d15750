/* csr.c - the consumer's CSR: building it, and PROTOCOL.md 5 steps 7-10.
 *
 * The check is on the admission hot path. Two OpenSSL costs dominate it: the
 * CSR's self-signature (one more verify) and importing the CSR's public key.
 * So the SPKI DER is compared with the Tenant's first; when they are equal the
 * self-signature is verified with the Tenant's already-imported key. The
 * reported reasons keep the PROTOCOL.md order (7 -> 10) either way: a CSR with a
 * different key is still verified with its own key before step 10 is reported. */
#include "csr.h"
#include "csr_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "cert_group.h"
#include "digest_cache.h"
#include "ed25519.h"
#include "pem_block.h"
#include "spki.h"

/* Subject values are echoed in messages: cap them. */
#define SHOWN_MAX 64

/* Cluster ids are printable; anything else is stored as UTF8String. */
static int add_name_entry(X509_NAME *name, int nid, const char *value)
{
    int type = ASN1_PRINTABLE_type((const unsigned char *)value, -1) == V_ASN1_PRINTABLESTRING
                   ? V_ASN1_PRINTABLESTRING
                   : V_ASN1_UTF8STRING;

    return X509_NAME_add_entry_by_NID(name, nid, type, (const unsigned char *)value, -1, -1, 0);
}

char *tg_csr_build(EVP_PKEY *key, const char *cluster_id, size_t *pem_len)
{
    return tg_csr_build_subject(key, cluster_id, TG_CSR_ORGANIZATION, pem_len);
}

char *tg_csr_build_subject(EVP_PKEY *key, const char *cn, const char *org, size_t *pem_len)
{
    return tg_csr_build_group(key, cn, org, NULL, pem_len);
}

char *tg_csr_build_group(EVP_PKEY *key, const char *cn, const char *org, const char *group, size_t *pem_len)
{
    X509_REQ *req = NULL;
    X509_NAME *name = NULL;
    BIO *bio = NULL;
    const EVP_MD *md = NULL;
    char *pem = NULL;

    if (key == NULL || cn == NULL || *cn == '\0' || org == NULL || *org == '\0')
        return NULL;
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_ED25519 && (md = tg_sha256()) == NULL)
        return NULL;
    req = X509_REQ_new();
    name = X509_NAME_new();
    bio = BIO_new(BIO_s_mem());
    if (req == NULL || name == NULL || bio == NULL)
        goto out;
    /* O first, then CN: the order Liqo's Go code writes. */
    if (!add_name_entry(name, NID_organizationName, org) ||
        (group && !add_name_entry(name, NID_organizationName, group)) || !add_name_entry(name, NID_commonName, cn))
        goto out;
    if (!X509_REQ_set_version(req, X509_REQ_VERSION_1) || !X509_REQ_set_subject_name(req, name) ||
        !X509_REQ_set_pubkey(req, key))
        goto out;
    if (X509_REQ_sign(req, key, md) <= 0)
        goto out;
    if (PEM_write_bio_X509_REQ(bio, req))
        pem = tg_mem_bio_string(bio, pem_len);
out:
    if (pem == NULL)
        ERR_clear_error();
    BIO_free(bio);
    X509_NAME_free(name);
    X509_REQ_free(req);
    return pem;
}

/* Short name of an attribute type ("OU", "challengePassword") or its OID. */
static const char *describe_object(const ASN1_OBJECT *obj, char *buf, size_t len)
{
    int nid = OBJ_obj2nid(obj);

    if (nid != NID_undef)
        return OBJ_nid2sn(nid);
    OBJ_obj2txt(buf, (int)len, obj, 1);
    return buf;
}

/* The first extension an extensionRequest attribute asks for, by name. */
static const char *describe_requested_extension(const X509_ATTRIBUTE *attr, char *buf, size_t len)
{
    const ASN1_TYPE *value = X509_ATTRIBUTE_get0_type((X509_ATTRIBUTE *)attr, 0);
    STACK_OF(X509_EXTENSION) *exts = NULL;
    const unsigned char *p;
    const char *name = "an extensionRequest attribute";

    if (value != NULL && value->type == V_ASN1_SEQUENCE) {
        p = value->value.sequence->data;
        exts = d2i_X509_EXTENSIONS(NULL, &p, value->value.sequence->length);
    }
    if (exts != NULL && sk_X509_EXTENSION_num(exts) > 0) {
        char oid[80];
        const char *first = describe_object(X509_EXTENSION_get_object(sk_X509_EXTENSION_value(exts, 0)), oid,
                                            sizeof(oid));
        snprintf(buf, len, "%.79s%s", first, sk_X509_EXTENSION_num(exts) > 1 ? " and more" : "");
        name = buf;
    }
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    ERR_clear_error();
    return name;
}

/* Step 8. */
static int check_forbidden_content(const TG_NAME *subject, const STACK_OF(X509_ATTRIBUTE) *attributes,
                                   tg_verdict *v)
{
    char buf[96];

    for (int i = 0; i < tg_name_entry_count(subject); i++) {
        const ASN1_OBJECT *obj = X509_NAME_ENTRY_get_object(tg_name_entry(subject, i));
        int nid = OBJ_obj2nid(obj);

        if (nid != NID_organizationName && nid != NID_commonName)
            return tg_verdict_deny(v, TG_CSR_FORBIDDEN_CONTENT,
                                   "spec.csr: expected only O and CN in the subject, found %s",
                                   describe_object(obj, buf, sizeof(buf)));
    }
    for (int i = 0; i < sk_X509_ATTRIBUTE_num(attributes); i++) {
        const X509_ATTRIBUTE *attr = sk_X509_ATTRIBUTE_value(attributes, i);
        int nid = OBJ_obj2nid(X509_ATTRIBUTE_get0_object((X509_ATTRIBUTE *)attr));

        if (nid == NID_ext_req || nid == NID_ms_ext_req)
            return tg_verdict_deny(v, TG_CSR_FORBIDDEN_CONTENT,
                                   "spec.csr: expected no requested extensions, found %s",
                                   describe_requested_extension(attr, buf, sizeof(buf)));
    }
    if (sk_X509_ATTRIBUTE_num(attributes) > 0)
        return tg_verdict_deny(v, TG_CSR_FORBIDDEN_CONTENT, "spec.csr: expected no CSR attributes, found %s",
                               describe_object(X509_ATTRIBUTE_get0_object(sk_X509_ATTRIBUTE_value(attributes, 0)),
                                               buf, sizeof(buf)));
    return 0;
}

/* The value of one subject entry as shown in a message (UTF-8, capped). */
static void entry_value(const X509_NAME_ENTRY *e, char *out, size_t out_len, unsigned char **utf8, int *utf8_len)
{
    *utf8_len = ASN1_STRING_to_UTF8(utf8, X509_NAME_ENTRY_get_data(e));
    if (*utf8_len < 0) {
        *utf8 = NULL;
        ERR_clear_error();
        snprintf(out, out_len, "(undecodable string)");
        return;
    }
    snprintf(out, out_len, "%.*s%s", *utf8_len > SHOWN_MAX ? SHOWN_MAX : *utf8_len, (const char *)*utf8,
             *utf8_len > SHOWN_MAX ? "..." : "");
}

/* An O entry whose value is in the per-certificate group form (any case). */
static int entry_is_cert_group(const X509_NAME_ENTRY *e)
{
    unsigned char *utf8 = NULL;
    int n, is;

    if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) != NID_organizationName)
        return 0;
    n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
    if (n < 0) {
        ERR_clear_error();
        return 0;
    }
    is = (size_t)n >= sizeof(TG_CERT_GROUP_PREFIX) - 1 && memchr(utf8, '\0', (size_t)n) == NULL &&
         tg_cert_group_is_form((const char *)utf8);
    OPENSSL_free(utf8);
    return is;
}

/* The one per-certificate group of subject into out ("" when none): 0, or
 * -1 when there are several. */
static int find_cert_group(const TG_NAME *subject, char *out, size_t out_len)
{
    int count = 0;

    out[0] = '\0';
    for (int i = 0; i < tg_name_entry_count(subject); i++) {
        const X509_NAME_ENTRY *e = tg_name_entry(subject, i);
        unsigned char *utf8 = NULL;
        int n;

        if (!entry_is_cert_group(e))
            continue;
        if (++count > 1)
            return -1;
        n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
        snprintf(out, out_len, "%.*s", n < 0 ? 0 : n, n < 0 ? "" : (const char *)utf8);
        OPENSSL_free(utf8);
    }
    return 0;
}

/* Step 9 for a per-certificate group: at most one, in the exact form, of
 * the CN's identity (pki/cert_group.h). Bound and revoked are the
 * approver's to check: they need the cluster's state. */
static int check_cert_group(const TG_NAME *subject, const tg_csr_subject *want, tg_verdict *v)
{
    char group[TG_CERT_GROUP_MAX + 8];
    tg_verdict gv;

    if (find_cert_group(subject, group, sizeof(group)) != 0)
        return tg_verdict_deny(v, TG_CSR_SUBJECT_MISMATCH,
                               "spec.csr: expected at most one O=" TG_CERT_GROUP_PREFIX
                               "... in the subject, found more");
    if (!group[0])
        return 0;
    tg_verdict_init(&gv);
    if (tg_cert_group_decide(group, want->cn, NULL, &gv) != 0)
        return tg_verdict_deny_code(v, gv.code, gv.reason, "spec.csr: %s", gv.message);
    return 0;
}

/* A subject whose per-certificate group stands for want->org: that O must
 * be absent, since a certificate carrying it keeps every right bound to it
 * after its group is revoked. 1 when so (O is then not looked for), 0 when
 * the usual O is wanted, -1 with v. */
static int group_in_place_of_org(const TG_NAME *subject, const tg_csr_subject *want, tg_verdict *v)
{
    char group[TG_CERT_GROUP_MAX + 8];

    if (!want->allow_cert_group || !want->group_replaces_org)
        return 0;
    if (find_cert_group(subject, group, sizeof(group)) != 0)
        return tg_verdict_deny(v, TG_CSR_SUBJECT_MISMATCH,
                               "spec.csr: expected at most one O=" TG_CERT_GROUP_PREFIX
                               "... in the subject, found more");
    if (!group[0])
        return 0;
    for (int i = 0; i < tg_name_entry_count(subject); i++) {
        const X509_NAME_ENTRY *e = tg_name_entry(subject, i);
        if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) == NID_organizationName && !entry_is_cert_group(e))
            return tg_verdict_deny(v, TG_CSR_SUBJECT_MISMATCH,
                                   "spec.csr: expected the certificate group in place of O=%.*s (a certificate "
                                   "carrying that group too keeps its rights after a revocation), found both",
                                   SHOWN_MAX, want->org);
    }
    return 1;
}

/* Step 9: exactly one CN and exactly one O, equal to the expected ones. */
static int check_subject(const TG_NAME *subject, const tg_csr_subject *want, tg_verdict *v)
{
    static const struct {
        int nid;
        const char *label;
    } wanted[] = {{NID_commonName, "CN"}, {NID_organizationName, "O"}};

    int no_org = group_in_place_of_org(subject, want, v);

    if (no_org < 0)
        return -1;
    for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]) - (size_t)no_org; w++) {
        int is_cn = wanted[w].nid == NID_commonName;
        const char *expect = is_cn ? want->cn : want->org;
        const char *why = is_cn ? want->cn_source : want->org_source;
        int count = 0;
        const X509_NAME_ENTRY *found = NULL;
        char shown[SHOWN_MAX + 8];
        unsigned char *utf8 = NULL;
        int utf8_len, equal;

        for (int i = 0; i < tg_name_entry_count(subject); i++) {
            const X509_NAME_ENTRY *e = tg_name_entry(subject, i);
            if (!is_cn && want->allow_cert_group && entry_is_cert_group(e))
                continue;   /* checked on its own rules (check_cert_group) */
            if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) == wanted[w].nid) {
                found = e;
                count++;
            }
        }
        if (count != 1)
            return tg_verdict_deny(v, TG_CSR_SUBJECT_MISMATCH,
                                   "spec.csr: expected exactly one %s=%.*s in the subject, found %d", wanted[w].label,
                                   SHOWN_MAX, expect, count);
        entry_value(found, shown, sizeof(shown), &utf8, &utf8_len);
        equal = utf8 != NULL && (size_t)utf8_len == strlen(expect) && memcmp(utf8, expect, (size_t)utf8_len) == 0;
        OPENSSL_free(utf8);
        if (!equal)
            return tg_verdict_deny(v, TG_CSR_SUBJECT_MISMATCH, "spec.csr: expected %s=%.*s%s%s%s, found %s=%s",
                                   wanted[w].label, SHOWN_MAX, expect, why ? " (" : "", why ? why : "",
                                   why ? ")" : "", wanted[w].label, shown);
    }
    return 0;
}

/* The CSR's SPKI as canonical DER, to compare with the Tenant's: an Ed25519
 * key is the fixed prefix and its 32 bytes (written into ed_buf, no encoder
 * run); anything else is re-encoded into *alloc. Length, or -1. */
static int csr_spki_der(const TG_SPKI *spki, unsigned char ed_buf[TG_ED25519_SPKI_LEN], const unsigned char **der,
                        unsigned char **alloc)
{
    const unsigned char *raw;
    int n;

    *alloc = NULL;
    if (tg_spki_ed25519_raw(spki, &raw) == 1) {
        memcpy(ed_buf, TG_ED25519_SPKI_PREFIX, TG_ED25519_SPKI_PREFIX_LEN);
        memcpy(ed_buf + TG_ED25519_SPKI_PREFIX_LEN, raw, TG_ED25519_KEY_LEN);
        *der = ed_buf;
        return TG_ED25519_SPKI_LEN;
    }
    n = i2d_TG_SPKI(spki, alloc);
    *der = *alloc;
    return n > 0 ? n : -1;
}

/* Step 7's self-signature. An Ed25519 key is checked with libsodium over the
 * received CertificationRequestInfo bytes, with the conditions OpenSSL's
 * ASN1_item_verify puts on it (algorithm Ed25519, a signature BIT STRING
 * without unused bits) and one it skips: RFC 8410 says the parameters MUST be
 * absent, and Go's crypto/x509 refuses them; OpenSSL 3.0 ignores them.
 * Anything else is OpenSSL's. */
static int verify_self_signature(const TG_REQ *req, const tg_pubkey *key)
{
    const ASN1_OBJECT *oid;
    int ptype;

    if (!key->is_ed25519)
        return ASN1_item_verify_ex(ASN1_ITEM_rptr(TG_REQ_INFO), req->sig_alg, req->signature, req->info, NULL,
                                   key->pkey, NULL, NULL) == 1;
    X509_ALGOR_get0(&oid, &ptype, NULL, req->sig_alg);
    if (OBJ_obj2nid(oid) != NID_ED25519 || ptype != V_ASN1_UNDEF || (req->signature->flags & 0x07) != 0 ||
        req->info->enc.enc == NULL || req->info->enc.modified)
        return 0;
    return tg_ed25519_verify(TG_PUBKEY_ED25519_RAW(key), req->info->enc.enc, (size_t)req->info->enc.len,
                             ASN1_STRING_get0_data(req->signature), (size_t)ASN1_STRING_length(req->signature));
}

int tg_csr_check_with_key(const unsigned char *pem, size_t pem_len, const char *cluster_id,
                          const unsigned char *expected_spki, size_t spki_len, const tg_pubkey *expected_key,
                          tg_verdict *v, X509_REQ **out_req)
{
    tg_csr_subject want = {.cn = cluster_id ? cluster_id : "", .cn_source = "spec.clusterID",
                           .org = TG_CSR_ORGANIZATION, .allow_cert_group = 1};

    return tg_csr_check_subject(pem, pem_len, &want, expected_spki, spki_len, expected_key, v, out_req);
}

int tg_csr_check_subject(const unsigned char *pem, size_t pem_len, const tg_csr_subject *want,
                         const unsigned char *expected_spki, size_t spki_len, const tg_pubkey *expected_key,
                         tg_verdict *v, X509_REQ **out_req)
{
    unsigned char *der = NULL, *spki_alloc = NULL;
    unsigned char ed_spki[TG_ED25519_SPKI_LEN];
    const unsigned char *p, *spki;
    long der_len = 0, version;
    int spki_n, same_key, rc = -1;
    TG_REQ *req = NULL;
    tg_pubkey csr_key = {0};
    const tg_pubkey *signer;
    tg_spki_status key_status = TG_SPKI_OK;
    char found[128], kbuf[32], ebuf[32];

    if (out_req)
        *out_req = NULL;

    /* Step 7: one PEM block, a request that parses completely, a valid self-signature. */
    if (tg_pem_single_block(pem, pem_len, "CERTIFICATE REQUEST", &der, &der_len, found, sizeof(found)) != 0)
        return tg_verdict_deny(v, TG_INVALID_CSR,
                               "spec.csr: expected one PEM \"CERTIFICATE REQUEST\" block and nothing else, found %s",
                               found);
    p = der;
    req = d2i_TG_REQ(NULL, &p, der_len);
    if (req == NULL) {
        tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a PKCS#10 request, found %ld bytes that do not parse",
                        der_len);
        goto out;
    }
    if (p != der + der_len) {
        tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a PKCS#10 request, found %ld trailing bytes after it",
                        (long)(der + der_len - p));
        goto out;
    }
    version = ASN1_INTEGER_get(req->info->version);
    if (version != X509_REQ_VERSION_1) {
        tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected version 1 (0), found %ld", version);
        goto out;
    }
    spki_n = csr_spki_der(req->info->spki, ed_spki, &spki, &spki_alloc);
    if (spki_n <= 0) {
        tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a SubjectPublicKeyInfo, found one that does not encode");
        goto out;
    }
    same_key = expected_spki != NULL && (size_t)spki_n == spki_len &&
               CRYPTO_memcmp(spki, expected_spki, spki_len) == 0;
    if (same_key && expected_key != NULL) {
        signer = expected_key;
    } else {
        signer = tg_pubkey_from_spki(req->info->spki, &csr_key, &key_status) == 0 ? &csr_key : NULL;
    }
    if (signer == NULL) {
        tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a usable public key, found a %s key with %s",
                        tg_spki_algorithm(req->info->spki, found, sizeof(found)), tg_spki_status_text(key_status));
        goto out;
    }
    if (!verify_self_signature(req, signer)) {
        tg_verdict_deny(v, TG_INVALID_CSR,
                        "spec.csr: expected a valid self-signature by the CSR's %s key, found one that does not verify",
                        tg_pubkey_describe(signer, kbuf, sizeof(kbuf)));
        goto out;
    }

    /* Steps 8 and 9. */
    if (check_forbidden_content(req->info->subject, req->info->attributes, v) != 0 ||
        check_subject(req->info->subject, want, v) != 0 ||
        (want->allow_cert_group && check_cert_group(req->info->subject, want, v) != 0))
        goto out;

    /* No key to compare (a slice of a TolerateNoHandshake Tenant, tenantgate-auth's
     * CSRs): the certificate is for the CSR's own key, so it must pass the policy
     * spec.publicKey does (step 4), or a weak key would be signed. */
    if (want->any_key && !same_key && !signer->is_ed25519 &&
        tg_key_check_strength(signer->pkey, "the CSR's key", v) != 0)
        goto out;

    /* Step 10 (skipped when the caller has no key to compare: a slice of a
     * TolerateNoHandshake Tenant). */
    if (!same_key && !want->any_key) {
        snprintf(ebuf, sizeof(ebuf), "%s", expected_key ? tg_pubkey_describe(expected_key, found, sizeof(found)) : "");
        tg_verdict_deny(v, TG_CSR_PUBLIC_KEY_MISMATCH,
                        "spec.csr: expected the key of spec.publicKey%s%s%s, found a different %s key",
                        *ebuf ? " (" : "", ebuf, *ebuf ? ")" : "", tg_pubkey_describe(&csr_key, kbuf, sizeof(kbuf)));
        goto out;
    }
    if (out_req) {
        /* The full OpenSSL object for callers that go on to issue from it; off the
         * admission path, so its slower decoding does not matter here. */
        p = der;
        *out_req = d2i_X509_REQ(NULL, &p, der_len);
        if (*out_req == NULL) {
            tg_verdict_deny(v, TG_INVALID_CSR, "spec.csr: expected a request OpenSSL can load, found one it cannot");
            goto out;
        }
    }
    rc = 0;
out:
    if (rc != 0)
        ERR_clear_error();
    tg_pubkey_clear(&csr_key);
    OPENSSL_free(spki_alloc);
    OPENSSL_free(der);
    TG_REQ_free(req);
    return rc;
}

int tg_csr_check(const unsigned char *pem, size_t pem_len, const char *cluster_id,
                 const unsigned char *expected_spki, size_t spki_len,
                 tg_verdict *v, X509_REQ **out_req)
{
    return tg_csr_check_with_key(pem, pem_len, cluster_id, expected_spki, spki_len, NULL, v, out_req);
}

int tg_csr_cert_group(const unsigned char *pem, size_t pem_len, char *out, size_t out_len)
{
    unsigned char *der = NULL;
    const unsigned char *p;
    long der_len = 0;
    char found[128];
    TG_REQ *req = NULL;
    int rc = -1;

    if (out_len > 0)
        out[0] = '\0';
    if (tg_pem_single_block(pem, pem_len, "CERTIFICATE REQUEST", &der, &der_len, found, sizeof(found)) != 0)
        return -1;
    p = der;
    if ((req = d2i_TG_REQ(NULL, &p, der_len)) != NULL && find_cert_group(req->info->subject, out, out_len) == 0)
        rc = out[0] ? 1 : 0;
    ERR_clear_error();
    TG_REQ_free(req);
    OPENSSL_free(der);
    return rc;
}

int tg_csr_public_key(const unsigned char *pem, size_t pem_len, unsigned char **der, size_t *der_len)
{
    unsigned char *req_der = NULL;
    const unsigned char *p, *raw;
    long req_len = 0;
    char found[128];
    TG_REQ *req = NULL;
    EVP_PKEY *k = NULL;
    tg_spki_status st;
    int ed, n = -1;

    *der = NULL;
    *der_len = 0;
    if (tg_pem_single_block(pem, pem_len, "CERTIFICATE REQUEST", &req_der, &req_len, found, sizeof(found)) != 0)
        return -1;
    p = req_der;
    if ((req = d2i_TG_REQ(NULL, &p, req_len)) != NULL) {
        /* the key must read as a key, as X509_REQ_get0_pubkey would have it */
        ed = tg_spki_ed25519_raw(req->info->spki, &raw);
        if (ed == 1 || (ed == 0 && (k = tg_spki_to_pkey_any(req->info->spki, &st)) != NULL))
            n = i2d_TG_SPKI(req->info->spki, der);
    }
    EVP_PKEY_free(k);
    ERR_clear_error();
    TG_REQ_free(req);
    OPENSSL_free(req_der);
    if (n <= 0) {
        OPENSSL_free(*der);
        *der = NULL;
        return -1;
    }
    *der_len = (size_t)n;
    return 0;
}
