/* fuzz_auth_answer.c - libFuzzer: what the consumer's authtoken controller
 * makes of a provider's answer (tg_auth_result_data). The answer comes from
 * the provider's auth server, another party. Checked on every input: either
 * NULL with a message, or the certificate, apiServerUrl and a kubeconfig
 * that parses back with one user (no exec plugin), the server and the
 * namespace exactly as sent. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/yaml.h"
#include "pki/keys.h"
#include "signer/auth_token_plan.h"

static char *key_pem;
static size_t key_len;

/* The decoded data[key] as a NUL-terminated string (malloc'd), or NULL. */
static char *decoded(json_object *data, const char *key)
{
    const char *b64 = tg_json_string(data, key);
    unsigned char *bytes = NULL;
    size_t n = 0;
    char *s;

    if (!b64 || !(bytes = tg_base64_decode(b64, strlen(b64), &n, NULL, 0)) || !(s = malloc(n + 1))) {
        free(bytes);
        return NULL;
    }
    memcpy(s, bytes, n);
    s[n] = '\0';
    free(bytes);
    return s;
}

static void check(json_object *answer, json_object *data)
{
    char *kc = decoded(data, "kubeconfig"), *server = decoded(data, "apiServerUrl");
    json_object *doc = kc ? tg_yaml_parse(kc, strlen(kc), NULL, 0) : NULL;
    json_object *users = tg_json_path(doc, "users", NULL), *clusters = tg_json_path(doc, "clusters", NULL);
    const char *got;

    if (!tg_json_string(data, "certificate") || !server || !doc || !users || !clusters ||
        json_object_array_length(users) != 1 || json_object_array_length(clusters) != 1 ||
        tg_json_path(json_object_array_get_idx(users, 0), "user", "exec", NULL))
        abort();
    got = tg_json_path_string(json_object_array_get_idx(clusters, 0), "cluster", "server", NULL);
    if (!got || strcmp(got, tg_json_string(answer, "apiServerUrl")) != 0 || strcmp(server, got) != 0)
        abort();
    json_object_put(doc);
    free(server);
    free(kc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *answer, *out;
    char err[256] = "";

    if (!key_pem) {
        EVP_PKEY *k = tg_key_generate(TG_KEY_ED25519);
        key_pem = k ? tg_key_private_pem(k, &key_len) : NULL;
        EVP_PKEY_free(k);
        if (!key_pem)
            abort();
    }
    if (!(answer = tg_json_parse((const char *)data, size, NULL, 0)))
        return 0;
    out = tg_auth_result_data(answer, "prov-1", "3f1c2b4e-8d7a-4c59-9e61-0a2b3c4d5e6f", key_pem, key_len, err,
                              sizeof(err));
    if (out)
        check(answer, out);
    else if (!err[0] || !memchr(err, '\0', sizeof(err)))
        abort();
    json_object_put(out);
    json_object_put(answer);
    return 0;
}
