// bench_ed25519_cryptopp.cc - Crypto++'s Ed25519 verify behind a C function,
// for tg-bench-ed25519 (bench_ed25519.c). Exceptions stop here.
#include <cstddef>

#include <crypto++/xed25519.h>

extern "C" int tg_bench_cryptopp_verify(const unsigned char pub[32], const unsigned char *msg, size_t msg_len,
                                        const unsigned char sig[64])
{
    try {
        CryptoPP::ed25519Verifier verifier(pub);
        return verifier.VerifyMessage(msg, msg_len, sig, 64) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}
