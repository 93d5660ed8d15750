/* flow_objects.c - the steps on authentication.liqo.io objects: apply
 * (server-side), wait for a Tenant's, an Identity's or a ResourceSlice's
 * status, delete, count the ResourceSlices left. */
#include "online.h"
#include "slice.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

/* /apis/authentication.liqo.io/v1beta1/namespaces/NS/RESOURCE[/NAME] */
static void auth_path(char *buf, size_t len, const char *resource, const char *ns, const char *name)
{
    snprintf(buf, len, CLI_AUTH_API "/namespaces/%s/%s%s%s", ns, resource, name ? "/" : "",
             name ? name : "");
}

/* GET an authentication.liqo.io object, or the collection when name is NULL:
 * status, *doc parsed (when doc is not NULL; caller puts), *raw the body
 * (caller frees). */
static long get_auth_object(cli_cluster *c, const char *resource, const char *ns, const char *name,
                            json_object **doc, char **raw, char *terr, size_t terr_len)
{
    char path[512];

    auth_path(path, sizeof(path), resource, ns, name);
    return cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, doc, raw, terr, terr_len);
}

int cli_apply(cli_flow *f, cli_cluster *c, const char *resource, json_object *obj, long *generation)
{
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    cli_api_call call = { .verb = "patch", .resource = resource, .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = name };
    char path[512], terr[256];
    json_object *doc = NULL, *g;
    char *raw = NULL;
    long st;
    int rc = 0;

    if (ns == NULL || name == NULL)
        return cli_flow_fail(f, c, TG_EXIT_USAGE, "the %s has no metadata.name or namespace", resource);
    auth_path(path, sizeof(path), resource, ns, name);
    strncat(path, "?fieldManager=" CLI_FIELD_MANAGER "&force=true", sizeof(path) - strlen(path) - 1);
    st = cli_cluster_call(c, "PATCH", path, obj, TG_KUBE_CT_APPLY, &doc, &raw, terr, sizeof(terr));
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    else if (generation != NULL)
        *generation = json_object_object_get_ex(doc, "metadata", &g) &&
                              json_object_object_get_ex(g, "generation", &g)
                          ? (long)json_object_get_int64(g)
                          : 0;
    json_object_put(doc);
    free(raw);
    return rc;
}

/* 1 when tenantgate-signer refused this version of the Tenant (its Event);
 * an unreadable event list (no rights, say) counts as no refusal. */
static int tenant_refused(cli_cluster *c, json_object *tenant, char *why, size_t why_len)
{
    const char *ns = tg_json_path_string(tenant, "metadata", "namespace", NULL);
    const char *uid = tg_json_path_string(tenant, "metadata", "uid", NULL);
    char path[512], terr[256];
    json_object *events = NULL;
    char *raw = NULL;
    int refused = 0;

    if (ns == NULL || uid == NULL)
        return 0;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.uid%%3D%s", ns, uid);
    if (cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &events, &raw, terr, sizeof(terr)) == 200)
        refused = cli_tenant_refusal(tenant, events, why, why_len);
    json_object_put(events);
    free(raw);
    return refused;
}

int cli_wait_tenant(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                    int wait, json_object **out)
{
    cli_api_call call = { .verb = "get", .resource = "tenants", .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = name };
    char terr[256], why[1024];
    int rc;

    *out = NULL;
    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_auth_object(c, "tenants", ns, name, &doc, &raw, terr, sizeof(terr));
        int notfound = st == 404 && !cli_api_type_missing(st, raw);

        rc = CLI_NOT_YET;
        if (st == 200 && doc != NULL) {
            if (cli_tenant_status(doc) == CLI_TENANT_READY) {
                *out = doc;             /* handed over, not put below */
                doc = NULL;
                rc = 0;
            } else if (tenant_refused(c, doc, why, sizeof(why))) {
                rc = cli_flow_fail(f, c, TG_EXIT_REJECTED, "Tenant %s/%s was not authenticated "
                                   "by tenantgate-signer: %s", ns, name, why);
            }
        } else if (!notfound) {
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        }
        json_object_put(doc);
        free(raw);
        if (rc != CLI_NOT_YET)
            return rc;
        if (notfound && !wait)
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "no Tenant %s in namespace %s: apply the "
                                 "consumer's Tenant first (kubectl apply -f tenant.yaml)", name, ns);
        if (notfound)
            rc = cli_flow_poll_again(f, c, "Tenant %s in namespace %s to exist (apply the consumer's "
                            "Tenant first: kubectl apply -f tenant.yaml)", name, ns);
        else
            rc = cli_flow_poll_again(f, c, "tenantgate-signer (tenant, approver and signer controllers) "
                            "to fill status.authParams of Tenant %s/%s (is the signer running on "
                            "this cluster? a CSR still pending: kubectl get csr)", ns, name);
        if (rc != 0)
            return rc;
    }
}

/* What a wait looks for in the object: 1 when it is there (done), 0 not yet. */
typedef int (*object_look)(json_object *doc, void *ctx);

/* GET ns/name of resource until look says done; what names what is awaited
 * in the timeout message. */
static int wait_object(cli_flow *f, cli_cluster *c, const char *resource, const char *ns, const char *name,
                       object_look look, void *ctx, const char *what)
{
    cli_api_call call = { .verb = "get", .resource = resource, .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = name };
    char terr[256];
    int rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_auth_object(c, resource, ns, name, &doc, &raw, terr, sizeof(terr));

        rc = CLI_NOT_YET;
        if (st != 200)
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        else if (doc != NULL && look(doc, ctx))
            rc = 0;
        json_object_put(doc);
        free(raw);
        if (rc != CLI_NOT_YET)
            return rc;
        if ((rc = cli_flow_poll_again(f, c, "%s", what)) != 0)
            return rc;
    }
}

