/* remote_pool.c - see remote_pool.h. */
#include "signer/remote_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kube/kubeconfig.h"

#define IDLE_MAX 32                 /* the signer's MAX_WORKERS */

typedef struct pool_entry {
    char key[320];
    unsigned char digest[32];
    int known;                      /* digest is the current content */
    tg_api *idle[IDLE_MAX];
    int nidle;
    struct pool_entry *next;
} pool_entry;

struct tg_remote_pool {
    pthread_mutex_t mu;
    pool_entry *head;
};

tg_remote_pool *tg_remote_pool_new(void)
{
    tg_remote_pool *p = calloc(1, sizeof(*p));

    if (p)
        pthread_mutex_init(&p->mu, NULL);
    return p;
}

void tg_remote_pool_free(tg_remote_pool *p)
{
    pool_entry *e, *next;

    if (!p)
        return;
    for (e = p->head; e; e = next) {
        next = e->next;
        while (e->nidle > 0)
            tg_api_free(e->idle[--e->nidle]);
        free(e);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void tg_remote_pool_digest(const void *kubeconfig, size_t len, unsigned char digest[32])
{
    if (EVP_Digest(kubeconfig, len, digest, NULL, EVP_sha256(), NULL) != 1)
        memset(digest, 0, 32);   /* never equal to a real digest in practice: rebuilt each time */
}

static pool_entry *entry_of(tg_remote_pool *p, const char *key, int create)
{
    pool_entry *e;

    for (e = p->head; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (!create || !(e = calloc(1, sizeof(*e))))
        return NULL;
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->next = p->head;
    p->head = e;
    return e;
}

/* Take the idle clients out of e (under mu) to free them outside it. */
static int take_idle(pool_entry *e, tg_api **out)
{
    int n = e->nidle;

    memcpy(out, e->idle, (size_t)n * sizeof(*out));
    e->nidle = 0;
    return n;
}

static void free_all(tg_api **a, int n)
{
    while (n > 0)
        tg_api_free(a[--n]);
}

int tg_remote_pool_take(tg_remote_pool *p, const char *key, const char *kubeconfig, size_t len,
                        tg_remote_client *out, char *err, size_t err_len)
{
    tg_api *stale[IDLE_MAX];
    int nstale = 0;
    pool_entry *e;
    tg_kube_config cfg;

    memset(out, 0, sizeof(*out));
    snprintf(out->key, sizeof(out->key), "%s", key);
    tg_remote_pool_digest(kubeconfig, len, out->digest);
    pthread_mutex_lock(&p->mu);
    if (!(e = entry_of(p, key, 1))) {
        pthread_mutex_unlock(&p->mu);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (!e->known || memcmp(e->digest, out->digest, sizeof(out->digest)) != 0) {
        nstale = take_idle(e, stale);     /* made from the old content */
        memcpy(e->digest, out->digest, sizeof(out->digest));
        e->known = 1;
    }
    if (e->nidle > 0)
        out->api = e->idle[--e->nidle];
    pthread_mutex_unlock(&p->mu);
    free_all(stale, nstale);
    if (out->api)
        return 0;
    memset(&cfg, 0, sizeof(cfg));
    /* base_dir "/nonexistent": a kubeconfig from a Secret must carry its
     * files inline; a path in it must not read this process's files. */
    if (tg_kube_config_parse(&cfg, kubeconfig, len, "/nonexistent", NULL, err, err_len) != 0)
        return -1;
    /* A token file would be read from this host and sent to the server the
     * Secret names: whoever can write such a Secret would get our token. */
    if (cfg.token_file) {
        snprintf(err, err_len, "the kubeconfig names a token file: refused (credentials must be inline)");
        tg_kube_config_free(&cfg);
        return -1;
    }
    out->api = tg_api_new(&cfg, err, err_len);
    tg_kube_config_free(&cfg);
    return out->api ? 0 : -1;
}

void tg_remote_pool_give(tg_remote_pool *p, tg_remote_client *c)
{
    pool_entry *e;
    tg_api *api = c->api;

    if (!api)
        return;
    c->api = NULL;
    pthread_mutex_lock(&p->mu);
    e = entry_of(p, c->key, 0);
    if (e && e->known && memcmp(e->digest, c->digest, sizeof(c->digest)) == 0 && e->nidle < IDLE_MAX) {
        e->idle[e->nidle++] = api;
        api = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    tg_api_free(api);
}

void tg_remote_pool_drop(tg_remote_pool *p, const char *key)
{
    tg_api *stale[IDLE_MAX];
    int n = 0;
    pool_entry *e;

    pthread_mutex_lock(&p->mu);
    if ((e = entry_of(p, key, 0))) {
        n = take_idle(e, stale);
        e->known = 0;
    }
    pthread_mutex_unlock(&p->mu);
    free_all(stale, n);
}
