/* test_reconcile_fixture.c - see test_reconcile_fixture.h. */
#include "signer/test_reconcile_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "signer/binding_index.h"
#include "signer/cert_facts.h"
#include "pki/keys.h"
#include "signer/approve_decide.h"

void rt_signer_init(tg_signer *s)
{
    memset(s, 0, sizeof(*s));
    s->cluster_id = "provider-cluster";
    s->namespace_ = "liqo";
    s->token_ns = "tenantgate-tokens";
    s->signer_name = TG_SIGNER_NAME_KUBE;
    s->api_server = "https://provider.example:6443";
    s->controllers = TG_CTL_ALL;
    s->is_leader = 1;
    pthread_mutex_init(&s->key_mu, NULL);
    s->rb_known = tg_settled_new();
    /* the approver decides only with both binding caches synced: empty ones */
    s->rb_cache = rt_cache(NULL, (const char *const[]){NULL});
    s->crb_cache = rt_cache(NULL, (const char *const[]){NULL});
    s->binding_index = tg_binding_index_new();
    s->cert_memo = tg_cert_memo_new();
}

void rt_signer_clear(tg_signer *s)
{
    tg_cache **caches[] = {&s->csr_cache, &s->tenant_cache, &s->nonce_cache, &s->renew_cache, &s->slice_cache,
                           &s->cp_secret_cache, &s->rb_cache, &s->crb_cache, &s->repl_caches[0], &s->repl_caches[1], &s->repl_caches[2]};

    for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
        tg_cache_free(*caches[i]);
        *caches[i] = NULL;
    }
    tg_settled_free(s->settled);
    tg_binding_index_free(s->binding_index);
    tg_cert_memo_free(s->cert_memo);
    s->cert_memo = NULL;
    tg_settled_free(s->rb_known);
    json_object_put(s->node_labels);
    json_object_put(s->slice_provider.defaults);
    json_object_put(s->slice_offer.ingress_classes);
    json_object_put(s->slice_offer.load_balancer_classes);
    EVP_PKEY_free(s->cluster_key);
    pthread_mutex_destroy(&s->key_mu);
    memset(s, 0, sizeof(*s));
}

static tg_cache *cache_of(tg_cache *c, const char *const *items)
{
    json_object *list = json_object_new_array();
    char err[256] = "";

    for (size_t i = 0; items && items[i]; i++) {
        json_object *o = tg_json_parse(items[i], strlen(items[i]), err, sizeof(err));
        if (!o)
            fail_msg("cache item %zu: %s", i, err);
        json_object_array_add(list, o);
    }
    if (tg_cache_replace(c, list, "100", NULL, err, sizeof(err)) != 0)
        fail_msg("cache: %s", err);
    json_object_put(list);
    return c;
}

tg_cache *rt_cache(const char *index_label, const char *const *items)
{
    tg_cache *c = tg_cache_new(index_label);

    assert_non_null(c);
    assert_int_equal(tg_cache_set_compact(c), 0);
    return cache_of(c, items);
}

tg_cache *rt_cache_as(tg_informer_id id, const char *const *items)
{
    const tg_informer_desc *d = &tg_informer_descs[id];
    tg_cache *c = tg_cache_new(d->index_label);

    assert_non_null(c);
    assert_int_equal(tg_cache_set_compact(c), 0);
    if (d->keep_fields)
        assert_int_equal(tg_cache_keep_fields(c, d->keep_fields), 0);
    if (d->keep_metadata)
        assert_int_equal(tg_cache_keep_metadata(c, d->keep_metadata), 0);
    if (d->shrink)
        assert_int_equal(tg_cache_shrink_field(c, d->shrink_path, d->shrink), 0);
    if (d->index_metadata)
        assert_int_equal(tg_cache_index_metadata(c, d->index_metadata), 0);
    return cache_of(c, items);
}

char *rt_vector(const char *name)
{
    const char *dir = getenv("TG_VECTORS_DIR");
    char path[1024], *buf;
    FILE *f;
    long n;

    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_non_null(f = fopen(path, "rb"));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    assert_non_null(buf = calloc(1, (size_t)n + 1));
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return buf;
}

char *rt_b64(const void *p, size_t n)
{
    char *s = tg_base64_encode(p, n, NULL);

    assert_non_null(s);
    return s;
}

EVP_PKEY *rt_public_key(const char *b64)
{
    char err[64];
    size_t len = 0;
    unsigned char *pem = tg_base64_decode(b64, strlen(b64), &len, err, sizeof(err));
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);

    assert_non_null(k);
    BIO_free(b);
    free(pem);
    return k;
}

char *rt_cert_b64(EVP_PKEY *key, long valid_s)
{
    EVP_PKEY *issuer = tg_key_generate(TG_KEY_ED25519);
    X509 *x = X509_new();
    BIO *b = BIO_new(BIO_s_mem());
    char *pem, *out;
    long len;

    assert_non_null(issuer);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(x));
    X509_time_adj_ex(X509_getm_notBefore(x), 0, -300, NULL);
    X509_time_adj_ex(X509_getm_notAfter(x), 0, valid_s - 300, NULL);
    X509_set_pubkey(x, key);
    assert_true(X509_sign(x, issuer, NULL) > 0);
    PEM_write_bio_X509(b, x);
    len = BIO_get_mem_data(b, &pem);
    out = rt_b64(pem, (size_t)len);
    BIO_free(b);
    X509_free(x);
    EVP_PKEY_free(issuer);
    return out;
}

const char *rt_writes(tg_api *a)
{
    static char text[8192];
    size_t n = 0;

    text[0] = '\0';
    for (size_t i = 0; i < json_object_array_length(fake_api_writes(a)) && n < sizeof(text); i++) {
        json_object *w = json_object_array_get_idx(fake_api_writes(a), i);
        const char *method = tg_json_string(w, "method"), *path = tg_json_string(w, "path");
        if (strcmp(method, "EVENT") == 0)
            n += (size_t)snprintf(text + n, sizeof(text) - n, "EVENT %s\n", path);
        else
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%s %s %lld\n", method, path,
                                  (long long)json_object_get_int64(json_object_object_get(w, "status")));
    }
    return text;
}
