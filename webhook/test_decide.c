/* test_decide.c - the admission decision over a table of fake clusters.
 *
 * The lookups are our own interface (lookup.h), so a fake cluster here is a
 * plain table, not a Kubernetes mock. Tenants are the seed vectors wrapped
 * in recorded AdmissionReviews (testdata/), tweaked per case for the reasons
 * the vectors do not cover. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "kube/json.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "webhook/decide.h"
#include "test_util.h"

/* ---- the fake cluster ---- */

typedef struct fake_ns {
    const char *name;
    const char *tenant_ns_label;     /* liqo.io/tenant-namespace, NULL = absent */
    const char *cluster_label;       /* liqo.io/remote-cluster-id, NULL = absent */
    size_t tenants;
} fake_ns;

typedef struct fake_cluster {
    int unsynced;
    fake_ns ns[3];
    const char *tenant_names[3];
    int no_nonce;                    /* no nonce Secret at all */
    const char *nonce_cluster;       /* id the nonce was issued for; NULL = "cl01" */
    const char *cached_nonce;        /* the cache's nonce text; NULL = the seed's */
    const char *nonce_ns;            /* namespace of the liqo-nonce Secret; NULL = the Tenant's */
    const char *slice_user;          /* the user name of a replicated ResourceSlice */
    const char *claim_path;          /* cl01's NameClaim: its path, NULL = none */
    const char *claim_holder;
} fake_cluster;

static char seed_nonce[TG_LOOKUP_NONCE_MAX];

static int fake_synced(const tg_lookup *lk)
{
    return !((const fake_cluster *)lk->data)->unsynced;
}

static int fake_namespace_label(const tg_lookup *lk, const char *ns, const char *key,
                                char value[TG_LABEL_VALUE_MAX], int *ns_exists)
{
    const fake_cluster *c = lk->data;

    *ns_exists = 0;
    for (size_t i = 0; i < 3 && c->ns[i].name; i++) {
        const char *v;
        if (strcmp(c->ns[i].name, ns) != 0)
            continue;
        *ns_exists = 1;
        v = strcmp(key, TG_LABEL_TENANT_NAMESPACE) == 0 ? c->ns[i].tenant_ns_label
            : strcmp(key, "liqo.io/remote-cluster-id") == 0 ? c->ns[i].cluster_label
                                                             : NULL;
        if (!v)
            return TG_LOOKUP_NOT_FOUND;
        snprintf(value, TG_LABEL_VALUE_MAX, "%s", v);
        return TG_LOOKUP_FOUND;
    }
    return TG_LOOKUP_NOT_FOUND;
}

static size_t fake_tenants_in_namespace(const tg_lookup *lk, const char *ns)
{
    const fake_cluster *c = lk->data;
    for (size_t i = 0; i < 3 && c->ns[i].name; i++)
        if (strcmp(c->ns[i].name, ns) == 0)
            return c->ns[i].tenants;
    return 0;
}

static int fake_tenant_name_exists(const tg_lookup *lk, const char *name)
{
    const fake_cluster *c = lk->data;
    for (size_t i = 0; i < 3 && c->tenant_names[i]; i++)
        if (strcmp(c->tenant_names[i], name) == 0)
            return 1;
    return 0;
}

/* One Secret liqo-nonce, in nonce_ns, issued for nonce_cluster. */
static int fake_nonce_secret(const tg_lookup *lk, const char *ns, const char *cluster_id,
                             char nonce[TG_LOOKUP_NONCE_MAX], size_t *len)
{
    const fake_cluster *c = lk->data;
    const char *issued_for = c->nonce_cluster ? c->nonce_cluster : "cl01";

    if (c->no_nonce || (c->nonce_ns && strcmp(c->nonce_ns, ns) != 0))
        return TG_NONCE_ABSENT;
    if (strcmp(issued_for, cluster_id) != 0)
        return TG_NONCE_OTHER_CLUSTER;
    snprintf(nonce, TG_LOOKUP_NONCE_MAX, "%s", c->cached_nonce ? c->cached_nonce : seed_nonce);
    *len = strlen(nonce);
    return TG_NONCE_FOUND;
}

