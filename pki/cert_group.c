/* cert_group.c - see cert_group.h. */
#define _GNU_SOURCE   /* timegm */
#include "cert_group.h"
#include "cert_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sodium.h>

#define PREFIX_LEN (sizeof(TG_CERT_GROUP_PREFIX) - 1)
#define IDENTITY_MAX 253

int tg_cert_group_is_form(const char *name)
{
    return name && strncasecmp(name, TG_CERT_GROUP_PREFIX, PREFIX_LEN) == 0;
}

/* An identity is a Kubernetes user name tenantgate issues: a cluster id or a
 * slice user, never holding the separators of the form. */
static int identity_ok(const char *id, size_t len)
{
    if (len == 0 || len > IDENTITY_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (id[i] == ':' || id[i] == '/' || (unsigned char)id[i] <= ' ' || (unsigned char)id[i] >= 0x7f)
            return 0;
    return 1;
}

int tg_cert_group_make(const char *identity, char *out, size_t out_len)
{
    unsigned char raw[TG_CERT_GROUP_HEX / 2];
    char hex[TG_CERT_GROUP_HEX + 1];

    if (!identity || !identity_ok(identity, strlen(identity)) ||
        out_len < PREFIX_LEN + strlen(identity) + 1 + TG_CERT_GROUP_HEX + 1)
        return -1;
    if (sodium_init() < 0)
        return -1;
    randombytes_buf(raw, sizeof(raw));
    sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
    snprintf(out, out_len, TG_CERT_GROUP_PREFIX "%s:%s", identity, hex);
    return 0;
}

static int lower_hex(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int malformed(char *why, size_t why_len)
{
    snprintf(why, why_len, "expected " TG_CERT_GROUP_PREFIX "<identity>:<%d lowercase hex>", TG_CERT_GROUP_HEX);
    return -1;
}

int tg_cert_group_parse(const char *group, char *identity, size_t id_len, char *hex, size_t hex_len, char *why,
                        size_t why_len)
{
    const char *id, *sep;
    size_t n;

    if (!group || strncmp(group, TG_CERT_GROUP_PREFIX, PREFIX_LEN) != 0)
        return malformed(why, why_len);
    id = group + PREFIX_LEN;
    sep = strrchr(id, ':');
    if (!sep)
        return malformed(why, why_len);
    n = (size_t)(sep - id);
    if (!identity_ok(id, n) || strlen(sep + 1) != TG_CERT_GROUP_HEX || !lower_hex(sep + 1, TG_CERT_GROUP_HEX) ||
        id_len <= n || hex_len <= TG_CERT_GROUP_HEX)
        return malformed(why, why_len);
    memcpy(identity, id, n);
    identity[n] = '\0';
    memcpy(hex, sep + 1, TG_CERT_GROUP_HEX + 1);
    return 0;
}

int tg_cert_group_key(const char *group, char out[TG_CERT_GROUP_KEY_MAX])
{
    char id[IDENTITY_MAX + 1], hex[TG_CERT_GROUP_HEX + 1], why[8];

    if (tg_cert_group_parse(group, id, sizeof(id), hex, sizeof(hex), why, sizeof(why)) != 0)
        return -1;
    snprintf(out, TG_CERT_GROUP_KEY_MAX, "%s.%s", id, hex);
    return 0;
}

int tg_cert_group_decide(const char *group, const char *identity, const tg_cert_group_state *st, tg_verdict *v)
{
    char id[IDENTITY_MAX + 1], hex[TG_CERT_GROUP_HEX + 1], why[128];

    if (tg_cert_group_parse(group, id, sizeof(id), hex, sizeof(hex), why, sizeof(why)) != 0)
        return tg_verdict_deny_code(v, 403, TG_NAME_RESERVED, "group: %s", why);
    if (!identity || strcmp(id, identity) != 0)
        return tg_verdict_deny_code(v, 403, TG_NAME_RESERVED,
                                    "group: expected a certificate group of %s, found one of another identity",
                                    identity ? identity : "(none)");
    if (st && st->revoked)
        return tg_verdict_deny_code(v, 403, TG_NAME_REVOKED,
                                    "group: expected a fresh certificate group, found one revoked (the revoked "
                                    "certificate still carries it)");
    if (st && st->bound)
        return tg_verdict_deny_code(v, 403, TG_NAME_BOUND,
                                    "group: expected a fresh certificate group, found one bound to a live certificate");
    return 0;
}

int tg_cert_group_record_needed(int64_t not_after, int64_t now)
{
    return not_after <= 0 || now <= not_after;
}

int tg_cert_group_name_entry(const X509_NAME_ENTRY *e, char *group, size_t group_len)
{
    const ASN1_STRING *d = X509_NAME_ENTRY_get_data(e);
    int n = ASN1_STRING_length(d);

    if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) != NID_organizationName || n < (int)PREFIX_LEN ||
        strncasecmp((const char *)ASN1_STRING_get0_data(d), TG_CERT_GROUP_PREFIX, PREFIX_LEN) != 0)
        return 0;
    snprintf(group, group_len, "%.*s", n, (const char *)ASN1_STRING_get0_data(d));
    return 1;
}

int tg_cert_group_of_certificate(const char *pem, size_t pem_len, char *cn, size_t cn_len, char *group,
                                 size_t group_len, int64_t *not_after)
{
    tg_cert_summary c;
    int rc;

    cn[0] = group[0] = '\0';
    *not_after = 0;
    if (tg_cert_summary_read(pem, pem_len, &c) != 0)
        return -1;
    snprintf(cn, cn_len, "%s", c.cn);
    snprintf(group, group_len, "%s", c.group);
    *not_after = (int64_t)c.not_after;
    rc = c.group_rc;
    tg_cert_summary_clear(&c);
    return rc;
}

int tg_cert_group_revoked(json_object *data, const char *group)
{
    char key[TG_CERT_GROUP_KEY_MAX];

    return data && tg_cert_group_key(group, key) == 0 && json_object_object_get_ex(data, key, NULL);
}

int64_t tg_cert_group_record_not_after(json_object *data, const char *key)
{
    json_object *v = NULL;
    const char *s;
    char *end;
    long long n;

    if (!data || !json_object_object_get_ex(data, key, &v) || !json_object_is_type(v, json_type_string))
        return 0;
    s = json_object_get_string(v);
    n = strtoll(s, &end, 10);
    return (end != s && *end == '\0' && n > 0) ? (int64_t)n : 0;
}
