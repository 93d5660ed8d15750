/* kube_slice_policy.c - the slice policy ConfigMap behind lookup.h's
 * slice_tenant_policy: one informer on that one object (field selector on
 * its name, in its namespace: the install namespace, which only the
 * provider's admin writes), keeping its data and nothing else. An entry is
 * copied out per admission; pki/slice_tenant_policy.c judges it. */
#include "kube_lookup_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/json.h"
#include "pki/slice_tenant_policy.h"

/* The per-class keys are the signer's; the webhook reads the consumers'. */
static const char *const keep_data[] = {"data", NULL};

int tg_kube_lookup_watch_slice_policy(tg_kube_lookup *kl, const char *ns, const char *name, char *err,
                                      size_t err_len)
{
    char path[sizeof(kl->slice_policy_ns) + 64], field[sizeof(kl->slice_policy_name) + 32];
    tg_informer_opts opts = {.path = path, .field_selector = field, .keep_fields = keep_data, .compact = 1};

    if (strlen(ns) >= sizeof(kl->slice_policy_ns) || strlen(name) >= sizeof(kl->slice_policy_name)) {
        snprintf(err, err_len, "slice policy ConfigMap name too long");
        return -1;
    }
    snprintf(kl->slice_policy_ns, sizeof(kl->slice_policy_ns), "%s", ns);
    snprintf(kl->slice_policy_name, sizeof(kl->slice_policy_name), "%s", name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    snprintf(field, sizeof(field), "metadata.name=%s", name);
    if (!(kl->slice_policy = tg_informer_new(kl->client, &opts, err, err_len)))
        return -1;
    if (tg_informer_start(kl->slice_policy, err, err_len) != 0) {
        tg_informer_free(kl->slice_policy);
        kl->slice_policy = NULL;
        return -1;
    }
    tg_log(TG_LOG_INFO, "watching the slice policy ConfigMap", TG_LOG_STR("namespace", ns),
           TG_LOG_STR("name", name));
    return 0;
}

typedef struct entry_visit {
    const char *key;
    char *entry;
    int found, oom;
} entry_visit;

static void visit_entry(json_object *cm, void *data)
{
    entry_visit *ev = data;
    const char *text = tg_json_path_string(cm, "data", ev->key, NULL);

    if (!text || ev->found)
        return;
    ev->found = 1;
    ev->oom = !(ev->entry = strdup(text));
}

int tg_kube_slice_tenant_policy(const tg_lookup *lk, const char *cluster_id, char **entry)
{
    tg_kube_lookup *kl = lk->data;
    char key[sizeof(TG_TENANT_POLICY_KEY_PREFIX) + 64];
    entry_visit ev = {.key = key};

    *entry = NULL;
    /* a consumer id is at most 63 characters: a longer one has no entry */
    if (!kl->slice_policy || tg_tenant_policy_key(cluster_id, key, sizeof(key)) != 0)
        return TG_LOOKUP_NOT_FOUND;
    tg_cache_get(tg_informer_cache(kl->slice_policy), kl->slice_policy_ns, kl->slice_policy_name, visit_entry, &ev);
    if (ev.oom)
        return TG_LOOKUP_ERROR;
    *entry = ev.entry;
    return ev.found ? TG_LOOKUP_FOUND : TG_LOOKUP_NOT_FOUND;
}