static int fake_slice_user_exists(const tg_lookup *lk, const char *user, char where[TG_LOOKUP_WHERE_MAX])
{
    const fake_cluster *c = lk->data;

    if (!c->slice_user || strcmp(c->slice_user, user) != 0)
        return 0;
    snprintf(where, TG_LOOKUP_WHERE_MAX, "liqo-tenant-other/pool");
    return 1;
}

static int fake_name_claim(const tg_lookup *lk, const char *name, char path[16], char holder[TG_LOOKUP_WHERE_MAX])
{
    const fake_cluster *c = lk->data;

    if (!c->claim_path || strcmp(name, "cl01") != 0)
        return TG_LOOKUP_NOT_FOUND;
    snprintf(path, 16, "%s", c->claim_path);
    snprintf(holder, TG_LOOKUP_WHERE_MAX, "%s", c->claim_holder);
    return TG_LOOKUP_FOUND;
}

static const tg_lookup_ops fake_ops = {
    .synced = fake_synced,
    .namespace_label = fake_namespace_label,
    .tenants_in_namespace = fake_tenants_in_namespace,
    .tenant_name_exists = fake_tenant_name_exists,
    .nonce_secret = fake_nonce_secret,
    .slice_user_exists = fake_slice_user_exists,
    .name_claim = fake_name_claim,
};

/* The cluster every seed Tenant for cl01 belongs in. */
#define GOOD_NS {"liqo-tenant-cl01", "true", "cl01", 0}
#define CONSUMER_NS {"liqo-tenant-cl-consumer", "true", "cl-consumer", 0}

/* ---- tweaks of the recorded reviews ---- */

static json_object *spec_of(json_object *review)
{
    return tg_json_path(review, "request", "object", "spec", NULL);
}

static void set_spec_b64(json_object *review, const char *field, const void *data, size_t len)
{
    unsigned char out[8192];
    int n = EVP_EncodeBlock(out, data, (int)len);
    json_object_object_add(spec_of(review), field, json_object_new_string_len((char *)out, n));
}

static char *pem_of_csr(X509_REQ *req)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *p, *copy;
    long n;

    PEM_write_bio_X509_REQ(b, req);
    n = BIO_get_mem_data(b, &p);
    copy = strndup(p, (size_t)n);
    BIO_free(b);
    return copy;
}

static void tweak_bad_base64(json_object *r)
{
    json_object_object_add(spec_of(r), "csr", json_object_new_string("not*base64!"));
}

static void tweak_cluster_id_upper(json_object *r)
{
    json_object_object_add(spec_of(r), "clusterID", json_object_new_string("CL_01"));
    json_object_object_add(tg_json_path(r, "request", "object", "metadata", "labels", NULL),
                           "liqo.io/remote-cluster-id", json_object_new_string("CL_01"));
}

static void tweak_public_key_junk(json_object *r)
{
    static const char junk[] = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
    set_spec_b64(r, "publicKey", junk, sizeof(junk) - 1);
}

static void tweak_weak_rsa(json_object *r)
{
    EVP_PKEY *k = EVP_RSA_gen(1024);
    size_t len;
    char *pem = tg_key_public_pem(k, &len);

    assert_non_null(pem);
    set_spec_b64(r, "publicKey", pem, len);
    free(pem);
    EVP_PKEY_free(k);
}

static void tweak_csr_garbage(json_object *r)
{
    static const char bad[] = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n";
    set_spec_b64(r, "csr", bad, sizeof(bad) - 1);
}

/* A well-signed CSR that asks for an OU: forbidden content (step 8) is found
 * before the key comparison (step 10), so any key may sign it. */
