/* auth_token_plan.c - see auth_token_plan.h. */
#include "signer/auth_token_plan.h"

#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "signer/kubeconfig_render.h"

static const char *const names[] = {
    [TG_AUTH_NONE] = "None",
    [TG_AUTH_PENDING] = "Pending",
    [TG_AUTH_EMPTY_DENIED] = "EmptyDenied",
    [TG_AUTH_ESTABLISHED] = "Established",
    [TG_AUTH_DENIED] = "Denied",
};

const char *tg_auth_status_name(tg_auth_status st)
{
    return st <= TG_AUTH_DENIED ? names[st] : "None";
}

tg_auth_status tg_auth_status_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return (tg_auth_status)i;
    return TG_AUTH_NONE;
}

tg_auth_status tg_auth_outcome(long http_status, int token_empty)
{
    if (http_status == 201 || http_status == 202)
        return TG_AUTH_ESTABLISHED;
    if (http_status == 401 || http_status == 403)
        return token_empty ? TG_AUTH_EMPTY_DENIED : TG_AUTH_DENIED;
    return TG_AUTH_PENDING;
}

int tg_auth_status_final(tg_auth_status st)
{
    return st == TG_AUTH_ESTABLISHED || st == TG_AUTH_DENIED || st == TG_AUTH_EMPTY_DENIED;
}

void tg_auth_token_digest(const char *token, size_t len, char out[17])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)token, len, md);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

json_object *tg_auth_identity_request(const char *cluster_id, const char *cluster_name, const char *own_token,
                                      size_t own_len, const char *provider_token, size_t provider_len,
                                      const char *csr_b64)
{
    json_object *body = json_object_new_object(), *cluster = json_object_new_object();

    json_object_object_add(cluster, "clusterID", json_object_new_string(cluster_id));
    json_object_object_add(cluster, "clusterName", json_object_new_string(cluster_name));
    json_object_object_add(body, "cluster", cluster);
    if (own_len > 0)
        json_object_object_add(body, "originClusterToken", json_object_new_string_len(own_token, (int)own_len));
    json_object_object_add(body, "destinationClusterToken",
                           json_object_new_string_len(provider_token ? provider_token : "", (int)provider_len));
    json_object_object_add(body, "certificateSigningRequest", json_object_new_string(csr_b64));
    return body;
}

/* base64 of a string, as a json string (NULL when s is). */
static json_object *b64_string(const char *s)
{
    char *b64 = s ? tg_base64_encode((const unsigned char *)s, strlen(s), NULL) : NULL;
    json_object *o = b64 ? json_object_new_string(b64) : NULL;

    free(b64);
    return o;
}

/* base64 of PEM text: decoded into *out (malloc'd), or -1 with err. */
static int decode_pem(const char *b64, const char *what, unsigned char **out, size_t *len, char *err, size_t err_len)
{
    *out = tg_base64_decode(b64, strlen(b64), len, err, err_len);
    if (*out && *len > 11 && memcmp(*out, "-----BEGIN ", 11) == 0)
        return 0;
    free(*out);
    *out = NULL;
    snprintf(err, err_len, "the answer's %s is not base64 of PEM", what);
    return -1;
}

json_object *tg_auth_result_data(json_object *answer, const char *provider_id, const char *self_id,
                                 const char *key_pem, size_t key_len, char *err, size_t err_len)
{
    const char *crt_b64 = tg_json_string(answer, "certificate"), *ca_b64 = tg_json_string(answer, "apiServerCA");
    const char *server = tg_json_string(answer, "apiServerUrl"), *tns = tg_json_string(answer, "namespace");
    unsigned char *crt = NULL, *ca = NULL;
    size_t crt_len = 0, ca_len = 0, kc_len = 0;
    char *kc = NULL, *kc_b64 = NULL;
    json_object *data = NULL;
    tg_kubeconfig_in in;

    if (!crt_b64 || !server || !*server) {
        snprintf(err, err_len, "the answer lacks certificate or apiServerUrl");
        return NULL;
    }
    if (decode_pem(crt_b64, "certificate", &crt, &crt_len, err, err_len) != 0 ||
        (ca_b64 && decode_pem(ca_b64, "apiServerCA", &ca, &ca_len, err, err_len) != 0))
        goto out;
    in = (tg_kubeconfig_in){.provider_id = provider_id, .server = server, .ca = ca, .ca_len = ca_len,
                            .cert = crt, .cert_len = crt_len, .key_pem = key_pem, .key_len = key_len,
                            .user = self_id, .namespace_ = tns};
    if (!(kc = tg_kubeconfig_render(&in, &kc_len, err, err_len)) ||
        !(kc_b64 = tg_base64_encode((unsigned char *)kc, kc_len, NULL)))
        goto out;
    data = json_object_new_object();
    json_object_object_add(data, "certificate", json_object_new_string(crt_b64));
    json_object_object_add(data, "apiServerUrl", b64_string(server));
    if (ca_b64)
        json_object_object_add(data, "apiServerCa", json_object_new_string(ca_b64));
    if (tns)
        json_object_object_add(data, "namespace", b64_string(tns));
    json_object_object_add(data, "kubeconfig", json_object_new_string(kc_b64));
out:
    if (kc_b64)
        OPENSSL_cleanse(kc_b64, strlen(kc_b64));
    if (kc)
        OPENSSL_cleanse(kc, kc_len);
    free(kc_b64);
    free(kc);
    free(crt);
    free(ca);
    return data;
}
