/* auth_client.h - the consumer's side of the provider's tenantgate-auth
 * (docs/auth.md "v1 one-string peering"): how the CLI comes to trust it
 * (--auth-ca FILE, or --auth-ca-hash pinned against the chain it presents)
 * and a cli_cluster whose "API server" is its URL, so that the calls and
 * their deadlines are the online commands' own. */
#ifndef TG_CLI_AUTH_CLIENT_H
#define TG_CLI_AUTH_CLIENT_H

#include <stddef.h>
#include <openssl/x509.h>

#include "online.h"

/* The certificates url's server presents (leaf first), read without
 * verifying them: only to look for a pinned one. Connect and handshake
 * within timeout_ms (at most 20 s). NULL with err. */
STACK_OF(X509) *cli_auth_fetch_chain(const char *url, long timeout_ms, char *err, size_t err_len);

/* The trust anchor for url: ca_file's PEM, or the certificate of the
 * presented chain matching pin ("sha256:<hex>"). Exactly one of the two.
 * *pem malloc'd. 0, or with err -2 (url unreachable) or -1. */
int cli_auth_trust(const char *url, const char *ca_file, const char *pin, long timeout_ms, char **pem,
                   size_t *pem_len, char *err, size_t err_len);

/* The pin ("sha256:<hex>") a consumer should pass for url: of the first
 * certificate in ca_file, or (ca_file NULL) of the last certificate of the
 * chain url presents, its root-most. 0, or -1 with err. */
int cli_auth_pin_for(const char *url, const char *ca_file, char *out, size_t out_len, char *err, size_t err_len);

/* c talks to url, trusting ca_pem only. 0, or an exit code after the message. */
int cli_auth_open(cli_cluster *c, const char *cmd, const char *url, const char *ca_pem, size_t ca_len);

#endif
