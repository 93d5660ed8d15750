/* preflight_run.h - the online half of `preflight`: the run's state, the
 * line printer, and the checks, one file each:
 *   cmd_preflight.c        options, the order of the checks, the verdict
 *   cmd_preflight_tls.c    a bare HTTPS request (libcurl) that shows the TLS
 *                          handshake's outcome and the Date header
 *   cmd_preflight_key.c    key type for client certificates, clock skew
 *   cmd_preflight_csr.c    the kube-apiserver-client signer's round trip
 *   cmd_preflight_api.c    served versions, Liqo's version, rights */
#ifndef TG_CLI_PREFLIGHT_RUN_H
#define TG_CLI_PREFLIGHT_RUN_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "online.h"
#include "preflight.h"

typedef struct pf_ctx {
    pf_tally tally;
    tg_key_type key_type;
    long warn_s, fail_s;
    cli_flow flow;
    cli_cluster consumer, provider;
    int have_provider;                   /* --provider-kubeconfig */
    pf_token_line line;                  /* --token-line, when given */
    char *auth_ca_pem;                   /* the auth server's pinned CA */
    size_t auth_ca_len;
    const char *install_ns;
    char consumer_id[TG_CLUSTERID_MAX + 1], provider_id[TG_CLUSTERID_MAX + 1];
    /* each server's clock against this machine's, for the skew between them */
    int consumer_clock_ok, provider_clock_ok;
    long consumer_skew_s, provider_skew_s;
    const char *provider_clock_from;     /* "API server" or "auth server" */
} pf_ctx;

/* Print "RESULT check: detail" on stdout and count it. */
void pf_line(pf_ctx *c, pf_result r, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* --- cmd_preflight_tls.c ---------------------------------------------- */

typedef enum pf_probe_outcome {
    PF_PROBE_UNREACHABLE = 0,  /* no TCP connection (or no answer at all in time) */
    PF_PROBE_UNTRUSTED,        /* the server's certificate does not verify */
    PF_PROBE_TLS_REFUSED,      /* connected, but the server ended TLS before answering */
    PF_PROBE_ANSWERED,         /* an HTTP answer */
} pf_probe_outcome;

typedef struct pf_probe {
    pf_probe_outcome outcome;
    long status;               /* ANSWERED: the HTTP status */
    long long date_s;          /* its Date header (s since the epoch), -1 when none */
    long long sent_ms, received_ms;   /* this machine's clock around the request */
    int sig_nid;               /* what our CertificateVerify was signed with, NID_undef
                                * when no client certificate was sent */
    char err[256];             /* not ANSWERED: libcurl's words */
} pf_probe;

/* GET url+path trusting ca_pem only (NULL: the system store; insecure: no
 * verification, as the kubeconfig says), presenting cert/key when not NULL
 * (nothing else: no token, no kubeconfig client certificate). */
void pf_probe_run(const char *url, const char *path, const char *ca_pem, size_t ca_len, int insecure,
                  const char *proxy, EVP_PKEY *key, X509 *cert, long timeout_ms, pf_probe *p);

/* A self-signed client certificate for key, CN=cn, valid 10 minutes. */
X509 *pf_self_signed(EVP_PKEY *key, const char *cn);

/* --- cmd_preflight_key.c ---------------------------------------------- */

/* key-type: the provider's API server takes a client certificate of
 * c->key_type (SKIP without a provider kubeconfig). */
void pf_check_key_type(pf_ctx *c, long timeout_ms);

/* One cluster's clock against this machine's (probe of its API server);
 * 0, or TG_EXIT_UNREACHABLE after a FAIL line. */
int pf_read_clock(pf_ctx *c, const char *check, const tg_kube_config *cfg, int *ok, long *skew_s,
                  long timeout_ms);

/* The auth server of the token line: its pinned CA, its clock and the
 * provider's id from GET /ids. 0, or an exit code after a FAIL line. */
int pf_check_auth_server(pf_ctx *c, long timeout_ms);

/* clock-skew: between the two clusters, from what pf_read_clock found. */
void pf_check_skew(pf_ctx *c);

/* --- cmd_preflight_csr.c ---------------------------------------------- */

/* csr-signer: kubernetes.io/kube-apiserver-client signs a throwaway CSR. */
void pf_check_csr_signer(pf_ctx *c);

/* --- cmd_preflight_api.c ---------------------------------------------- */

/* 1 when every right of rights is allowed to cl's user (SelfSubjectAccessReview);
 * 0 and the first refused in missing; -1 (missing says why) when not asked. */
int pf_allowed(pf_ctx *c, cli_cluster *cl, const pf_right *rights, const char *tenant_ns,
               char *missing, size_t missing_len);

/* crds-consumer, crds-provider, crd-versions, liqo-version. */
void pf_check_versions(pf_ctx *c);

/* rights-consumer, rights-provider. */
void pf_check_rights(pf_ctx *c);

#endif
