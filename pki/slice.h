/* slice.h - a ResourceSlice's identity: its user name and its CSR, built and
 * checked. Pure: no I/O.
 *
 * A slice's certificate is CN=<name>-<first 12 hex digits of
 * sha256(consumerClusterID)>, O=<consumerClusterID>, under the consumer's
 * cluster key (the Tenant's key): Kubernetes then sees user <name>-<hash> in
 * group <consumerClusterID>. */
#ifndef TG_PKI_SLICE_H
#define TG_PKI_SLICE_H

#include <stddef.h>
#include <openssl/evp.h>

#include "tenant.h"
#include "verdict.h"

/* "<name>-" + 12 hex digits: a slice name is a DNS subdomain of at most 253. */
#define TG_SLICE_USER_MAX (253 + 1 + 12 + 1)

/* The slice's user name into out (NUL-terminated). -1 when name or consumer
 * is empty or out is too small. */
int tg_slice_user_name(const char *name, const char *consumer_id, char *out, size_t out_len);

/* PEM CSR with the slice's subject, signed by key; malloc'd, NULL on error. */
char *tg_slice_csr_build(EVP_PKEY *key, const char *name, const char *consumer_id, size_t *pem_len);

/* The same for a revocable slice: O=group, the slice user's per-certificate
 * group (pki/cert_group.h), in place of O=<consumer_id> (group NULL: the
 * plain CSR). */
char *tg_slice_csr_build_group(EVP_PKEY *key, const char *name, const char *consumer_id, const char *group,
                               size_t *pem_len);

/* PROTOCOL.md 5 steps 7-10 for a slice's CSR: one PEM block, self-signature, only O
 * and CN, no extensions or attributes, exactly CN=<user name> and
 * O=<consumer_id>, or instead of that O exactly one O that is the slice user's
 * own per-certificate group (another identity's: NameReserved; both O:
 * CSRSubjectMismatch, as Group <consumer> would outlive a revocation), and the key of tenant_key (spec.publicKey of the consumer's
 * Tenant, raw or PEM). tenant_key NULL (a TolerateNoHandshake Tenant, as Liqo
 * skips it) checks everything but the key. 0, or -1 with v. */
int tg_slice_csr_check(const tg_bytes *csr, const char *name, const char *consumer_id, const tg_bytes *tenant_key,
                       tg_verdict *v);

/* Liqo's built-in default ResourceSlice class: spec.class "default" or
 * empty/absent (its ResourceSliceClassDefault and ResourceSliceClassUnknown). */
int tg_slice_class_is_default(const char *class_);

/* The provider's --default-resource-slice-class-enabled (Liqo >= 1.2's flag
 * of that name): with default_enabled 0 a slice of the default class is
 * refused, DefaultResourceSliceClassDisabled (403), as Liqo's reconciler
 * denies its Resources. 0, or -1 with v. */
int tg_slice_class_check(const char *class_, int default_enabled, tg_verdict *v);

#endif
