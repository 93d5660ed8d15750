/* test_helpers.h - shared by the pki tests only: fixtures, base64, a CSR
 * builder that can produce the hostile requests the checks must refuse. */
#ifndef TG_PKI_TEST_HELPERS_H
#define TG_PKI_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Whole file, NUL-terminated; fails the test when unreadable. */
static inline char *th_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

/* $TG_VECTORS_DIR/name, read whole. */
static inline char *th_read_vector(const char *name, size_t *len)
{
    const char *dir = getenv("TG_VECTORS_DIR");
    char path[1024];

    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return th_read_file(path, len);
}

/* Standard padded base64 -> malloc'd bytes; NULL when not base64. */
static inline unsigned char *th_b64_decode(const char *s, size_t *out_len)
{
    size_t n = strlen(s), pad = 0;
    unsigned char *out;
    int r;

    if (n % 4 != 0)
        return NULL;
    out = malloc(n / 4 * 3 + 1);
    assert_non_null(out);
    r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
    if (r < 0) {
        free(out);
        return NULL;
    }
    if (n >= 1 && s[n - 1] == '=')
        pad++;
    if (n >= 2 && s[n - 2] == '=')
        pad++;
    *out_len = (size_t)r - pad;
    return out;
}

static inline unsigned char *th_memdup(const void *p, size_t n)
{
    unsigned char *d = malloc(n ? n : 1);
    assert_non_null(d);
    memcpy(d, p, n);
    return d;
}

/* Contents of a memory BIO as a malloc'd string; frees the BIO. */
static inline char *th_bio_string(BIO *bio, size_t *len)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *s = malloc((size_t)n + 1);

    assert_non_null(s);
    memcpy(s, data, (size_t)n);
    s[n] = '\0';
    if (len)
        *len = (size_t)n;
    BIO_free(bio);
    return s;
}

static inline char *th_req_pem(X509_REQ *req, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio_X509_REQ(bio, req));
    return th_bio_string(bio, len);
}

/* DER -> PEM with the given label. */
static inline char *th_pem(const char *label, const unsigned char *der, long der_len, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio(bio, label, "", der, der_len));
    return th_bio_string(bio, len);
}

static inline char *th_cat(const char *a, const char *b, size_t *len)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    assert_non_null(s);
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
    if (len)
        *len = na + nb;
    return s;
}

/* What a hostile CSR looks like. Subject entries are "O=liqo.io" style pairs. */
typedef struct th_csr_spec {
    const char *subject[6];    /* NULL-terminated list of "SN=value" */
    const char *extension;     /* e.g. "subjectAltName=DNS:evil" (NID by name before '='), or NULL */
    int challenge_password;    /* add a challengePassword attribute */
    long version;              /* PKCS#10 version field */
} th_csr_spec;

static inline X509_REQ *th_build_req(EVP_PKEY *pub, EVP_PKEY *signer, const th_csr_spec *spec)
{
    X509_REQ *req = X509_REQ_new();
    X509_NAME *name = X509_NAME_new();
    const EVP_MD *md = EVP_PKEY_get_base_id(signer) == EVP_PKEY_ED25519 ? NULL : EVP_sha256();

    assert_non_null(req);
    for (int i = 0; spec->subject[i]; i++) {
        char field[32];
        const char *eq = strchr(spec->subject[i], '=');
        assert_non_null(eq);
        snprintf(field, sizeof(field), "%.*s", (int)(eq - spec->subject[i]), spec->subject[i]);
        /* UTF8String as such: OpenSSL's MBSTRING path would cap lengths we want to test past. */
        assert_true(X509_NAME_add_entry_by_txt(name, field, V_ASN1_UTF8STRING, (const unsigned char *)eq + 1, -1, -1, 0));
    }
    assert_true(X509_REQ_set_subject_name(req, name));
    X509_NAME_free(name);
    assert_true(X509_REQ_set_version(req, spec->version));
    assert_true(X509_REQ_set_pubkey(req, pub));
    if (spec->extension) {
        char nid_name[64];
        const char *eq = strchr(spec->extension, '=');
        STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
        X509_EXTENSION *ext;
        snprintf(nid_name, sizeof(nid_name), "%.*s", (int)(eq - spec->extension), spec->extension);
        ext = X509V3_EXT_conf_nid(NULL, NULL, OBJ_sn2nid(nid_name), eq + 1);
        assert_non_null(ext);
        sk_X509_EXTENSION_push(exts, ext);
        assert_true(X509_REQ_add_extensions(req, exts));
        sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    }
    if (spec->challenge_password)
        assert_true(X509_REQ_add1_attr_by_NID(req, NID_pkcs9_challengePassword, MBSTRING_ASC,
                                              (const unsigned char *)"hunter2", -1));
    assert_true(X509_REQ_sign(req, signer, md) > 0);
    return req;
}

static inline char *th_build_csr_pem(EVP_PKEY *pub, EVP_PKEY *signer, const th_csr_spec *spec, size_t *len)
{
    X509_REQ *req = th_build_req(pub, signer, spec);
    char *pem = th_req_pem(req, len);
    X509_REQ_free(req);
    return pem;
}

/* DER of a request. */
static inline unsigned char *th_req_der(X509_REQ *req, long *len)
{
    unsigned char *der = NULL;
    int n = i2d_X509_REQ(req, &der);
    assert_true(n > 0);
    *len = n;
    return der;
}

static inline unsigned char *th_spki(EVP_PKEY *key, size_t *len)
{
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(key, &der);
    assert_true(n > 0);
    *len = (size_t)n;
    return der;
}

#endif
