/* provider_nonce.c - the provider's nonce controller (PROTOCOL.md 6): a labelled
 * nonce Secret gets a fresh nonce when it has none; one is never overwritten. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/log.h"
#include "kube/json.h"
#include "pki/nonce.h"

/* Give a labelled nonce Secret a nonce if it has none; never overwrite. */
long tg_reconcile_nonce(tg_signer *s, tg_api *api, const char *ns, const char *name)
{
    char path[1024], err[512], nonce[TG_NONCE_TEXT_LEN + 1];
    json_object *sec = NULL;
    long st;

    {
        /* A nonce is never overwritten: one in the cache is final, no GET needed. */
        char *b64 = NULL;
        int has = rc_cached_nonce_b64(s, ns, name, &b64) == 1 && b64;
        if (b64)
            rc_free_secret(b64, strlen(b64));
        if (has)
            return TG_RECONCILE_OK;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
    if ((st = tg_api_get(api, path, &sec, err, sizeof(err))) == 404)
        return TG_RECONCILE_OK;
    if (st != 200)
        goto fail;
    if (tg_json_path_string(sec, "data", "nonce", NULL) && *tg_json_path_string(sec, "data", "nonce", NULL)) {
        json_object_put(sec);
        return TG_RECONCILE_OK;
    }
    if (tg_nonce_generate(nonce) != 0) {
        snprintf(err, sizeof(err), "cannot generate a nonce");
        goto fail;
    }
    st = rc_patch_secret_data(api, ns, name, "nonce", nonce, TG_NONCE_TEXT_LEN,
                              tg_json_path_string(sec, "metadata", "resourceVersion", NULL), err, sizeof(err));
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (st != 200)
        goto fail;
    tg_log(TG_LOG_INFO, "nonce created", TG_LOG_STR("namespace", ns), TG_LOG_STR("secret", name));
    json_object_put(sec);
    return TG_RECONCILE_OK;
fail:
    tg_log(TG_LOG_WARN, "nonce reconcile failed", TG_LOG_STR("namespace", ns), TG_LOG_STR("error", err));
    json_object_put(sec);
    return TG_RECONCILE_RETRY;
}
