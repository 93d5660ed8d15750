/* flow_unpeer.c - the cluster side of the force paths (unpeer.h): find the
 * peering's tenant namespace, and delete it with what it holds, taking off
 * the finalizers that wait for a cluster that is gone. */
#include "unpeer.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

int cli_unpeer_delete(cli_flow *f, cli_cluster *c, const cli_api_call *call, const char *path, int *existed)
{
    char terr[256], *raw = NULL;
    long st = cli_cluster_call(c, "DELETE", path, NULL, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    int rc = 0;

    *existed = st == 200 || st == 202;
    if (!*existed && !(st == 404 && !cli_api_type_missing(st, raw)))
        rc = cli_flow_api_fail(f, c, call, st, raw, terr);
    free(raw);
    return rc;
}

int cli_unpeer_tenant_ns(cli_flow *f, cli_cluster *c, const char *id, char *ns, size_t ns_len, int *found)
{
    cli_api_call call = { .verb = "get", .resource = "namespaces", .group = "" };
    char path[256], terr[256], *raw = NULL;
    json_object *doc = NULL;
    long st;
    int rc = 0;

    *found = 0;
    if (cli_tenant_namespace_name(ns, ns_len, id) != 0)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "cluster id %s too long for a namespace name", id);
    call.name = ns;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st == 200 && cli_unpeer_namespace_is_tenant(doc, id))
        *found = 1;
    else if (st == 200)
        rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "namespace %s is not labelled as the tenant "
                           "namespace of %s (expected %s=true, %s=%s): left alone", ns, id,
                           CLI_LABEL_TENANT_NS, CLI_LABEL_REMOTE_ID, id);
    else if (st != 404)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(doc);
    free(raw);
    return rc;
}

/* Take fins off obj; a conflict (the object changed) is looked at again on
 * the next pass. */
static int strip(cli_flow *f, cli_cluster *c, const cli_api_call *call, const char *path, json_object *obj,
                 const char *const *fins, int *stripped)
{
    json_object *patch = cli_unpeer_strip_patch(obj, fins);
    char terr[256], *raw = NULL;
    long st;
    int rc = 0;

    if (patch == NULL)
        return 0;
    st = cli_cluster_call(c, "PATCH", path, patch, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr, sizeof(terr));
    if (st == 200)
        (*stripped)++;
    else if (st != 404 && st != 409)
        rc = cli_flow_api_fail(f, c, call, st, raw, terr);
    json_object_put(patch);
    free(raw);
    return rc;
}

/* One look at kind in ns: delete each object not yet being deleted, take
 * fins off each; *left += how many were there. A kind not served: none. */
static int pass_kind(cli_flow *f, cli_cluster *c, const cli_unpeer_kind *k, const char *ns,
                     const char *const *fins, int *left, int *stripped)
{
    cli_api_call call = { .verb = "list", .resource = k->resource, .namespace_ = ns,
                          .group = strcmp(k->api, "/api/v1") == 0 ? "" : k->api + 6 };
    char path[512], terr[256], *raw = NULL;
    json_object *doc = NULL, *items;
    long st;
    int rc = 0, existed;

    snprintf(path, sizeof(path), "%s/namespaces/%s/%s", k->api, ns, k->resource);
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st != 200 || doc == NULL) {
        rc = cli_api_type_missing(st, raw) ? 0 : cli_flow_api_fail(f, c, &call, st, raw, terr);
        goto out;
    }
    items = tg_json_path(doc, "items", NULL);
    for (size_t i = 0; rc == 0 && items != NULL && i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(it, "metadata", "name", NULL);

        if (name == NULL)
            continue;
        (*left)++;
        call.name = name;
        snprintf(path, sizeof(path), "%s/namespaces/%s/%s/%s", k->api, ns, k->resource, name);
        call.verb = "delete";
        if (tg_json_path(it, "metadata", "deletionTimestamp", NULL) == NULL &&
            (rc = cli_unpeer_delete(f, c, &call, path, &existed)) != 0)
            break;
        call.verb = "patch";
        rc = strip(f, c, &call, path, it, fins, stripped);
    }
out:
    json_object_put(doc);
    free(raw);
    return rc;
}

/* A namespace already being deleted answers 409 (its content is being
 * removed): that is what was asked. */
static int delete_namespace(cli_flow *f, cli_cluster *c, const cli_api_call *call, const char *path)
{
    char terr[256], *raw = NULL;
    long st = cli_cluster_call(c, "DELETE", path, NULL, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    int rc = 0;

    if (st != 200 && st != 202 && st != 404 && st != 409)
        rc = cli_flow_api_fail(f, c, call, st, raw, terr);
    free(raw);
    return rc;
}

int cli_unpeer_clear_namespace(cli_flow *f, cli_cluster *c, const char *ns, const cli_unpeer_kind *kinds,
                               const char *const *fins, int *stripped)
{
    cli_api_call call = { .verb = "delete", .resource = "namespaces", .group = "", .name = ns };
    char path[256], terr[256];
    long st;
    int rc, left, asked = 0;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    for (;;) {
        left = 0;
        /* The objects first, so that their controllers see them go, then
         * the namespace; what a finalizer keeps is looked at again. */
        for (const cli_unpeer_kind *k = kinds; k->resource != NULL; k++)
            if ((rc = pass_kind(f, c, k, ns, fins, &left, stripped)) != 0)
                return rc;
        if (!asked && (rc = delete_namespace(f, c, &call, path)) != 0)
            return rc;
        asked = 1;
        st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, NULL, NULL, terr, sizeof(terr));
        if (st == 404)
            return 0;
        if ((rc = cli_flow_poll_again(f, c, "namespace %s to be gone (%d object(s) left in it; "
                                      "kubectl get all,resourceslices,identities,renews -n %s)",
                                      ns, left, ns)) != 0)
            return rc;
    }
}
