/* clusterid.c - a cluster's own id from its clusterid ConfigMap (PROTOCOL.md 3),
 * as liqoctl finds it, and the step that writes that ConfigMap for `install`. */
#include "online.h"

#include <stdlib.h>
#include <string.h>

#include "kube/clusterid.h"

/* LIST the clusterid ConfigMaps of ns and decode the answer into *r, id and
 * why. 0, or the exit code after reporting a failed call (*r is then
 * TG_CLUSTER_ID_API_ERROR: every path sets it). */
static int list_ids(cli_flow *f, cli_cluster *c, const char *ns, tg_cluster_id_result *r,
                    char id[TG_CLUSTERID_MAX + 1], char *why, size_t why_len)
{
    cli_api_call call = { .verb = "list", .resource = "configmaps", .group = "", .namespace_ = ns };
    char path[512], terr[256];
    json_object *doc = NULL;
    char *raw = NULL;
    long st;
    int rc = 0;

    *r = TG_CLUSTER_ID_API_ERROR;
    if (tg_cluster_id_list_path(path, sizeof(path), ns) != 0)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "namespace name too long: %.64s", ns);
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st != 200 || doc == NULL)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    else
        *r = tg_cluster_id_from_list(doc, ns, id, why, why_len);
    json_object_put(doc);
    free(raw);
    return rc;
}

int cli_discover_cluster_id(cli_flow *f, cli_cluster *c, const char *ns, const char *flag,
                            char id[TG_CLUSTERID_MAX + 1])
{
    char why[512];
    tg_cluster_id_result r;
    int rc = list_ids(f, c, ns, &r, id, why, sizeof(why));

    if (rc != 0 || r == TG_CLUSTER_ID_FOUND)
        return rc;
    if (r == TG_CLUSTER_ID_NONE)
        /* Neither the flag nor the ConfigMap: the person must say which id. */
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "no cluster id: %s was not given and there is %s; "
                             "pass %s, or record the id once with `" TG_CLI_NAME " install "
                             "--cluster-id ID`", flag, why, flag);
    return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no cluster id: %s was not given and %s", flag, why);
}

/* Create namespace ns unless it exists. */
static int ensure_namespace(cli_flow *f, cli_cluster *c, const char *ns)
{
    cli_api_call call = { .verb = "create", .resource = "namespaces", .group = "", .name = ns };
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();
    char terr[256];
    char *raw = NULL;
    long st;
    int rc = 0;

    json_object_object_add(obj, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(obj, "kind", json_object_new_string("Namespace"));
    json_object_object_add(meta, "name", json_object_new_string(ns));
    json_object_object_add(obj, "metadata", meta);
    st = cli_cluster_call(c, "POST", "/api/v1/namespaces", obj, TG_KUBE_CT_JSON, NULL, &raw, terr,
                          sizeof(terr));
    if (st == 201)
        cli_flow_step(f, c->scope, "Namespace created");
    else if (st != 409)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}

int cli_install_cluster_id(cli_flow *f, cli_cluster *c, const char *ns, const char *id)
{
    cli_api_call call = { .verb = "create", .resource = "configmaps", .group = "", .namespace_ = ns,
                          .name = TG_CLUSTERID_CONFIGMAP };
    char path[512], terr[256], why[512], have[TG_CLUSTERID_MAX + 1];
    json_object *cm;
    tg_cluster_id_result r;
    char *raw = NULL;
    long st;
    int rc;

    if ((rc = ensure_namespace(f, c, ns)) != 0 ||
        (rc = list_ids(f, c, ns, &r, have, why, sizeof(why))) != 0)
        return rc;
    if (r == TG_CLUSTER_ID_FOUND && strcmp(have, id) == 0) {
        /* Idempotent for the same id. */
        cli_flow_step(f, c->scope, "Cluster id already recorded");
        return 0;
    }
    if (r == TG_CLUSTER_ID_FOUND)
        /* A cluster's id never changes under its peers. */
        return cli_flow_fail(f, c, TG_EXIT_REJECTED, "this cluster's id is already %s (ConfigMap "
                             "labelled %s=%s in namespace %s); refusing to change it to %s: its "
                             "peers know it by the old one", have, TG_CLUSTERID_LABEL,
                             TG_CLUSTERID_LABEL_VALUE, ns, id);
    if (r == TG_CLUSTER_ID_BAD)
        return cli_flow_fail(f, c, TG_EXIT_REJECTED, "refusing to add another cluster id: %s", why);
    if ((cm = tg_cluster_id_configmap(ns, id)) == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    st = cli_cluster_call(c, "POST", path, cm, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    if (st == 201)
        cli_flow_step(f, c->scope, "Cluster id ConfigMap created");
    else if (st == 409)
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "ConfigMap %s/%s exists without the label %s=%s; "
                           "refusing to overwrite it (look at it, then label it or delete it)", ns,
                           TG_CLUSTERID_CONFIGMAP, TG_CLUSTERID_LABEL, TG_CLUSTERID_LABEL_VALUE);
    else
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(cm);
    free(raw);
    return rc;
}
