/* bench_ed25519.c - tg-bench-ed25519: the project's Ed25519 verify
 * (tg_ed25519_verify, libsodium) against the other verifiers Debian packages,
 * on the same key and signatures, single thread.
 *
 * Each verifier is compiled in when its -dev package was found at configure
 * time (bench/CMakeLists.txt): OpenSSL always; nettle (nettle-dev), wolfSSL
 * (libwolfssl-dev), libgcrypt (libgcrypt20-dev), Crypto++ (libcrypto++-dev,
 * through bench_ed25519_cryptopp.cc). Each one starts from the 32 raw key
 * bytes, as a Tenant's key differs from one verify to the next.
 *
 * Before timing, each verifier must accept the signature and refuse it with
 * one bit flipped. Then --rounds rounds, the verifiers alternating within a
 * round, each for about --min-time seconds of this thread's CPU time; the
 * median per verifier is divided by libsodium's median of the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "bench_time.h"
#include "pki/ed25519.h"
#include "pki/nonce.h"

#ifdef TG_BENCH_NETTLE
#include <nettle/eddsa.h>
#endif
#ifdef TG_BENCH_WOLFSSL
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#endif
#ifdef TG_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#ifdef TG_BENCH_CRYPTOPP
int tg_bench_cryptopp_verify(const unsigned char pub[32], const unsigned char *msg, size_t msg_len,
                             const unsigned char sig[64]);
#endif

#define MAX_ROUNDS 15
#define MSG_MAX 200

typedef struct sample {
    unsigned char pub[TG_ED25519_KEY_LEN];
    unsigned char msg[MSG_MAX];
    size_t msg_len;
    unsigned char sig[TG_ED25519_SIG_LEN];
} sample;

typedef int (*verify_fn)(const sample *s);

static int verify_sodium(const sample *s)
{
    return tg_ed25519_verify(s->pub, s->msg, s->msg_len, s->sig, sizeof(s->sig));
}

/* As bench/pki's verify-openssl, plus the key made from the raw bytes. */
static int verify_openssl(const sample *s)
{
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, s->pub, sizeof(s->pub));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = key != NULL && ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
             EVP_DigestVerify(ctx, s->sig, sizeof(s->sig), s->msg, s->msg_len) == 1;

    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    return ok;
}

#ifdef TG_BENCH_NETTLE
static int verify_nettle(const sample *s)
{
    return ed25519_sha512_verify(s->pub, s->msg_len, s->msg, s->sig);
}
#endif

#ifdef TG_BENCH_WOLFSSL
static int verify_wolfssl(const sample *s)
{
    ed25519_key key;
    int res = 0, ok;

    if (wc_ed25519_init(&key) != 0)
        return 0;
    ok = wc_ed25519_import_public(s->pub, sizeof(s->pub), &key) == 0 &&
         wc_ed25519_verify_msg(s->sig, sizeof(s->sig), s->msg, (word32)s->msg_len, &res, &key) == 0 && res == 1;
    wc_ed25519_free(&key);
    return ok;
}
#endif

#ifdef TG_BENCH_GCRYPT
static int verify_gcrypt(const sample *s)
{
    gcry_sexp_t key = NULL, sig = NULL, data = NULL;
    int ok = gcry_sexp_build(&key, NULL, "(public-key(ecc(curve Ed25519)(flags eddsa)(q %b)))", 32, s->pub) == 0 &&
             gcry_sexp_build(&sig, NULL, "(sig-val(eddsa(r %b)(s %b)))", 32, s->sig, 32, s->sig + 32) == 0 &&
             gcry_sexp_build(&data, NULL, "(data(flags eddsa)(hash-algo sha512)(value %b))", (int)s->msg_len,
                             s->msg) == 0 &&
             gcry_pk_verify(sig, data, key) == 0;

    gcry_sexp_release(key);
    gcry_sexp_release(sig);
    gcry_sexp_release(data);
    return ok;
}
#endif

#ifdef TG_BENCH_CRYPTOPP
static int verify_cryptopp(const sample *s)
{
    return tg_bench_cryptopp_verify(s->pub, s->msg, s->msg_len, s->sig);
}
#endif

static const struct verifier {
    const char *name;
    verify_fn fn;
} verifiers[] = {
    {"libsodium", verify_sodium}, /* first: the ratios' base */
    {"openssl-evp", verify_openssl},
#ifdef TG_BENCH_NETTLE
    {"nettle", verify_nettle},
#endif
#ifdef TG_BENCH_WOLFSSL
    {"wolfssl", verify_wolfssl},
#endif
#ifdef TG_BENCH_GCRYPT
    {"libgcrypt", verify_gcrypt},
#endif
#ifdef TG_BENCH_CRYPTOPP
    {"crypto++", verify_cryptopp},
#endif
};
enum { N_VERIFIERS = sizeof(verifiers) / sizeof(verifiers[0]) };

