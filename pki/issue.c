/* issue.c - own-signer mode (PROTOCOL.md 6): a client certificate from an approved
 * CSR, signed by the operator's CA. */
#include "issue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "digest_cache.h"
#include "keys.h"
#include "pem_block.h"

#define SERIAL_BITS 128

static int fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record why, with OpenSSL's own first error appended when there is one. */
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    unsigned long e = ERR_peek_error();
    size_t n;

    if (err == NULL || err_len == 0) {
        ERR_clear_error();
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    n = strlen(err);
    if (e != 0 && n + 3 < err_len) {
        snprintf(err + n, err_len - n, ": ");
        ERR_error_string_n(e, err + n + 2, err_len - n - 2);
    }
    ERR_clear_error();
    return -1;
}

int tg_ca_load(tg_ca *ca, const char *cert_pem, size_t cert_len,
               const char *key_pem, size_t key_len, long max_lifetime_seconds)
{
    BIO *bio;

    memset(ca, 0, sizeof(*ca));
    if (cert_pem == NULL || key_pem == NULL || max_lifetime_seconds <= 0 || cert_len > INT32_MAX)
        return -1;
    bio = BIO_new_mem_buf(cert_pem, (int)cert_len);
    if (bio == NULL)
        return -1;
    ca->cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    ca->key = tg_key_private_from_pem(key_pem, key_len);
    /* The key must be the certificate's, and the certificate a CA: otherwise
     * every certificate we issue would fail verification at the API server. */
    if (ca->cert == NULL || ca->key == NULL || X509_check_private_key(ca->cert, ca->key) != 1 ||
        X509_check_ca(ca->cert) < 1) {
        ERR_clear_error();
        tg_ca_clear(ca);
        return -1;
    }
    ca->max_lifetime_seconds = max_lifetime_seconds;
    return 0;
}

void tg_ca_clear(tg_ca *ca)
{
    if (ca == NULL)
        return;
    X509_free(ca->cert);
    EVP_PKEY_free(ca->key);
    memset(ca, 0, sizeof(*ca));
}

static int add_ext(X509 *cert, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_nconf_nid(NULL, ctx, nid, value);
    int ok = ext != NULL && X509_add_ext(cert, ext, -1);

    X509_EXTENSION_free(ext);
    return ok;
}

/* AKI keyid = the CA's SKI; for a CA without one (it happens with hand-made
 * CAs), the RFC 5280 method 1 value: SHA-1 of its subjectPublicKey. OpenSSL's
 * "keyid:always" would refuse to issue in that case. */
static int add_authority_key_id(X509 *cert, X509 *ca_cert)
{
    const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(ca_cert);
    unsigned char hash[EVP_MAX_MD_SIZE];
    unsigned int hash_len = 0;
    AUTHORITY_KEYID *akid = AUTHORITY_KEYID_new();
    int ok = 0;

    if (akid == NULL)
        return 0;
    if (ski != NULL)
        akid->keyid = ASN1_OCTET_STRING_dup(ski);
    else if (X509_pubkey_digest(ca_cert, EVP_sha1(), hash, &hash_len) && (akid->keyid = ASN1_OCTET_STRING_new()))
        ASN1_OCTET_STRING_set(akid->keyid, hash, (int)hash_len);
    if (akid->keyid != NULL && ASN1_STRING_length(akid->keyid) > 0)
        ok = X509_add1_ext_i2d(cert, NID_authority_key_identifier, akid, 0, X509V3_ADD_DEFAULT) == 1;
    AUTHORITY_KEYID_free(akid);
    return ok;
}

static int set_random_serial(X509 *cert)
{
    BIGNUM *bn = BN_new();
    int ok;

    /* Exactly 128 bits, top bit set: positive and of fixed length. */
    ok = bn != NULL && BN_rand(bn, SERIAL_BITS, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) &&
         BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok;
}

/* NotBefore = now - backdate; NotAfter = now + min(requested, max), and never
 * after the CA's own NotAfter (a chain cannot outlive its issuer). */
