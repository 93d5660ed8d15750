/* clusterid.c - the cluster id ConfigMap: its LIST, its decoding, its object. */
#include "kube/clusterid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/errbuf.h"
#include "kube/json.h"
#include "pki/tenant.h"

/* Values echoed in messages come from the cluster: cap them. */
#define SHOWN 64

int tg_cluster_id_list_path(char *buf, size_t len, const char *ns)
{
    char *sel = tg_kube_escape(TG_CLUSTERID_LABEL "=" TG_CLUSTERID_LABEL_VALUE);
    int n;

    if (sel == NULL)
        return -1;
    n = snprintf(buf, len, "/api/v1/namespaces/%s/configmaps?labelSelector=%s", ns, sel);
    free(sel);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

tg_cluster_id_result tg_cluster_id_from_list(json_object *list, const char *ns,
                                             char id[TG_CLUSTERID_MAX + 1], char *why, size_t why_len)
{
    json_object *items = tg_json_path(list, "items", NULL);
    size_t n = 0;
    json_object *cm;
    const char *name, *value;

    id[0] = '\0';
    if (items != NULL && json_object_is_type(items, json_type_array))
        n = json_object_array_length(items);
    if (n == 0) {
        tg_errf(why, why_len, "no ConfigMap labelled %s=%s in namespace %s", TG_CLUSTERID_LABEL,
                TG_CLUSTERID_LABEL_VALUE, ns);
        return TG_CLUSTER_ID_NONE;
    }
    if (n > 1) {
        tg_errf(why, why_len, "%zu ConfigMaps labelled %s=%s in namespace %s: expected one", n,
                TG_CLUSTERID_LABEL, TG_CLUSTERID_LABEL_VALUE, ns);
        return TG_CLUSTER_ID_BAD;
    }
    cm = json_object_array_get_idx(items, 0);
    name = tg_json_path_string(cm, "metadata", "name", NULL);
    value = tg_json_path_string(cm, "data", TG_CLUSTERID_KEY, NULL);
    if (value == NULL) {
        tg_errf(why, why_len, "ConfigMap %s/%.*s has no data.%s", ns, SHOWN, name ? name : "?",
                TG_CLUSTERID_KEY);
        return TG_CLUSTER_ID_BAD;
    }
    if (!tg_cluster_id_valid(value)) {
        tg_errf(why, why_len, "ConfigMap %s/%.*s: data.%s is not a cluster id (at most 63 "
                "characters of [a-z0-9-], starting and ending alphanumeric): \"%.*s\"", ns, SHOWN,
                name ? name : "?", TG_CLUSTERID_KEY, SHOWN, value);
        return TG_CLUSTER_ID_BAD;
    }
    snprintf(id, TG_CLUSTERID_MAX + 1, "%s", value);
    return TG_CLUSTER_ID_FOUND;
}

tg_cluster_id_result tg_cluster_id_discover(tg_kube_client *c, const char *ns,
                                            char id[TG_CLUSTERID_MAX + 1], long *status, char *why,
                                            size_t why_len)
{
    char path[512], terr[256];
    tg_kube_request_opts opts = {.path = path};
    char *body = NULL;
    size_t body_len = 0;
    json_object *list;
    tg_cluster_id_result r;

    id[0] = '\0';
    *status = -1;
    if (tg_cluster_id_list_path(path, sizeof(path), ns) != 0) {
        tg_errf(why, why_len, "namespace name too long");
        return TG_CLUSTER_ID_API_ERROR;
    }
    *status = tg_kube_request_sync(c, &opts, &body, &body_len, terr, sizeof(terr));
    if (*status != 200) {
        if (*status < 0)
            tg_errf(why, why_len, "cannot list ConfigMaps in namespace %s: %s", ns, terr);
        else
            tg_errf(why, why_len, "cannot list ConfigMaps in namespace %s: HTTP %ld", ns, *status);
        free(body);
        return TG_CLUSTER_ID_API_ERROR;
    }
    list = tg_json_parse(body, body_len, terr, sizeof(terr));
    free(body);
    if (list == NULL) {
        tg_errf(why, why_len, "the ConfigMap list of namespace %s is not JSON: %s", ns, terr);
        return TG_CLUSTER_ID_API_ERROR;
    }
    r = tg_cluster_id_from_list(list, ns, id, why, why_len);
    json_object_put(list);
    return r;
}

json_object *tg_cluster_id_configmap(const char *ns, const char *id)
{
    json_object *cm = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object(), *data = json_object_new_object();

    if (cm == NULL || meta == NULL || labels == NULL || data == NULL) {
        json_object_put(cm);
        json_object_put(meta);
        json_object_put(labels);
        json_object_put(data);
        return NULL;
    }
    json_object_object_add(cm, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(cm, "kind", json_object_new_string("ConfigMap"));
    json_object_object_add(meta, "name", json_object_new_string(TG_CLUSTERID_CONFIGMAP));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(labels, TG_CLUSTERID_LABEL, json_object_new_string(TG_CLUSTERID_LABEL_VALUE));
    json_object_object_add(labels, TG_CLUSTERID_COMPONENT_LABEL,
                           json_object_new_string(TG_CLUSTERID_LABEL_VALUE));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(cm, "metadata", meta);
    json_object_object_add(data, TG_CLUSTERID_KEY, json_object_new_string(id));
    json_object_object_add(cm, "data", data);
    return cm;
}
