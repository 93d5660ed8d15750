/* auth_client.c - see auth_client.h. */
#include "auth_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "authpin.h"
#include "cli.h"

/* Reading the chain to pin: a connect and a handshake, at most this long. */
#define FETCH_TIMEOUT_MS 20000L

/* "https://host[:port][/...]" -> "host:port" for BIO_set_conn_hostname, and
 * the host alone for SNI. */
static int split_url(const char *url, char *hostport, size_t hp_len, char *host, size_t h_len)
{
    const char *p, *end;
    size_t n;

    if (strncmp(url, "https://", 8) != 0)
        return -1;
    p = url + 8;
    end = p + strcspn(p, "/?#");
    n = (size_t)(end - p);
    if (n == 0 || n + 5 >= hp_len)
        return -1;
    memcpy(hostport, p, n);
    hostport[n] = '\0';
    if (hostport[0] == '[') {
        const char *close = strchr(hostport, ']');
        if (!close || (size_t)(close - hostport) >= h_len)
            return -1;
        memcpy(host, hostport + 1, (size_t)(close - hostport - 1));
        host[close - hostport - 1] = '\0';
        if (close[1] == '\0')
            strcat(hostport, ":443");
    } else {
        const char *colon = strchr(hostport, ':');
        size_t hn = colon ? (size_t)(colon - hostport) : n;
        if (hn >= h_len)
            return -1;
        memcpy(host, hostport, hn);
        host[hn] = '\0';
        if (!colon)
            strcat(hostport, ":443");
    }
    return 0;
}

/* A TCP connection to host:port within timeout_ms, with reads and writes
 * bounded by it too; -1 when none. */
static int connect_within(const char *host, const char *port, long timeout_ms)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *ai;
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    int fd = -1;

    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        struct pollfd p;
        int err = 0;
        socklen_t len = sizeof(err);

        if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol)) < 0)
            continue;
        p.fd = fd;
        p.events = POLLOUT;
        if ((connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
             (errno != EINPROGRESS || poll(&p, 1, (int)timeout_ms) != 1 ||
              getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)) ||
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return fd;
}

STACK_OF(X509) *cli_auth_fetch_chain(const char *url, long timeout_ms, char *err, size_t err_len)
{
    char hostport[300], host[256];
    const char *port;
    SSL_CTX *ctx = NULL;
    SSL *ssl = NULL;
    STACK_OF(X509) *out = NULL, *got;
    int fd = -1;

    if (split_url(url, hostport, sizeof(hostport), host, sizeof(host)) != 0) {
        snprintf(err, err_len, "expected an https:// URL, found \"%.64s\"", url);
        return NULL;
    }
    port = strrchr(hostport, ':') + 1;
    if (timeout_ms <= 0 || timeout_ms > FETCH_TIMEOUT_MS)
        timeout_ms = FETCH_TIMEOUT_MS;
    signal(SIGPIPE, SIG_IGN);
    if ((fd = connect_within(host, port, timeout_ms)) < 0) {
        snprintf(err, err_len, "cannot connect to %s within %ld ms", hostport, timeout_ms);
        return NULL;
    }
    if (!(ctx = SSL_CTX_new(TLS_client_method())) || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        !(ssl = SSL_new(ctx)) || !SSL_set_fd(ssl, fd)) {
        snprintf(err, err_len, "cannot set up TLS");
        goto out;
    }
    SSL_set_tlsext_host_name(ssl, host);
    if (SSL_connect(ssl) != 1) {
        snprintf(err, err_len, "no TLS handshake with %s", hostport);
        goto out;
    }
    if ((got = SSL_get_peer_cert_chain(ssl)) != NULL)
        out = X509_chain_up_ref(got);
    if (!out)
        snprintf(err, err_len, "%s presented no certificate", hostport);
out:
    ERR_clear_error();
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return out;
}

int cli_auth_trust(const char *url, const char *ca_file, const char *pin, long timeout_ms, char **pem,
                   size_t *pem_len, char *err, size_t err_len)
{
    unsigned char want[32];
    STACK_OF(X509) *chain;
    int i;

    *pem = NULL;
    if (ca_file != NULL) {
        *pem = cli_read_file(ca_file, 1 << 20, pem_len, err, err_len);
        return *pem ? 0 : -1;
    }
    if (cli_auth_pin_parse(pin, want) != 0) {
        snprintf(err, err_len, "--auth-ca-hash: expected sha256:<64 hex digits>");
        return -1;
    }
    if (!(chain = cli_auth_fetch_chain(url, timeout_ms, err, err_len)))
        return -2;
    if ((i = cli_auth_pin_find(chain, want)) < 0)
        snprintf(err, err_len, "no certificate presented by %s has the public key of --auth-ca-hash: "
                 "not the provider's auth server, or its certificate changed (ask for a new command line)", url);
    else if (!(*pem = cli_auth_cert_pem(sk_X509_value(chain, i), pem_len)))
        snprintf(err, err_len, "out of memory");
    sk_X509_pop_free(chain, X509_free);
    return *pem ? 0 : -1;
}

int cli_auth_open(cli_cluster *c, const char *cmd, const char *url, const char *ca_pem, size_t ca_len)
{
    char err[512];

    memset(c, 0, sizeof(*c));
    c->scope = "provider";
    c->cmd = cmd;
    signal(SIGPIPE, SIG_IGN);
    c->cfg.server = strdup(url);
    c->cfg.ca = malloc(ca_len + 1);
    c->cfg_ready = 1;
    if (!c->cfg.server || !c->cfg.ca) {
        cli_cluster_close(c);
        return cli_error(cmd, "out of memory");
    }
    memcpy(c->cfg.ca, ca_pem, ca_len);
    c->cfg.ca[ca_len] = '\0';
    c->cfg.ca_len = ca_len;
    /* a trailing '/' would double in the paths */
    while (strlen(c->cfg.server) > 8 && c->cfg.server[strlen(c->cfg.server) - 1] == '/')
        c->cfg.server[strlen(c->cfg.server) - 1] = '\0';
    if (uv_loop_init(&c->loop) != 0) {
        cli_cluster_close(c);
        return cli_error(cmd, "cannot start an event loop");
    }
    c->loop_ready = 1;
    if (!(c->client = tg_kube_client_new(&c->loop, &c->cfg, err, sizeof(err)))) {
        cli_cluster_close(c);
        return cli_error(cmd, "(provider) cannot set up the client of %s: %s", url, err);
    }
    return 0;
}

int cli_auth_pin_for(const char *url, const char *ca_file, char *out, size_t out_len, char *err, size_t err_len)
{
    char pin[CLI_PIN_TEXT_LEN + 1];
    X509 *cert = NULL;
    STACK_OF(X509) *chain = NULL;
    int rc = -1;

    if (ca_file != NULL) {
        BIO *b = BIO_new_file(ca_file, "r");
        cert = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
        BIO_free(b);
        if (!cert)
            snprintf(err, err_len, "--auth-ca: %s holds no PEM certificate", ca_file);
    } else if ((chain = cli_auth_fetch_chain(url, FETCH_TIMEOUT_MS, err, err_len)) != NULL) {
        cert = X509_dup(sk_X509_value(chain, sk_X509_num(chain) - 1));
        sk_X509_pop_free(chain, X509_free);
    }
    if (cert && cli_auth_pin_of(cert, pin) == 0 && strlen(pin) < out_len) {
        strcpy(out, pin);
        rc = 0;
    }
    X509_free(cert);
    ERR_clear_error();
    return rc;
}
