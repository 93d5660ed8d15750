/* csr_cert.h - a CSR's status.certificate as the CSR cache keeps it: a
 * digest, not the certificate (about 1.5 KB an issued CSR, 15 MB at 10,000
 * Tenants). Whether a CSR is issued, and whether its certificate is the one
 * a Tenant already publishes, read from the digest; the certificate itself
 * comes from the watch event that issued it (a bounded ring) or is read
 * live, in the one pass that copies it. */
#ifndef TG_SIGNER_CSR_CERT_H
#define TG_SIGNER_CSR_CERT_H

#include <stddef.h>

#include "signer/api.h"

/* "sha256:" and 64 hex digits: no base64 text has a ':' */
#define TG_CERT_DIGEST_PREFIX "sha256:"
#define TG_CERT_DIGEST_LEN (sizeof(TG_CERT_DIGEST_PREFIX) - 1 + 64)

/* The digest of a certificate's base64 text (malloc'd), or NULL out of
 * memory or for an empty one: the CSR cache's tg_cache_shrink_field. */
char *tg_cert_digest(const char *b64);

/* tg_cert_digest, also keeping the certificate in a small ring of the
 * last ones issued (the CSR cache's shrink): the pass that copies it then
 * reads no CSR. */
char *tg_cert_digest_noted(const char *b64);

/* The ring's capacity: at most this many certificates (about 1.5 KB
 * each) are held, whatever the number of CSRs. */
#define TG_CERT_RECENT_MAX 512

/* How many certificates the ring holds, and emptying it (tests). */
size_t tg_cert_recent_count(void);
void tg_cert_recent_clear(void);

/* The certificate of CSR `name` whose cached status.certificate is
 * `cached` (a digest, or the certificate itself in a cache kept whole):
 * `known` (the one the caller holds, or NULL) when the digests match, else
 * the one the watch brought (tg_cert_digest_noted) if still kept, else
 * the CSR read live. *out is malloc'd. 0, or -1 with err (the read failed,
 * or the CSR has no certificate any more). */
int tg_csr_certificate(tg_api *api, const char *name, const char *cached, const char *known, char **out,
                       char *err, size_t err_len);

/* The same in place, for the pass that copies the certificate:
 * *certificate, as the cache keeps it (malloc'd), becomes the certificate.
 * 0, or -1 with err (*certificate left as it was). */
int tg_csr_certificate_fill(tg_api *api, const char *name, char **certificate, const char *known, char *err,
                            size_t err_len);

#endif