static void tweak_csr_with_ou(json_object *r)
{
    EVP_PKEY *k = tg_key_generate(TG_KEY_ED25519);
    X509_REQ *req = X509_REQ_new();
    X509_NAME *name = X509_REQ_get_subject_name(req);
    char *pem;

    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"liqo.io", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)"ops", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"cl01", -1, -1, 0);
    X509_REQ_set_pubkey(req, k);
    assert_true(X509_REQ_sign(req, k, NULL) > 0);
    pem = pem_of_csr(req);
    set_spec_b64(r, "csr", pem, strlen(pem));
    free(pem);
    X509_REQ_free(req);
    EVP_PKEY_free(k);
}

/* A proper CSR for cl01, but for a key that is not spec.publicKey. */
static void tweak_csr_other_key(json_object *r)
{
    EVP_PKEY *k = tg_key_generate(TG_KEY_ED25519);
    size_t len;
    char *pem = tg_csr_build(k, "cl01", &len);

    assert_non_null(pem);
    set_spec_b64(r, "csr", pem, len);
    free(pem);
    EVP_PKEY_free(k);
}

static void tweak_no_handshake(json_object *r)
{
    json_object_object_add(spec_of(r), "authzPolicy", json_object_new_string("TolerateNoHandshake"));
    json_object_object_del(spec_of(r), "signature");
}

static void tweak_drop_object(json_object *r)
{
    json_object_object_del(tg_json_path(r, "request", NULL), "object");
}

/* A copy of the Tenant under another name (request and object agree). */
static void tweak_renamed(json_object *r)
{
    json_object_object_add(tg_json_path(r, "request", NULL), "name", json_object_new_string("cl01-copy"));
    json_object_object_add(tg_json_path(r, "request", "object", "metadata", NULL), "name",
                           json_object_new_string("cl01-copy"));
}

static void tweak_renamed_no_handshake(json_object *r)
{
    tweak_renamed(r);
    tweak_no_handshake(r);
}

/* CREATE with generateName, as a validating webhook may see it: no name yet. */
static void tweak_generate_name(json_object *r)
{
    json_object *meta = tg_json_path(r, "request", "object", "metadata", NULL);

    json_object_object_del(tg_json_path(r, "request", NULL), "name");
    json_object_object_del(meta, "name");
    json_object_object_add(meta, "generateName", json_object_new_string("cl01-"));
}

static void tweak_request_namespace_other(json_object *r)
{
    json_object_object_add(tg_json_path(r, "request", NULL), "namespace",
                           json_object_new_string("default"));
}

/* issue 44 finding 2: a namespace owner labelled its own Namespace team-x for cl01 */
static void move_to(json_object *r, const char *ns)
{
    json_object_object_add(tg_json_path(r, "request", NULL), "namespace", json_object_new_string(ns));
    json_object_object_add(tg_json_path(r, "request", "object", "metadata", NULL), "namespace",
                           json_object_new_string(ns));
}

static void tweak_request_namespace_team(json_object *r)
{
    move_to(r, "team-x");
}

static void tweak_request_namespace_cl02(json_object *r)
{
    move_to(r, "liqo-tenant-cl02");
}

/* ---- the table ---- */

enum live { LIVE_NONE = 0, LIVE_FOUND, LIVE_MISSING, LIVE_OTHER_CLUSTER };

typedef struct decide_case {
    const char *what;
    const char *fixture;
    void (*tweak)(json_object *review);
    fake_cluster cluster;
    int allow_no_handshake;
    enum live live;              /* second pass after a live read */
    /* expected */
    int allowed;
    const char *reason;
    int code;
    int warning;                 /* warnings in the response (none are emitted today) */
    int need_live;
    int crypto_skipped;
    const char *message;         /* a part of the denial message, or NULL */
} decide_case;

#define PEM "review-v1-create-seed-cl01-pemkey.json"

