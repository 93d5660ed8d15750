/* flow_secrets.c - the steps on Secrets (PROTOCOL.md 4): the provider's nonce,
 * the consumer's signed nonce and the signer's signature checked with the
 * cluster key, and the cluster key itself. Secret bodies are wiped after use. */
#include "online.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"

int cli_ensure_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns, const char *remote_id)
{
    cli_api_call call = { .verb = "create", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_NONCE_SECRET };
    char path[256], terr[256];
    json_object *obj = cli_nonce_secret_object(ns, remote_id);
    char *raw = NULL;
    long st;
    int rc = 0;

    if (obj == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
    st = cli_cluster_call(c, "POST", path, obj, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    if (st != 201 && st != 409)     /* 409: it exists, the nonce it has stays valid */
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}

/* GET a secret: status, parsed doc (caller puts), raw body wiped and freed. */
static long get_secret(cli_cluster *c, const char *ns, const char *name, json_object **doc,
                       char **raw_out, char *terr, size_t terr_len)
{
    char path[256];

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    return cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, doc, raw_out, terr, terr_len);
}

static void free_raw(char *raw)
{
    if (raw != NULL)
        cli_free_secret(raw, strlen(raw));
}

int cli_read_nonce(cli_flow *f, cli_cluster *c, const char *ns, int wait, char out[89])
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_NONCE_SECRET };
    char terr[256];
    int rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_secret(c, ns, CLI_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
        unsigned char *nonce = NULL;
        size_t len = 0;

        if (st == 200 && doc != NULL)
            nonce = cli_secret_data(doc, "nonce", &len);
        json_object_put(doc);
        if (st == 200 && nonce != NULL && tg_nonce_text_valid((char *)nonce, len)) {
            memcpy(out, nonce, TG_NONCE_TEXT_LEN);
            out[TG_NONCE_TEXT_LEN] = '\0';
            cli_free_secret(nonce, len);
            free_raw(raw);
            return 0;
        }
        if (nonce != NULL) {
            cli_free_secret(nonce, len);
            free_raw(raw);
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s holds a nonce that is not "
                                 "88 characters of padded base64", ns, CLI_NONCE_SECRET);
        }
        if (st != 200 && st != 404) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
            free_raw(raw);
            return rc;
        }
        free_raw(raw);
        if (!wait && st == 404)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no nonce: Secret %s/%s does not exist "
                                 "(create it with `" TG_CLI_NAME " create nonce`)", ns,
                                 CLI_NONCE_SECRET);
        if (!wait)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no nonce: Secret %s/%s has no data.nonce "
                                 "yet (is tenantgate-signer running with the nonce controller?)",
                                 ns, CLI_NONCE_SECRET);
        if ((rc = cli_flow_poll_again(f, c, "tenantgate-signer (nonce controller) to fill data.nonce "
                             "of Secret %s/%s (is the signer running on this cluster?)", ns,
                             CLI_NONCE_SECRET)) != 0)
            return rc;
    }
}

int cli_ensure_signed_nonce_secret(cli_flow *f, cli_cluster *c, const char *ns,
                                   const char *remote_id, const char *nonce)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_SIGNED_NONCE_SECRET };
    char path[256], terr[256];
    json_object *doc = NULL, *obj = NULL;
    char *raw = NULL;
    unsigned char *have = NULL;
    size_t have_len = 0;
    long st = get_secret(c, ns, CLI_SIGNED_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    if (st == 200 && doc != NULL)
        have = cli_secret_data(doc, "nonce", &have_len);
    json_object_put(doc);
    free_raw(raw);
    raw = NULL;
    if (st == 200 && have != NULL && have_len == strlen(nonce) && memcmp(have, nonce, have_len) == 0)
        goto out;   /* already there for this nonce */
    if (st != 200 && st != 404) {
        rc = cli_flow_api_fail(f, c, &call, st, NULL, terr);
        goto out;
    }
    obj = cli_signed_nonce_secret_object(ns, remote_id, nonce);
    if (obj == NULL) {
        rc = cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
        goto out;
    }
    if (st == 404) {
        call.verb = "create";
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
        st = cli_cluster_call(c, "POST", path, obj, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    } else {
        /* Another nonce (a rotated one): replace it and drop the old signature,
         * so the signer signs the new one. */
        call.verb = "patch";
        json_object_object_add(tg_json_path(obj, "data", NULL), "signedNonce", NULL);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, CLI_SIGNED_NONCE_SECRET);
        st = cli_cluster_call(c, "PATCH", path, obj, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr,
                              sizeof(terr));
    }
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
out:
    if (have != NULL)
        cli_free_secret(have, have_len);
    json_object_put(obj);
    free_raw(raw);
    return rc;
}

