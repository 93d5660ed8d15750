/* tls.h - the serving certificate and the server's TLS settings.
 *
 * One SSL_CTX serves every worker. It holds no certificate of its own: a
 * certificate callback installs the currently loaded pair into each new
 * connection, so a reload is seen by every thread at once, and a handshake
 * that started before the swap keeps the pair it took (refcounted). */
#ifndef TG_COMMON_TLS_H
#define TG_COMMON_TLS_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <openssl/ssl.h>

/* Serving cert and key files are small; anything bigger is not one. */
#define TG_TLS_MAX_FILE (1u << 20)

typedef struct tg_tls_pair tg_tls_pair;

typedef struct tg_tls_store {
    pthread_mutex_t lock;          /* guards current */
    tg_tls_pair *current;          /* NULL until the first good load */
    char *cert_path;
    char *key_path;
} tg_tls_store;

int tg_tls_store_init(tg_tls_store *s, const char *cert_path, const char *key_path);
void tg_tls_store_dispose(tg_tls_store *s);

/* (Re)read both files. A pair that does not parse, or whose key does not
 * match the certificate, is refused and the loaded one kept. Returns 0 and
 * swaps, or -1 with err. */
int tg_tls_store_reload(tg_tls_store *s, char *err, size_t err_len);

/* 1 once a pair is loaded; *not_after (may be NULL) gets its expiry. */
int tg_tls_store_loaded(tg_tls_store *s, time_t *not_after);

/* A server SSL_CTX: TLS 1.2 minimum (1.3 negotiated when the client has it),
 * AEAD ECDHE ciphers only, groups X25519 and P-256, no renegotiation, no
 * compression, ALPN h2 and http/1.1 (only http/1.1 when !enable_h2), and the
 * certificate callback over s. NULL on error. */
SSL_CTX *tg_tls_server_ctx(tg_tls_store *s, int enable_h2);

#endif
