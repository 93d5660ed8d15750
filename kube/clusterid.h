/* clusterid.h - a cluster's own id, kept the way Liqo keeps it (PROTOCOL.md 3):
 * the one ConfigMap in the install namespace labelled
 * app.kubernetes.io/name=clusterid-configmap, data key CLUSTER_ID. liqoctl
 * and Liqo's controllers find it by that label, so tenantgate's CLI and
 * signer do too, and `kubectl tenantgate install` writes it where Liqo is not
 * installed.
 *
 * The decoding and the object are pure (unit-tested); tg_cluster_id_discover
 * is the lookup over an API client. */
#ifndef TG_KUBE_CLUSTERID_H
#define TG_KUBE_CLUSTERID_H

#include <stddef.h>
#include <json-c/json.h>

#include "kube/client.h"

#define TG_CLUSTERID_LABEL "app.kubernetes.io/name"
#define TG_CLUSTERID_LABEL_VALUE "clusterid-configmap"
#define TG_CLUSTERID_COMPONENT_LABEL "app.kubernetes.io/component"
#define TG_CLUSTERID_KEY "CLUSTER_ID"
#define TG_CLUSTERID_CONFIGMAP "liqo-clusterid-configmap"   /* the name Liqo's chart gives it */
#define TG_CLUSTERID_DEFAULT_NAMESPACE "liqo"
#define TG_CLUSTERID_MAX 63

typedef enum tg_cluster_id_result {
    TG_CLUSTER_ID_FOUND = 0,
    TG_CLUSTER_ID_NONE,         /* no labelled ConfigMap in the namespace */
    TG_CLUSTER_ID_BAD,          /* several, no CLUSTER_ID, or not a valid cluster id */
    TG_CLUSTER_ID_API_ERROR,    /* the LIST failed: *status (-1: no answer) and why */
} tg_cluster_id_result;

/* "/api/v1/namespaces/<ns>/configmaps?labelSelector=..." into buf; -1 when
 * it does not fit. */
int tg_cluster_id_list_path(char *buf, size_t len, const char *ns);

/* The id in a ConfigMapList (the LIST answer for ns): FOUND with id, else
 * NONE or BAD with why (one line naming the namespace and what was found). */
tg_cluster_id_result tg_cluster_id_from_list(json_object *list, const char *ns,
                                             char id[TG_CLUSTERID_MAX + 1], char *why, size_t why_len);

/* The whole lookup, synchronously on c's loop (tg_kube_request_sync): use it
 * before the loop runs other work, or from a CLI. *status gets the HTTP
 * status of the LIST (-1 when none arrived). */
tg_cluster_id_result tg_cluster_id_discover(tg_kube_client *c, const char *ns,
                                            char id[TG_CLUSTERID_MAX + 1], long *status, char *why,
                                            size_t why_len);

/* The ConfigMap `install` creates: liqo-clusterid-configmap in ns with both
 * labels Liqo's chart sets and data CLUSTER_ID=id. A new reference, or NULL. */
json_object *tg_cluster_id_configmap(const char *ns, const char *id);

#endif
