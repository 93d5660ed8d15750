/* kubeconfig_render.h - the consumer's kubeconfig for a provider (PROTOCOL.md 7),
 * pure: the Identity controller hands in what it read and writes the text. */
#ifndef TG_SIGNER_KUBECONFIG_RENDER_H
#define TG_SIGNER_KUBECONFIG_RENDER_H

#include <stddef.h>

typedef struct tg_kubeconfig_in {
    const char *provider_id;       /* cluster and context name */
    const char *server;            /* authParams.apiServer */
    const unsigned char *ca;       /* authParams.ca (PEM), may be NULL */
    size_t ca_len;
    const char *proxy_url;         /* authParams.proxyURL, or NULL/"" */
    const unsigned char *cert;     /* authParams.signedCRT (PEM) */
    size_t cert_len;
    const char *key_pem;           /* the cluster private key (PEM PKCS#8); secret */
    size_t key_len;
    const char *user;              /* user entry name (our cluster id) */
    const char *namespace_;        /* context namespace, or NULL */
} tg_kubeconfig_in;

/* YAML text (malloc'd; the caller frees it after cleansing: it holds the key),
 * or NULL with err when a required input is missing. */
char *tg_kubeconfig_render(const tg_kubeconfig_in *in, size_t *len, char *err, size_t err_len);

#endif
