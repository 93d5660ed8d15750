/* csr_cert.c - a CSR's certificate kept as a digest, read live when copied
 * (csr_cert.h). */
#include "signer/csr_cert.h"

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
