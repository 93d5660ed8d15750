/* cert_summary.c - see cert_summary.h. */
#define _GNU_SOURCE   /* timegm */
#include "cert_summary.h"

#include <stdio.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "spki.h"

static int time_of(const ASN1_TIME *a, time_t *out)
{
    struct tm tm;

    if (!a || ASN1_TIME_to_tm(a, &tm) != 1)
        return -1;
    *out = timegm(&tm);
    return 0;
}

/* The first CN's bytes, as X509_NAME_get_text_by_NID copies them. */
static void first_cn(const TG_NAME *subject, char *cn, size_t cn_len)
{
    cn[0] = '\0';
    for (int i = 0; i < tg_name_entry_count(subject); i++) {
        const X509_NAME_ENTRY *e = tg_name_entry(subject, i);
        const ASN1_STRING *d = X509_NAME_ENTRY_get_data(e);

        if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) == NID_commonName) {
            snprintf(cn, cn_len, "%.*s", ASN1_STRING_length(d), (const char *)ASN1_STRING_get0_data(d));
            return;
        }
    }
}

static int subject_group(const TG_NAME *subject, char *group, size_t group_len)
{
    int count = 0;

    group[0] = '\0';
    for (int i = 0; i < tg_name_entry_count(subject); i++) {
        char one[TG_CERT_GROUP_MAX];
        if (!tg_cert_group_name_entry(tg_name_entry(subject, i), one, sizeof(one)))
            continue;
        if (++count > 1)
            return -1;
        snprintf(group, group_len, "%s", one);
    }
    return count;
}

/* The DER of the first CERTIFICATE block (OPENSSL_free), or NULL. */
static unsigned char *first_block(const char *pem, size_t pem_len, long *len)
{
    BIO *b = pem_len < INT32_MAX ? BIO_new_mem_buf(pem, (int)pem_len) : NULL;
    unsigned char *der = NULL;
    char *name = NULL;

    if (!b || !PEM_bytes_read_bio(&der, len, &name, PEM_STRING_X509, b, NULL, NULL))
        der = NULL;
    OPENSSL_free(name);
    BIO_free(b);
    return der;
}

int tg_cert_summary_read(const char *pem, size_t pem_len, tg_cert_summary *out)
{
    long der_len = 0;
    unsigned char *der = first_block(pem, pem_len, &der_len);
    const unsigned char *p = der;
    TG_CERT *c = der ? d2i_TG_CERT(NULL, &p, der_len) : NULL;
    int n, rc = -1;

    memset(out, 0, sizeof(*out));
    if (c && time_of(c->info->validity->notBefore, &out->not_before) == 0 &&
        time_of(c->info->validity->notAfter, &out->not_after) == 0 &&
        (n = i2d_TG_SPKI(c->info->spki, &out->spki)) > 0) {
        out->spki_len = (size_t)n;
        first_cn(c->info->subject, out->cn, sizeof(out->cn));
        out->group_rc = subject_group(c->info->subject, out->group, sizeof(out->group));
        rc = 0;
    }
    TG_CERT_free(c);
    OPENSSL_free(der);
    ERR_clear_error();
    if (rc != 0)
        tg_cert_summary_clear(out);
    return rc;
}

void tg_cert_summary_clear(tg_cert_summary *s)
{
    OPENSSL_free(s->spki);
    memset(s, 0, sizeof(*s));
}
