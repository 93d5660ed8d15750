/* digest_cache.h - internal: algorithms fetched once per process. Fetching
 * SHA-256 through the provider on every admission costs a lock and a lookup. */
#ifndef TG_PKI_DIGEST_CACHE_H
#define TG_PKI_DIGEST_CACHE_H

#include <openssl/evp.h>

/* SHA2-256 from the default library context; never freed (process lifetime). */
const EVP_MD *tg_sha256(void);

#endif
