/* pem_block.c - one PEM block, nothing around it. OpenSSL's PEM reader skips
 * any text before BEGIN and ignores what follows END; the protocol is stricter
 * (PROTOCOL.md 5 step 7), so we check the surroundings ourselves and let the
 * generic reader do the base64. */
#define _GNU_SOURCE   /* memmem */
#include "pem_block.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

static const char pem_begin[] = "-----BEGIN ";

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static int all_space(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_space(p[i]))
            return 0;
    return 1;
}

/* Copy at most 40 printable bytes of an untrusted label for a message. */
static void describe_label(char *out, size_t out_len, const char *label)
{
    char shown[41];
    size_t n = 0;

    for (; label[n] && n < sizeof(shown) - 1; n++)
        shown[n] = isprint((unsigned char)label[n]) ? label[n] : '?';
    shown[n] = '\0';
    snprintf(out, out_len, "a \"%s%s\" block", shown, label[n] ? "..." : "");
}

int tg_pem_single_block(const unsigned char *text, size_t len, const char *label,
                        unsigned char **der, long *der_len, char *found, size_t found_len)
{
    BIO *bio = NULL;
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long data_len = 0;
    char *rest;
    long rest_len;
    size_t off = 0;
    int rc = -1;

    *der = NULL;
    *der_len = 0;
    if (text == NULL || len == 0) {
        snprintf(found, found_len, "nothing");
        return -1;
    }
    if (len > TG_PEM_MAX_LEN) {
        snprintf(found, found_len, "%zu bytes (limit %d)", len, TG_PEM_MAX_LEN);
        return -1;
    }
    while (off < len && is_space(text[off]))
        off++;
    if (off == len) {
        snprintf(found, found_len, "only whitespace");
        return -1;
    }
    if (len - off < sizeof(pem_begin) - 1 || memcmp(text + off, pem_begin, sizeof(pem_begin) - 1) != 0) {
        snprintf(found, found_len, "%s",
                 memmem(text + off, len - off, pem_begin, sizeof(pem_begin) - 1) ? "text before the BEGIN line"
                                                                                  : "no PEM block");
        return -1;
    }

    bio = BIO_new_mem_buf(text + off, (int)(len - off));
    if (bio == NULL) {
        snprintf(found, found_len, "an out-of-memory error");
        goto out;
    }
    if (!PEM_read_bio_ex(bio, &name, &header, &data, &data_len, 0)) {
        snprintf(found, found_len, "a PEM block that does not decode (bad base64 or END line)");
        goto out;
    }
    /* Proc-Type / DEK-Info headers mean an encrypted or legacy block: not ours. */
    if (header != NULL && *header != '\0') {
        snprintf(found, found_len, "PEM headers (%s)", strncmp(header, "Proc-Type", 9) == 0 ? "Proc-Type" : "other");
        goto out;
    }
    if (strcmp(name, label) != 0) {
        describe_label(found, found_len, name);
        goto out;
    }
    if (data_len <= 0) {
        snprintf(found, found_len, "an empty block");
        goto out;
    }
    rest_len = BIO_get_mem_data(bio, &rest);
    if (rest_len > 0 && !all_space((const unsigned char *)rest, (size_t)rest_len)) {
        snprintf(found, found_len, "%s after the END line",
                 memmem(rest, (size_t)rest_len, pem_begin, sizeof(pem_begin) - 1) ? "a second PEM block" : "text");
        goto out;
    }
    *der = data;
    *der_len = data_len;
    data = NULL;
    rc = 0;
out:
    if (rc != 0)
        ERR_clear_error();   /* the reason is in `found`; don't leave stale errors for the caller */
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    BIO_free(bio);
    return rc;
}

char *tg_mem_bio_string(BIO *bio, size_t *len)
{
    char *data, *s;
    long n = BIO_get_mem_data(bio, &data);

    if (n <= 0 || (s = malloc((size_t)n + 1)) == NULL)
        return NULL;
    memcpy(s, data, (size_t)n);
    s[n] = '\0';
    if (len)
        *len = (size_t)n;
    return s;
}
