/* cmd_preflight_plan.c - the pure half of `preflight` (preflight.h). */
#include "preflight.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pf_result_name(pf_result r)
{
    static const char *const names[] = { "PASS", "WARN", "FAIL", "SKIP" };

    return (unsigned)r < 4 ? names[r] : "FAIL";
}

void pf_tally_add(pf_tally *t, pf_result r)
{
    switch (r) {
    case PF_PASS: t->pass++; break;
    case PF_WARN: t->warn++; break;
    case PF_SKIP: t->skip++; break;
    default: t->fail++; break;
    }
}

int pf_verdict(const pf_tally *t, char *buf, size_t len)
{
    if (t->fail == 0) {
        snprintf(buf, len, "verdict: ready");
        return 0;
    }
    snprintf(buf, len, "verdict: not ready (%d failed)", t->fail);
    return 1;
}

pf_result pf_skew_result(long skew_s, long warn_s, long fail_s)
{
    long a = skew_s < 0 ? -skew_s : skew_s;

    if (a > fail_s)
        return PF_FAIL;
    return a > warn_s ? PF_WARN : PF_PASS;
}

long pf_skew_seconds(long long date_s, long long sent_ms, long long received_ms)
{
    long long mid_ms = sent_ms + (received_ms - sent_ms) / 2;
    /* The header counts whole seconds: a server exactly in step reads up
     * to 999 ms behind, and the answer may have been stamped anywhere in
     * the round trip. Only what is beyond both is skew. */
    long long slack_ms = 1000 + (received_ms - sent_ms) / 2;
    long long d = date_s * 1000 - mid_ms;

    if (d > slack_ms)
        return (long)((d - slack_ms) / 1000);
    if (d < -slack_ms)
        return (long)((d + slack_ms) / 1000);
    return 0;
}

/* "v<major>[(alpha|beta)<minor>]": its rank (GA 3, beta 2, alpha 1), major
 * and minor; rank 0 for any other spelling. */
static void version_parts(const char *v, int *rank, long *major, long *minor)
{
    char *end;

    *rank = 0;
    *major = *minor = 0;
    if (v[0] != 'v' || !isdigit((unsigned char)v[1]))
        return;
    *major = strtol(v + 1, &end, 10);
    if (*end == '\0') {
        *rank = 3;
        return;
    }
    if (strncmp(end, "beta", 4) == 0 && isdigit((unsigned char)end[4]))
        *rank = 2, end += 4;
    else if (strncmp(end, "alpha", 5) == 0 && isdigit((unsigned char)end[5]))
        *rank = 1, end += 5;
    else
        return;
    *minor = strtol(end, &end, 10);
    if (*end != '\0')
        *rank = 0;
}

int pf_version_cmp(const char *a, const char *b)
{
    int ra, rb;
    long ma, mb, na, nb;

    version_parts(a, &ra, &ma, &na);
    version_parts(b, &rb, &mb, &nb);
    if (ra != rb)
        return ra - rb;
    if (ra == 0)
        return -strcmp(a, b);    /* Kubernetes: others alphabetically, after all */
    if (ma != mb)
        return ma > mb ? 1 : -1;
    return na == nb ? 0 : na > nb ? 1 : -1;
}

static int serves_completely(const pf_served *s, const char *v)
{
    for (int i = 0; i < s->n && i < PF_MAX_VERSIONS; i++)
        if (strcmp(s->version[i], v) == 0)
            return s->complete[i];
    return 0;
}

int pf_common_version(const pf_served *a, const pf_served *b, char *out, size_t len)
{
    const char *best = NULL;

    for (int i = 0; i < a->n && i < PF_MAX_VERSIONS; i++) {
        if (!a->complete[i] || !serves_completely(b, a->version[i]))
            continue;
        if (best == NULL || pf_version_cmp(a->version[i], best) > 0)
            best = a->version[i];
    }
    if (best == NULL)
        return -1;
    snprintf(out, len, "%s", best);
    return 0;
}

#define AUTH "authentication.liqo.io"
#define CERTS "certificates.k8s.io"

/* What authenticate does on the provider (flow_namespace.c, flow_secrets.c,
 * flow_objects.c): find or make the tenant namespace, the nonce Secret, the
 * Tenant applied and read back. */
