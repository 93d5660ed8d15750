/* authpin.h - trusting the provider's auth server without a provider
 * kubeconfig, as kubeadm's discovery hash does: "sha256:<64 hex>" is the
 * SHA-256 of a certificate's SubjectPublicKeyInfo (DER). The consumer
 * accepts the server when a certificate of the chain it presents has that
 * hash; that certificate then becomes the only trust anchor of the
 * connection that carries the token (chain and host name still verified).
 * Pure: no I/O. */
#ifndef TG_CLI_AUTHPIN_H
#define TG_CLI_AUTHPIN_H

#include <stddef.h>
#include <openssl/x509.h>

#define CLI_PIN_PREFIX "sha256:"
#define CLI_PIN_TEXT_LEN (7 + 64)

/* 0 and the 32 bytes of text "sha256:<hex>" (hex either case), or -1. */
int cli_auth_pin_parse(const char *text, unsigned char out[32]);

/* "sha256:<hex>" of cert's SPKI into out (CLI_PIN_TEXT_LEN + 1); 0 or -1. */
int cli_auth_pin_of(X509 *cert, char out[CLI_PIN_TEXT_LEN + 1]);

/* The index in chain of the first certificate whose SPKI hashes to pin,
 * or -1. */
int cli_auth_pin_find(STACK_OF(X509) *chain, const unsigned char pin[32]);

/* PEM of cert, malloc'd, NUL-terminated; NULL when out of memory. */
char *cli_auth_cert_pem(X509 *cert, size_t *len);

#endif
