/* spki.c - see spki.h. */
#include "spki.h"

#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>

ASN1_SEQUENCE(TG_SPKI) = {
    ASN1_SIMPLE(TG_SPKI, algor, X509_ALGOR),
    ASN1_SIMPLE(TG_SPKI, key, ASN1_BIT_STRING),
} ASN1_SEQUENCE_END(TG_SPKI)
IMPLEMENT_ASN1_FUNCTIONS(TG_SPKI)

typedef STACK_OF(X509_NAME_ENTRY) TG_RDN;
ASN1_ITEM_TEMPLATE(TG_RDN) = ASN1_EX_TEMPLATE_TYPE(ASN1_TFLG_SET_OF, 0, RDN, X509_NAME_ENTRY)
ASN1_ITEM_TEMPLATE_END(TG_RDN)
ASN1_ITEM_TEMPLATE(TG_NAME) = ASN1_EX_TEMPLATE_TYPE(ASN1_TFLG_SEQUENCE_OF, 0, Name, TG_RDN)
ASN1_ITEM_TEMPLATE_END(TG_NAME)

int tg_name_entry_count(const TG_NAME *name)
{
    int n = 0;

    for (int r = 0; r < OPENSSL_sk_num(name); r++)
        n += sk_X509_NAME_ENTRY_num((const TG_RDN *)OPENSSL_sk_value(name, r));
    return n;
}

const X509_NAME_ENTRY *tg_name_entry(const TG_NAME *name, int i)
{
    for (int r = 0; r < OPENSSL_sk_num(name) && i >= 0; r++) {
        const TG_RDN *rdn = OPENSSL_sk_value(name, r);
        int n = sk_X509_NAME_ENTRY_num(rdn);

        if (i < n)
            return sk_X509_NAME_ENTRY_value(rdn, i);
        i -= n;
    }
    return NULL;
}

ASN1_SEQUENCE_enc(TG_REQ_INFO, enc, NULL) = {
    ASN1_SIMPLE(TG_REQ_INFO, version, ASN1_INTEGER),
    ASN1_SIMPLE(TG_REQ_INFO, subject, TG_NAME),
    ASN1_SIMPLE(TG_REQ_INFO, spki, TG_SPKI),
    /* Optional on input: some encoders omit the empty [0] set. */
    ASN1_IMP_SET_OF_OPT(TG_REQ_INFO, attributes, X509_ATTRIBUTE, 0),
} ASN1_SEQUENCE_END_enc(TG_REQ_INFO, TG_REQ_INFO)
IMPLEMENT_ASN1_FUNCTIONS(TG_REQ_INFO)

ASN1_SEQUENCE(TG_REQ) = {
    ASN1_SIMPLE(TG_REQ, info, TG_REQ_INFO),
    ASN1_SIMPLE(TG_REQ, sig_alg, X509_ALGOR),
    ASN1_SIMPLE(TG_REQ, signature, ASN1_BIT_STRING),
} ASN1_SEQUENCE_END(TG_REQ)
IMPLEMENT_ASN1_FUNCTIONS(TG_REQ)

ASN1_SEQUENCE(TG_CERT_INFO) = {
    ASN1_EXP_OPT(TG_CERT_INFO, version, ASN1_INTEGER, 0),
    ASN1_SIMPLE(TG_CERT_INFO, serial, ASN1_INTEGER),
    ASN1_SIMPLE(TG_CERT_INFO, sig_alg, X509_ALGOR),
    ASN1_SIMPLE(TG_CERT_INFO, issuer, TG_NAME),
    ASN1_SIMPLE(TG_CERT_INFO, validity, X509_VAL),
    ASN1_SIMPLE(TG_CERT_INFO, subject, TG_NAME),
    ASN1_SIMPLE(TG_CERT_INFO, spki, TG_SPKI),
    ASN1_IMP_OPT(TG_CERT_INFO, issuer_uid, ASN1_BIT_STRING, 1),
    ASN1_IMP_OPT(TG_CERT_INFO, subject_uid, ASN1_BIT_STRING, 2),
    ASN1_EXP_SEQUENCE_OF_OPT(TG_CERT_INFO, extensions, X509_EXTENSION, 3),
} ASN1_SEQUENCE_END(TG_CERT_INFO)
IMPLEMENT_ASN1_FUNCTIONS(TG_CERT_INFO)

