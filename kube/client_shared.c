/* client_shared.c - configuration copy, token re-reads, the synchronous
 * wrapper and query escaping, for either API client (client_shared.h). */
#include "kube/client_shared.h"
#include "kube/client.h"
#include "errbuf.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tg_kube_memdup_nul(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

#define DUP_STR(f) do { if (src->f && !(dst->f = strdup(src->f))) goto oom; } while (0)
#define DUP_MEM(f) do { if (src->f && !(dst->f = tg_kube_memdup_nul(src->f, src->f##_len))) goto oom; \
                        dst->f##_len = src->f ? src->f##_len : 0; } while (0)

int tg_kube_config_copy(tg_kube_config *dst, const tg_kube_config *src)
{
    memset(dst, 0, sizeof(*dst));
    DUP_STR(server);
    DUP_STR(tls_server_name);
    DUP_MEM(ca);
    DUP_MEM(cert);
    DUP_MEM(key);
    DUP_STR(token);
    DUP_STR(token_file);
    DUP_STR(proxy_url);
    DUP_STR(namespace);
    DUP_STR(context);
    dst->insecure_skip_tls_verify = src->insecure_skip_tls_verify;
    return 0;
oom:
    tg_kube_config_free(dst);
    return -1;
}

static void wipe_free(char *s)
{
    if (s != NULL) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

void tg_kube_token_refresh(tg_kube_token *t, const tg_kube_config *cfg, uv_loop_t *loop, int force)
{
    if (cfg->token_file == NULL)
        return;
    uint64_t now = uv_now(loop);
    if (!force && t->value != NULL && now - t->read_ms < TG_KUBE_TOKEN_REREAD_MS)
        return;
    char *v;
    /* A failed re-read keeps the last good token: the kubelet replaces the
     * file with a symlink swap, so a transient miss is possible. */
    if (tg_kube_read_token(cfg->token_file, &v, NULL, 0) == 0) {
        wipe_free(t->value);
        t->value = v;
    }
    t->read_ms = now;
}

const char *tg_kube_token_current(const tg_kube_token *t, const tg_kube_config *cfg)
{
    return t->value ? t->value : cfg->token;
}

void tg_kube_token_free(tg_kube_token *t)
{
    wipe_free(t->value);
    t->value = NULL;
}

const char *tg_kube_content_type_value(tg_kube_content_type ct)
{
    switch (ct) {
    case TG_KUBE_CT_MERGE_PATCH: return "application/merge-patch+json";
    case TG_KUBE_CT_JSON_PATCH: return "application/json-patch+json";
    case TG_KUBE_CT_STRATEGIC_PATCH: return "application/strategic-merge-patch+json";
    case TG_KUBE_CT_APPLY: return "application/apply-patch+yaml";
    case TG_KUBE_CT_JSON:
    default: return "application/json";
    }
}

const char TG_KUBE_ERR_BODY_TOO_LARGE[] = "response body over the size limit";

int tg_kube_body_append(char **buf, size_t *len, size_t *cap, size_t max, const char *p, size_t n,
                        const char **why)
{
    if (n > max - *len) {
        *why = TG_KUBE_ERR_BODY_TOO_LARGE;
        return -1;
    }
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 16384;
        while (c < *len + n + 1)
            c *= 2;
        char *b = realloc(*buf, c);
        if (b == NULL) {
            *why = "out of memory buffering the response";
            return -1;
        }
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

/* --- synchronous use --- */

typedef struct sync_state {
    int done;
    long status;
    char *body;
    size_t body_len;
    char *err;
    size_t err_len;
} sync_state;

static void on_sync_done(tg_kube_request *req, const tg_kube_response *resp, void *data)
{
    sync_state *s = data;
    s->done = 1;
    if (resp->error != NULL) {
        s->status = -1;
        tg_errf(s->err, s->err_len, "%s", resp->error);
        return;
    }
    s->status = resp->status;
    s->body = tg_kube_memdup_nul(resp->body, resp->body_len);
    s->body_len = resp->body_len;
    if (s->body == NULL) {
        s->status = -1;
        tg_errf(s->err, s->err_len, "out of memory");
    }
}

long tg_kube_request_sync(tg_kube_client *c, const tg_kube_request_opts *opts, char **body, size_t *body_len,
                          char *err, size_t err_len)
{
    sync_state s = {.err = err, .err_len = err_len};
    *body = NULL;
    if (body_len)
        *body_len = 0;
    tg_kube_request *r = tg_kube_request_start(c, opts, on_sync_done, &s, err, err_len);
    if (r == NULL)
        return -1;
    while (!s.done) {
        if (uv_run(tg_kube_client_loop(c), UV_RUN_ONCE) == 0 && !s.done) {
            /* Nothing left to wait for and no answer: do not spin. */
            tg_kube_request_cancel(r);
            tg_errf(err, err_len, "request stalled: the loop has nothing left to run");
            return -1;
        }
    }
    *body = s.body;
    if (body_len)
        *body_len = s.body_len;
    return s.status;
}

/* RFC 3986: everything but the unreserved characters is percent-encoded. */
char *tg_kube_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}
