/* tls.c - serving certificate store and SSL_CTX. */
#include "tls.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <h2o.h>

struct tg_tls_pair {
    atomic_int refs;
    X509 *cert;
    EVP_PKEY *key;
    STACK_OF(X509) *chain;         /* intermediates after the leaf, may be empty */
    time_t not_after;
};

static void pair_release(tg_tls_pair *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    X509_free(p->cert);
    EVP_PKEY_free(p->key);
    sk_X509_pop_free(p->chain, X509_free);
    free(p);
}

static tg_tls_pair *store_acquire(tg_tls_store *s)
{
    tg_tls_pair *p;

    pthread_mutex_lock(&s->lock);
    p = s->current;
    if (p)
        atomic_fetch_add(&p->refs, 1);
    pthread_mutex_unlock(&s->lock);
    return p;
}

int tg_tls_store_init(tg_tls_store *s, const char *cert_path, const char *key_path)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    s->cert_path = strdup(cert_path);
    s->key_path = strdup(key_path);
    return s->cert_path && s->key_path ? 0 : -1;
}

void tg_tls_store_dispose(tg_tls_store *s)
{
    pair_release(s->current);
    free(s->cert_path);
    free(s->key_path);
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof(*s));
}

/* The first OpenSSL error as text, or fallback. */
static void ssl_error(char *err, size_t err_len, const char *what, const char *path)
{
    unsigned long e = ERR_get_error();
    char buf[200] = "";

    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    snprintf(err, err_len, "%s %s%s%s", what, path, e ? ": " : "", buf);
}

/* A memory BIO over the file's content, bounded in size. */
static BIO *read_file_bio(const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    BIO *b;

    if (!f) {
        snprintf(err, err_len, "cannot open %s", path);
        return NULL;
    }
    buf = malloc(TG_TLS_MAX_FILE + 1);
    n = buf ? fread(buf, 1, TG_TLS_MAX_FILE + 1, f) : 0;
    fclose(f);
    if (!buf || n == 0 || n > TG_TLS_MAX_FILE) {
        snprintf(err, err_len, "%s is %s", path, !buf ? "unreadable (out of memory)" : n == 0 ? "empty" : "over 1 MiB");
        free(buf);
        return NULL;
    }
    b = BIO_new(BIO_s_mem());
    if (b && BIO_write(b, buf, (int)n) != (int)n) {
        BIO_free(b);
        b = NULL;
    }
    /* The key file passes through here: do not leave it in freed memory. */
    OPENSSL_cleanse(buf, n);
    free(buf);
    if (!b)
        snprintf(err, err_len, "out of memory reading %s", path);
    return b;
}

static time_t asn1_time_to_unix(const ASN1_TIME *t)
{
    struct tm tm;

    if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return timegm(&tm);
}

int tg_tls_store_reload(tg_tls_store *s, char *err, size_t err_len)
{
    tg_tls_pair *p = calloc(1, sizeof(*p)), *old;
    BIO *cb = NULL, *kb = NULL;
    X509 *extra;

    if (!p) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    atomic_init(&p->refs, 1);
    if (!(cb = read_file_bio(s->cert_path, err, err_len)) || !(kb = read_file_bio(s->key_path, err, err_len)))
        goto fail;
    if (!(p->cert = PEM_read_bio_X509(cb, NULL, NULL, NULL))) {
        ssl_error(err, err_len, "no PEM certificate in", s->cert_path);
        goto fail;
    }
    if (!(p->chain = sk_X509_new_null()))
        goto fail;
    while ((extra = PEM_read_bio_X509(cb, NULL, NULL, NULL)) != NULL)
        if (!sk_X509_push(p->chain, extra)) {
            X509_free(extra);
            goto fail;
        }
    ERR_clear_error();             /* the loop ends on "no start line" */
    /* No passphrase callback: an encrypted key fails instead of prompting. */
    if (!(p->key = PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)""))) {
        ssl_error(err, err_len, "no PEM private key in", s->key_path);
        goto fail;
    }
    if (X509_check_private_key(p->cert, p->key) != 1) {
        ERR_clear_error();
        snprintf(err, err_len, "key %s does not match certificate %s", s->key_path, s->cert_path);
        goto fail;
    }
    p->not_after = asn1_time_to_unix(X509_get0_notAfter(p->cert));
    BIO_free(cb);
    BIO_free(kb);

    pthread_mutex_lock(&s->lock);
    old = s->current;
    s->current = p;
    pthread_mutex_unlock(&s->lock);
    pair_release(old);
    return 0;

fail:
    BIO_free(cb);
    BIO_free(kb);
    pair_release(p);
    return -1;
}

int tg_tls_store_loaded(tg_tls_store *s, time_t *not_after)
{
    tg_tls_pair *p = store_acquire(s);

    if (!p)
        return 0;
    if (not_after)
        *not_after = p->not_after;
    pair_release(p);
    return 1;
}

/* Runs for every handshake, before cipher selection: hand this connection
 * the pair loaded right now. */
static int on_certificate(SSL *ssl, void *arg)
{
    tg_tls_pair *p = store_acquire(arg);
    int ok;

    if (!p)
        return 0;                  /* no certificate yet: fail the handshake */
    ok = SSL_use_certificate(ssl, p->cert) == 1 && SSL_use_PrivateKey(ssl, p->key) == 1 &&
         SSL_set1_chain(ssl, p->chain) == 1;
    pair_release(p);               /* the SSL holds its own references */
    return ok;
}

SSL_CTX *tg_tls_server_ctx(tg_tls_store *s, int enable_h2)
{
    static const char ciphers12[] =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
        "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
    /* h2o keeps a pointer to the list: static storage. Our own list because
     * h2o_http2_alpn_protocols lacks http/1.1. */
    static h2o_iovec_t alpn_h2_h1[] = {{H2O_STRLIT("h2")}, {H2O_STRLIT("http/1.1")}, {NULL, 0}};
    static h2o_iovec_t alpn_h1[] = {{H2O_STRLIT("http/1.1")}, {NULL, 0}};
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

    if (!ctx)
        return NULL;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, ciphers12) != 1 ||
        SSL_CTX_set1_groups_list(ctx, "X25519:P-256") != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    /* An idle keep-alive connection otherwise holds its 16 KB+ read and
     * write record buffers (~32 KB each); the API server keeps many open.
     * Measured: 1,000 idle connections 45 -> 29 MB. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    /* Close without sending close_notify. h2o 2.2 sends it through a write
     * that never completes when the client has reset the connection (a
     * kept-alive connection dropped by a restarting API server, or a load
     * tool that stops): it then kept that connection's fd and ~44 KB
     * forever. HTTP/1.1 and HTTP/2 frame their messages, so a missing
     * close_notify truncates nothing (test_server.py: reset connections). */
    SSL_CTX_set_quiet_shutdown(ctx, 1);
    SSL_CTX_set_cert_cb(ctx, on_certificate, s);
    h2o_ssl_register_alpn_protocols(ctx, enable_h2 ? alpn_h2_h1 : alpn_h1);
    return ctx;
}
