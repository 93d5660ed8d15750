/* token_secret.c - see token_secret.h. */
#define _GNU_SOURCE /* asprintf */
#include "token_secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/token.h"
#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"

/* After a failed read or a lost create race: soon, not a whole period. */
#define RETRY_MS 1000

static void on_tick(uv_timer_t *t);

static void again(tg_auth_token_secret *ts, uint64_t ms)
{
    ts->busy = 0;
    if (!ts->stopping)
        uv_timer_start(&ts->timer, on_tick, ms, 0);
}

static void keep(tg_auth_token_secret *ts, const unsigned char *tok, size_t len)
{
    if (!ts->loaded || len != ts->len || memcmp(tok, ts->token, len) != 0) {
        tg_log(TG_LOG_INFO, ts->loaded ? "peering token changed" : "peering token loaded",
               TG_LOG_STR("secret", TG_AUTH_TOKEN_SECRET), TG_LOG_STR("namespace", ts->ns));
        /* an admin's own token is used as given, but Liqo's are 128 hex */
        if (!tg_auth_token_well_formed((const char *)tok, len))
            tg_log(TG_LOG_WARN, "the peering token is not 128 hex characters: a weaker token than Liqo makes",
                   TG_LOG_INT("length", (int64_t)len));
    }
    sodium_memzero(ts->token, sizeof(ts->token));
    memcpy(ts->token, tok, len);
    ts->token[len] = '\0';
    ts->len = len;
    ts->loaded = 1;
}

static void on_created(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    tg_auth_token_secret *ts = data;

    if (resp->status != 201)
        tg_log(TG_LOG_WARN, "cannot create the token Secret", TG_LOG_INT("status", resp->status),
               TG_LOG_STR("error", resp->error));
    /* 201 or not: read it back, so every replica ends up with the stored one */
    again(ts, resp->status == 201 ? 0 : RETRY_MS);
}

static void create_secret(tg_auth_token_secret *ts)
{
    char tok[TG_AUTH_TOKEN_LEN + 1], *b64, *body;
    tg_kube_request_opts o = {.method = "POST", .path = ts->path, .content_type = TG_KUBE_CT_JSON};
    char err[256];
    int n;

    tg_auth_token_new(tok);
    b64 = tg_base64_encode((const unsigned char *)tok, TG_AUTH_TOKEN_LEN, NULL);
    sodium_memzero(tok, sizeof(tok));
    if (!b64 || (n = asprintf(&body,
                              "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\",\"labels\":"
                              "{\"app.kubernetes.io/part-of\":\"tenantgate\"}},\"type\":\"Opaque\","
                              "\"data\":{\"token\":\"%s\"}}",
                              TG_AUTH_TOKEN_SECRET, b64)) < 0) {
        free(b64);
        again(ts, RETRY_MS);
        return;
    }
    sodium_memzero(b64, strlen(b64));
    free(b64);
    o.body = body;
    o.body_len = (size_t)n;
    if (!tg_kube_request_start(ts->c, &o, on_created, ts, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cannot create the token Secret", TG_LOG_STR("error", err));
        again(ts, RETRY_MS);
    } else {
        tg_log(TG_LOG_INFO, "token Secret absent, creating one", TG_LOG_STR("namespace", ts->ns));
    }
    sodium_memzero(body, (size_t)n);
    free(body);
}

/* The Secret as read: its token, or a log line saying what is wrong. */
static void on_read(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    tg_auth_token_secret *ts = data;
    json_object *doc;
    const char *b64;
    unsigned char *tok = NULL;
    size_t len = 0;
    char err[128] = "no data.token";

    if (resp->status == 404) {
        create_secret(ts);
        return;
    }
    if (resp->status != 200 || !(doc = tg_json_parse(resp->body, resp->body_len, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot read the token Secret", TG_LOG_INT("status", resp->status),
               TG_LOG_STR("error", resp->error));
        again(ts, RETRY_MS);
        return;
    }
    if ((b64 = tg_json_path_string(doc, "data", "token", NULL)))
        tok = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err));
    if (tok && len > 0 && len <= TG_AUTH_MAX_TOKEN)
        keep(ts, tok, len);
    else
        tg_log(TG_LOG_ERROR, "the token Secret holds no usable token; requests are refused until it does",
               TG_LOG_STR("why", tok ? "empty or over 1024 bytes" : err));
    if (tok) {
        sodium_memzero(tok, len);
        free(tok);
    }
    json_object_put(doc);
    again(ts, ts->period_ms);
}

static void on_tick(uv_timer_t *t)
{
    tg_auth_token_secret *ts = t->data;
    tg_kube_request_opts o = {.method = "GET"};
    char path[320], err[256];

    if (ts->busy || ts->stopping)
        return;
    snprintf(path, sizeof(path), "%s/%s", ts->path, TG_AUTH_TOKEN_SECRET);
    o.path = path;
    ts->busy = 1;
    if (!tg_kube_request_start(ts->c, &o, on_read, ts, err, sizeof(err))) {
        tg_log(TG_LOG_WARN, "cannot read the token Secret", TG_LOG_STR("error", err));
        again(ts, RETRY_MS);
    }
}

int tg_auth_token_secret_start(tg_auth_token_secret *ts, tg_kube_client *c, const char *ns, uint64_t period_ms)
{
    memset(ts, 0, sizeof(*ts));
    if (strlen(ns) >= sizeof(ts->ns))
        return -1;
    ts->c = c;
    strcpy(ts->ns, ns);
    snprintf(ts->path, sizeof(ts->path), "/api/v1/namespaces/%s/secrets", ns);
    ts->period_ms = period_ms;
    uv_timer_init(tg_kube_client_loop(c), &ts->timer);
    ts->timer.data = ts;
    uv_timer_start(&ts->timer, on_tick, 0, 0);
    return 0;
}

const char *tg_auth_token_secret_get(const tg_auth_token_secret *ts, size_t *len)
{
    *len = ts->len;
    return ts->loaded ? ts->token : NULL;
}

void tg_auth_token_secret_stop(tg_auth_token_secret *ts)
{
    ts->stopping = 1;
    uv_close((uv_handle_t *)&ts->timer, NULL);
}
