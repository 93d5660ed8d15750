/* flow_namespace.c - the steps that find what a cluster serves and the tenant
 * namespace of a peer (PROTOCOL.md 3): the CRDs are there, the namespace is
 * found by its labels or created. */
#include "online.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

int cli_require_resources(cli_flow *f, cli_cluster *c, const char *resources)
{
    cli_api_call call = { .verb = "get", .resource = "resources", .group = CLI_AUTH_GROUP };
    char terr[256], want[256];
    json_object *doc = NULL, *list;
    char *raw = NULL;
    long st = cli_cluster_call(c, "GET", CLI_AUTH_API, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr,
                               sizeof(terr));
    int rc = 0;

    if (st == 404) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED,
                           "the API server %s does not serve %s/v1beta1: the tenantgate "
                           "CustomResourceDefinitions (%s) are not installed "
                           "(kubectl apply -k manifests/crds)", c->cfg.server, CLI_AUTH_GROUP, resources);
        goto out;
    }
    if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        goto out;
    }
    list = tg_json_path(doc, "resources", NULL);
    snprintf(want, sizeof(want), "%s", resources);
    for (char *save = NULL, *r = strtok_r(want, ",", &save); r != NULL; r = strtok_r(NULL, ",", &save)) {
        int found = 0;

        for (size_t i = 0; list != NULL && i < json_object_array_length(list); i++) {
            const char *name = tg_json_string(json_object_array_get_idx(list, i), "name");

            if (name != NULL && strcmp(name, r) == 0)
                found = 1;
        }
        if (!found) {
            rc = cli_flow_fail(f, c, TG_EXIT_REJECTED,
                               "the API server %s does not serve %s.%s: its "
                               "CustomResourceDefinition is not installed "
                               "(kubectl apply -k manifests/crds)", c->cfg.server, r, CLI_AUTH_GROUP);
            goto out;
        }
    }
out:
    json_object_put(doc);
    free(raw);
    return rc;
}

int cli_find_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, int missing_ok,
                              char *ns, size_t ns_len)
{
    cli_api_call call = { .verb = "list", .resource = "namespaces", .group = "" };
    char sel[256], path[512], terr[256], conventional[128];
    char *esc, *raw = NULL;
    json_object *doc = NULL, *items;
    const char *found = NULL;
    size_t live = 0;
    long st;
    int rc = 0;

    snprintf(sel, sizeof(sel), CLI_LABEL_TENANT_NS "=true," CLI_LABEL_REMOTE_ID "=%s", remote_id);
    esc = tg_kube_escape(sel);
    if (esc == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    snprintf(path, sizeof(path), "/api/v1/namespaces?labelSelector=%s", esc);
    free(esc);
    cli_tenant_namespace_name(conventional, sizeof(conventional), remote_id);
    ns[0] = '\0';
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st != 200 || doc == NULL) {
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        goto out;
    }
    items = tg_json_path(doc, "items", NULL);
    for (size_t i = 0; items != NULL && i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(it, "metadata", "name", NULL);

        /* A namespace being deleted is no home for new objects. */
        if (name == NULL || tg_json_path(it, "metadata", "deletionTimestamp", NULL) != NULL)
            continue;
        live++;
        if (found == NULL || strcmp(name, conventional) == 0)
            found = name;
    }
    if (live > 1 && strcmp(found, conventional) != 0) {
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "%zu namespaces carry the tenant labels of "
                           "cluster %s; keep one (kubectl get ns -l '%s')", live, remote_id, sel);
        goto out;
    }
    if (found != NULL)
        snprintf(ns, ns_len, "%s", found);
    else if (!missing_ok)
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "no tenant namespace for cluster %s (no "
                           "namespace labelled %s)", remote_id, sel);
out:
    json_object_put(doc);
    free(raw);
    return rc;
}

/* 1 when namespace name exists and is being deleted. */
static int namespace_terminating(cli_cluster *c, const char *name)
{
    char path[256], terr[256];
    json_object *doc = NULL;
    int terminating;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", name);
    terminating = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr, sizeof(terr)) == 200 &&
                  tg_json_path(doc, "metadata", "deletionTimestamp", NULL) != NULL;
    json_object_put(doc);
    return terminating;
}

int cli_ensure_tenant_namespace(cli_flow *f, cli_cluster *c, const char *remote_id, char *ns,
                                size_t ns_len)
{
    cli_api_call call = { .verb = "create", .resource = "namespaces", .group = "" };
    char terr[256], path[256];
    json_object *obj;
    char *raw = NULL;
    long st;
    int rc = cli_find_tenant_namespace(f, c, remote_id, 1, ns, ns_len);

    if (rc != 0 || ns[0] != '\0')
        return rc;
    obj = cli_tenant_namespace_object(remote_id);
    if (obj == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "out of memory");
    cli_tenant_namespace_name(ns, ns_len, remote_id);
    call.name = ns;
    while ((st = cli_cluster_call(c, "POST", "/api/v1/namespaces", obj, TG_KUBE_CT_JSON, NULL, &raw, terr,
                                  sizeof(terr))) == 409 && namespace_terminating(c, ns)) {
        /* The last peering's namespace is still going: nothing can be made
         * in it, and a new one can be made only once it is gone. */
        free(raw);
        raw = NULL;
        if ((rc = cli_flow_poll_again(f, c, "namespace %s to finish terminating (the last peering's)",
                                      ns)) != 0) {
            json_object_put(obj);
            return rc;
        }
    }
    if (st == 409) {
        /* It exists without the labels: label it, as the flow finds it by them. */
        json_object *patch = json_object_new_object(), *meta = json_object_new_object();

        free(raw);
        raw = NULL;
        json_object_object_add(meta, "labels",
                               json_object_get(tg_json_path(obj, "metadata", "labels", NULL)));
        json_object_object_add(patch, "metadata", meta);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
        call.verb = "patch";
        st = cli_cluster_call(c, "PATCH", path, patch, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr,
                              sizeof(terr));
        json_object_put(patch);
    }
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}
