/* base64.c - strict standard base64 through OpenSSL's EVP_EncodeBlock and
 * EVP_DecodeBlock. */
#include "base64.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

/* The standard alphabet (RFC 4648 section 4), as a test per byte: a strchr
 * over the alphabet per character cost more than the decoding itself. */
static int in_alphabet(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

char *tg_base64_encode(const unsigned char *data, size_t len, size_t *out_len)
{
    size_t n;
    char *out;

    if (len > (size_t)INT_MAX / 4 * 3 - 3)
        return NULL;
    n = (len + 2) / 3 * 4;
    out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    out[n] = '\0';
    if (out_len != NULL)
        *out_len = n;
    return out;
}

unsigned char *tg_base64_decode(const char *text, size_t len, size_t *out_len, char *err,
                                size_t err_len)
{
    size_t pad = 0, body;
    unsigned char *out;
    int n;

    if (len % 4 != 0) {
        snprintf(err, err_len, "length %zu is not a multiple of 4", len);
        return NULL;
    }
    if (len > (size_t)INT_MAX) {
        snprintf(err, err_len, "too long");
        return NULL;
    }
    if (len > 0 && text[len - 1] == '=')
        pad = len > 1 && text[len - 2] == '=' ? 2 : 1;
    body = len - pad;
    for (size_t i = 0; i < body; i++) {
        if (!in_alphabet(text[i])) {
            snprintf(err, err_len,
                     text[i] == '=' ? "padding '=' inside the data at position %zu"
                                    : "character at position %zu is not in the base64 alphabet",
                     i);
            return NULL;
        }
    }
    out = malloc(len / 4 * 3 + 1);
    if (out == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
    if (n < 0 || (size_t)n < pad) {
        free(out);
        snprintf(err, err_len, "not valid base64");
        return NULL;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes of data. */
    *out_len = (size_t)n - pad;
    return out;
}
