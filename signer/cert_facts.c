/* cert_facts.c - see cert_facts.h. */
#include "signer/cert_facts.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "kube/base64.h"
#include "pki/cert_summary.h"
#include "pki/csr.h"

/* 2,048 entries of about 70 bytes, the names beside them only for
 * certificates: enough for every slice a burst has between its CSR's first
 * look and its certificate's last. */
#define SLOTS 2048
#define MAX_TEXT (1u << 20)

typedef struct entry {
    unsigned char digest[32];  /* SHA-256 of the texts; all zero: empty */
    int is_cert;               /* a certificate's facts; else a CSR's "parses" */
    int parses;
    time_t not_before, not_after;
    int certifies_csr_key, group_rc;
    int64_t group_not_after;
    char *cn, *group;          /* certificates only */
} entry;

struct tg_cert_memo {
    pthread_mutex_t mu;
    unsigned long parses;
    entry slots[SLOTS];
};

tg_cert_memo *tg_cert_memo_new(void)
{
    tg_cert_memo *m = calloc(1, sizeof(*m));

    if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

static void entry_clear(entry *e)
{
    free(e->cn);
    free(e->group);
    memset(e, 0, sizeof(*e));
}

void tg_cert_memo_free(tg_cert_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < SLOTS; i++)
        entry_clear(&m->slots[i]);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

unsigned long tg_cert_memo_parses(tg_cert_memo *m)
{
    unsigned long n;

    pthread_mutex_lock(&m->mu);
    n = m->parses;
    pthread_mutex_unlock(&m->mu);
    return n;
}

/* SHA-256 of "kind\n" a "\n" b: a CSR's key is never a certificate's. */
static int texts_digest(const char *kind, const char *a, const char *b, unsigned char out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, kind, strlen(kind) + 1) == 1 && EVP_DigestUpdate(ctx, a, strlen(a) + 1) == 1 &&
             EVP_DigestUpdate(ctx, b ? b : "", b ? strlen(b) : 0) == 1 && EVP_DigestFinal_ex(ctx, out, NULL) == 1;

    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

static entry *slot_of(tg_cert_memo *m, const unsigned char digest[32])
{
    size_t i;

    memcpy(&i, digest, sizeof(i));
    return &m->slots[i % SLOTS];
}

/* The memo's entry for digest copied into *out: 1, or 0 when not there. */
static int lookup(tg_cert_memo *m, const unsigned char digest[32], entry *out)
{
    entry *e;
    int found;

    pthread_mutex_lock(&m->mu);
    e = slot_of(m, digest);
    found = memcmp(e->digest, digest, 32) == 0;
    if (found) {
        *out = *e;
        out->cn = e->cn ? strdup(e->cn) : NULL;
        out->group = e->group ? strdup(e->group) : NULL;
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

/* Keep e (its strings are the memo's from now on). */
static void store(tg_cert_memo *m, entry *e)
{
    entry *slot;

    pthread_mutex_lock(&m->mu);
    slot = slot_of(m, e->digest);
    entry_clear(slot);
    *slot = *e;
    pthread_mutex_unlock(&m->mu);
    e->cn = e->group = NULL;
}

static void count_parse(tg_cert_memo *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->parses++;
    pthread_mutex_unlock(&m->mu);
}

/* The PEM text inside base64, as a memory BIO (freed with its text). */
/* The text a base64 field holds (malloc'd, *len set), or NULL. */
static unsigned char *decoded(const char *b64, size_t *len)
{
    char err[64];
    unsigned char *text = b64 ? tg_base64_decode(b64, strlen(b64), len, err, sizeof(err)) : NULL;

    if (text && (*len == 0 || *len >= MAX_TEXT)) {
        free(text);
        text = NULL;
    }
    return text;
}

/* The CSR's SubjectPublicKeyInfo DER (OPENSSL_free), or NULL. Certificates
 * and CSRs are read with pki's templates, not d2i_X509 and
 * PEM_read_bio_X509_REQ, whose OpenSSL 3.0 decoder chain for the key cost
 * 11% of the signer's CPU in a slice burst. */
static unsigned char *csr_spki(const char *csr_b64, size_t *len)
{
    size_t text_len = 0;
    unsigned char *text = decoded(csr_b64, &text_len), *der = NULL;

    if (text && tg_csr_public_key(text, text_len, &der, len) != 0)
        der = NULL;
    free(text);
    return der;
}

/* The key a SubjectPublicKeyInfo DER holds, decoded (slow), or NULL. */
static EVP_PKEY *key_of(const unsigned char *der, size_t len)
{
    const unsigned char *p = der;

    return d2i_PUBKEY(NULL, &p, (long)len);
}

/* 1 when the certificate's key is the CSR's, 0 when not. The encodings are
 * compared first; only when they differ are both keys decoded and compared
 * as keys (one encoding of a key is not the only one). */
static int certifies(const tg_cert_summary *cert, const unsigned char *spki, size_t spki_len)
{
    EVP_PKEY *have, *want;
    int same;

    if (cert->spki_len == spki_len && memcmp(cert->spki, spki, spki_len) == 0)
        return 1;
    have = key_of(cert->spki, cert->spki_len);
    want = key_of(spki, spki_len);
    same = have && want && EVP_PKEY_eq(have, want) == 1;
    EVP_PKEY_free(have);
    EVP_PKEY_free(want);
    ERR_clear_error();
    return same;
}

int tg_cert_memo_csr_parses(tg_cert_memo *m, const char *csr_b64)
{
    unsigned char digest[32];
    entry e = {.is_cert = 0};
    unsigned char *spki;
    size_t spki_len;
    int keep = m && csr_b64 && texts_digest("csr", csr_b64, NULL, digest) == 0;

    if (keep && lookup(m, digest, &e) && !e.is_cert)
        return e.parses;
    entry_clear(&e);
    spki = csr_spki(csr_b64, &spki_len);
    count_parse(m);
    e.parses = spki != NULL;
    OPENSSL_free(spki);
    if (keep) {
        memcpy(e.digest, digest, 32);
        store(m, &e);
    }
    return e.parses;
}

static void facts_parse(const char *cert_b64, const char *csr_b64, entry *e)
{
    tg_cert_summary c;
    size_t text_len = 0, spki_len = 0;
    unsigned char *text = decoded(cert_b64, &text_len);
    int read = text && tg_cert_summary_read((const char *)text, text_len, &c) == 0;
    unsigned char *want = csr_b64 ? csr_spki(csr_b64, &spki_len) : NULL;

    e->is_cert = 1;
    e->parses = read && c.not_after > c.not_before;
    e->certifies_csr_key = !want ? -1 : read && certifies(&c, want, spki_len);
    e->group_rc = read ? c.group_rc : -1;
    e->group_not_after = read ? (int64_t)c.not_after : 0;
    e->not_before = read ? c.not_before : 0;
    e->not_after = read ? c.not_after : 0;
    e->cn = strdup(read ? c.cn : "");
    e->group = strdup(read ? c.group : "");
    if (read)
        tg_cert_summary_clear(&c);
    OPENSSL_free(want);
    free(text);
}

static void facts_out(const entry *e, tg_cert_facts *out)
{
    memset(out, 0, sizeof(*out));
    out->parses = e->parses;
    out->not_before = e->not_before;
    out->not_after = e->not_after;
    out->certifies_csr_key = e->certifies_csr_key;
    out->group_rc = e->group_rc;
    out->group_not_after = e->group_not_after;
    snprintf(out->cn, sizeof(out->cn), "%s", e->cn ? e->cn : "");
    snprintf(out->group, sizeof(out->group), "%s", e->group ? e->group : "");
}

void tg_cert_facts_get(tg_cert_memo *m, const char *cert_b64, const char *csr_b64, tg_cert_facts *out)
{
    unsigned char digest[32];
    entry e = {.is_cert = 1};
    int keep = m && cert_b64 && texts_digest("certificate", cert_b64, csr_b64, digest) == 0;

    if (keep && lookup(m, digest, &e) && e.is_cert) {
        facts_out(&e, out);
        entry_clear(&e);
        return;
    }
    entry_clear(&e);
    facts_parse(cert_b64, csr_b64, &e);
    count_parse(m);
    facts_out(&e, out);
    if (keep) {
        memcpy(e.digest, digest, 32);
        store(m, &e);
    }
    entry_clear(&e);
}
