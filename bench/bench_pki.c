/* bench_pki.c - tg-bench-pki: what one Tenant admission costs in pki/ and in
 * the Tenant decoding, single thread, against the cost of Ed25519 verifies.
 *
 * For each Tenant (the seed vector cl01 with both key forms, and generated
 * Ed25519 / ECDSA P-256 / RSA-2048 ones) it measures:
 *   verify-nonce  tg_nonce_verify with an already-parsed key: what admission
 *                 uses (libsodium for Ed25519, OpenSSL for RSA and ECDSA)
 *   verify-openssl the same signature with OpenSSL's EVP_DigestVerify (for
 *                 Ed25519: what admission used before libsodium)
 *   csr-check     tg_csr_check (steps 7-10) on the PEM text
 *   json-decode   JSON text -> tg_tenant (tg_json_parse + tg_tenant_from_json)
 *   full-check    JSON text -> decode -> tg_tenant_check (steps 3-10)
 * Each figure is the median of --rounds rounds of at least --min-time seconds
 * of this thread's CPU time: `openssl speed` also counts CPU time, and on a
 * shared machine wall time would mostly measure the neighbours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "bench_time.h"
#include "kube/json.h"
#include "kube/tenant_json.h"
#include "pki/csr.h"
#include "pki/ed25519.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"
#include "pki/tenant.h"

#ifndef TG_BENCH_VECTORS_DIR
#define TG_BENCH_VECTORS_DIR "pki/testdata/vectors"
#endif

#define MAX_ROUNDS 15

typedef struct bench_tenant {
    char label[32];
    char *json;                 /* the Tenant as the API server sends it */
    size_t json_len;
    char nonce[TG_NONCE_TEXT_LEN + 1];
    tg_tenant decoded;          /* for the per-step measurements */
    EVP_PKEY *key;              /* spec.publicKey, parsed */
    unsigned char *spki;
    size_t spki_len;
    int is_ed25519;
    unsigned char raw[TG_ED25519_KEY_LEN];   /* Ed25519 only */
} bench_tenant;

static double min_time = 0.5;
static int rounds = 5;

typedef int (*op_fn)(bench_tenant *t);

/* Iterations of op that take about min_time of CPU. */
static long calibrate(op_fn op, bench_tenant *t)
{
    long n = 1;
    double elapsed;

    for (;;) {
        double start = tg_bench_cpu_seconds();
        for (long i = 0; i < n; i++)
            if (op(t) != 0) {
                fprintf(stderr, "tg-bench-pki: %s: operation failed\n", t->label);
                exit(1);
            }
        elapsed = tg_bench_cpu_seconds() - start;
        if (elapsed >= min_time / 10)
            break;
        n *= 2;
    }
    return (long)((double)n * min_time / elapsed) + 1;
}

/* ops/s of one round of n iterations. */
static double run_round(op_fn op, bench_tenant *t, long n)
{
    double start = tg_bench_cpu_seconds();

    for (long i = 0; i < n; i++)
        op(t);
    return (double)n / (tg_bench_cpu_seconds() - start);
}

static double median(double *v, int n)
{
    double copy[MAX_ROUNDS];

    memcpy(copy, v, sizeof(double) * (size_t)n);
    qsort(copy, (size_t)n, sizeof(copy[0]), tg_bench_cmp_double);
    return copy[n / 2];
}

static int op_verify(bench_tenant *t)
{
    return tg_nonce_verify(t->key, t->nonce, TG_NONCE_TEXT_LEN, t->decoded.signature.data,
                           t->decoded.signature.len) == 1 ? 0 : -1;
}

/* OpenSSL's verify, as tg_nonce_verify did it before libsodium: a fresh
 * EVP_MD_CTX per signature. */
