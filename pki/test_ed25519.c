/* test_ed25519.c - what the libsodium verifier (pki/ed25519.h) accepts and
 * refuses, next to OpenSSL 3.0's EVP verify on the same bytes.
 *
 * Each row builds its (key, message, signature) here, from libsodium's point
 * and scalar arithmetic: honest signatures, malleated S, small-order and
 * non-canonical keys, a small-order R, a key with a torsion component. The
 * table states what each verifier must answer, so a change of libsodium or
 * OpenSSL that moves any of these shows up as a failed row. */
#include "test_helpers.h"

#include <sodium.h>

#include "pki/ed25519.h"
#include "pki/keys.h"
#include "pki/signature.h"

#define KEY_LEN TG_ED25519_KEY_LEN
#define SIG_LEN TG_ED25519_SIG_LEN
#define MSG_MAX 200
/* Forged rows need h = H(R || A || M) to kill a torsion component: 1 in 8
 * tries for order-8 points. 512 tries fail with probability (7/8)^512. */
#define TRIES 512

typedef struct vector {
    unsigned char pub[KEY_LEN];
    unsigned char msg[MSG_MAX];
    size_t msg_len;
    unsigned char sig[SIG_LEN];
} vector;

static int openssl_verify(const vector *t)
{
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, t->pub, KEY_LEN);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok;

    assert_non_null(key);
    assert_non_null(ctx);
    ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
         EVP_DigestVerify(ctx, t->sig, SIG_LEN, t->msg, t->msg_len) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    return ok;
}

static int sodium_verify(const vector *t)
{
    return tg_ed25519_verify(t->pub, t->msg, t->msg_len, t->sig, SIG_LEN);
}

/* The webhook's EVP_PKEY entry point must answer as the raw one does. */
static int nonce_verify(const vector *t)
{
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, t->pub, KEY_LEN);
    int ok = tg_nonce_verify(key, (const char *)t->msg, t->msg_len, t->sig, SIG_LEN);

    EVP_PKEY_free(key);
    return ok;
}

static void random_message(vector *t)
{
    t->msg_len = 1 + randombytes_uniform(MSG_MAX);
    randombytes_buf(t->msg, t->msg_len);
}

/* h = SHA-512(R || A || M) mod L, as both verifiers compute it. */
static void challenge(const vector *t, unsigned char h[crypto_core_ed25519_SCALARBYTES])
{
    crypto_hash_sha512_state st;
    unsigned char wide[crypto_hash_sha512_BYTES];

    crypto_hash_sha512_init(&st);
    crypto_hash_sha512_update(&st, t->sig, 32);
    crypto_hash_sha512_update(&st, t->pub, KEY_LEN);
    crypto_hash_sha512_update(&st, t->msg, t->msg_len);
    crypto_hash_sha512_final(&st, wide);
    crypto_core_ed25519_scalar_reduce(h, wide);
}

/* An honest key pair's secret scalar a (reduced mod L) and A = a*B. */
static void honest_key(unsigned char a[32], unsigned char A[KEY_LEN])
{
    unsigned char seed[crypto_sign_SEEDBYTES], wide[64] = {0}, expanded[crypto_hash_sha512_BYTES];

    randombytes_buf(seed, sizeof(seed));
    crypto_hash_sha512(expanded, seed, sizeof(seed));
    expanded[0] &= 248;
    expanded[31] &= 127;
    expanded[31] |= 64;
    memcpy(wide, expanded, 32);
    crypto_core_ed25519_scalar_reduce(a, wide);
    assert_int_equal(crypto_scalarmult_ed25519_base_noclamp(A, a), 0);
}

/* S = r + h*a for the key a, R = r*B already in t->sig. */
static void sign_with_scalar(vector *t, const unsigned char a[32], const unsigned char r[32])
{
    unsigned char h[32], ha[32];

    challenge(t, h);
    crypto_core_ed25519_scalar_mul(ha, h, a);
    crypto_core_ed25519_scalar_add(t->sig + 32, r, ha);
}

/* --- generators: fill t; return 0, or -1 when this try is unusable --------- */

