/* kubeconfig.h - where the API server is and how to prove who we are.
 *
 * Two sources, as client-go has them:
 *  - kubeconfig files (kubectl's format, YAML or JSON), several of them merged
 *    the way kubectl merges $KUBECONFIG: for every cluster, user and context
 *    name, and for current-context, the first file that sets it wins;
 *  - in-cluster: the ServiceAccount token and CA mounted into the pod, and
 *    KUBERNETES_SERVICE_HOST/PORT.
 * The result is self-contained: every file the kubeconfig names (CA, client
 * certificate and key) is read here, so the client never touches the disk
 * again, except for a token file, which is re-read when it rotates. */
#ifndef TG_KUBE_KUBECONFIG_H
#define TG_KUBE_KUBECONFIG_H

#include <stddef.h>

#define TG_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define TG_KUBE_FILE_MAX (1u << 20)   /* CA bundles, certs, keys, tokens */

typedef struct tg_kube_config {
    char *server;                /* "https://host:port[/prefix]", no trailing '/' */
    char *tls_server_name;       /* name to verify instead of the server's host, or NULL */
    char *ca;                    /* PEM bundle; NULL: the system trust store */
    size_t ca_len;
    char *cert;                  /* client certificate PEM, or NULL */
    size_t cert_len;
    char *key;                   /* client private key PEM (secret), or NULL */
    size_t key_len;
    char *token;                 /* bearer token (secret), or NULL */
    char *token_file;            /* re-read when it rotates; wins over token */
    char *proxy_url;             /* or NULL */
    char *namespace;             /* the context's namespace, or NULL */
    char *context;               /* the context used; "" in-cluster */
    int insecure_skip_tls_verify;
} tg_kube_config;

/* The usual search, as kubectl and controllers do it:
 *   explicit path list (':'-separated) if not NULL, else $KUBECONFIG if set,
 *   else in-cluster if KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
 * context overrides current-context (kubeconfig only; may be NULL).
 * Returns 0, or -1 with err naming the file and the problem. */
int tg_kube_config_load(tg_kube_config *cfg, const char *kubeconfig, const char *context,
                        char *err, size_t err_len);

/* kubeconfig files, merged in order. Empty paths are skipped, as kubectl does. */
int tg_kube_config_load_files(tg_kube_config *cfg, const char *const *paths, size_t n,
                              const char *context, char *err, size_t err_len);

/* One kubeconfig document in memory; relative file names resolve against
 * base_dir (NULL: the working directory). */
int tg_kube_config_parse(tg_kube_config *cfg, const char *text, size_t len, const char *base_dir,
                         const char *context, char *err, size_t err_len);

/* In-cluster configuration. sa_dir NULL means TG_KUBE_SA_DIR. */
int tg_kube_config_in_cluster(tg_kube_config *cfg, const char *sa_dir, char *err, size_t err_len);

void tg_kube_config_free(tg_kube_config *cfg);

/* Read a bearer token file: surrounding whitespace trimmed, must not be empty.
 * *token is malloc'd. Returns 0 or -1 with err (which never holds the token). */
int tg_kube_read_token(const char *path, char **token, char *err, size_t err_len);

/* A whole regular file, at most max bytes, NUL-terminated (the NUL is not
 * counted in *len). Returns 0 or -1 with err. */
int tg_kube_read_file(const char *path, size_t max, char **buf, size_t *len, char *err, size_t err_len);

#endif