ASN1_SEQUENCE(TG_CERT) = {
    ASN1_SIMPLE(TG_CERT, info, TG_CERT_INFO),
    ASN1_SIMPLE(TG_CERT, sig_alg, X509_ALGOR),
    ASN1_SIMPLE(TG_CERT, signature, ASN1_BIT_STRING),
} ASN1_SEQUENCE_END(TG_CERT)
IMPLEMENT_ASN1_FUNCTIONS(TG_CERT)

/* RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } */
typedef struct tg_rsa_pub_st {
    ASN1_INTEGER *n;
    ASN1_INTEGER *e;
} TG_RSA_PUB;
DECLARE_ASN1_FUNCTIONS(TG_RSA_PUB)
ASN1_SEQUENCE(TG_RSA_PUB) = {
    ASN1_SIMPLE(TG_RSA_PUB, n, ASN1_INTEGER),
    ASN1_SIMPLE(TG_RSA_PUB, e, ASN1_INTEGER),
} ASN1_SEQUENCE_END(TG_RSA_PUB)
IMPLEMENT_ASN1_FUNCTIONS(TG_RSA_PUB)

#define ED25519_RAW_LEN 32
#define RSA_MAX_EXPONENT_BITS 31

/* The key bits as bytes: BIT STRINGs of keys are whole octets. */
static int key_octets(const TG_SPKI *spki, const unsigned char **p, int *len)
{
    if ((spki->key->flags & ASN1_STRING_FLAG_BITS_LEFT) && (spki->key->flags & 0x07))
        return 0;
    *p = ASN1_STRING_get0_data(spki->key);
    *len = ASN1_STRING_length(spki->key);
    return *len > 0;
}

static EVP_PKEY *pkey_fromdata(const char *type, OSSL_PARAM *params)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    EVP_PKEY *pkey = NULL;

    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

static EVP_PKEY *rsa_from_spki(const unsigned char *p, int len, tg_spki_status *status)
{
    TG_RSA_PUB *rsa;
    const unsigned char *q = p;
    BIGNUM *n = NULL, *e = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY *pkey = NULL;

    rsa = d2i_TG_RSA_PUB(NULL, &q, len);
    if (rsa == NULL || q != p + len)
        goto out;
    n = ASN1_INTEGER_to_BN(rsa->n, NULL);
    e = ASN1_INTEGER_to_BN(rsa->e, NULL);
    /* A positive modulus and an odd exponent in [3, 2^31): the bound is Go's
     * (what Liqo generates and the API server accepts), and it keeps a verify
     * cheap - OpenSSL allows any exponent up to 3072-bit moduli, and a huge
     * one makes each verify cost as much as a private-key operation. */
    if (n == NULL || e == NULL || BN_is_negative(n) || BN_is_zero(n) || BN_is_negative(e) || !BN_is_odd(e) ||
        BN_is_one(e))
        goto out;
    if (BN_num_bits(e) > RSA_MAX_EXPONENT_BITS) {
        *status = TG_SPKI_BAD_RSA_EXPONENT;
        goto out_status;
    }
    bld = OSSL_PARAM_BLD_new();
    if (bld == NULL || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) || (params = OSSL_PARAM_BLD_to_param(bld)) == NULL)
        goto out;
    pkey = pkey_fromdata("RSA", params);
out:
    if (pkey == NULL)
        *status = TG_SPKI_BAD_KEY;
out_status:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    TG_RSA_PUB_free(rsa);
    return pkey;
}

static EVP_PKEY *ec_from_spki(const TG_SPKI *spki, const unsigned char *p, int len, tg_spki_status *status)
{
    int ptype;
    const void *pval;
    const char *group;
    OSSL_PARAM params[3];
    EVP_PKEY *pkey;

    X509_ALGOR_get0(NULL, &ptype, &pval, spki->algor);
    if (ptype != V_ASN1_OBJECT) {
        *status = ptype == V_ASN1_SEQUENCE ? TG_SPKI_EXPLICIT_CURVE : TG_SPKI_BAD_KEY;
        return NULL;
    }
    group = OBJ_nid2sn(OBJ_obj2nid(pval));
    if (group == NULL) {
        *status = TG_SPKI_UNSUPPORTED;
        return NULL;
    }
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)p, (size_t)len);
    params[2] = OSSL_PARAM_construct_end();
    pkey = pkey_fromdata("EC", params);
    if (pkey == NULL)
        *status = TG_SPKI_BAD_KEY;   /* unknown curve or a point not on it */
    return pkey;
}

