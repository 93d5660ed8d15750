/* renewal.c - see renewal.h. */
#include "signer/renewal.h"

#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "pki/cert_summary.h"

static X509 *cert_parse(const unsigned char *pem, size_t len)
{
    BIO *b;
    X509 *x;

    if (!pem || len == 0 || len > (1u << 20) || !(b = BIO_new_mem_buf(pem, (int)len)))
        return NULL;
    x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    return x;
}

int tg_cert_key_is(const unsigned char *pem, size_t len, EVP_PKEY *key)
{
    X509 *x = cert_parse(pem, len);
    EVP_PKEY *k;
    int r;

    if (!x)
        return -1;
    k = X509_get0_pubkey(x);
    r = k && key && EVP_PKEY_eq(k, key) == 1 ? 1 : k ? 0 : -1;
    X509_free(x);
    return r;
}

int tg_cert_validity(const unsigned char *pem, size_t len, time_t *not_before, time_t *not_after)
{
    tg_cert_summary c;
    int r;

    if (!pem || len == 0 || len > (1u << 20) || tg_cert_summary_read((const char *)pem, len, &c) != 0)
        return -1;
    *not_before = c.not_before;
    *not_after = c.not_after;
    r = c.not_after > c.not_before ? 0 : -1;
    tg_cert_summary_clear(&c);
    return r;
}

/* The lifetime without the backdate slack (renewal.h). */
static time_t lifetime(time_t not_before, time_t not_after)
{
    time_t span = not_after - not_before, slack = span / 2 < TG_RENEWAL_BACKDATE ? span / 2 : TG_RENEWAL_BACKDATE;

    return span - slack;
}

time_t tg_renewal_at(time_t not_before, time_t not_after)
{
    return not_after - lifetime(not_before, not_after) / 3;
}

time_t tg_renewal_overdue_at(time_t not_before, time_t not_after, int grace_pct)
{
    if (grace_pct < 0)
        grace_pct = 0;
    if (grace_pct > TG_RENEWAL_GRACE_PCT_MAX)
        grace_pct = TG_RENEWAL_GRACE_PCT_MAX;
    return tg_renewal_at(not_before, not_after) + lifetime(not_before, not_after) * grace_pct / 100;
}

int tg_renewal_overdue(time_t not_before, time_t not_after, time_t now, int grace_pct)
{
    return now > tg_renewal_overdue_at(not_before, not_after, grace_pct);
}

int tg_renewal_due(time_t not_before, time_t not_after, time_t now)
{
    return now > tg_renewal_at(not_before, not_after);
}
