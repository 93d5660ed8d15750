/* origin_token.c - see origin_token.h. */
#include "origin_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/issue_docs.h"

typedef struct store {
    tg_kube_client *c;
    json_object *doc;              /* holds the token: put after use */
    char path[256];                /* the Secret's collection */
    char name[128];
    tg_auth_origin_token_done done;
    void *data;
} store;

static void store_free(store *st)
{
    json_object *t;

    if (json_object_object_get_ex(json_object_object_get(st->doc, "data"), "token", &t))
        sodium_memzero((void *)json_object_get_string(t), (size_t)json_object_get_string_len(t));
    json_object_put(st->doc);
    free(st);
}

/* Send st->doc; the serialized copy is wiped once the client has its own. */
static int send_doc(store *st, const char *method, const char *path, tg_kube_content_type ct,
                    tg_kube_response_cb cb, char *err, size_t err_len)
{
    size_t len = 0;
    const char *text = json_object_to_json_string_length(st->doc, JSON_C_TO_STRING_PLAIN, &len);
    tg_kube_request_opts o = {.method = method, .path = path, .content_type = ct, .body = text, .body_len = len};
    tg_kube_request *r = text ? tg_kube_request_start(st->c, &o, cb, st, err, err_len) : NULL;

    if (text)
        sodium_memzero((void *)text, len);
    return r ? 0 : -1;
}

static void finish(store *st, int ok, const char *step, const tg_kube_response *resp)
{
    char why[256] = "";

    if (!ok)
        snprintf(why, sizeof(why), "%s Secret %s: HTTP %ld%s%s", step, st->name, resp->status,
                 resp->error ? ": " : "", resp->error ? resp->error : "");
    st->done(ok, why, st->data);
    store_free(st);
}

static void on_patched(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    (void)req;
    finish(data, resp->status == 200, "patch", resp);
}

/* One from an earlier identity (after a start over): its token replaced, as
 * Liqo updates it. */
static void on_created(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    store *st = data;
    char path[400], err[200];

    (void)req;
    if (resp->status != 409) {
        finish(st, resp->status == 201, "create", resp);
        return;
    }
    snprintf(path, sizeof(path), "%s/%s", st->path, st->name);
    if (send_doc(st, "PATCH", path, TG_KUBE_CT_MERGE_PATCH, on_patched, err, sizeof(err)) != 0) {
        tg_kube_response none = {.status = 0, .error = err};
        finish(st, 0, "patch", &none);
    }
}

int tg_auth_origin_token_store(tg_kube_client *c, const char *ns, const char *cluster_id, const char *token,
                               size_t len, tg_auth_origin_token_done done, void *data)
{
    store *st = calloc(1, sizeof(*st));
    char err[200];

    if (!st)
        return -1;
    *st = (store){.c = c, .done = done, .data = data};
    snprintf(st->path, sizeof(st->path), "/api/v1/namespaces/%s/secrets", ns);
    snprintf(st->name, sizeof(st->name), TG_AUTH_ORIGIN_TOKEN_PREFIX "%s", cluster_id);
    if (!(st->doc = tg_auth_origin_token_doc(ns, cluster_id, token, len)) ||
        send_doc(st, "POST", st->path, TG_KUBE_CT_JSON, on_created, err, sizeof(err)) != 0) {
        store_free(st);
        return -1;
    }
    return 0;
}
