/* kube_ns_digest.c - see kube_ns_digest.h. */
#include "kube_ns_digest.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"

static const char *labels_get(json_object *obj, const char *key)
{
    json_object *labels = tg_json_path(obj, "metadata", "labels", NULL);
    return labels ? tg_json_string(labels, key) : NULL;
}

/* The two labels placement reads on a Namespace (placement.c). */
typedef struct ns_digest {
    int has[2];
    char value[2][TG_LABEL_VALUE_MAX];
} ns_digest;

static const char *const ns_digest_keys[2] = {TG_LABEL_TENANT_NAMESPACE, TG_LABEL_REMOTE_CLUSTER_ID};

void *tg_ns_digest_new(json_object *obj)
{
    ns_digest *d = calloc(1, sizeof(*d));

    for (int i = 0; d && i < 2; i++) {
        const char *v = labels_get(obj, ns_digest_keys[i]);
        /* A longer value is "no such label", as it always was here. */
        if (v && strlen(v) < TG_LABEL_VALUE_MAX) {
            d->has[i] = 1;
            memcpy(d->value[i], v, strlen(v) + 1);
        }
    }
    return d;
}

typedef struct label_visit {
    const char *key;
    char *value;
    int found;
} label_visit;

static void visit_label(json_object *obj, void *data)
{
    label_visit *lv = data;
    const char *v = labels_get(obj, lv->key);

    if (v && strlen(v) < TG_LABEL_VALUE_MAX) {
        memcpy(lv->value, v, strlen(v) + 1);
        lv->found = 1;
    }
}

typedef struct ns_digest_visit {
    int key;                       /* index into ns_digest_keys, or -1: a label the digest
                                    * does not hold (absent: only the text had it) */
    char *value;
    int found, digested;
} ns_digest_visit;

static void visit_ns_digest(const void *digest, void *data)
{
    const ns_digest *d = digest;
    ns_digest_visit *v = data;

    if (!d)
        return;                    /* out of memory when it was stored: read the object */
    v->digested = 1;
    if (v->key >= 0 && d->has[v->key]) {
        memcpy(v->value, d->value[v->key], strlen(d->value[v->key]) + 1);
        v->found = 1;
    }
}

int tg_ns_digest_label(tg_cache *c, const char *ns, const char *key, char value[TG_LABEL_VALUE_MAX], int *ns_exists)
{
    label_visit lv = {.key = key, .value = value};
    ns_digest_visit dv = {.key = -1, .value = value};

    for (int i = 0; i < 2; i++)
        if (strcmp(key, ns_digest_keys[i]) == 0)
            dv.key = i;
    /* A Namespace with a digest kept nothing else (digest only,
     * kube_lookup.c): a label outside the digest reads as absent, and
     * placement.c asks for none. */
    *ns_exists = tg_cache_get_digest(c, NULL, ns, visit_ns_digest, &dv);
    if (!*ns_exists || dv.digested)
        return dv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
    /* Stored without a digest (out of memory then): it kept its text. */
    tg_cache_get(c, NULL, ns, visit_label, &lv);
    return lv.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}