static int set_validity(X509 *cert, const tg_ca *ca, long requested_seconds, time_t now)
{
    long lifetime = requested_seconds <= 0 || requested_seconds > ca->max_lifetime_seconds
                        ? ca->max_lifetime_seconds
                        : requested_seconds;
    ASN1_TIME *not_after;

    if (X509_time_adj_ex(X509_getm_notBefore(cert), 0, -TG_ISSUE_BACKDATE_SECONDS, &now) == NULL)
        return 0;
    not_after = X509_time_adj_ex(X509_getm_notAfter(cert), 0, lifetime, &now);
    if (not_after == NULL)
        return 0;
    if (ASN1_TIME_compare(not_after, X509_get0_notAfter(ca->cert)) > 0 &&
        !X509_set1_notAfter(cert, X509_get0_notAfter(ca->cert)))
        return 0;
    return 1;
}

static char *cert_to_pem(X509 *cert, size_t *pem_len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;

    if (bio != NULL && PEM_write_bio_X509(bio, cert))
        pem = tg_mem_bio_string(bio, pem_len);
    BIO_free(bio);
    return pem;
}

char *tg_issue_client_cert(const tg_ca *ca, X509_REQ *req, long requested_seconds,
                           time_t now, size_t *pem_len, char *err, size_t err_len)
{
    X509 *cert = NULL;
    EVP_PKEY *subject_key;
    X509V3_CTX ctx;
    const EVP_MD *md = NULL;
    int is_rsa, ca_is_eddsa;
    char *pem = NULL;

    if (ca == NULL || ca->cert == NULL || ca->key == NULL || req == NULL) {
        fail(err, err_len, "expected a loaded CA and a request, found none");
        return NULL;
    }
    subject_key = X509_REQ_get0_pubkey(req);
    if (subject_key == NULL) {
        fail(err, err_len, "expected a request with a decodable public key");
        return NULL;
    }
    is_rsa = EVP_PKEY_get_base_id(subject_key) == EVP_PKEY_RSA;
    ca_is_eddsa = EVP_PKEY_get_base_id(ca->key) == EVP_PKEY_ED25519 || EVP_PKEY_get_base_id(ca->key) == EVP_PKEY_ED448;
    if (!ca_is_eddsa && (md = tg_sha256()) == NULL) {
        fail(err, err_len, "SHA-256 unavailable");
        return NULL;
    }

    cert = X509_new();
    if (cert == NULL || !X509_set_version(cert, X509_VERSION_3)) {
        fail(err, err_len, "out of memory");
        goto out;
    }
    if (!set_random_serial(cert)) {
        fail(err, err_len, "cannot draw a serial number");
        goto out;
    }
    if (!X509_set_issuer_name(cert, X509_get_subject_name(ca->cert)) ||
        !X509_set_subject_name(cert, X509_REQ_get_subject_name(req)) || !X509_set_pubkey(cert, subject_key)) {
        fail(err, err_len, "cannot copy names or key");
        goto out;
    }
    if (!set_validity(cert, ca, requested_seconds, now)) {
        fail(err, err_len, "cannot set the validity period");
        goto out;
    }

    X509V3_set_ctx(&ctx, ca->cert, cert, NULL, NULL, 0);
    if (!add_ext(cert, &ctx, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(cert, &ctx, NID_key_usage,
                 is_rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature") ||
        !add_ext(cert, &ctx, NID_ext_key_usage, "clientAuth") ||
        !add_ext(cert, &ctx, NID_subject_key_identifier, "hash") || !add_authority_key_id(cert, ca->cert)) {
        fail(err, err_len, "cannot add the certificate extensions");
        goto out;
    }
    if (X509_sign(cert, ca->key, md) <= 0) {
        fail(err, err_len, "cannot sign with the CA key");
        goto out;
    }
    pem = cert_to_pem(cert, pem_len);
    if (pem == NULL)
        fail(err, err_len, "cannot encode the certificate");
out:
    X509_free(cert);
    return pem;
}