const pf_right pf_provider_rights[] = {
    { "list", "", "namespaces", NULL, NULL, PF_NS_CLUSTER },
    { "create", "", "namespaces", NULL, NULL, PF_NS_CLUSTER },
    { "create", "", "secrets", NULL, NULL, PF_NS_TENANT },
    { "get", "", "secrets", NULL, NULL, PF_NS_TENANT },
    { "patch", AUTH, "tenants", NULL, NULL, PF_NS_TENANT },
    { "get", AUTH, "tenants", NULL, NULL, PF_NS_TENANT },
    { NULL, NULL, NULL, NULL, NULL, 0 },
};

/* ...and on the consumer: the cluster key, the tenant namespace, the signed
 * nonce Secret, the Identity applied and read back. */
const pf_right pf_consumer_rights[] = {
    { "get", "", "secrets", NULL, NULL, PF_NS_INSTALL },
    { "list", "", "namespaces", NULL, NULL, PF_NS_CLUSTER },
    { "create", "", "namespaces", NULL, NULL, PF_NS_CLUSTER },
    { "create", "", "secrets", NULL, NULL, PF_NS_TENANT },
    { "get", "", "secrets", NULL, NULL, PF_NS_TENANT },
    { "patch", "", "secrets", NULL, NULL, PF_NS_TENANT },
    { "patch", AUTH, "identities", NULL, NULL, PF_NS_TENANT },
    { "get", AUTH, "identities", NULL, NULL, PF_NS_TENANT },
    { NULL, NULL, NULL, NULL, NULL, 0 },
};

const pf_right pf_csr_rights[] = {
    { "create", CERTS, "certificatesigningrequests", NULL, NULL, PF_NS_CLUSTER },
    { "update", CERTS, "certificatesigningrequests", "approval", NULL, PF_NS_CLUSTER },
    { "approve", CERTS, "signers", NULL, PF_CLIENT_SIGNER, PF_NS_CLUSTER },
    { "delete", CERTS, "certificatesigningrequests", NULL, NULL, PF_NS_CLUSTER },
    { NULL, NULL, NULL, NULL, NULL, 0 },
};

void pf_right_text(const pf_right *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s%s%s%s%s%s%s", r->verb, r->resource, r->subresource ? "/" : "",
             r->subresource ? r->subresource : "", r->group[0] ? "." : "", r->group,
             r->name ? " " : "", r->name ? r->name : "");
}

/* The value after flag among the words of buf (split in place). */
static const char *flag_value(char **words, int n, const char *flag)
{
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(words[i], flag) == 0)
            return words[i + 1];
    return NULL;
}

int pf_token_line_parse(const char *text, pf_token_line *out, char *why, size_t why_len)
{
    char *words[32], *save = NULL, *w;
    int n = 0;

    memset(out, 0, sizeof(*out));
    if (text == NULL || (out->buf = strdup(text)) == NULL) {
        snprintf(why, why_len, "no token line");
        return -1;
    }
    for (w = strtok_r(out->buf, " \t\r\n", &save); w != NULL && n < 32; w = strtok_r(NULL, " \t\r\n", &save))
        words[n++] = w;
    out->auth_url = flag_value(words, n, "--auth-url");
    out->token = flag_value(words, n, "--token");
    out->pin = flag_value(words, n, "--auth-ca-hash");
    if (out->auth_url == NULL || out->token == NULL || out->pin == NULL) {
        snprintf(why, why_len, "expected the line `create token --auth-url` prints: authenticate "
                 "--auth-url URL --token ID.SECRET --auth-ca-hash sha256:HEX");
        pf_token_line_free(out);
        return -1;
    }
    if (strncmp(out->auth_url, "https://", 8) != 0) {
        snprintf(why, why_len, "--auth-url in the line: expected https://HOST[:PORT]");
        pf_token_line_free(out);
        return -1;
    }
    return 0;
}

void pf_token_line_free(pf_token_line *t)
{
    if (t->buf != NULL) {
        /* it holds the token's secret */
        memset(t->buf, 0, strlen(t->buf));
        free(t->buf);
    }
    memset(t, 0, sizeof(*t));
}

const char *pf_image_tag(const char *image)
{
    const char *slash = strrchr(image, '/'), *colon;

    if (strchr(image, '@') != NULL)
        return image;
    colon = strrchr(slash ? slash : image, ':');
    return colon != NULL && colon[1] != '\0' ? colon + 1 : image;
}
