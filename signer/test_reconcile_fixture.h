/* test_reconcile_fixture.h - what the reconcilers' table tests share: a
 * signer configured as main.c would for the provider, informer caches filled
 * from JSON, the seed vectors, certificates for a key, and the writes a
 * reconcile made as one text to compare. Tests only. */
#ifndef TG_SIGNER_TEST_RECONCILE_FIXTURE_H
#define TG_SIGNER_TEST_RECONCILE_FIXTURE_H

#include <stddef.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "kube/cache.h"
#include "signer/controller.h"
#include "signer/fake_api.h"
#include "signer/signer.h"

/* A provider signer: every controller on, kube-apiserver-client signer,
 * a RoleBinding set; no caches (the test adds them), no settled records. */
void rt_signer_init(tg_signer *s);
/* Frees what rt_signer_init made and every cache and settled set it holds. */
void rt_signer_clear(tg_signer *s);

/* A synced cache (compact, as the signer's are) holding the objects of
 * items (JSON texts, NULL-terminated), indexed by index_label (or NULL). */
tg_cache *rt_cache(const char *index_label, const char *const *items);
/* The same, configured as main.c configures informer id's cache from
 * informers.c (index, projections, shrunk field): what its readers see. */
tg_cache *rt_cache_as(tg_informer_id id, const char *const *items);

/* $TG_VECTORS_DIR/name without its trailing newline (malloc'd). */
char *rt_vector(const char *name);
/* base64 of n bytes (malloc'd). */
char *rt_b64(const void *p, size_t n);
/* The public key of a base64 PEM "PUBLIC KEY" (spec.publicKey). */
EVP_PKEY *rt_public_key(const char *b64);
/* base64 PEM of a certificate for key, valid from 5 minutes ago for
 * valid_s seconds, issued by a throwaway key (malloc'd). */
char *rt_cert_b64(EVP_PKEY *key, long valid_s);

/* The writes a made, one a line: "METHOD path status" ("EVENT ns/name
 * reason" for events), in order. Valid until the next call. */
const char *rt_writes(tg_api *a);

#endif
