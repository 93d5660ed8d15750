/* ed25519.h - Ed25519 verification with libsodium.
 *
 * Why not OpenSSL: OpenSSL 3.0's EVP_DigestVerify costs ~2x libsodium's
 * crypto_sign_verify_detached on this project's machines (bench/pki prints
 * both), and a valid Tenant needs two verifies (nonce signature, CSR
 * self-signature). OpenSSL stays for everything else (TLS, X.509, RSA, ECDSA).
 *
 * What libsodium (1.0.18, built without ED25519_COMPAT, as Debian ships it)
 * refuses that OpenSSL 3.0 accepts - none of it can come from an honest key
 * pair (pki/test_ed25519.c generates and checks each case):
 *   - a small-order public key A (the identity, the point of order 2, the
 *     points of order 4 and 8): any signature "verifies" for them in OpenSSL
 *     when R = S*B, so they prove nothing about who signed;
 *   - a non-canonical encoding of A (y >= p, or x = 0 with the sign bit set);
 *   - a small-order R in the signature (e.g. the identity: S = h*a then
 *     verifies in OpenSSL).
 * Both refuse S >= L (malleable signatures) and a non-canonical R (the
 * recomputed R is compared as canonical bytes). Both verify cofactorless, so a
 * key or R with a torsion component behaves the same in both. Go's
 * crypto/ed25519 accepts what OpenSSL accepts here. */
#ifndef TG_PKI_ED25519_H
#define TG_PKI_ED25519_H

#include <stddef.h>

#define TG_ED25519_KEY_LEN 32
#define TG_ED25519_SIG_LEN 64

/* 1 when sig is a valid Ed25519 signature (pure, no pre-hash) of msg by pub,
 * 0 otherwise, including a signature of the wrong length. */
int tg_ed25519_verify(const unsigned char pub[TG_ED25519_KEY_LEN], const unsigned char *msg, size_t msg_len,
                      const unsigned char *sig, size_t sig_len);

#endif