typedef struct secret_ref {
    char *secret;
    size_t len;
} secret_ref;

static int look_secret_ref(json_object *doc, void *ctx)
{
    secret_ref *r = ctx;
    const char *ref = tg_json_path_string(doc, "status", "kubeconfigSecretRef", "name", NULL);

    if (ref == NULL || *ref == '\0')
        return 0;
    snprintf(r->secret, r->len, "%s", ref);
    return 1;
}

int cli_wait_identity(cli_flow *f, cli_cluster *c, const char *ns, const char *name,
                      char *secret, size_t secret_len)
{
    secret_ref r = { secret, secret_len };
    char what[512];

    snprintf(what, sizeof(what), "tenantgate-signer (identity controller) to fill "
             "status.kubeconfigSecretRef of Identity %s/%s (is the signer running on this cluster?)",
             ns, name);
    return wait_object(f, c, "identities", ns, name, look_secret_ref, &r, what);
}

typedef struct slice_look {
    const char *type;
    char *why;
    size_t why_len;
    int *denied;
} slice_look;

static int look_slice(json_object *doc, void *ctx)
{
    slice_look *l = ctx;
    cli_slice_state s = cli_slice_condition(doc, l->type, l->why, l->why_len);

    *l->denied = s == CLI_SLICE_DENIED;
    return s != CLI_SLICE_PENDING;
}

int cli_wait_slice(cli_flow *f, cli_cluster *c, const char *ns, const char *name, const char *type,
                   char *why, size_t why_len, int *denied)
{
    slice_look l = { type, why, why_len, denied };
    char what[512];

    *denied = 0;
    snprintf(what, sizeof(what), "the provider's verdict on ResourceSlice %s/%s (condition %s; are "
             "tenantgate-signer and the replication running?)", ns, name, type);
    return wait_object(f, c, "resourceslices", ns, name, look_slice, &l, what);
}

int cli_wait_not_terminating(cli_flow *f, cli_cluster *c, const char *resource, const char *ns,
                             const char *name)
{
    cli_api_call call = { .verb = "get", .resource = resource, .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = name };
    char terr[256];
    int rc;

    for (;;) {
        json_object *doc = NULL;
        char *raw = NULL;
        long st = get_auth_object(c, resource, ns, name, &doc, &raw, terr, sizeof(terr));

        rc = CLI_NOT_YET;
        if (st == 404 || (st == 200 && doc != NULL && !tg_json_path(doc, "metadata", "deletionTimestamp", NULL)))
            rc = 0;
        else if (st != 200)
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        json_object_put(doc);
        free(raw);
        if (rc != CLI_NOT_YET)
            return rc;
        if ((rc = cli_flow_poll_again(f, c, "%s %s/%s to finish terminating (the last peering's; its "
                                      "finalizer is removed by tenantgate-signer: is it running?)",
                                      resource, ns, name)) != 0)
            return rc;
    }
}

int cli_delete(cli_flow *f, cli_cluster *c, const char *resource, const char *ns, const char *name,
               int how, int *existed)
{
    cli_api_call call = { .verb = "delete", .resource = resource, .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = name };
    json_object *opts = NULL;
    char path[512], terr[256];
    char *raw = NULL;
    long st;
    int rc = 0;

    auth_path(path, sizeof(path), resource, ns, name);
    if (how & CLI_DELETE_DEPENDENTS_FIRST) {
        opts = json_object_new_object();
        json_object_object_add(opts, "propagationPolicy", json_object_new_string("Foreground"));
    }
    st = cli_cluster_call(c, "DELETE", path, opts, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    json_object_put(opts);
    *existed = st == 200 || st == 202;
    if (!*existed && !(st == 404 && !cli_api_type_missing(st, raw)))
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    free(raw);
    if (rc != 0 || !*existed || !(how & CLI_DELETE_WAIT))
        return rc;
    call.verb = "get";
    for (;;) {
        raw = NULL;
        st = get_auth_object(c, resource, ns, name, NULL, &raw, terr, sizeof(terr));
        rc = CLI_NOT_YET;
        if (st == 404)
            rc = 0;
        else if (st != 200)
            rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
        free(raw);
        if (rc != CLI_NOT_YET)
            return rc;
        if ((rc = cli_flow_poll_again(f, c, "%s %s/%s to be gone (its finalizer is removed by "
                             "tenantgate-signer: is it running?)", resource, ns, name)) != 0)
            return rc;
    }
}

int cli_count_resourceslices(cli_flow *f, cli_cluster *c, const char *ns, int *count)
{
    cli_api_call call = { .verb = "list", .resource = "resourceslices", .group = CLI_AUTH_GROUP,
                          .namespace_ = ns };
    char terr[256];
    json_object *doc = NULL, *items;
    char *raw = NULL;
    long st = get_auth_object(c, "resourceslices", ns, NULL, &doc, &raw, terr, sizeof(terr));
    int rc = 0;

    *count = 0;
    if (st == 200 && doc != NULL) {
        items = tg_json_path(doc, "items", NULL);
        *count = items ? (int)json_object_array_length(items) : 0;
    } else if (!cli_api_type_missing(st, raw)) {   /* no ResourceSlice CRD: none can remain */
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    }
    json_object_put(doc);
    free(raw);
    return rc;
}
