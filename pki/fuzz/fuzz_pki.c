/* fuzz_pki.c - libFuzzer harness: spec.publicKey parsing, the CSR check
 * (steps 4 and 7-10) and the signer's readers of a CSR's key and of a
 * certificate (csr.h, cert_summary.h) over arbitrary bytes. Nothing may crash, leak or hang;
 * a verdict other than the ones these steps can give is a bug too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "pki/cert_summary.h"
#include "pki/csr.h"
#include "pki/keys.h"

/* The seed vector's Ed25519 key (cl01), so a mutated seed CSR can get as far
 * as steps 8-10. */
static const unsigned char seed_spki[] = {
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00, 0xe2, 0xfd, 0x8e, 0x28,
    0x7d, 0xad, 0x97, 0x79, 0xb8, 0xec, 0xd4, 0x66, 0xf2, 0x39, 0xff, 0xe5, 0x60, 0x85, 0x59, 0x58,
    0x82, 0x8a, 0x03, 0x87, 0xc7, 0x82, 0xc5, 0x68, 0xcc, 0x5f, 0x41, 0x6c,
};

/* What the signer reads: a key or a summary with a key, or nothing. */
static void check_readers(const uint8_t *data, size_t size)
{
    unsigned char *der = NULL;
    size_t der_len = 0;
    tg_cert_summary s;

    if (tg_csr_public_key(data, size, &der, &der_len) == 0 ? der == NULL || der_len == 0 : der != NULL)
        abort();
    OPENSSL_free(der);
    if (tg_cert_summary_read((const char *)data, size, &s) == 0 ? s.spki == NULL || s.spki_len == 0 : s.spki != NULL)
        abort();
    tg_cert_summary_clear(&s);
}

static void check_text(const uint8_t *data, size_t size)
{
    tg_verdict v;
    int was_raw;
    EVP_PKEY *key;
    X509_REQ *req = NULL;
    int rc;

    tg_verdict_init(&v);
    key = tg_public_key_parse(data, size, &was_raw, &v);
    if (key == NULL && v.reason != TG_INVALID_PUBLIC_KEY && v.reason != TG_WEAK_KEY)
        abort();
    EVP_PKEY_free(key);

    tg_verdict_init(&v);
    rc = tg_csr_check(data, size, "cl01", seed_spki, sizeof(seed_spki), &v, &req);
    if (rc == 0 && (req == NULL || v.reason != TG_ACCEPTED))
        abort();
    if (rc != 0 && (req != NULL || v.reason < TG_INVALID_CSR || v.reason > TG_CSR_PUBLIC_KEY_MISMATCH))
        abort();
    if (memchr(v.message, '\n', strlen(v.message)) != NULL)
        abort();
    X509_REQ_free(req);
    check_readers(data, size);
}

/* data as the body of a PEM block: reaches the DER parsers directly instead of
 * spending the run on base64 that does not decode. */
static void check_der(const char *label, const uint8_t *data, size_t size)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem;
    long len;

    if (bio != NULL && PEM_write_bio(bio, label, "", data, (long)size) > 0 && (len = BIO_get_mem_data(bio, &pem)) > 0)
        check_text((const uint8_t *)pem, (size_t)len);
    BIO_free(bio);
}

/* First byte: 'D' = the rest is DER (tried as a CSR and as a key), anything
 * else = the whole input is spec.publicKey / spec.csr text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == 'D') {
        check_der("CERTIFICATE REQUEST", data + 1, size - 1);
        check_der("PUBLIC KEY", data + 1, size - 1);
        check_der("CERTIFICATE", data + 1, size - 1);
    } else {
        check_text(data, size);
    }
    return 0;
}