int cli_wait_signed_nonce(cli_flow *f, cli_cluster *c, const char *ns, const char *nonce,
                          EVP_PKEY *key, unsigned char **sig, size_t *sig_len)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "", .namespace_ = ns,
                          .name = CLI_SIGNED_NONCE_SECRET };
    char terr[256];
    int stale = 0, rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_secret(c, ns, CLI_SIGNED_NONCE_SECRET, &doc, &raw, terr, sizeof(terr));
        unsigned char *have = NULL, *s = NULL;
        size_t have_len = 0, s_len = 0;

        if (st == 200 && doc != NULL) {
            have = cli_secret_data(doc, "nonce", &have_len);
            s = cli_secret_data(doc, "signedNonce", &s_len);
        }
        json_object_put(doc);
        if (st != 200 && st != 404) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
            free_raw(raw);
            free(s);
            if (have)
                cli_free_secret(have, have_len);
            return rc;
        }
        free_raw(raw);
        if (have != NULL && s != NULL && have_len == strlen(nonce) &&
            memcmp(have, nonce, have_len) == 0) {
            /* Only a signature this cluster's key makes over this nonce will
             * pass the provider's webhook: check it before handing it on. */
            if (tg_nonce_verify(key, nonce, strlen(nonce), s, s_len) == 1) {
                cli_free_secret(have, have_len);
                *sig = s;
                *sig_len = s_len;
                return 0;
            }
            stale = 1;
        }
        free(s);
        if (have)
            cli_free_secret(have, have_len);
        if ((rc = cli_flow_poll_again(f, c, "tenantgate-signer (noncesigner controller) to fill "
                             "data.signedNonce of Secret %s/%s%s (is the signer running on this "
                             "cluster?)", ns, CLI_SIGNED_NONCE_SECRET,
                             stale ? " with a signature by the key in authentication-keys" : ""))
            != 0)
            return rc;
    }
}

/* What kind of key the cluster has, for a --key-type refusal. */
static const char *key_kind(EVP_PKEY *key, char *buf, size_t len)
{
    tg_key_type type;

    if (tg_key_type_of(key, &type) == 0)
        return tg_key_type_name(type);
    snprintf(buf, len, "another key (%s, %d bits)", OBJ_nid2sn(EVP_PKEY_get_base_id(key)), EVP_PKEY_get_bits(key));
    return buf;
}

/* --key-type: the cluster key must be of that type. It is refused, never
 * replaced: a new cluster key would void every peering made with the old one. */
static int check_key_type(cli_flow *f, cli_cluster *c, const char *install_ns, EVP_PKEY *key)
{
    tg_key_type type;
    char buf[64];

    if (f->key_type < 0 || (tg_key_type_of(key, &type) == 0 && (int)type == f->key_type))
        return 0;
    return cli_flow_fail(f, c, TG_EXIT_REJECTED,
                         "--key-type: expected the cluster key in Secret %s/%s to be %s, found %s; "
                         "tenantgate never replaces a cluster's key: to change it, delete the Secret and "
                         "restart tenantgate-signer with --key-type %s (every peering authenticates again)",
                         install_ns, CLI_KEYS_SECRET, tg_key_type_name((tg_key_type)f->key_type),
                         key_kind(key, buf, sizeof(buf)), tg_key_type_name((tg_key_type)f->key_type));
}

int cli_cluster_key(cli_flow *f, cli_cluster *c, const char *install_ns, EVP_PKEY **key)
{
    cli_api_call call = { .verb = "get", .resource = "secrets", .group = "",
                          .namespace_ = install_ns, .name = CLI_KEYS_SECRET };
    char terr[256];
    json_object *doc = NULL;
    char *raw = NULL;
    unsigned char *pem = NULL;
    size_t len = 0;
    long st = get_secret(c, install_ns, CLI_KEYS_SECRET, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    *key = NULL;
    if (st == 404 && !cli_api_type_missing(st, raw)) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s not found: it holds this "
                           "cluster's keys and tenantgate-signer (keys controller) creates it at "
                           "its first start; is the signer installed here (or give --namespace)?",
                           install_ns, CLI_KEYS_SECRET);
    } else if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    } else if ((pem = cli_secret_data(doc, "privateKey", &len)) == NULL ||
               (*key = tg_key_private_from_pem((char *)pem, len)) == NULL) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Secret %s/%s has no usable data.privateKey "
                           "(PEM PKCS#8)", install_ns, CLI_KEYS_SECRET);
    } else if ((rc = check_key_type(f, c, install_ns, *key)) != 0) {
        EVP_PKEY_free(*key);
        *key = NULL;
    }
    if (pem != NULL)
        cli_free_secret(pem, len);
    json_object_put(doc);
    free_raw(raw);
    return rc;
}