/* Verifies that take about min_time of CPU. */
static long calibrate(verify_fn fn, const sample *s, double min_time)
{
    long n = 1;
    double elapsed;

    for (;;) {
        double start = tg_bench_cpu_seconds();
        for (long i = 0; i < n; i++)
            fn(s);
        elapsed = tg_bench_cpu_seconds() - start;
        if (elapsed >= min_time / 10)
            break;
        n *= 2;
    }
    return (long)((double)n * min_time / elapsed) + 1;
}

/* Accepts s, and refuses s with one bit of S flipped: else its time means nothing. */
static int answers_right(verify_fn fn, const sample *s)
{
    sample bad = *s;

    bad.sig[40] ^= 0x04;
    return fn(s) == 1 && fn(&bad) == 0;
}

static void measure(const sample *s, int rounds, double min_time)
{
    double us[N_VERIFIERS][MAX_ROUNDS], base = 0;
    long n[N_VERIFIERS];
    int usable[N_VERIFIERS];

    for (int v = 0; v < N_VERIFIERS; v++) {
        usable[v] = answers_right(verifiers[v].fn, s);
        n[v] = usable[v] ? calibrate(verifiers[v].fn, s, min_time) : 0;
    }
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < N_VERIFIERS; v++) {
            double start = tg_bench_cpu_seconds();
            for (long i = 0; i < n[v]; i++)
                verifiers[v].fn(s);
            us[v][r] = n[v] > 0 ? (tg_bench_cpu_seconds() - start) / (double)n[v] * 1e6 : 0;
        }
    printf("message of %zu bytes:\n", s->msg_len);
    printf("  %-12s %10s %10s %10s %10s %14s\n", "verifier", "verifies", "min us", "median us", "max us",
           "/ libsodium");
    for (int v = 0; v < N_VERIFIERS; v++) {
        double med;

        if (!usable[v]) {
            printf("  %-12s does not answer right on this signature: not timed\n", verifiers[v].name);
            continue;
        }
        qsort(us[v], (size_t)rounds, sizeof(double), tg_bench_cmp_double);
        med = us[v][rounds / 2];
        if (v == 0)
            base = med;
        printf("  %-12s %10ld %10.2f %10.2f %10.2f %14.2f\n", verifiers[v].name, n[v], us[v][0], med,
               us[v][rounds - 1], base > 0 ? med / base : 0);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: tg-bench-ed25519 [--min-time SECONDS] [--rounds N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    /* a nonce's length (what the Tenant's signature covers) and about a CSR's TBS */
    static const size_t lengths[] = {TG_NONCE_TEXT_LEN, MSG_MAX};
    unsigned char sk[crypto_sign_SECRETKEYBYTES];
    double min_time = 0.5;
    int rounds = 5;
    sample s;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc)
            min_time = atof(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            usage();
    }
    if (min_time <= 0 || rounds < 1 || rounds > MAX_ROUNDS || sodium_init() < 0)
        usage();
#ifdef TG_BENCH_GCRYPT
    if (gcry_check_version(NULL) == NULL)
        return 1;
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
#endif
#ifdef TG_BENCH_WOLFSSL
    if (wolfCrypt_Init() != 0)
        return 1;
#endif

    printf("tg-bench-ed25519: single thread, CPU time, median of %d rounds of >= %.2f s per verifier\n\n",
           rounds, min_time);
    {
        const char *missing = ""
#ifndef TG_BENCH_NETTLE
                              " nettle (nettle-dev)"
#endif
#ifndef TG_BENCH_WOLFSSL
                              " wolfssl (libwolfssl-dev)"
#endif
#ifndef TG_BENCH_GCRYPT
                              " libgcrypt (libgcrypt20-dev)"
#endif
#ifndef TG_BENCH_CRYPTOPP
                              " crypto++ (libcrypto++-dev, a C++ compiler)"
#endif
            ;
        if (*missing != '\0')
            printf("not built in (install, then reconfigure):%s\n\n", missing);
    }
    crypto_sign_keypair(s.pub, sk);
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        s.msg_len = lengths[i];
        randombytes_buf(s.msg, s.msg_len);
        crypto_sign_detached(s.sig, NULL, s.msg, s.msg_len, sk);
        measure(&s, rounds, min_time);
    }
    sodium_memzero(sk, sizeof(sk));
    return 0;
}
