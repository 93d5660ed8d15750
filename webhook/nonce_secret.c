/* nonce_secret.c - see nonce_secret.h. */
#include "nonce_secret.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"

/* base64 of the longest nonce text we accept */
#define NONCE_B64_MAX (((TG_LOOKUP_NONCE_MAX - 1) / 3 + 1) * 4)

static int equals(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static const char *label(json_object *secret, const char *key)
{
    json_object *labels = tg_json_path(secret, "metadata", "labels", NULL);
    return labels ? tg_json_string(labels, key) : NULL;
}

/* data.nonce (base64) -> the nonce text. */
static tg_nonce_state decode(json_object *secret, char nonce[TG_LOOKUP_NONCE_MAX], size_t *len)
{
    const char *b64 = tg_json_path_string(secret, "data", TG_NONCE_DATA_KEY, NULL);
    unsigned char *raw;
    size_t n = 0, b64_len = b64 ? strlen(b64) : 0;
    tg_nonce_state st = TG_NONCE_EMPTY;
    char err[128];

    if (b64_len == 0 || b64_len > NONCE_B64_MAX)
        return TG_NONCE_EMPTY;
    raw = tg_base64_decode(b64, b64_len, &n, err, sizeof(err));
    if (!raw)
        return TG_NONCE_EMPTY;
    if (n > 0 && n < TG_LOOKUP_NONCE_MAX && !memchr(raw, '\0', n)) {
        memcpy(nonce, raw, n);
        nonce[n] = '\0';
        *len = n;
        st = TG_NONCE_FOUND;
    }
    OPENSSL_cleanse(raw, n);
    free(raw);
    return st;
}

/* Room for a digest with the longest nonce, on the stack. */
typedef union digest_room {
    tg_nonce_digest d;
    unsigned char bytes[sizeof(tg_nonce_digest) + TG_LOOKUP_NONCE_MAX];
} digest_room;

static void digest_fill(json_object *secret, digest_room *r)
{
    tg_nonce_digest *d = &r->d;
    const char *cluster = label(secret, TG_LABEL_REMOTE_CLUSTER_ID);

    memset(r, 0, sizeof(*r));
    d->labelled = equals(label(secret, TG_LABEL_NONCE), "true");
    /* A longer value matches no cluster id (those are DNS labels). */
    if (cluster && strlen(cluster) < sizeof(d->cluster_id)) {
        d->has_cluster = 1;
        memcpy(d->cluster_id, cluster, strlen(cluster) + 1);
    }
    d->data = decode(secret, d->nonce, &d->len);
}

static size_t digest_size(const tg_nonce_digest *d)
{
    return sizeof(*d) + d->len + 1;
}

tg_nonce_digest *tg_nonce_digest_new(json_object *secret)
{
    digest_room r;
    tg_nonce_digest *d;

    digest_fill(secret, &r);
    if ((d = malloc(digest_size(&r.d))))
        memcpy(d, &r, digest_size(&r.d));
    OPENSSL_cleanse(&r, sizeof(r));
    return d;
}

void tg_nonce_digest_free(tg_nonce_digest *d)
{
    if (d) {
        OPENSSL_cleanse(d, digest_size(d));
        free(d);
    }
}

tg_nonce_state tg_nonce_digest_read(const tg_nonce_digest *d, const char *cluster_id,
                                    char nonce[TG_LOOKUP_NONCE_MAX], size_t *len)
{
    if (!d->labelled)
        return TG_NONCE_UNLABELLED;
    if (!d->has_cluster || !equals(d->cluster_id, cluster_id))
        return TG_NONCE_OTHER_CLUSTER;
    if (d->data != TG_NONCE_FOUND)
        return d->data;
    memcpy(nonce, d->nonce, d->len + 1);
    *len = d->len;
    return TG_NONCE_FOUND;
}

tg_nonce_state tg_nonce_secret_read(json_object *secret, const char *ns, const char *cluster_id,
                                    char nonce[TG_LOOKUP_NONCE_MAX], size_t *len)
{
    digest_room r;
    tg_nonce_state st;

    if (!secret || !json_object_is_type(secret, json_type_object) ||
        !equals(tg_json_path_string(secret, "metadata", "namespace", NULL), ns) ||
        !equals(tg_json_path_string(secret, "metadata", "name", NULL), TG_NONCE_SECRET_NAME))
        return TG_NONCE_ABSENT;
    digest_fill(secret, &r);
    st = tg_nonce_digest_read(&r.d, cluster_id, nonce, len);
    OPENSSL_cleanse(&r, sizeof(r));
    return st;
}

const char *tg_nonce_state_found(tg_nonce_state s)
{
    switch (s) {
    case TG_NONCE_FOUND:
        return "found it";
    case TG_NONCE_UNLABELLED:
        return "found it without label " TG_LABEL_NONCE "=true";
    case TG_NONCE_OTHER_CLUSTER:
        return "found it labelled for another cluster";
    case TG_NONCE_EMPTY:
        return "found it without a usable data." TG_NONCE_DATA_KEY;
    case TG_NONCE_ABSENT:
    default:
        return "found none";
    }
}
