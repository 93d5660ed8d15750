/* test_tenant.c - the admission decision: the seed vectors, every reason code
 * of steps 3-10, the TolerateNoHandshake switch, and round trips per key type. */
#include "test_helpers.h"

#include <json-c/json.h>

#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"
#include "pki/tenant.h"

/* ---- fixtures ---------------------------------------------------------- */

static char *json_string(json_object *obj, const char *a, const char *b)
{
    json_object *x;

    if (!json_object_object_get_ex(obj, a, &x) || !json_object_object_get_ex(x, b, &x))
        return NULL;
    return strdup(json_object_get_string(x));
}

static void set_bytes(tg_bytes *b, const char *b64)
{
    if (b64 == NULL)
        return;
    b->data = th_b64_decode(b64, &b->len);
    assert_non_null(b->data);
}

/* A vector's Tenant, decoded the way the API object carries it. */
static void load_tenant(const char *name, tg_tenant *t)
{
    char file[256];
    size_t len;
    char *text, *s;
    json_tokener *tok = json_tokener_new();
    json_object *root;

    snprintf(file, sizeof(file), "%s.json", name);
    text = th_read_vector(file, &len);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    root = json_tokener_parse_ex(tok, text, (int)len);
    assert_non_null(root);
    memset(t, 0, sizeof(*t));
    t->name = json_string(root, "metadata", "name");
    t->namespace_ = json_string(root, "metadata", "namespace");
    t->cluster_id = json_string(root, "spec", "clusterID");
    s = json_string(root, "spec", "publicKey");
    set_bytes(&t->public_key, s);
    free(s);
    s = json_string(root, "spec", "csr");
    set_bytes(&t->csr, s);
    free(s);
    s = json_string(root, "spec", "signature");
    set_bytes(&t->signature, s);
    free(s);
    json_object_put(root);
    json_tokener_free(tok);
    free(text);
}

/* The nonce text as issued, without a trailing newline if the file has one. */
static char *load_nonce(const char *name)
{
    char file[256];
    size_t len;
    char *n;

    snprintf(file, sizeof(file), "%s.nonce", name);
    n = th_read_vector(file, &len);
    while (len > 0 && (n[len - 1] == '\n' || n[len - 1] == '\r'))
        n[--len] = '\0';
    return n;
}

static tg_reason reason_from_name(const char *name)
{
    for (int r = 0; r < TG_REASON_COUNT; r++)
        if (strcmp(tg_reason_name((tg_reason)r), name) == 0)
            return (tg_reason)r;
    fail_msg("unknown reason %s", name);
    return TG_REASON_COUNT;
}

static const tg_check_opts default_opts = {0};

/* ---- the vectors (docs/PROTOCOL.md 10), driven by index.tsv ----------- */