static const decide_case cases[] = {
    /* the seed vectors (a raw key is the form every Liqo reads: never warned about) */
    {"pem key accepted", PEM, NULL, {.ns = {GOOD_NS}}, 0, 0, 1, "Accepted", 0, 0, 0, 0, NULL},
    {"v1beta1 accepted", "review-v1beta1-create-seed-cl01-pemkey.json", NULL, {.ns = {GOOD_NS}}, 0, 0, 1,
     "Accepted", 0, 0, 0, 0, NULL},
    {"raw key accepted, no warning", "review-v1-create-seed-cl01-rawkey.json", NULL, {.ns = {GOOD_NS}}, 0, 0,
     1, "Accepted", 0, 0, 0, 0, NULL},
    {"seed as printed", "review-v1-create-seed-doc-as-printed.json", NULL,
     {.ns = {CONSUMER_NS}, .nonce_cluster = "cl-consumer"}, 0, 0, 0, "CSRSubjectMismatch", 400, 0, 0, 0, NULL},
    /* a signature that fails over the cached nonce is checked again over the API
     * server's (a rotation may have replaced the cached one) */
    {"flipped signature", "review-v1-create-seed-cl01-flipped-signature.json", NULL, {.ns = {GOOD_NS}}, 0, 0, 0,
     "SignatureVerificationFailed", 400, 0, 1, 0, NULL},
    {"flipped signature, live nonce too", "review-v1-create-seed-cl01-flipped-signature.json", NULL,
     {.ns = {GOOD_NS}}, 0, LIVE_FOUND, 0, "SignatureVerificationFailed", 400, 0, 0, 0, NULL},
    {"cached nonce rotated since: the live one verifies", PEM, NULL,
     {.ns = {GOOD_NS}, .cached_nonce = "b2xkLW5vbmNlLWJlZm9yZS1yb3RhdGlvbg=="}, 0, LIVE_FOUND, 1, "Accepted", 0, 0, 0,
     0, NULL},
    {"cached nonce rotated since, no live read", PEM, NULL,
     {.ns = {GOOD_NS}, .cached_nonce = "b2xkLW5vbmNlLWJlZm9yZS1yb3RhdGlvbg=="}, 0, 0, 0, "SignatureVerificationFailed",
     400, 0, 1, 0, NULL},

    /* 1 */
    {"bad base64", PEM, tweak_bad_base64, {.ns = {GOOD_NS}}, 0, 0, 0, "MalformedTenant", 400, 0, 0, 0, NULL},
    {"no object", PEM, tweak_drop_object, {.ns = {GOOD_NS}}, 0, 0, 0, "MalformedTenant", 400, 0, 0, 0, NULL},
    /* 2 */
    {"namespace unknown", PEM, NULL, {.ns = {{"other", "true", "cl01", 0}}}, 0, 0, 0, "WrongNamespace", 400, 0,
     0, 0, NULL},
    {"namespace not a tenant namespace", PEM, NULL, {.ns = {{"liqo-tenant-cl01", NULL, "cl01", 0}}}, 0, 0, 0,
     "WrongNamespace", 400, 0, 0, 0, NULL},
    {"tenant-namespace label false", PEM, NULL, {.ns = {{"liqo-tenant-cl01", "false", "cl01", 0}}}, 0, 0, 0,
     "WrongNamespace", 400, 0, 0, 0, NULL},
    {"request namespace wins over the object's", PEM, tweak_request_namespace_other,
     {.ns = {GOOD_NS, {"default", NULL, NULL, 0}}}, 0, 0, 0, "WrongNamespace", 400, 0, 0, 0, NULL},
    {"tenant without the label", "review-v1-create-no-labels.json", NULL, {.ns = {GOOD_NS}}, 0, 0, 0,
     "LabelMismatch", 400, 0, 0, 0, NULL},
    {"namespace of another cluster", PEM, NULL, {.ns = {{"liqo-tenant-cl01", "true", "cl02", 0}}}, 0, 0, 0,
     "LabelMismatch", 403, 0, 0, 0, NULL},
    {"labelled for the cluster, not named liqo-tenant-<id>", PEM, tweak_request_namespace_team,
     {.ns = {{"team-x", "true", "cl01", 0}}}, 0, 0, 0, "WrongNamespace", 400, 0, 0, 0,
     "expected namespace liqo-tenant-cl01 (the tenant namespace of spec.clusterID), found team-x"},
    {"labelled for the cluster, another cluster's name", PEM, tweak_request_namespace_cl02,
     {.ns = {{"liqo-tenant-cl02", "true", "cl01", 0}}}, 0, 0, 0, "WrongNamespace", 400, 0, 0, 0,
     "found liqo-tenant-cl02"},
    {"namespace without cluster label", PEM, NULL, {.ns = {{"liqo-tenant-cl01", "true", NULL, 0}}}, 0, 0, 0,
     "LabelMismatch", 403, 0, 0, 0, NULL},
    {"second tenant in the namespace", PEM, NULL, {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}}, 0, 0, 0,
     "Duplicate", 403, 0, 0, 0, NULL},
    {"same name elsewhere", PEM, NULL, {.ns = {GOOD_NS}, .tenant_names = {"cl01"}}, 0, 0, 0, "Duplicate", 403,
     0, 0, 0, NULL},
    /* 2: the cluster id (the ControlPlane user) is no slice's user (issue 36, finding 7) */
    {"cluster id is a slice's user", PEM, NULL, {.ns = {GOOD_NS}, .slice_user = "cl01"}, 0, 0, 0, "Duplicate", 403,
     0, 0, 0, "expected spec.clusterID cl01 to be no ResourceSlice's user, found the user of ResourceSlice "
     "liqo-tenant-other/"},
    {"another slice's user", PEM, NULL, {.ns = {GOOD_NS}, .slice_user = "cl02"}, 0, 0, 1, "Accepted", 0, 0, 0, 0,
     NULL},
    /* 2: one owner per name (issue 44): cl01 claimed by another path or holder */
    {"cluster id claimed by tenantgate-auth's token path", PEM, NULL,
     {.ns = {GOOD_NS}, .claim_path = "token", .claim_holder = "cl01"}, 0, 0, 0, "NameOwned", 403, 0, 0, 0,
     "expected spec.clusterID cl01 to be unclaimed or claimed by the Tenant flow for itself, found NameClaim of "
     "path token holder cl01"},
    {"cluster id claimed by the Tenant flow for another holder", PEM, NULL,
     {.ns = {GOOD_NS}, .claim_path = "tenant", .claim_holder = "cl02"}, 0, 0, 0, "NameOwned", 403, 0, 0, 0,
     "holder cl02"},
    {"cluster id claimed by a slice", PEM, NULL, {.ns = {GOOD_NS}, .claim_path = "slice", .claim_holder = "cl02/p"},
     0, 0, 0, "NameOwned", 403, 0, 0, 0, "path slice"},
    {"cluster id claimed by its own Tenant flow: a re-authentication", PEM, NULL,
     {.ns = {GOOD_NS}, .claim_path = "tenant", .claim_holder = "cl01"}, 0, 0, 1, "Accepted", 0, 0, 0, 0, NULL},
    /* 2: the name is the cluster id */
    {"renamed copy", PEM, tweak_renamed, {.ns = {GOOD_NS}}, 0, 0, 0, "NameMismatch", 400, 0, 0, 0,
     "expected metadata.name to equal spec.clusterID \"cl01\", found \"cl01-copy\""},
    {"generateName", PEM, tweak_generate_name, {.ns = {GOOD_NS}}, 0, 0, 0, "NameMismatch", 400, 0, 0, 0,
     "found none (generateName is not supported)"},
    {"renamed copy, second in its namespace", PEM, tweak_renamed, {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}},
     0, 0, 0, "Duplicate", 403, 0, 0, 0, NULL},
    {"renamed copy in a namespace of another cluster", PEM, tweak_renamed,
     {.ns = {{"liqo-tenant-cl01", "true", "cl02", 0}}}, 0, 0, 0, "LabelMismatch", 403, 0, 0, 0, NULL},
    {"renamed copy without handshake", PEM, tweak_renamed_no_handshake, {.ns = {GOOD_NS}}, 1, 0, 0, "NameMismatch",
     400, 0, 0, 0, NULL},
    /* 3, 4 */
    {"invalid cluster id", PEM, tweak_cluster_id_upper, {.ns = {{"liqo-tenant-cl01", "true", "CL_01", 0}}}, 0,
     0, 0, "InvalidClusterID", 400, 0, 0, 0, NULL},
    {"unparsable key", PEM, tweak_public_key_junk, {.ns = {GOOD_NS}}, 0, 0, 0, "InvalidPublicKey", 400, 0, 0, 0, NULL},
    {"RSA-1024", PEM, tweak_weak_rsa, {.ns = {GOOD_NS}}, 0, 0, 0, "WeakKey", 400, 0, 0, 0, NULL},
    /* 5: cache miss asks for a live read; the live answer decides */
    {"nonce not cached", PEM, NULL, {.ns = {GOOD_NS}, .no_nonce = 1}, 0, LIVE_NONE, 0, "NonceNotFound", 400, 0, 1,
     0, NULL},
    {"nonce read live", PEM, NULL, {.ns = {GOOD_NS}, .no_nonce = 1}, 0, LIVE_FOUND, 1, "Accepted", 0, 0, 0, 0, NULL},
    {"nonce absent live too", PEM, NULL, {.ns = {GOOD_NS}, .no_nonce = 1}, 0, LIVE_MISSING, 0, "NonceNotFound",
     400, 0, 0, 0, NULL},
    {"nonce of another cluster", PEM, NULL, {.ns = {GOOD_NS}, .nonce_cluster = "cl02"}, 0, 0, 0, "NonceNotFound",
     400, 0, 1, 0, "expected Secret liqo-tenant-cl01/liqo-nonce labelled liqo.io/nonce=true and "
                   "liqo.io/remote-cluster-id=cl01 with a non-empty data.nonce, found it labelled for another cluster"},
    /* only the Tenant's own namespace counts: a nonce elsewhere is not used */
    {"nonce only in default", PEM, NULL, {.ns = {GOOD_NS}, .nonce_ns = "default"}, 0, 0, 0, "NonceNotFound", 400, 0,
     1, 0, "expected Secret liqo-tenant-cl01/liqo-nonce labelled"},
    {"nonce only in default, live too", PEM, NULL, {.ns = {GOOD_NS}, .nonce_ns = "default"}, 0, LIVE_MISSING, 0,
     "NonceNotFound", 400, 0, 0, 0, "liqo-tenant-cl01/liqo-nonce labelled liqo.io/nonce=true and "
                                    "liqo.io/remote-cluster-id=cl01 with a non-empty data.nonce, found none"},
    {"live read found another cluster's", PEM, NULL, {.ns = {GOOD_NS}, .no_nonce = 1}, 0, LIVE_OTHER_CLUSTER, 0,
     "NonceNotFound", 400, 0, 0, 0, "found it labelled for another cluster"},
    /* 7-10 */
    {"CSR garbage", PEM, tweak_csr_garbage, {.ns = {GOOD_NS}}, 0, 0, 0, "InvalidCSR", 400, 0, 0, 0, NULL},
    {"CSR with OU", PEM, tweak_csr_with_ou, {.ns = {GOOD_NS}}, 0, 0, 0, "CSRForbiddenContent", 400, 0, 0, 0, NULL},
    {"CSR for another key", PEM, tweak_csr_other_key, {.ns = {GOOD_NS}}, 0, 0, 0, "CSRPublicKeyMismatch", 400,
     0, 0, 0, NULL},
    /* authzPolicy */
    {"no handshake refused by default", PEM, tweak_no_handshake, {.ns = {GOOD_NS}, .no_nonce = 1}, 0, 0, 0,
     "MalformedTenant", 400, 0, 0, 0, NULL},
    {"no handshake when allowed", PEM, tweak_no_handshake, {.ns = {GOOD_NS}, .no_nonce = 1}, 1, 0, 1,
     "Accepted", 0, 0, 0, 0, NULL},
    /* UPDATE */
    {"update keeping the proof skips crypto", "review-v1-update-unchanged-proof.json", NULL,
     {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}, .tenant_names = {"cl01"}, .no_nonce = 1}, 0, 0, 1,
     "Accepted", 0, 0, 0, 1, NULL},
    {"update with a new signature is checked", "review-v1-update-new-signature.json", NULL,
     {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}, .tenant_names = {"cl01"}}, 0, 0, 0,
     "SignatureVerificationFailed", 400, 0, 1, 0, NULL},
    {"update keeping the proof of a misnamed Tenant", "review-v1-update-unchanged-proof.json", tweak_renamed,
     {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}, .no_nonce = 1}, 0, 0, 1, "Accepted", 0, 0, 0, 1, NULL},
    {"update with a new proof of a misnamed Tenant", "review-v1-update-new-signature.json", tweak_renamed,
     {.ns = {{"liqo-tenant-cl01", "true", "cl01", 1}}}, 0, 0, 0, "NameMismatch", 400, 0, 0, 0, NULL},
    {"update still placed", "review-v1-update-unchanged-proof.json", NULL,
     {.ns = {{"liqo-tenant-cl01", NULL, "cl01", 1}}}, 0, 0, 0, "WrongNamespace", 400, 0, 0, 0, NULL},
    /* not ours */
    {"delete", "review-v1-delete.json", NULL, {.unsynced = 1}, 0, 0, 1, "NotIntercepted", 0, 0, 0, 0, NULL},
    {"status subresource", "review-v1-status-update.json", NULL, {.unsynced = 1}, 0, 0, 1,
     "NotIntercepted", 0, 0, 0, 0, NULL},
    /* caches not ready: an error, so failurePolicy Fail holds */
    {"caches not synced", PEM, NULL, {.ns = {GOOD_NS}, .unsynced = 1}, 0, 0, 0, "CacheNotSynced", 500, 0, 0,
     0, NULL},
    {"malformed before sync", PEM, tweak_bad_base64, {.unsynced = 1}, 0, 0, 0, "MalformedTenant", 400, 0, 0, 0, NULL},
};