static int op_verify_openssl(bench_tenant *t)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    const EVP_MD *md = t->is_ed25519 ? NULL : EVP_sha256();
    int ok = ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, md, NULL, t->key) == 1 &&
             EVP_DigestVerify(ctx, t->decoded.signature.data, t->decoded.signature.len,
                              (const unsigned char *)t->nonce, TG_NONCE_TEXT_LEN) == 1;

    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

/* libsodium alone, from the raw key (no EVP_PKEY in the way). */
static int op_verify_sodium(bench_tenant *t)
{
    return tg_ed25519_verify(t->raw, (const unsigned char *)t->nonce, TG_NONCE_TEXT_LEN, t->decoded.signature.data,
                             t->decoded.signature.len) == 1 ? 0 : -1;
}

static int op_csr_check(bench_tenant *t)
{
    tg_verdict v;
    return tg_csr_check(t->decoded.csr.data, t->decoded.csr.len, t->decoded.cluster_id, t->spki, t->spki_len, &v,
                        NULL);
}

static int decode(bench_tenant *t, tg_tenant *out)
{
    tg_verdict v;
    json_object *doc = tg_json_parse(t->json, t->json_len, NULL, 0);
    int rc;

    if (doc == NULL)
        return -1;
    tg_verdict_init(&v);
    rc = tg_tenant_from_json(doc, out, &v);
    json_object_put(doc);
    return rc;
}

static int op_decode(bench_tenant *t)
{
    tg_tenant out;
    int rc = decode(t, &out);

    tg_tenant_clear(&out);
    return rc;
}

static int op_full(bench_tenant *t)
{
    static const tg_check_opts opts = {0};
    tg_tenant out;
    tg_verdict v;
    int rc = decode(t, &out);

    if (rc == 0)
        rc = tg_tenant_check(&out, t->nonce, TG_NONCE_TEXT_LEN, &opts, &v);
    tg_tenant_clear(&out);
    return rc;
}

static char *read_file(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "tg-bench-pki: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "tg-bench-pki: cannot read %s\n", path);
        exit(2);
    }
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Decode once, parse the key once, and check the Tenant is admitted: a bench
 * of a Tenant that is refused early would measure the wrong thing. */
static void prepare(bench_tenant *t)
{
    tg_verdict v;
    int was_raw;

    if (decode(t, &t->decoded) != 0) {
        fprintf(stderr, "tg-bench-pki: %s: does not decode\n", t->label);
        exit(1);
    }
    t->key = tg_public_key_parse(t->decoded.public_key.data, t->decoded.public_key.len, &was_raw, &v);
    if (t->key == NULL) {
        fprintf(stderr, "tg-bench-pki: %s: %s\n", t->label, v.message);
        exit(1);
    }
    t->spki = tg_key_public_der(t->key, &t->spki_len);
    t->is_ed25519 = EVP_PKEY_get_base_id(t->key) == EVP_PKEY_ED25519;
    if (t->is_ed25519) {
        size_t raw_len = sizeof(t->raw);
        if (EVP_PKEY_get_raw_public_key(t->key, t->raw, &raw_len) != 1) {
            fprintf(stderr, "tg-bench-pki: %s: no raw key\n", t->label);
            exit(1);
        }
    }
    if (op_full(t) != 0) {
        tg_tenant_check(&t->decoded, t->nonce, TG_NONCE_TEXT_LEN, &(tg_check_opts){0}, &v);
        fprintf(stderr, "tg-bench-pki: %s: not admitted: %s: %s\n", t->label, tg_reason_name(v.reason), v.message);
        exit(1);
    }
}