static void test_vectors_index(void **state)
{
    size_t len;
    char *index = th_read_vector("index.tsv", &len), *save = NULL;
    int count = 0;

    for (char *line = strtok_r(index, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *name = line, *verdict, *reason, *scope;
        tg_tenant t;
        char *nonce;
        tg_verdict v;
        int rc;

        if (strncmp(line, "name\t", 5) == 0)
            continue;
        verdict = strchr(name, '\t');
        assert_non_null(verdict);
        *verdict++ = '\0';
        reason = strchr(verdict, '\t');
        if (reason)
            *reason++ = '\0';
        reason = reason ? reason : (char *)"";
        scope = strchr(reason, '\t');
        if (scope)
            *scope++ = '\0';
        reason[strcspn(reason, "\r\t ")] = '\0';
        /* "document" vectors are not decodable Tenants: kube/ and the CLI test take them. */
        if (scope && strncmp(scope, "document", 8) == 0)
            continue;
        /* "webhook" vectors break a placement rule, which the decision does not judge. */
        if (scope && strncmp(scope, "webhook", 7) == 0)
            verdict = (char *)"accept";

        load_tenant(name, &t);
        nonce = load_nonce(name);
        rc = tg_tenant_check(&t, nonce, strlen(nonce), &default_opts, &v);
        print_message("%-30s -> %s: %s\n", name, tg_reason_name(v.reason), v.message);
        if (strcmp(verdict, "accept") == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(v.reason, TG_ACCEPTED);
        } else {
            assert_string_equal(verdict, "reject");
            assert_int_equal(rc, -1);
            assert_int_equal(v.reason, reason_from_name(reason));
            assert_int_equal(v.code, 400);
            /* Neither the nonce nor the signature ever appears in a message. */
            assert_null(strstr(v.message, nonce));
        }
        free(nonce);
        tg_tenant_clear(&t);
        count++;
    }
    assert_true(count >= 40);
    free(index);
}

/* The seed example: both key forms, the raw one flagged; the document as
 * printed names the wrong cluster. */
static void test_seed_details(void **state)
{
    static const struct {
        const char *name;
        tg_reason reason;
        unsigned warnings;
        const char *in_message;
    } cases[] = {
        {"seed-cl01-rawkey", TG_ACCEPTED, TG_WARN_RAW_PUBLIC_KEY, NULL},
        {"seed-cl01-pemkey", TG_ACCEPTED, 0, NULL},
        {"seed-doc-as-printed", TG_CSR_SUBJECT_MISMATCH, TG_WARN_RAW_PUBLIC_KEY, "found CN=cl01"},
        {"seed-cl01-flipped-signature", TG_SIGNATURE_VERIFICATION_FAILED, TG_WARN_RAW_PUBLIC_KEY, "do not verify"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_tenant t;
        char *nonce = load_nonce(cases[i].name);
        tg_verdict v;

        load_tenant(cases[i].name, &t);
        tg_tenant_check(&t, nonce, strlen(nonce), &default_opts, &v);
        assert_int_equal(v.reason, cases[i].reason);
        assert_int_equal(v.warnings, cases[i].warnings);
        if (cases[i].in_message)
            assert_non_null(strstr(v.message, cases[i].in_message));
        free(nonce);
        tg_tenant_clear(&t);
    }
}

/* ---- every reason code, from the seed Tenant with one thing changed ---- */

typedef void (*mutate_fn)(tg_tenant *t, const char **nonce, size_t *nonce_len);

static void m_none(tg_tenant *t, const char **n, size_t *l) {}
static void m_no_cluster_id(tg_tenant *t, const char **n, size_t *l)
{
    free(t->cluster_id);
    t->cluster_id = NULL;
}
static void m_upper_cluster_id(tg_tenant *t, const char **n, size_t *l)
{
    free(t->cluster_id);
    t->cluster_id = strdup("CL01");
}
static void m_long_cluster_id(tg_tenant *t, const char **n, size_t *l)
{
    free(t->cluster_id);
    t->cluster_id = malloc(301);
    memset(t->cluster_id, 'a', 300);
    t->cluster_id[300] = '\0';
}
static void drop(tg_bytes *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}
static void m_no_public_key(tg_tenant *t, const char **n, size_t *l) { drop(&t->public_key); }
static void m_no_csr(tg_tenant *t, const char **n, size_t *l) { drop(&t->csr); }
static void m_no_signature(tg_tenant *t, const char **n, size_t *l) { drop(&t->signature); }
static void m_garbage_key(tg_tenant *t, const char **n, size_t *l)
{
    drop(&t->public_key);
    t->public_key.data = th_memdup("not a key at all", 16);
    t->public_key.len = 16;
}
static void m_weak_key(tg_tenant *t, const char **n, size_t *l)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
    drop(&t->public_key);
    t->public_key.data = (unsigned char *)tg_key_public_pem(k, &t->public_key.len);
    EVP_PKEY_free(k);
}
static void m_p521_key(tg_tenant *t, const char **n, size_t *l)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
    drop(&t->public_key);
    t->public_key.data = (unsigned char *)tg_key_public_pem(k, &t->public_key.len);
    EVP_PKEY_free(k);
}
static void m_null_nonce(tg_tenant *t, const char **n, size_t *l)
{
    *n = NULL;
    *l = 0;
}
static void m_empty_nonce(tg_tenant *t, const char **n, size_t *l)
{
    *n = "";
    *l = 0;
}
static void m_other_nonce(tg_tenant *t, const char **n, size_t *l)
{
    *n = "AAAAQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";
}
static void m_nonce_with_newline(tg_tenant *t, const char **n, size_t *l)
{
    *l += 1;   /* the text plus the NUL: the signed message is exactly the 88 characters */
}
static void m_garbage_csr(tg_tenant *t, const char **n, size_t *l)
{
    drop(&t->csr);
    t->csr.data = th_memdup("-----BEGIN CERTIFICATE REQUEST-----\n", 36);
    t->csr.len = 36;
}
static void m_other_key_bad_nonce(tg_tenant *t, const char **n, size_t *l)
{
    /* A weak key is reported before a missing nonce (4 before 5). */
    m_weak_key(t, n, l);
    m_null_nonce(t, n, l);
}

