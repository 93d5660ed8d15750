/* consumer_keys.c - the consumer's cluster key (PROTOCOL.md 6): loaded once from
 * the authentication-keys Secret, created there when missing, of the type
 * --key-type names (Ed25519 by default; RSA-2048 as Liqo's
 * --tls-compatibility-mode makes). An existing key is never replaced. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "pki/keys.h"

/* A key of another type than --key-type is kept, and said once: a new
 * cluster key would void every peering made with the old one, so changing
 * it is the administrator's act (delete the Secret), never a flag's. */
static void warn_other_type(tg_signer *s, EVP_PKEY *k)
{
    tg_key_type have;
    int known = tg_key_type_of(k, &have) == 0;

    if (known && have == s->key_type)
        return;
    tg_log(TG_LOG_WARN, "cluster key kept: it is not of --key-type; delete the Secret to make a new one",
           TG_LOG_STR("secret", TG_KEYS_SECRET), TG_LOG_STR("found", known ? tg_key_type_name(have) : "another type"),
           TG_LOG_STR("keyType", tg_key_type_name(s->key_type)));
}

/* The private key in an existing authentication-keys Secret, or NULL with err. */
static EVP_PKEY *key_from_secret(tg_signer *s, json_object *sec, char *err, size_t err_len)
{
    size_t len = 0;
    unsigned char *pem = rc_secret_data(sec, "privateKey", &len);
    EVP_PKEY *k = pem ? tg_key_private_from_pem((char *)pem, len) : NULL;

    rc_free_secret(pem, len);
    if (!k)
        snprintf(err, err_len, "secret %s/%s holds no usable privateKey", s->namespace_, TG_KEYS_SECRET);
    else
        warn_other_type(s, k);
    return k;
}

/* A new key of --key-type, stored as authentication-keys (Liqo's layout:
 * privateKey PKCS#8, publicKey PKIX). NULL when it could not be stored
 * (409: another replica won the race; read theirs next time). */
static EVP_PKEY *create_key(tg_signer *s, tg_api *api, char *err, size_t err_len)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(), *data = json_object_new_object();
    EVP_PKEY *k = tg_key_generate(s->key_type);
    size_t pl = 0, ul = 0;
    char *priv = k ? tg_key_private_pem(k, &pl) : NULL, *pub = k ? tg_key_public_pem(k, &ul) : NULL;
    char *b1 = priv ? tg_base64_encode((unsigned char *)priv, pl, NULL) : NULL;
    char *b2 = pub ? tg_base64_encode((unsigned char *)pub, ul, NULL) : NULL;
    char path[1024];
    long st;

    json_object_object_add(o, "apiVersion", rc_jstr("v1"));
    json_object_object_add(o, "kind", rc_jstr("Secret"));
    json_object_object_add(meta, "name", rc_jstr(TG_KEYS_SECRET));
    json_object_object_add(meta, "namespace", rc_jstr(s->namespace_));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(data, "privateKey", rc_jstr(b1));
    json_object_object_add(data, "publicKey", rc_jstr(b2));
    json_object_object_add(o, "data", data);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", s->namespace_);
    if (b1 && b2) {
        st = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, o, NULL, err, err_len);
    } else {
        st = -1;
        snprintf(err, err_len, "cannot generate and encode a %s key", tg_key_type_name(s->key_type));
    }
    rc_free_secret(priv, pl);
    free(pub);
    rc_free_secret(b1, b1 ? strlen(b1) : 0);
    free(b2);
    json_object_put(o);
    if (st != 201) {
        EVP_PKEY_free(k);
        return NULL;
    }
    tg_log(TG_LOG_INFO, "cluster keys created", TG_LOG_STR("namespace", s->namespace_),
           TG_LOG_STR("secret", TG_KEYS_SECRET), TG_LOG_STR("keyType", tg_key_type_name(s->key_type)));
    return k;
}

/* The cluster key, from authentication-keys (created, of --key-type, when missing). */
EVP_PKEY *tg_cluster_key(tg_signer *s, tg_api *api, int create, char *err, size_t err_len)
{
    char path[1024];
    json_object *sec = NULL;
    EVP_PKEY *k = NULL;
    long st;

    pthread_mutex_lock(&s->key_mu);
    if (s->cluster_key) {
        k = s->cluster_key;
        goto out;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/" TG_KEYS_SECRET, s->namespace_);
    st = tg_api_get(api, path, &sec, err, err_len);
    if (st == 200)
        k = key_from_secret(s, sec, err, err_len);
    else if (st == 404 && create)
        k = create_key(s, api, err, err_len);
    s->cluster_key = k;
out:
    pthread_mutex_unlock(&s->key_mu);
    json_object_put(sec);
    return k;
}

long tg_reconcile_keys(tg_signer *s, tg_api *api)
{
    char err[512];

    if (!tg_cluster_key(s, api, 1, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cluster keys not available", TG_LOG_STR("error", err));
        return TG_RECONCILE_RETRY;
    }
    return TG_RECONCILE_OK;
}

/* ---------- descriptor ---------- */

static long reconcile_key(tg_signer *s, tg_api *api, const char *kind, const char *ns, const char *name)
{
    (void)kind;
    (void)ns;
    (void)name;
    return tg_reconcile_keys(s, api);
}

const tg_controller_desc tg_ctl_keys = {
    .name = "keys", .key_prefix = "keys", .bit = TG_CTL_KEYS, .side = "consumer",
    .scope = {.where = TG_WHERE_INSTALL_NS, .name = TG_KEYS_SECRET,
              .acts_on = "Secret authentication-keys in the install namespace",
              .writes = "that Secret (created once)"},
    .wake_at_start = 1,
    .reconcile = reconcile_key,
};
