/* test_signature.c - signing and verifying the nonce text, per key type. */
#include "test_helpers.h"

#include <openssl/ec.h>

#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"

static const struct {
    tg_key_type type;
    const char *name;
} key_types[] = {
    {TG_KEY_ED25519, "ed25519"},
    {TG_KEY_RSA2048, "rsa"},
    {TG_KEY_ECDSA_P256, "ecdsa"},
};
#define N_TYPES (sizeof(key_types) / sizeof(key_types[0]))

static void test_sign_verify_round_trip(void **state)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        EVP_PKEY *key = tg_key_generate(key_types[i].type), *other = tg_key_generate(key_types[i].type);
        char nonce[TG_NONCE_TEXT_LEN + 1], nonce2[TG_NONCE_TEXT_LEN + 1];
        unsigned char *sig = NULL;
        size_t sig_len = 0;

        print_message("%s\n", key_types[i].name);
        assert_int_equal(tg_nonce_generate(nonce), 0);
        assert_int_equal(tg_nonce_generate(nonce2), 0);
        assert_int_equal(tg_nonce_sign(key, nonce, TG_NONCE_TEXT_LEN, &sig, &sig_len), 0);
        assert_non_null(sig);
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, sig, sig_len), 1);

        /* Each of these must fail. */
        assert_int_equal(tg_nonce_verify(other, nonce, TG_NONCE_TEXT_LEN, sig, sig_len), 0);
        assert_int_equal(tg_nonce_verify(key, nonce2, TG_NONCE_TEXT_LEN, sig, sig_len), 0);
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN - 1, sig, sig_len), 0);
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, sig, sig_len - 1), 0);
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, sig, 0), 0);
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, NULL, sig_len), 0);
        assert_int_equal(tg_nonce_verify(NULL, nonce, TG_NONCE_TEXT_LEN, sig, sig_len), 0);
        for (size_t at = 0; at < sig_len; at += sig_len / 7 + 1) {
            sig[at] ^= 0x01;
            assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, sig, sig_len), 0);
            sig[at] ^= 0x01;
        }
        assert_int_equal(tg_nonce_verify(key, nonce, TG_NONCE_TEXT_LEN, sig, sig_len), 1);

        free(sig);
        EVP_PKEY_free(other);
        EVP_PKEY_free(key);
    }
}

/* The message is the ASCII text, and each algorithm is the one PROTOCOL.md 4 names:
 * verify independently with plain EVP calls. */
static void test_signature_formats(void **state)
{
    const char *nonce = "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww==";

    for (size_t i = 0; i < N_TYPES; i++) {
        EVP_PKEY *key = tg_key_generate(key_types[i].type);
        unsigned char *sig, *sig2;
        size_t sig_len, sig2_len;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        const EVP_MD *md = key_types[i].type == TG_KEY_ED25519 ? NULL : EVP_sha256();

        assert_int_equal(tg_nonce_sign(key, nonce, strlen(nonce), &sig, &sig_len), 0);
        assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, md, NULL, key), 1);
        assert_int_equal(EVP_DigestVerify(ctx, sig, sig_len, (const unsigned char *)nonce, strlen(nonce)), 1);
        assert_int_equal(tg_nonce_sign(key, nonce, strlen(nonce), &sig2, &sig2_len), 0);
        switch (key_types[i].type) {
        case TG_KEY_ED25519:
            /* Pure Ed25519 is deterministic. */
            assert_int_equal(sig_len, 64);
            assert_memory_equal(sig, sig2, 64);
            break;
        case TG_KEY_RSA2048:
            /* PKCS#1 v1.5 is deterministic too (PSS would not be). */
            assert_int_equal(sig_len, 256);
            assert_memory_equal(sig, sig2, 256);
            break;
        case TG_KEY_ECDSA_P256: {
            const unsigned char *p = sig;
            ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)sig_len);
            assert_non_null(es);   /* DER, not raw r||s */
            assert_ptr_equal(p, sig + sig_len);
            ECDSA_SIG_free(es);
            break;
        }
        }
        free(sig);
        free(sig2);
        EVP_MD_CTX_free(ctx);
        EVP_PKEY_free(key);
    }
}

/* An Ed25519 signature handed to an RSA key (and so on) never verifies. */
static void test_cross_type(void **state)
{
    const char *nonce = "nonce";
    EVP_PKEY *keys[N_TYPES];
    unsigned char *sigs[N_TYPES];
    size_t lens[N_TYPES];

    for (size_t i = 0; i < N_TYPES; i++) {
        keys[i] = tg_key_generate(key_types[i].type);
        assert_int_equal(tg_nonce_sign(keys[i], nonce, 5, &sigs[i], &lens[i]), 0);
    }
    for (size_t i = 0; i < N_TYPES; i++)
        for (size_t j = 0; j < N_TYPES; j++)
            assert_int_equal(tg_nonce_verify(keys[i], nonce, 5, sigs[j], lens[j]), i == j);
    for (size_t i = 0; i < N_TYPES; i++) {
        free(sigs[i]);
        EVP_PKEY_free(keys[i]);
    }
}

/* Keys outside the three algorithms are refused, not signed with. */
static void test_unsupported_key(void **state)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED448");
    unsigned char *sig = (unsigned char *)"x";
    size_t len = 1;

    assert_int_equal(tg_nonce_sign(key, "n", 1, &sig, &len), -1);
    assert_null(sig);
    assert_int_equal(tg_nonce_verify(key, "n", 1, (const unsigned char *)"x", 1), 0);
    EVP_PKEY_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_verify_round_trip),
        cmocka_unit_test(test_signature_formats),
        cmocka_unit_test(test_cross_type),
        cmocka_unit_test(test_unsupported_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