static void test_reason_codes(void **state)
{
    static const struct {
        const char *desc;
        mutate_fn mutate;
        tg_reason reason;
        const char *in_message;
    } cases[] = {
        {"unchanged", m_none, TG_ACCEPTED, NULL},
        {"no clusterID", m_no_cluster_id, TG_MALFORMED_TENANT, "spec.clusterID"},
        {"upper-case clusterID", m_upper_cluster_id, TG_INVALID_CLUSTER_ID, "found \"CL01\""},
        {"300-char clusterID", m_long_cluster_id, TG_INVALID_CLUSTER_ID, "(300 characters)"},
        {"no publicKey", m_no_public_key, TG_MALFORMED_TENANT, "spec.publicKey"},
        {"no csr", m_no_csr, TG_MALFORMED_TENANT, "spec.csr"},
        {"no signature", m_no_signature, TG_MALFORMED_TENANT, "spec.signature"},
        {"garbage key", m_garbage_key, TG_INVALID_PUBLIC_KEY, "found no PEM block"},
        {"RSA-1024 key", m_weak_key, TG_WEAK_KEY, "1024"},
        {"P-521 key", m_p521_key, TG_WEAK_KEY, "secp521r1"},
        {"NULL nonce", m_null_nonce, TG_NONCE_NOT_FOUND, "cl01"},
        {"empty nonce", m_empty_nonce, TG_NONCE_NOT_FOUND, "found none"},
        {"other nonce", m_other_nonce, TG_SIGNATURE_VERIFICATION_FAILED, "64 bytes"},
        {"nonce + NUL", m_nonce_with_newline, TG_SIGNATURE_VERIFICATION_FAILED, NULL},
        {"garbage csr", m_garbage_csr, TG_INVALID_CSR, "does not decode"},
        {"weak key, no nonce", m_other_key_bad_nonce, TG_WEAK_KEY, NULL},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_tenant t;
        char *nonce_text = load_nonce("seed-cl01-pemkey");
        const char *nonce = nonce_text;
        size_t nonce_len = strlen(nonce_text);
        tg_verdict v;
        int rc;

        load_tenant("seed-cl01-pemkey", &t);
        cases[i].mutate(&t, &nonce, &nonce_len);
        rc = tg_tenant_check(&t, nonce, nonce_len, &default_opts, &v);
        print_message("%-22s -> %s: %s\n", cases[i].desc, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        assert_int_equal(rc, cases[i].reason == TG_ACCEPTED ? 0 : -1);
        assert_true(strlen(v.message) < 300);
        if (cases[i].in_message)
            assert_non_null(strstr(v.message, cases[i].in_message));
        if (cases[i].reason != TG_ACCEPTED) {
            assert_non_null(strstr(v.message, "expected"));
            assert_non_null(strstr(v.message, "found"));
            assert_null(strstr(v.message, nonce_text));
        }
        tg_tenant_clear(&t);
        free(nonce_text);
    }
}

/* ---- authzPolicy ---------------------------------------------------------- */

static void test_policy_switch(void **state)
{
    static const struct {
        const char *desc;
        tg_authz_policy policy;
        int allow;
        int strip_keys;       /* a TolerateNoHandshake Tenant needs no key material */
        const char *cluster_id;
        const char *nonce;    /* NULL: none found */
        tg_reason reason;
    } cases[] = {
        {"tolerate, switch off", TG_POLICY_TOLERATE_NO_HANDSHAKE, 0, 1, "cl01", NULL, TG_MALFORMED_TENANT},
        {"tolerate, switch on", TG_POLICY_TOLERATE_NO_HANDSHAKE, 1, 1, "cl01", NULL, TG_ACCEPTED},
        {"tolerate, on, bad id", TG_POLICY_TOLERATE_NO_HANDSHAKE, 1, 1, "-cl01", NULL, TG_INVALID_CLUSTER_ID},
        {"tolerate, on, no id", TG_POLICY_TOLERATE_NO_HANDSHAKE, 1, 1, NULL, NULL, TG_MALFORMED_TENANT},
        {"tolerate, on, junk keys", TG_POLICY_TOLERATE_NO_HANDSHAKE, 1, 0, "cl01", "x", TG_ACCEPTED},
        {"keys exchange, switch on", TG_POLICY_KEYS_EXCHANGE, 1, 1, "cl01", NULL, TG_MALFORMED_TENANT},
        {"keys exchange, no nonce", TG_POLICY_KEYS_EXCHANGE, 1, 0, "cl01", NULL, TG_NONCE_NOT_FOUND},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_tenant t;
        tg_check_opts opts = {.allow_no_handshake = cases[i].allow};
        tg_verdict v;

        load_tenant("seed-cl01-pemkey", &t);
        t.authz_policy = cases[i].policy;
        free(t.cluster_id);
        t.cluster_id = cases[i].cluster_id ? strdup(cases[i].cluster_id) : NULL;
        if (cases[i].strip_keys) {
            drop(&t.public_key);
            drop(&t.csr);
            drop(&t.signature);
        }
        tg_tenant_check(&t, cases[i].nonce, cases[i].nonce ? strlen(cases[i].nonce) : 0, &opts, &v);
        print_message("%-26s -> %s: %s\n", cases[i].desc, tg_reason_name(v.reason), v.message);
        assert_int_equal(v.reason, cases[i].reason);
        if (i == 0) {
            assert_non_null(strstr(v.message, "disabled"));
            assert_non_null(strstr(v.message, "KeysExchange"));
        }
        tg_tenant_clear(&t);
    }
    /* No opts at all means the switch is off. */
    {
        tg_tenant t = {.cluster_id = strdup("cl01"), .authz_policy = TG_POLICY_TOLERATE_NO_HANDSHAKE};
        tg_verdict v;
        assert_int_equal(tg_tenant_check(&t, NULL, 0, NULL, &v), -1);
        assert_int_equal(v.reason, TG_MALFORMED_TENANT);
        tg_tenant_clear(&t);
    }
}

static void test_cluster_id_valid(void **state)
{
    char max[64], over[65];
    static const struct {
        const char *id;
        int valid;
    } cases[] = {
        {"cl01", 1}, {"a", 1}, {"0", 1}, {"cl-consumer", 1}, {"a--b", 1}, {"", 0}, {"-a", 0}, {"a-", 0},
        {"-", 0}, {"Cl01", 0}, {"cl_01", 0}, {"cl.01", 0}, {"cl 01", 0}, {"cl01\n", 0}, {"é", 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("\"%s\"\n", cases[i].id);
        assert_int_equal(tg_cluster_id_valid(cases[i].id), cases[i].valid);
    }
    memset(max, 'a', 63);
    max[63] = '\0';
    memset(over, 'a', 64);
    over[64] = '\0';
    assert_int_equal(tg_cluster_id_valid(max), 1);
    assert_int_equal(tg_cluster_id_valid(over), 0);
    assert_int_equal(tg_cluster_id_valid(NULL), 0);
}

/* ---- round trips with generated keys --------------------------------------- */

typedef enum damage {
    DAMAGE_NONE,
    DAMAGE_SIGNATURE,     /* flip a signature byte */
    DAMAGE_CSR_DER,       /* flip the last byte of the CSR DER (its self-signature) */
    DAMAGE_KEY,           /* flip the last byte of the key's SPKI DER */
    DAMAGE_CSR_OU,        /* consumer's CSR carries an OU */
    DAMAGE_CSR_CN,        /* consumer's CSR names another cluster */
    DAMAGE_CSR_OTHER_KEY, /* consumer's CSR is for another key */
    DAMAGE_RAW_KEY,       /* not damage: the legacy raw key form (Ed25519 only) */
} damage;

static char *pem_of(X509_REQ *req, size_t *len) { return th_req_pem(req, len); }

/* A Tenant as a consumer of `type` would produce it, damaged as asked. */
static void make_tenant(tg_key_type type, damage d, const char *nonce, tg_tenant *t)
{
    EVP_PKEY *key = tg_key_generate(type), *other = tg_key_generate(type);
    size_t len;
    char *pem;

    memset(t, 0, sizeof(*t));
    t->cluster_id = strdup("cl-consumer");
    if (d == DAMAGE_CSR_OU || d == DAMAGE_CSR_CN || d == DAMAGE_CSR_OTHER_KEY) {
        th_csr_spec spec = {.subject = {"O=liqo.io", "CN=cl-consumer"}};
        EVP_PKEY *csr_key = d == DAMAGE_CSR_OTHER_KEY ? other : key;
        if (d == DAMAGE_CSR_OU) {
            spec.subject[1] = "OU=x";
            spec.subject[2] = "CN=cl-consumer";
        }
        if (d == DAMAGE_CSR_CN)
            spec.subject[1] = "CN=cl-other";
        X509_REQ *req = th_build_req(csr_key, csr_key, &spec);
        pem = pem_of(req, &len);
        X509_REQ_free(req);
    } else {
        pem = tg_csr_build(key, t->cluster_id, &len);
    }
    if (d == DAMAGE_CSR_DER) {
        long der_len;
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        X509_REQ *req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        unsigned char *der = th_req_der(req, &der_len);
        BIO_free(bio);
        X509_REQ_free(req);
        free(pem);
        der[der_len - 1] ^= 0x01;
        pem = th_pem("CERTIFICATE REQUEST", der, der_len, &len);
        OPENSSL_free(der);
    }
    t->csr.data = (unsigned char *)pem;
    t->csr.len = len;

    if (d == DAMAGE_RAW_KEY) {
        t->public_key.data = malloc(32);
        t->public_key.len = 32;
        assert_true(EVP_PKEY_get_raw_public_key(key, t->public_key.data, &t->public_key.len));
    } else if (d == DAMAGE_KEY) {
        size_t der_len;
        unsigned char *der = tg_key_public_der(key, &der_len);
        der[der_len - 1] ^= 0x01;
        t->public_key.data = (unsigned char *)th_pem("PUBLIC KEY", der, (long)der_len, &t->public_key.len);
        free(der);
    } else {
        t->public_key.data = (unsigned char *)tg_key_public_pem(key, &t->public_key.len);
    }
    assert_int_equal(tg_nonce_sign(key, nonce, strlen(nonce), &t->signature.data, &t->signature.len), 0);
    if (d == DAMAGE_SIGNATURE)
        t->signature.data[t->signature.len / 2] ^= 0x01;
    EVP_PKEY_free(other);
    EVP_PKEY_free(key);
}

static void test_round_trips(void **state)
{
    /* DAMAGE_KEY: an Ed25519 key with a flipped byte still parses (then the
     * signature fails); a P-256 point falls off the curve, and an RSA key's
     * last byte is its exponent's, which turns even: both invalid keys. */
    static const struct {
        tg_key_type type;
        damage d;
        tg_reason reason;
    } cases[] = {
        {TG_KEY_ED25519, DAMAGE_NONE, TG_ACCEPTED},
        {TG_KEY_ED25519, DAMAGE_RAW_KEY, TG_ACCEPTED},
        {TG_KEY_ED25519, DAMAGE_SIGNATURE, TG_SIGNATURE_VERIFICATION_FAILED},
        {TG_KEY_ED25519, DAMAGE_CSR_DER, TG_INVALID_CSR},
        {TG_KEY_ED25519, DAMAGE_KEY, TG_SIGNATURE_VERIFICATION_FAILED},
        {TG_KEY_ED25519, DAMAGE_CSR_OU, TG_CSR_FORBIDDEN_CONTENT},
        {TG_KEY_ED25519, DAMAGE_CSR_CN, TG_CSR_SUBJECT_MISMATCH},
        {TG_KEY_ED25519, DAMAGE_CSR_OTHER_KEY, TG_CSR_PUBLIC_KEY_MISMATCH},
        {TG_KEY_ECDSA_P256, DAMAGE_NONE, TG_ACCEPTED},
        {TG_KEY_ECDSA_P256, DAMAGE_SIGNATURE, TG_SIGNATURE_VERIFICATION_FAILED},
        {TG_KEY_ECDSA_P256, DAMAGE_CSR_DER, TG_INVALID_CSR},
        {TG_KEY_ECDSA_P256, DAMAGE_KEY, TG_INVALID_PUBLIC_KEY},
        {TG_KEY_ECDSA_P256, DAMAGE_CSR_OTHER_KEY, TG_CSR_PUBLIC_KEY_MISMATCH},
        {TG_KEY_RSA2048, DAMAGE_NONE, TG_ACCEPTED},
        {TG_KEY_RSA2048, DAMAGE_SIGNATURE, TG_SIGNATURE_VERIFICATION_FAILED},
        {TG_KEY_RSA2048, DAMAGE_CSR_DER, TG_INVALID_CSR},
        {TG_KEY_RSA2048, DAMAGE_KEY, TG_INVALID_PUBLIC_KEY},
        {TG_KEY_RSA2048, DAMAGE_CSR_OTHER_KEY, TG_CSR_PUBLIC_KEY_MISMATCH},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char nonce[TG_NONCE_TEXT_LEN + 1];
        tg_tenant t;
        tg_verdict v;

        assert_int_equal(tg_nonce_generate(nonce), 0);
        make_tenant(cases[i].type, cases[i].d, nonce, &t);
        tg_tenant_check(&t, nonce, TG_NONCE_TEXT_LEN, &default_opts, &v);
        print_message("type %d damage %d -> %s: %s\n", cases[i].type, cases[i].d, tg_reason_name(v.reason),
                      v.message);
        assert_int_equal(v.reason, cases[i].reason);
        assert_int_equal(v.warnings, cases[i].d == DAMAGE_RAW_KEY ? TG_WARN_RAW_PUBLIC_KEY : 0);
        assert_null(strstr(v.message, nonce));
        tg_tenant_clear(&t);
    }
}

static void test_clear(void **state)
{
    tg_tenant t;

    load_tenant("seed-cl01-rawkey", &t);
    t.proxy_url = strdup("http://proxy:8080");
    t.label_cluster_id = strdup("cl01");
    tg_tenant_clear(&t);   /* ASan reports anything left behind */
    assert_null(t.cluster_id);
    assert_null(t.public_key.data);
    assert_int_equal(t.csr.len, 0);
    tg_tenant_clear(&t);   /* idempotent */
    tg_tenant_clear(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_index),
        cmocka_unit_test(test_seed_details),
        cmocka_unit_test(test_reason_codes),
        cmocka_unit_test(test_policy_switch),
        cmocka_unit_test(test_cluster_id_valid),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