static int load_review(const char *fixture, void (*tweak)(json_object *), tg_review_request *req)
{
    size_t len;
    char *body = test_read_file(fixture, 0, &len);
    char err[256];
    int rc;

    assert_non_null(body);
    if (tweak) {
        json_object *doc = tg_json_parse(body, len, NULL, 0);
        const char *text;

        assert_non_null(doc);
        tweak(doc);
        text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
        free(body);
        body = strdup(text);
        len = strlen(body);
        json_object_put(doc);
    }
    rc = tg_review_parse(body, len, req, err, sizeof(err));
    if (rc != 0)
        fail_msg("%s: %s", fixture, err);
    free(body);
    return rc;
}

static void test_decide_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const decide_case *c = &cases[i];
        tg_lookup lk = {.ops = &fake_ops, .data = (void *)&c->cluster};
        tg_decide_opts opts = {.allow_no_handshake = c->allow_no_handshake};
        tg_review_request req;
        tg_decision d;

        load_review(c->fixture, c->tweak, &req);
        tg_decide_validate(&req, &lk, &opts, &d);
        if (c->live != LIVE_NONE) {
            /* the server's second pass after its live GET */
            assert_true(d.need_live_nonce);
            assert_string_equal(d.cluster_id, "cl01");
            assert_string_equal(d.nonce_namespace, "liqo-tenant-cl01");
            opts.live_nonce_done = 1;
            opts.live_nonce = c->live == LIVE_FOUND ? seed_nonce : NULL;
            opts.live_nonce_len = c->live == LIVE_FOUND ? strlen(seed_nonce) : 0;
            opts.live_nonce_state = c->live == LIVE_OTHER_CLUSTER ? TG_NONCE_OTHER_CLUSTER : TG_NONCE_ABSENT;
            tg_decision_clear(&d);
            tg_decide_validate(&req, &lk, &opts, &d);
        }
        if (d.response.allowed != c->allowed || strcmp(d.reason, c->reason) != 0 ||
            d.need_live_nonce != c->need_live || d.crypto_skipped != c->crypto_skipped)
            fail_msg("case \"%s\": got allowed=%d reason=%s need_live=%d skipped=%d (%s)", c->what,
                     d.response.allowed, d.reason, d.need_live_nonce, d.crypto_skipped, d.message);
        if (!c->allowed) {
            char prefix[64];
            if (d.response.code != c->code)
                fail_msg("case \"%s\": code %d, want %d", c->what, d.response.code, c->code);
            /* a verdict is final; only "retry later" (5xx) says when to ask again */
            if (d.response.retry_after_s != (c->code >= 500 ? TG_RETRY_AFTER_SECONDS : 0))
                fail_msg("case \"%s\": retryAfterSeconds %d", c->what, d.response.retry_after_s);
            /* one line, starting with the reason code */
            snprintf(prefix, sizeof(prefix), "%s: ", c->reason);
            assert_non_null(d.response.message);
            if (strncmp(d.response.message, prefix, strlen(prefix)) != 0)
                fail_msg("case \"%s\": message \"%s\"", c->what, d.response.message);
            assert_null(strchr(d.response.message, '\n'));
            if (c->message && !strstr(d.response.message, c->message))
                fail_msg("case \"%s\": message \"%s\" lacks \"%s\"", c->what, d.response.message, c->message);
            /* never the nonce */
            assert_null(strstr(d.response.message, seed_nonce));
        }
        if (d.response.nwarnings != (size_t)c->warning)
            fail_msg("case \"%s\": %zu warnings", c->what, d.response.nwarnings);
        tg_decision_clear(&d);
        tg_review_request_clear(&req);
    }
}

