/* cert_facts.h - what the slice controller reads of a certificate and of
 * the CSR it answers, parsed once and remembered.
 *
 * Why: OpenSSL 3.0 builds a decoder context for every public key it parses
 * (each PEM_read_bio_X509 or _X509_REQ: hundreds of small allocations), and
 * a slice's passes read the same CSR and certificate up to ten times: 22% of
 * the signer's CPU in a 10,000-slice burst was that parsing. Both texts are
 * immutable inputs, so what is read of them is a pure function of them: the
 * memo is keyed by the SHA-256 of the texts and holds a fixed number of
 * entries (direct-mapped, a collision replaces the older entry), about
 * 150 KB at most.
 *
 * Thread-safe: the workers share one memo. A NULL memo parses every time. */
#ifndef TG_SIGNER_CERT_FACTS_H
#define TG_SIGNER_CERT_FACTS_H

#include <time.h>

#include "pki/cert_group.h"

typedef struct tg_cert_memo tg_cert_memo;

typedef struct tg_cert_facts {
    int parses;              /* the certificate parses, with a validity window */
    time_t not_before, not_after;
    int certifies_csr_key;   /* 1: it certifies the CSR's public key; 0: another key;
                              * -1: the CSR does not parse */
    int group_rc;            /* tg_cert_group_of_certificate's answer for it: 1, 0 or -1 */
    int64_t group_not_after; /* its NotAfter as tg_cert_group_of_certificate reads it */
    char cn[256];
    char group[TG_CERT_GROUP_MAX];
} tg_cert_facts;

tg_cert_memo *tg_cert_memo_new(void);
void tg_cert_memo_free(tg_cert_memo *m);

/* The facts of cert_b64 (base64 of a PEM certificate) against csr_b64
 * (base64 of a PEM CSR). A certificate that does not decode reads as
 * parses = 0, group_rc = -1. */
void tg_cert_facts_get(tg_cert_memo *m, const char *cert_b64, const char *csr_b64, tg_cert_facts *out);

/* 1 when csr_b64 (base64 of a PEM CSR) parses with a public key, else 0. */
int tg_cert_memo_csr_parses(tg_cert_memo *m, const char *csr_b64);

/* How many looks the memo answered by parsing (a certificate's facts parse
 * it and its CSR: one look): a test's proof that a second look parses nothing. */
unsigned long tg_cert_memo_parses(tg_cert_memo *m);

#endif
