/* cert_summary.h - what the signer reads of a certificate it copies into a
 * slice's Secret or a Tenant's status: the validity, the subject's CN and
 * per-certificate group, and the key, read with pki's own templates
 * (spki.h). d2i_X509 decodes the key through OpenSSL 3.0's decoder chain
 * and builds canonical copies of both names: 5% of the signer's CPU in a
 * 1,000-slice burst, for fields read here from the bytes. */
#ifndef TG_PKI_CERT_SUMMARY_H
#define TG_PKI_CERT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cert_group.h"

typedef struct tg_cert_summary {
    time_t not_before, not_after;
    char cn[256];                   /* the first CN, "" when none */
    char group[TG_CERT_GROUP_MAX];  /* the per-certificate group, "" when none */
    int group_rc;                   /* 1 a group, 0 none, -1 several */
    unsigned char *spki;            /* SubjectPublicKeyInfo, DER */
    size_t spki_len;
} tg_cert_summary;

/* The first CERTIFICATE block of pem (as PEM_read_bio_X509 picks it): 0
 * with *out filled, or -1 when there is none or it does not parse (*out
 * cleared). Free with tg_cert_summary_clear. */
int tg_cert_summary_read(const char *pem, size_t pem_len, tg_cert_summary *out);
void tg_cert_summary_clear(tg_cert_summary *s);

#endif
