/* test_reconcile_keys.c - the consumer's keys controller (consumer_keys.c)
 * against fake_api.c: a missing authentication-keys Secret is made with a key
 * of --key-type, in Liqo's layout; an existing key of any type is kept, never
 * replaced (a new cluster key would void every peering made with the old). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pki/keys.h"
#include "signer/reconcile_common.h"
#include "signer/test_reconcile_fixture.h"

#define SECRETS "/api/v1/namespaces/liqo/secrets"
#define KEYS SECRETS "/" TG_KEYS_SECRET

typedef struct row {
    const char *what;
    tg_key_type flag;        /* --key-type */
    int existing;            /* -1: no Secret; else the tg_key_type of the stored key */
    long post_fails;         /* the POST answers this, 0: as the store says */
    tg_key_type want;        /* the cluster key's type afterwards */
    const char *want_writes;
    long want_ret;
} row;

static const row rows[] = {
    {"missing, default: Ed25519 made", TG_KEY_ED25519, -1, 0, TG_KEY_ED25519, "POST " SECRETS " 201\n",
     TG_RECONCILE_OK},
    {"missing, rsa2048: RSA-2048 made (Liqo's TLS compatibility mode)", TG_KEY_RSA2048, -1, 0, TG_KEY_RSA2048,
     "POST " SECRETS " 201\n", TG_RECONCILE_OK},
    {"missing, ecdsa-p256: P-256 made", TG_KEY_ECDSA_P256, -1, 0, TG_KEY_ECDSA_P256, "POST " SECRETS " 201\n",
     TG_RECONCILE_OK},
    {"Ed25519 there, rsa2048 asked: kept", TG_KEY_RSA2048, TG_KEY_ED25519, 0, TG_KEY_ED25519, "", TG_RECONCILE_OK},
    {"RSA there, ed25519 asked: kept", TG_KEY_ED25519, TG_KEY_RSA2048, 0, TG_KEY_RSA2048, "", TG_RECONCILE_OK},
    {"P-256 there, rsa2048 asked: kept", TG_KEY_RSA2048, TG_KEY_ECDSA_P256, 0, TG_KEY_ECDSA_P256, "",
     TG_RECONCILE_OK},
    {"same type there: read", TG_KEY_ECDSA_P256, TG_KEY_ECDSA_P256, 0, TG_KEY_ECDSA_P256, "", TG_RECONCILE_OK},
    {"another replica made it first: retried", TG_KEY_RSA2048, -1, 409, TG_KEY_RSA2048, "POST " SECRETS " 409\n",
     TG_RECONCILE_RETRY},
};

static void store_keys(tg_api *api, EVP_PKEY *k)
{
    char text[8192], *priv = tg_key_private_pem(k, NULL), *pub = tg_key_public_pem(k, NULL);
    char *b1 = rt_b64(priv, strlen(priv)), *b2 = rt_b64(pub, strlen(pub));

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"" TG_KEYS_SECRET "\",\"namespace\":\"liqo\"},"
             "\"data\":{\"privateKey\":\"%s\",\"publicKey\":\"%s\"}}", b1, b2);
    fake_api_put(api, KEYS, text);
    free(b1);
    free(b2);
    free(priv);
    free(pub);
}

/* The Secret as stored: privateKey and publicKey of one key, of the type wanted. */
static void check_stored(tg_api *api, const row *r, EVP_PKEY *cluster_key)
{
    json_object *sec = fake_api_object(api, KEYS);
    size_t pl = 0, ul = 0;
    unsigned char *priv = rc_secret_data(sec, "privateKey", &pl), *pub = rc_secret_data(sec, "publicKey", &ul);
    EVP_PKEY *k = priv ? tg_key_private_from_pem((char *)priv, pl) : NULL;
    char *want_pub = k ? tg_key_public_pem(k, NULL) : NULL;
    tg_key_type type;

    if (!k || tg_key_type_of(k, &type) != 0 || type != r->want)
        fail_msg("%s: the stored key is not %s", r->what, tg_key_type_name(r->want));
    assert_non_null(pub);
    assert_non_null(want_pub);
    assert_string_equal((char *)pub, want_pub);
    assert_int_equal(EVP_PKEY_eq(k, cluster_key), 1);
    free(want_pub);
    EVP_PKEY_free(k);
    rc_free_secret(priv, pl);
    free(pub);
}

static void run_row(const row *r)
{
    tg_api *api = fake_api_new();
    EVP_PKEY *old = NULL;
    tg_key_type type;
    const char *writes;
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    s.key_type = r->flag;
    if (r->existing >= 0) {
        assert_non_null(old = tg_key_generate((tg_key_type)r->existing));
        store_keys(api, old);
    }
    if (r->post_fails)
        fake_api_fail(api, "POST", SECRETS, r->post_fails, 1);
    ret = tg_reconcile_keys(&s, api);
    writes = rt_writes(api);
    if (ret != r->want_ret)
        fail_msg("%s: returned %ld, want %ld", r->what, ret, r->want_ret);
    if (strcmp(writes, r->want_writes) != 0)
        fail_msg("%s: wrote\n%s want\n%s", r->what, writes, r->want_writes);
    if (r->want_ret == TG_RECONCILE_OK) {
        assert_non_null(s.cluster_key);
        if (tg_key_type_of(s.cluster_key, &type) != 0 || type != r->want)
            fail_msg("%s: the cluster key is not %s", r->what, tg_key_type_name(r->want));
        if (old)
            assert_int_equal(EVP_PKEY_eq(s.cluster_key, old), 1);
        check_stored(api, r, s.cluster_key);
    } else {
        assert_null(s.cluster_key);
    }
    EVP_PKEY_free(old);
    rt_signer_clear(&s);
    fake_api_free(api);
}

static void test_keys_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
