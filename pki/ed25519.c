/* ed25519.c - see ed25519.h. */
#include "ed25519.h"

#include <pthread.h>

#include <sodium.h>

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_ready;

/* sodium_init picks CPU-specific code paths; it is safe to call from any
 * thread, but once is enough. */
static void init_sodium(void)
{
    sodium_ready = sodium_init() >= 0;
}

int tg_ed25519_verify(const unsigned char pub[TG_ED25519_KEY_LEN], const unsigned char *msg, size_t msg_len,
                      const unsigned char *sig, size_t sig_len)
{
    pthread_once(&sodium_once, init_sodium);
    if (!sodium_ready || pub == NULL || sig == NULL || sig_len != crypto_sign_BYTES || (msg == NULL && msg_len > 0))
        return 0;
    return crypto_sign_verify_detached(sig, msg, msg_len, pub) == 0;
}
