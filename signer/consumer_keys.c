/* consumer_keys.c - the consumer's cluster key (PROTOCOL.md 6): loaded once from
 * the authentication-keys Secret, created there when missing. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "pki/keys.h"

/* The cluster key, from authentication-keys (created when missing). */
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
    if (st == 200) {
        size_t len = 0;
        unsigned char *pem = rc_secret_data(sec, "privateKey", &len);
        if (pem)
            k = tg_key_private_from_pem((char *)pem, len);
        rc_free_secret(pem, len);
        if (!k)
            snprintf(err, err_len, "secret %s/%s holds no usable privateKey", s->namespace_, TG_KEYS_SECRET);
    } else if (st == 404 && create) {
        json_object *o = json_object_new_object(), *meta = json_object_new_object(), *data = json_object_new_object();
        size_t pl = 0, ul = 0;
        char *priv, *pub, *b1, *b2;
        k = tg_key_generate(TG_KEY_ED25519);
        priv = k ? tg_key_private_pem(k, &pl) : NULL;
        pub = k ? tg_key_public_pem(k, &ul) : NULL;
        b1 = priv ? tg_base64_encode((unsigned char *)priv, pl, NULL) : NULL;
        b2 = pub ? tg_base64_encode((unsigned char *)pub, ul, NULL) : NULL;
        json_object_object_add(o, "apiVersion", rc_jstr("v1"));
        json_object_object_add(o, "kind", rc_jstr("Secret"));
        json_object_object_add(meta, "name", rc_jstr(TG_KEYS_SECRET));
        json_object_object_add(meta, "namespace", rc_jstr(s->namespace_));
        json_object_object_add(o, "metadata", meta);
        json_object_object_add(data, "privateKey", rc_jstr(b1));
        json_object_object_add(data, "publicKey", rc_jstr(b2));
        json_object_object_add(o, "data", data);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", s->namespace_);
        st = b1 && b2 ? tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, o, NULL, err, err_len) : -1;
        rc_free_secret(priv, pl);
        free(pub);
        rc_free_secret(b1, b1 ? strlen(b1) : 0);
        free(b2);
        json_object_put(o);
        if (st != 201) {
            /* 409: another replica won the race; read theirs next time */
            EVP_PKEY_free(k);
            k = NULL;
        } else {
            tg_log(TG_LOG_INFO, "cluster keys created", TG_LOG_STR("namespace", s->namespace_),
                   TG_LOG_STR("secret", TG_KEYS_SECRET));
        }
    }
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