static void test_mutate(void **state)
{
    static const struct {
        const char *fixture;
        void (*tweak)(json_object *);
        const char *patch;          /* NULL: no patch */
    } mcases[] = {
        {"review-v1-create-no-labels.json", NULL,
         "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"liqo.io/remote-cluster-id\":\"cl01\"}}]"},
        {"review-v1-create-other-labels.json", NULL,
         "[{\"op\":\"add\",\"path\":\"/metadata/labels/liqo.io~1remote-cluster-id\",\"value\":\"cl01\"}]"},
        {PEM, NULL, NULL},                                  /* already labelled */
        {"review-v1-delete.json", NULL, NULL},
        {"review-v1-status-update.json", NULL, NULL},
        {"review-v1-create-no-labels.json", tweak_cluster_id_upper, NULL},  /* invalid: validation says why */
    };

    for (size_t i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
        tg_review_request req;
        tg_decision d;

        /* tweak_cluster_id_upper needs a labels object to write into */
        if (mcases[i].tweak) {
            load_review("review-v1-create-other-labels.json", mcases[i].tweak, &req);
        } else {
            load_review(mcases[i].fixture, NULL, &req);
        }
        tg_decide_mutate(&req, &d);
        assert_true(d.response.allowed);
        if (mcases[i].patch) {
            assert_non_null(d.response.patch);
            assert_string_equal(d.response.patch, mcases[i].patch);
            assert_string_equal(d.reason, "LabelAdded");
        } else if (d.response.patch) {
            fail_msg("mutate case %zu: unexpected patch %s", i, d.response.patch);
        }
        tg_decision_clear(&d);
        tg_review_request_clear(&req);
    }
}

static int setup(void **state)
{
    size_t len;
    char *n = test_read_file("/seed-cl01-pemkey.nonce", 1, &len);

    if (!n)
        return -1;
    while (len > 0 && (n[len - 1] == '\n' || n[len - 1] == '\r'))
        n[--len] = '\0';
    snprintf(seed_nonce, sizeof(seed_nonce), "%s", n);
    free(n);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_mutate),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