static void load_vector(bench_tenant *t, const char *dir, const char *name, const char *label)
{
    char file[256];
    size_t len;
    char *nonce;

    memset(t, 0, sizeof(*t));
    snprintf(t->label, sizeof(t->label), "%s", label);
    snprintf(file, sizeof(file), "%s.json", name);
    t->json = read_file(dir, file, &t->json_len);
    snprintf(file, sizeof(file), "%s.nonce", name);
    nonce = read_file(dir, file, &len);
    while (len > 0 && (nonce[len - 1] == '\n' || nonce[len - 1] == '\r'))
        nonce[--len] = '\0';
    if (len != TG_NONCE_TEXT_LEN) {
        fprintf(stderr, "tg-bench-pki: %s: nonce is %zu characters, expected %d\n", name, len, TG_NONCE_TEXT_LEN);
        exit(1);
    }
    memcpy(t->nonce, nonce, TG_NONCE_TEXT_LEN + 1);
    free(nonce);
    prepare(t);
}

/* A Tenant as `kubectl-tenantgate generate tenant` would make it. */
static void generate(bench_tenant *t, tg_key_type type, const char *label)
{
    EVP_PKEY *key = tg_key_generate(type);
    char *pub, *csr;
    unsigned char *sig;
    size_t sig_len;
    json_object *doc;
    const char *text;

    memset(t, 0, sizeof(*t));
    snprintf(t->label, sizeof(t->label), "%s", label);
    if (key == NULL || tg_nonce_generate(t->nonce) != 0 || (pub = tg_key_public_pem(key, NULL)) == NULL ||
        (csr = tg_csr_build(key, "cl-bench", NULL)) == NULL ||
        tg_nonce_sign(key, t->nonce, TG_NONCE_TEXT_LEN, &sig, &sig_len) != 0 ||
        (doc = tg_tenant_to_json("cl-bench", (const unsigned char *)pub, strlen(pub), csr, sig, sig_len)) ==
            NULL) {
        fprintf(stderr, "tg-bench-pki: cannot generate the %s Tenant\n", label);
        exit(1);
    }
    text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
    t->json = strdup(text);
    t->json_len = strlen(text);
    json_object_put(doc);
    free(sig);
    free(csr);
    free(pub);
    EVP_PKEY_free(key);
    prepare(t);
}

static void release(bench_tenant *t)
{
    free(t->json);
    free(t->spki);
    EVP_PKEY_free(t->key);
    tg_tenant_clear(&t->decoded);
}

static void usage(void)
{
    fprintf(stderr, "usage: tg-bench-pki [--vectors DIR] [--min-time SECONDS] [--rounds N] "
                    "[--openssl-verify OPS_PER_SECOND]\n"
                    "       tg-bench-pki [--vectors DIR] --count cl01-rawkey|cl01-pemkey none|verify-nonce|verify-openssl|verify-sodium|full-check N\n");
    exit(2);
}

/* --count: run one measure N times without timing, for an instruction count
 * under `valgrind --tool=callgrind` (bench/pki does that when valgrind is
 * installed): unlike time, it does not move with the machine's load. */
