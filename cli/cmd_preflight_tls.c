/* cmd_preflight_tls.c - one bare HTTPS request for `preflight`: what the
 * API client (kube/client.h) hides and preflight needs to see: whether the
 * TLS handshake carried our client certificate, how the server ended it,
 * and the Date header of the answer. */
#include "preflight_run.h"

#include <string.h>
#include <sys/time.h>
#include <curl/curl.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define CLIENT_CERT_LIFETIME_S 600

static long long wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

typedef struct probe_state {
    CURL *easy;
    EVP_PKEY *key;
    X509 *cert;
    pf_probe *p;
    int first_header_seen;
} probe_state;

/* libcurl's SSL_CTX, before the handshake: our throwaway certificate. */
static CURLcode on_ssl_ctx(CURL *easy, void *ssl_ctx, void *data)
{
    probe_state *s = data;

    (void)easy;
    if (s->cert == NULL)
        return CURLE_OK;
    if (SSL_CTX_use_certificate(ssl_ctx, s->cert) != 1 || SSL_CTX_use_PrivateKey(ssl_ctx, s->key) != 1)
        return CURLE_SSL_CERTPROBLEM;
    return CURLE_OK;
}

/* The first header: the handshake is over and its SSL still open, so it
 * can say whether we signed a CertificateVerify, and with what. */
static void note_signature(probe_state *s)
{
    struct curl_tlssessioninfo *info = NULL;

    s->first_header_seen = 1;
    if (curl_easy_getinfo(s->easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL ||
        info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL)
        return;
    if (SSL_get_signature_type_nid(info->internals, &s->p->sig_nid) != 1)
        s->p->sig_nid = NID_undef;
}

static size_t on_header(char *buf, size_t size, size_t n, void *data)
{
    probe_state *s = data;
    size_t len = size * n;
    char line[128];

    if (!s->first_header_seen)
        note_signature(s);
    if (len > 5 && len < sizeof(line) && strncasecmp(buf, "date:", 5) == 0) {
        memcpy(line, buf + 5, len - 5);
        line[len - 5] = '\0';
        s->p->date_s = (long long)curl_getdate(line, NULL);
    }
    return len;
}

static size_t discard(char *buf, size_t size, size_t n, void *data)
{
    (void)buf;
    (void)data;
    return size * n;
}

static void classify(CURL *easy, CURLcode rc, pf_probe *p, const char *errbuf)
{
    curl_off_t connect_us = 0;

    snprintf(p->err, sizeof(p->err), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    if (rc == CURLE_OK) {
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &p->status);
        p->outcome = PF_PROBE_ANSWERED;
        return;
    }
    curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
    if (rc == CURLE_PEER_FAILED_VERIFICATION)
        p->outcome = PF_PROBE_UNTRUSTED;
    else if (connect_us > 0 && rc != CURLE_OPERATION_TIMEDOUT)
        p->outcome = PF_PROBE_TLS_REFUSED;
    else
        p->outcome = PF_PROBE_UNREACHABLE;
}

void pf_probe_run(const char *url, const char *path, const char *ca_pem, size_t ca_len, int insecure,
                  const char *proxy, EVP_PKEY *key, X509 *cert, long timeout_ms, pf_probe *p)
{
    char errbuf[CURL_ERROR_SIZE] = "", full[1024];
    struct curl_blob ca = { (void *)ca_pem, ca_len, CURL_BLOB_COPY };
    probe_state s = { .key = key, .cert = cert, .p = p };
    CURLcode rc;

    memset(p, 0, sizeof(*p));
    p->date_s = -1;
    p->sig_nid = NID_undef;
    snprintf(full, sizeof(full), "%s%s", url, path);
    if ((s.easy = curl_easy_init()) == NULL) {
        snprintf(p->err, sizeof(p->err), "out of memory");
        return;
    }
    curl_easy_setopt(s.easy, CURLOPT_URL, full);
    curl_easy_setopt(s.easy, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(s.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(s.easy, CURLOPT_ERRORBUFFER, errbuf);
    /* "" : no proxy from the environment, as the API client */
    curl_easy_setopt(s.easy, CURLOPT_PROXY, proxy ? proxy : "");
    if (ca_pem != NULL)
        curl_easy_setopt(s.easy, CURLOPT_CAINFO_BLOB, &ca);
    if (insecure) {
        curl_easy_setopt(s.easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(s.easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    curl_easy_setopt(s.easy, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
    curl_easy_setopt(s.easy, CURLOPT_SSL_CTX_DATA, &s);
    /* a fresh handshake, never a resumed one that skips the certificate */
    curl_easy_setopt(s.easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    curl_easy_setopt(s.easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(s.easy, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(s.easy, CURLOPT_WRITEFUNCTION, discard);
    p->sent_ms = wall_ms();
    rc = curl_easy_perform(s.easy);
    p->received_ms = wall_ms();
    classify(s.easy, rc, p, errbuf);
    curl_easy_cleanup(s.easy);
}

X509 *pf_self_signed(EVP_PKEY *key, const char *cn)
{
    X509 *x = X509_new();
    X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
    int type = EVP_PKEY_get_base_id(key);
    /* Ed25519 signs the message itself: no digest */
    const EVP_MD *md = type == EVP_PKEY_ED25519 ? NULL : EVP_sha256();

    if (x == NULL || X509_set_version(x, 2) != 1 || ASN1_INTEGER_set(X509_get_serialNumber(x), 1) != 1 ||
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) != 1 ||
        X509_set_issuer_name(x, name) != 1 || X509_gmtime_adj(X509_getm_notBefore(x), -60) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(x), CLIENT_CERT_LIFETIME_S) == NULL ||
        X509_set_pubkey(x, key) != 1 || X509_sign(x, key, md) <= 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}
