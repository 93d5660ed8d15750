/* test_authpin.c - the --auth-ca-hash pin (authpin.h): its text is parsed
 * strictly, it names a certificate by its public key (SPKI), and it finds
 * that certificate in a chain and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "authpin.h"

static X509 *self_signed(EVP_PKEY **key_out)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    X509 *c = X509_new();

    assert_non_null(key);
    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), 1);
    X509_gmtime_adj(X509_getm_notBefore(c), 0);
    X509_gmtime_adj(X509_getm_notAfter(c), 3600);
    X509_set_pubkey(c, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
    X509_set_issuer_name(c, X509_get_subject_name(c));
    assert_true(X509_sign(c, key, NULL) > 0);
    if (key_out)
        *key_out = key;
    else
        EVP_PKEY_free(key);
    return c;
}

static void test_parse(void **state)
{
    unsigned char out[32];
    const char *ok = "sha256:00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

    assert_int_equal(cli_auth_pin_parse(ok, out), 0);
    assert_int_equal(out[1], 0x11);
    assert_int_equal(out[31], 0xff);
    assert_int_equal(cli_auth_pin_parse(NULL, out), -1);
    assert_int_equal(cli_auth_pin_parse("", out), -1);
    assert_int_equal(cli_auth_pin_parse(ok + 7, out), -1);                 /* no prefix */
    assert_int_equal(cli_auth_pin_parse("sha1:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00",
                                        out), -1);
    assert_int_equal(cli_auth_pin_parse("sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeg0",
                                        out), -1);                         /* not hex */
    assert_int_equal(cli_auth_pin_parse("sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddee",
                                        out), -1);                         /* short */
}

static void test_find_by_public_key(void **state)
{
    EVP_PKEY *key = NULL;
    X509 *a = self_signed(&key), *b = self_signed(NULL);
    STACK_OF(X509) *chain = sk_X509_new_null();
    char text[CLI_PIN_TEXT_LEN + 1];
    unsigned char pin[32];

    sk_X509_push(chain, b);
    sk_X509_push(chain, a);
    assert_int_equal(cli_auth_pin_of(a, text), 0);
    assert_int_equal(strncmp(text, "sha256:", 7), 0);
    assert_int_equal(cli_auth_pin_parse(text, pin), 0);
    assert_int_equal(cli_auth_pin_find(chain, pin), 1);
    pin[5] ^= 1;
    assert_int_equal(cli_auth_pin_find(chain, pin), -1);
    assert_int_equal(cli_auth_pin_find(NULL, pin), -1);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_find_by_public_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
