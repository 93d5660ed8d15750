/* authpin.c - see authpin.h. */
#include "authpin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int cli_auth_pin_parse(const char *text, unsigned char out[32])
{
    size_t plen = strlen(CLI_PIN_PREFIX);

    if (text == NULL || strlen(text) != CLI_PIN_TEXT_LEN || strncmp(text, CLI_PIN_PREFIX, plen) != 0)
        return -1;
    for (size_t i = 0; i < 32; i++) {
        int hi = hex_value(text[plen + 2 * i]), lo = hex_value(text[plen + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

static int spki_sha256(X509 *cert, unsigned char out[32])
{
    unsigned char *der = NULL;
    int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
    unsigned int md_len = 0;
    int rc = n > 0 && EVP_Digest(der, (size_t)n, out, &md_len, EVP_sha256(), NULL) == 1 && md_len == 32 ? 0 : -1;

    OPENSSL_free(der);
    return rc;
}

int cli_auth_pin_of(X509 *cert, char out[CLI_PIN_TEXT_LEN + 1])
{
    unsigned char md[32];
    int n = snprintf(out, CLI_PIN_TEXT_LEN + 1, "%s", CLI_PIN_PREFIX);

    if (spki_sha256(cert, md) != 0)
        return -1;
    for (size_t i = 0; i < 32; i++)
        n += snprintf(out + n, CLI_PIN_TEXT_LEN + 1 - (size_t)n, "%02x", md[i]);
    return 0;
}

int cli_auth_pin_find(STACK_OF(X509) *chain, const unsigned char pin[32])
{
    unsigned char md[32];

    for (int i = 0; chain != NULL && i < sk_X509_num(chain); i++)
        if (spki_sha256(sk_X509_value(chain, i), md) == 0 && CRYPTO_memcmp(md, pin, 32) == 0)
            return i;
    return -1;
}

char *cli_auth_cert_pem(X509 *cert, size_t *len)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data = NULL, *out = NULL;
    long n;

    if (b != NULL && PEM_write_bio_X509(b, cert) == 1 && (n = BIO_get_mem_data(b, &data)) > 0 &&
        (out = malloc((size_t)n + 1)) != NULL) {
        memcpy(out, data, (size_t)n);
        out[n] = '\0';
        *len = (size_t)n;
    }
    BIO_free(b);
    return out;
}