static int gen_honest(vector *t, const void *arg)
{
    unsigned char sk[crypto_sign_SECRETKEYBYTES];

    (void)arg;
    random_message(t);
    crypto_sign_keypair(t->pub, sk);
    crypto_sign_detached(t->sig, NULL, t->msg, t->msg_len, sk);
    return 0;
}

/* The same signature with S + L: the same point equation, other bytes. */
static int gen_s_plus_l(vector *t, const void *arg)
{
    static const unsigned char L[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                        0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
    unsigned carry = 0;

    gen_honest(t, arg);
    for (int i = 0; i < 32; i++) {
        carry += (unsigned)t->sig[32 + i] + L[i];
        t->sig[32 + i] = (unsigned char)carry;
        carry >>= 8;
    }
    return 0;
}

/* A fixed (small-order) key A: R = s*B verifies in OpenSSL when h*A is the
 * identity, i.e. for every message when A is, for 1 in 8 when A has order 8. */
static int gen_fixed_key(vector *t, const void *arg)
{
    unsigned char s[32];

    memcpy(t->pub, arg, KEY_LEN);
    random_message(t);
    crypto_core_ed25519_scalar_random(s);
    assert_int_equal(crypto_scalarmult_ed25519_base_noclamp(t->sig, s), 0);
    memcpy(t->sig + 32, s, 32);
    return openssl_verify(t) ? 0 : -1;
}

/* An honest key and R = the identity: S = h*a makes S*B - h*A = identity. */
static int gen_identity_r(vector *t, const void *arg)
{
    static const unsigned char zero[32];
    unsigned char a[32];

    (void)arg;
    honest_key(a, t->pub);
    random_message(t);
    memset(t->sig, 0, 32);
    t->sig[0] = 1;
    sign_with_scalar(t, a, zero);
    return 0;
}

/* As gen_identity_r with R written non-canonically (y = p + 1). */
static int gen_noncanonical_identity_r(vector *t, const void *arg)
{
    static const unsigned char zero[32];
    unsigned char a[32];

    (void)arg;
    honest_key(a, t->pub);
    random_message(t);
    memset(t->sig, 0xff, 32);
    t->sig[0] = 0xee;
    t->sig[31] = 0x7f;
    sign_with_scalar(t, a, zero);
    return 0;
}

/* A = a*B + T (T of order 8), signed as an honest signer with a would: the
 * check S*B - h*A = R holds only when 8 divides h. arg: 1 = keep the tries
 * where it holds, 0 = keep the others. */
static int gen_torsion_key(vector *t, const void *arg)
{
    static const unsigned char T8[KEY_LEN] = {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
                                              0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
                                              0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a};
    unsigned char a[32], aB[KEY_LEN], r[32];
    int want = *(const int *)arg;

    honest_key(a, aB);
    assert_int_equal(crypto_core_ed25519_add(t->pub, aB, T8), 0);
    random_message(t);
    crypto_core_ed25519_scalar_random(r);
    assert_int_equal(crypto_scalarmult_ed25519_base_noclamp(t->sig, r), 0);
    sign_with_scalar(t, a, r);
    return openssl_verify(t) == want ? 0 : -1;
}

/* Small-order points and non-canonical encodings (little-endian y, sign bit
 * of x on top). */
static const unsigned char identity[KEY_LEN] = {0x01};
static const unsigned char identity_negzero[KEY_LEN] = {0x01, [31] = 0x80};
static const unsigned char identity_noncanonical[KEY_LEN] = {
    0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
static const unsigned char order2[KEY_LEN] = {
    0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
static const unsigned char order4[KEY_LEN] = {0x00};
static const unsigned char order8[KEY_LEN] = {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
                                             0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
                                             0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a};
static const int keep_accepted = 1, keep_refused = 0;

static const struct row {
    const char *name;
    int (*gen)(vector *t, const void *arg);
    const void *arg;
    int runs;
    int openssl;   /* expected answers: 1 accept, 0 refuse */
    int sodium;
} rows[] = {
    {"honest key and signature", gen_honest, NULL, 64, 1, 1},
    {"S + L (non-canonical S, malleated)", gen_s_plus_l, NULL, 16, 0, 0},
    {"small-order key: identity", gen_fixed_key, identity, 4, 1, 0},
    {"small-order key: identity, x sign bit set", gen_fixed_key, identity_negzero, 4, 1, 0},
    {"small-order key: identity as y = p + 1 (non-canonical)", gen_fixed_key, identity_noncanonical, 4, 1, 0},
    {"small-order key: order 2 (y = -1)", gen_fixed_key, order2, 4, 1, 0},
    {"small-order key: order 4 (y = 0)", gen_fixed_key, order4, 4, 1, 0},
    {"small-order key: order 8", gen_fixed_key, order8, 4, 1, 0},
    {"small-order R: identity, honest key", gen_identity_r, NULL, 8, 1, 0},
    {"non-canonical R: identity as y = p + 1", gen_noncanonical_identity_r, NULL, 8, 0, 0},
    {"key with an order-8 component, 8 | h", gen_torsion_key, &keep_accepted, 4, 1, 1},
    {"key with an order-8 component, 8 does not divide h", gen_torsion_key, &keep_refused, 4, 0, 0},
};

static void test_verifiers_table(void **state)
{
    (void)state;
    assert_true(sodium_init() >= 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        print_message("%s: OpenSSL %s, libsodium %s\n", rows[i].name, rows[i].openssl ? "accepts" : "refuses",
                      rows[i].sodium ? "accepts" : "refuses");
        for (int run = 0; run < rows[i].runs; run++) {
            vector t;
            int tries = 0;

            memset(&t, 0, sizeof(t));
            while (rows[i].gen(&t, rows[i].arg) != 0)
                assert_true(++tries < TRIES);
            assert_int_equal(openssl_verify(&t), rows[i].openssl);
            assert_int_equal(sodium_verify(&t), rows[i].sodium);
            assert_int_equal(nonce_verify(&t), rows[i].sodium);
        }
    }
}

/* Honest signatures made by OpenSSL (what the CLI and Liqo-style signers
 * produce) verify with libsodium, for many keys and message lengths,
 * including the empty message. */
static void test_openssl_signatures_verify(void **state)
{
    (void)state;
    for (int i = 0; i < 64; i++) {
        EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
        vector t;
        unsigned char *sig;
        size_t sig_len, pub_len = KEY_LEN;

        assert_non_null(key);
        memset(&t, 0, sizeof(t));
        t.msg_len = (size_t)i * 3;
        randombytes_buf(t.msg, t.msg_len);
        assert_int_equal(EVP_PKEY_get_raw_public_key(key, t.pub, &pub_len), 1);
        assert_int_equal(tg_nonce_sign(key, (const char *)t.msg, t.msg_len, &sig, &sig_len), 0);
        assert_int_equal(sig_len, SIG_LEN);
        memcpy(t.sig, sig, SIG_LEN);
        assert_int_equal(sodium_verify(&t), 1);
        assert_int_equal(openssl_verify(&t), 1);
        t.sig[i % SIG_LEN] ^= 0x40;
        assert_int_equal(sodium_verify(&t), 0);
        assert_int_equal(openssl_verify(&t), 0);
        free(sig);
        EVP_PKEY_free(key);
    }
}

/* Wrong lengths and NULLs are a refusal, never a read past the buffer. */
static void test_bad_arguments(void **state)
{
    vector t;

    (void)state;
    gen_honest(&t, NULL);
    assert_int_equal(tg_ed25519_verify(t.pub, t.msg, t.msg_len, t.sig, SIG_LEN), 1);
    assert_int_equal(tg_ed25519_verify(t.pub, t.msg, t.msg_len, t.sig, SIG_LEN - 1), 0);
    assert_int_equal(tg_ed25519_verify(t.pub, t.msg, t.msg_len, t.sig, SIG_LEN + 1), 0);
    assert_int_equal(tg_ed25519_verify(t.pub, t.msg, t.msg_len, NULL, SIG_LEN), 0);
    assert_int_equal(tg_ed25519_verify(NULL, t.msg, t.msg_len, t.sig, SIG_LEN), 0);
    assert_int_equal(tg_ed25519_verify(t.pub, NULL, t.msg_len, t.sig, SIG_LEN), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verifiers_table),
        cmocka_unit_test(test_openssl_signatures_verify),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
