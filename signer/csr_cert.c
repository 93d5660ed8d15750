/* csr_cert.c - a CSR's certificate kept as a digest, read live when copied
 * (csr_cert.h). */
#include "signer/csr_cert.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kube/json.h"

char *tg_cert_digest(const char *b64)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char *out;
    size_t at;

    if (!b64 || !*b64 || EVP_Digest(b64, strlen(b64), md, &n, EVP_sha256(), NULL) != 1 || n != 32 ||
        !(out = malloc(TG_CERT_DIGEST_LEN + 1)))
        return NULL;
    at = strlen(TG_CERT_DIGEST_PREFIX);
    memcpy(out, TG_CERT_DIGEST_PREFIX, at);
    for (unsigned int i = 0; i < n; i++, at += 2)
        snprintf(out + at, 3, "%02x", md[i]);
    return out;
}

/* ---------- the certificates the watch brought lately ---------- */

/* The CSR informer sees each certificate once, in the event that issues
 * it, and the pass that copies it runs soon after: the last few are kept
 * here, so that pass costs no GET of the CSR. A bounded ring (oldest
 * dropped first), an entry taken when copied: memory returns once a burst
 * is copied, and a certificate evicted or copied twice is read live. */
#define RECENT_MAX TG_CERT_RECENT_MAX

typedef struct recent_cert {
    char digest[TG_CERT_DIGEST_LEN + 1];
    char *b64;
} recent_cert;

static pthread_mutex_t recent_mu = PTHREAD_MUTEX_INITIALIZER;
static recent_cert recent[RECENT_MAX];
static size_t recent_next;

/* Under recent_mu: the entry holding that digest, or NULL. */
static recent_cert *recent_find(const char *digest)
{
    for (size_t i = 0; i < RECENT_MAX; i++)
        if (recent[i].b64 && strcmp(recent[i].digest, digest) == 0)
            return &recent[i];
    return NULL;
}

/* Once per certificate: a relist, or a later event of an issued CSR,
 * stores the same one again. */
static void recent_note(const char *digest, const char *b64)
{
    char *copy;

    pthread_mutex_lock(&recent_mu);
    if (recent_find(digest) || !(copy = strdup(b64))) {
        pthread_mutex_unlock(&recent_mu);
        return;   /* held already, or out of memory: only a GET more */
    }
    free(recent[recent_next].b64);
    snprintf(recent[recent_next].digest, sizeof(recent[recent_next].digest), "%s", digest);
    recent[recent_next].b64 = copy;
    recent_next = (recent_next + 1) % RECENT_MAX;
    pthread_mutex_unlock(&recent_mu);
}

/* The certificate of that digest, taken out of the ring, or NULL. */
static char *recent_take(const char *digest)
{
    recent_cert *r;
    char *b64 = NULL;

    pthread_mutex_lock(&recent_mu);
    if ((r = recent_find(digest))) {
        b64 = r->b64;
        r->b64 = NULL;
    }
    pthread_mutex_unlock(&recent_mu);
    return b64;
}

char *tg_cert_digest_noted(const char *b64)
{
    char *d = tg_cert_digest(b64);

    if (d)
        recent_note(d, b64);
    return d;
}

void tg_cert_recent_clear(void)
{
    pthread_mutex_lock(&recent_mu);
    for (size_t i = 0; i < RECENT_MAX; i++) {
        free(recent[i].b64);
        recent[i].b64 = NULL;
    }
    pthread_mutex_unlock(&recent_mu);
}

size_t tg_cert_recent_count(void)
{
    size_t n = 0;

    pthread_mutex_lock(&recent_mu);
    for (size_t i = 0; i < RECENT_MAX; i++)
        n += recent[i].b64 != NULL;
    pthread_mutex_unlock(&recent_mu);
    return n;
}

/* Whether the cached value is a digest: a cache kept whole (the unit
 * tests' fixtures, an informer without the shrink) holds the certificate. */
static int is_digest(const char *cached)
{
    return strncmp(cached, TG_CERT_DIGEST_PREFIX, strlen(TG_CERT_DIGEST_PREFIX)) == 0;
}

static int digest_of(const char *cached, const char *b64)
{
    char *d = tg_cert_digest(b64);
    int same = d && strcmp(d, cached) == 0;

    free(d);
    return same;
}

int tg_csr_certificate(tg_api *api, const char *name, const char *cached, const char *known, char **out,
                       char *err, size_t err_len)
{
    char path[400];
    json_object *csr = NULL;
    const char *crt;
    long st;

    *out = NULL;
    if (!is_digest(cached))
        return (*out = strdup(cached)) ? 0 : (snprintf(err, err_len, "out of memory"), -1);
    if (known && digest_of(cached, known))
        return (*out = strdup(known)) ? 0 : (snprintf(err, err_len, "out of memory"), -1);
    /* The ring's text hashes to the digest the cache shows: the CSR's own
     * certificate, as a GET would return it. */
    if ((*out = recent_take(cached)))
        return 0;
    snprintf(path, sizeof(path), "/apis/certificates.k8s.io/v1/certificatesigningrequests/%s", name);
    if ((st = tg_api_get(api, path, &csr, err, err_len)) != 200) {
        if (st > 0)
            snprintf(err, err_len, "GET CSR %s: HTTP %ld", name, st);
        json_object_put(csr);
        return -1;
    }
    /* A CSR's certificate is set once: the live one is the cached one, or
     * the informer is behind a CSR made again under the same name. */
    crt = tg_json_path_string(csr, "status", "certificate", NULL);
    if (crt && *crt && !(*out = strdup(crt)))
        snprintf(err, err_len, "out of memory");
    else if (!crt || !*crt)
        snprintf(err, err_len, "CSR %s has no certificate", name);
    json_object_put(csr);
    return *out ? 0 : -1;
}

int tg_csr_certificate_fill(tg_api *api, const char *name, char **certificate, const char *known, char *err,
                            size_t err_len)
{
    char *crt = NULL;

    if (tg_csr_certificate(api, name, *certificate, known, &crt, err, err_len) != 0)
        return -1;
    free(*certificate);
    *certificate = crt;
    return 0;
}
