/* cert_group.h - the per-certificate group that makes one certificate's
 * rights revocable on its own (issue 48 item 1, docs/PROTOCOL.md "Names").
 *
 * A certificate issued through one of tenantgate's own consumer paths may
 * carry, beside its user name, the group
 *     tenantgate.io/cert:<identity>:<32 lowercase hex>
 * where <identity> is the user name (cluster id or slice user) and the hex
 * is 16 random bytes drawn by whoever makes the CSR. The provider binds that
 * group, not the bare user, so a renewal's new certificate gets a new group
 * and revoking the old one is removing its group from the bindings.
 *
 * The form is reserved: only the identity it names may carry it, a group
 * already bound belongs to the live certificate that carries it, and a
 * revoked group is never bound again (the revoked certificate still carries
 * it until its NotAfter). The pure rules are here; the records live in the
 * signer's namespace. No I/O besides the random draw of tg_cert_group_make. */
#ifndef TG_PKI_CERT_GROUP_H
#define TG_PKI_CERT_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <openssl/x509.h>

#include "verdict.h"

#define TG_CERT_GROUP_PREFIX "tenantgate.io/cert:"
#define TG_CERT_GROUP_HEX 32
/* prefix + identity (<= 253) + ':' + hex + NUL */
#define TG_CERT_GROUP_MAX (sizeof(TG_CERT_GROUP_PREFIX) - 1 + 253 + 1 + TG_CERT_GROUP_HEX + 1)
/* A ConfigMap data key for a group: "<identity>.<hex>" (keys allow no ':' or '/'). */
#define TG_CERT_GROUP_KEY_MAX (253 + 1 + TG_CERT_GROUP_HEX + 1)

/* 1 when name starts with the reserved prefix, in any case (a look-alike in
 * another case is refused too, as "system:" is). */
int tg_cert_group_is_form(const char *name);

/* A fresh group for identity: 0, or -1 when identity is empty, too long or
 * holds ':' or '/', or out_len is too small. */
int tg_cert_group_make(const char *identity, char *out, size_t out_len);

/* Split group into its identity (id_len >= 254) and hex (hex_len >= 33):
 * 0, or -1 with why ("expected ...") when it is not exactly the form. */
int tg_cert_group_parse(const char *group, char *identity, size_t id_len, char *hex, size_t hex_len, char *why,
                        size_t why_len);

/* The record key of group ("<identity>.<hex>"): 0, or -1 when malformed. */
int tg_cert_group_key(const char *group, char out[TG_CERT_GROUP_KEY_MAX]);

/* What the provider knows of a group before it binds it. */
typedef struct tg_cert_group_state {
    int bound;      /* a binding tenantgate made names it already (another live certificate) */
    int revoked;    /* it has a revocation record */
} tg_cert_group_state;

/* May a new certificate of identity carry group? TG_ACCEPTED, or v set:
 * NameReserved (malformed, or another identity's group), NameBound (bound
 * already: a new certificate draws a new group), NameRevoked (revoked: the
 * revoked certificate still carries it). */
int tg_cert_group_decide(const char *group, const char *identity, const tg_cert_group_state *st, tg_verdict *v);

/* A revocation record is kept until the revoked certificate expires: 1 when
 * the record (the certificate's NotAfter, unix seconds) is still needed at
 * now. A record with no readable NotAfter (0) is kept. */
int tg_cert_group_record_needed(int64_t not_after, int64_t now);

/* What revocation needs of an issued certificate (PEM): its user (CN), its
 * per-certificate group and its NotAfter. 1 with all three set, 0 when it
 * carries no such group (cn and not_after still set), -1 unreadable or
 * several groups. */
int tg_cert_group_of_certificate(const char *pem, size_t pem_len, char *cn, size_t cn_len, char *group,
                                 size_t group_len, int64_t *not_after);
/* 1 when e is an O in the per-certificate group's form, with its text into
 * group; else 0. */
int tg_cert_group_name_entry(const X509_NAME_ENTRY *e, char *group, size_t group_len);

/* ---------- the revocation records ----------
 * A ConfigMap's data in the signer's namespace: key tg_cert_group_key of
 * the group, value the revoked certificate's NotAfter in unix seconds
 * (decimal). The signer alone writes it in a deployment (the admin's
 * `kubectl tenantgate revoke` through the API). */

/* 1 when data (a ConfigMap's data object, NULL: none) records group revoked. */
int tg_cert_group_revoked(json_object *data, const char *group);

/* The NotAfter a record holds (0 when unreadable: kept, see record_needed). */
int64_t tg_cert_group_record_not_after(json_object *data, const char *key);

#endif
