/* csr_policy.h - what the auth server signs for a consumer: one PEM
 * CERTIFICATE REQUEST, self-signed, by a key of the webhook's strength policy
 * (Ed25519, RSA 2048-8192 bits, ECDSA P-256/P-384: every --key-type, and the
 * RSA-2048 of Liqo's TLS compatibility mode), with subject exactly
 * CN=<the clusterID of the request>, O=liqo.io and nothing else (no
 * extensions, no attributes): the identity Kubernetes maps to user <id> in
 * group liqo.io. Pure (OpenSSL, no I/O). */
#ifndef TG_AUTH_CSR_POLICY_H
#define TG_AUTH_CSR_POLICY_H

#include <stddef.h>

#include "auth/reason.h"

/* 0, or -1 with *reason (InvalidCSR, CSRSubjectMismatch, UnsupportedKey, WeakKey)
 * and one line in why saying what was expected. */
int tg_auth_csr_check(const unsigned char *pem, size_t len, const char *cluster_id, tg_auth_reason *reason,
                      char *why, size_t why_len);

#endif