int tg_spki_ed25519_raw(const TG_SPKI *spki, const unsigned char **raw)
{
    const ASN1_OBJECT *oid;
    int ptype, len;

    X509_ALGOR_get0(&oid, &ptype, NULL, spki->algor);
    if (OBJ_obj2nid(oid) != NID_ED25519)
        return 0;
    if (ptype != V_ASN1_UNDEF || !key_octets(spki, raw, &len) || len != ED25519_RAW_LEN)
        return -1;
    return 1;
}

EVP_PKEY *tg_spki_to_pkey(const TG_SPKI *spki, tg_spki_status *status)
{
    const ASN1_OBJECT *oid;
    int ptype, len;
    const unsigned char *p;
    EVP_PKEY *pkey = NULL;

    *status = TG_SPKI_OK;
    X509_ALGOR_get0(&oid, &ptype, NULL, spki->algor);
    switch (OBJ_obj2nid(oid)) {
    case NID_ED25519:
        /* RFC 8410: parameters absent. */
        if (ptype != V_ASN1_UNDEF || !key_octets(spki, &p, &len) || len != ED25519_RAW_LEN)
            break;
        pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, p, (size_t)len);
        break;
    case NID_rsaEncryption:
        /* RFC 3279: parameters NULL (absent tolerated, as OpenSSL does). */
        if ((ptype != V_ASN1_NULL && ptype != V_ASN1_UNDEF) || !key_octets(spki, &p, &len))
            break;
        return rsa_from_spki(p, len, status);
    case NID_X9_62_id_ecPublicKey:
        if (!key_octets(spki, &p, &len))
            break;
        return ec_from_spki(spki, p, len, status);
    default:
        *status = TG_SPKI_UNSUPPORTED;
        return NULL;
    }
    if (pkey == NULL) {
        ERR_clear_error();
        *status = TG_SPKI_BAD_KEY;
    }
    return pkey;
}

EVP_PKEY *tg_spki_to_pkey_any(const TG_SPKI *spki, tg_spki_status *status)
{
    EVP_PKEY *pkey = tg_spki_to_pkey(spki, status);
    unsigned char *der = NULL;
    const unsigned char *p;
    int len;

    if (pkey != NULL || *status != TG_SPKI_UNSUPPORTED)
        return pkey;
    len = i2d_TG_SPKI(spki, &der);
    if (len > 0) {
        p = der;
        pkey = d2i_PUBKEY(NULL, &p, len);
    }
    OPENSSL_free(der);
    if (pkey == NULL)
        ERR_clear_error();
    return pkey;
}

const char *tg_spki_status_text(tg_spki_status status)
{
    switch (status) {
    case TG_SPKI_OK:
        return "a valid key";
    case TG_SPKI_UNSUPPORTED:
        return "an algorithm OpenSSL cannot decode";
    case TG_SPKI_EXPLICIT_CURVE:
        return "explicit EC curve parameters instead of a named curve";
    case TG_SPKI_BAD_RSA_EXPONENT:
        return "an RSA public exponent of 2^31 or more";
    case TG_SPKI_BAD_KEY:
        break;
    }
    return "invalid key material (a point off the curve, an even RSA exponent, ...)";
}

TG_SPKI *tg_spki_ed25519(const unsigned char raw[32])
{
    TG_SPKI *spki = TG_SPKI_new();

    if (spki == NULL || !X509_ALGOR_set0(spki->algor, OBJ_nid2obj(NID_ED25519), V_ASN1_UNDEF, NULL) ||
        !ASN1_BIT_STRING_set(spki->key, (unsigned char *)raw, ED25519_RAW_LEN)) {
        TG_SPKI_free(spki);
        return NULL;
    }
    /* No unused bits: exactly what OpenSSL and Go encode. */
    spki->key->flags &= ~(ASN1_STRING_FLAG_BITS_LEFT | 0x07);
    spki->key->flags |= ASN1_STRING_FLAG_BITS_LEFT;
    return spki;
}

const char *tg_spki_algorithm(const TG_SPKI *spki, char *buf, size_t len)
{
    const ASN1_OBJECT *oid;
    int nid;

    X509_ALGOR_get0(&oid, NULL, NULL, spki->algor);
    nid = OBJ_obj2nid(oid);
    if (nid != NID_undef)
        return OBJ_nid2sn(nid);
    OBJ_obj2txt(buf, (int)len, oid, 1);
    return buf;
}