static int count_mode(const char *vectors, const char *tenant, const char *op, long n)
{
    bench_tenant t;
    op_fn fn = NULL;

    if (strcmp(tenant, "cl01-rawkey") == 0)
        load_vector(&t, vectors, "seed-cl01-rawkey", tenant);
    else if (strcmp(tenant, "cl01-pemkey") == 0)
        load_vector(&t, vectors, "seed-cl01-pemkey", tenant);
    else
        usage();
    if (strcmp(op, "verify-nonce") == 0)
        fn = op_verify;
    else if (strcmp(op, "verify-openssl") == 0)
        fn = op_verify_openssl;
    else if (strcmp(op, "verify-sodium") == 0)
        fn = op_verify_sodium;
    else if (strcmp(op, "full-check") == 0)
        fn = op_full;
    else if (strcmp(op, "none") != 0)
        usage();
    for (long i = 0; fn != NULL && i < n; i++)
        if (fn(&t) != 0)
            return 1;
    release(&t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *vectors = getenv("TG_VECTORS_DIR") ? getenv("TG_VECTORS_DIR") : TG_BENCH_VECTORS_DIR;
    double openssl_verify = 0;
    enum { N_TENANTS = 5 };
    bench_tenant tenants[N_TENANTS];
    static const struct {
        const char *name;
        op_fn op;
    } ops[] = {
        {"verify-nonce", op_verify},
        {"verify-openssl", op_verify_openssl},
        {"csr-check", op_csr_check},
        {"json-decode", op_decode},
        {"full-check", op_full},
    };
    enum { N_OPS = sizeof(ops) / sizeof(ops[0]) };
    double rate[N_TENANTS][N_OPS], own_ratio[N_TENANTS];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--vectors") == 0 && i + 1 < argc)
            vectors = argv[++i];
        else if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc)
            min_time = atof(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--openssl-verify") == 0 && i + 1 < argc)
            openssl_verify = atof(argv[++i]);
        else if (strcmp(argv[i], "--count") == 0 && i + 3 < argc)
            return count_mode(vectors, argv[i + 1], argv[i + 2], atol(argv[i + 3]));
        else
            usage();
    }
    if (min_time <= 0 || rounds < 1 || rounds > MAX_ROUNDS)
        usage();

    load_vector(&tenants[0], vectors, "seed-cl01-rawkey", "cl01-rawkey");
    load_vector(&tenants[1], vectors, "seed-cl01-pemkey", "cl01-pemkey");
    generate(&tenants[2], TG_KEY_ED25519, "gen-ed25519");
    generate(&tenants[3], TG_KEY_ECDSA_P256, "gen-ecdsa-p256");
    generate(&tenants[4], TG_KEY_RSA2048, "gen-rsa2048");

    printf("tg-bench-pki: single thread, CPU time, median of %d rounds of >= %.2f s each\n\n", rounds, min_time);
    /* Rounds interleave the measures of one Tenant, so each round's
     * full-check / verify ratio compares figures taken under the same load. */
    printf("%-16s %-14s %12s %10s\n", "tenant", "measure", "ops/s", "us/op");
    for (int t = 0; t < N_TENANTS; t++) {
        long n[N_OPS];
        double samples[N_OPS][MAX_ROUNDS], ratio[MAX_ROUNDS];

        for (int o = 0; o < N_OPS; o++)
            n[o] = calibrate(ops[o].op, &tenants[t]);
        for (int r = 0; r < rounds; r++) {
            for (int o = 0; o < N_OPS; o++)
                samples[o][r] = run_round(ops[o].op, &tenants[t], n[o]);
            /* against the faster of the two verifiers in this round */
            ratio[r] = (samples[0][r] > samples[1][r] ? samples[0][r] : samples[1][r]) / (2 * samples[N_OPS - 1][r]);
        }
        for (int o = 0; o < N_OPS; o++) {
            rate[t][o] = median(samples[o], rounds);
            printf("%-16s %-14s %12.0f %10.1f\n", tenants[t].label, ops[o].name, rate[t][o], 1e6 / rate[t][o]);
        }
        own_ratio[t] = median(ratio, rounds);
        fflush(stdout);
    }

    printf("\n");
    for (int t = 0; t < N_TENANTS; t++) {
        double full_us = 1e6 / rate[t][N_OPS - 1];

        if (tenants[t].is_ed25519)
            printf("%-16s Ed25519 verify: libsodium %.1f us, OpenSSL EVP %.1f us: libsodium %.2fx faster\n",
                   tenants[t].label, 1e6 / rate[t][0], 1e6 / rate[t][1], rate[t][0] / rate[t][1]);
        if (tenants[t].is_ed25519 && openssl_verify > 0)
            printf("%-16s ratio full-check / (2 x openssl speed verify) = %.2f\n", tenants[t].label,
                   full_us / (2 * 1e6 / openssl_verify));
        printf("%-16s ratio full-check / (2 x fastest verify) = %.2f (median of per-round ratios; target <= 1.15)\n",
               tenants[t].label, own_ratio[t]);
    }

    for (int t = 0; t < N_TENANTS; t++)
        release(&tenants[t]);
    return 0;
}
