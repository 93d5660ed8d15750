/* cmd_unauthenticate_force.c - `unauthenticate --force` (the consumer's
 * side of a peering whose provider is gone) and `unauthenticate
 * --provider-side` (the provider's side of one consumer). docs/cli.md
 * "Unpeering from a cluster that is gone".
 *
 * Both clear one namespace, liqo-tenant-<other id>, and only when its labels
 * name that cluster (unpeer.h): another peering's objects live in another
 * namespace, so they are never touched. */
#include "online_cmd.h"
#include "unpeer.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

/* How long the consumer gives the provider: one try, long enough for the
 * signer's 10 s grace on a Tenant whose consumer's replicas stay. */
#define FORCE_PROVIDER_TIMEOUT_MS 20000L
/* How long the provider side waits for tenantgate-signer to release the
 * Tenant (it holds it up to 10 s for the consumer's replicas). */
#define TENANT_GRACE_MS 30000L
#define CLUSTERWIDE_BINDING_PREFIX "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"

/* --- the provider's side -------------------------------------------------- */

/* Poll the deleted Tenant at path until it is gone (404), the signer's
 * grace ends (until) or the command's time does; *t the last one seen. */
static long wait_tenant_gone(cli_flow *f, cli_cluster *c, const char *path, long until, json_object **t,
                             char *terr, size_t terr_len)
{
    long st;

    for (;;) {
        *t = NULL;
        st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, t, NULL, terr, terr_len);
        if (st != 200 || cli_now_ms() >= until || cli_now_ms() >= f->deadline_ms)
            break;
        json_object_put(*t);
        uv_sleep(500);
    }
    if (st != 200) {
        json_object_put(*t);   /* a Status, if anything */
        *t = NULL;
    }
    return st;
}

/* Delete Tenant ns/consumer and give the signer TENANT_GRACE_MS to run its
 * finalizer (it holds the bindings up to 10 s for the consumer's replicas);
 * then take the finalizer off and say so. */
static int clear_tenant(cli_flow *f, cli_cluster *c, const char *ns, const char *consumer)
{
    cli_api_call call = { .verb = "delete", .resource = "tenants", .group = CLI_AUTH_GROUP, .namespace_ = ns,
                          .name = consumer };
    char path[512], terr[256];
    json_object *t = NULL, *patch;
    long st, until = cli_now_ms() + TENANT_GRACE_MS;
    int rc, existed;

    snprintf(path, sizeof(path), CLI_AUTH_API "/namespaces/%s/tenants/%s", ns, consumer);
    if ((rc = cli_unpeer_delete(f, c, &call, path, &existed)) != 0)
        return rc;
    if (!existed) {
        cli_flow_step(f, c->scope, "Tenant already absent");
        return 0;
    }
    st = wait_tenant_gone(f, c, path, until, &t, terr, sizeof(terr));
    if (st == 404) {
        cli_flow_step(f, c->scope, "Tenant deleted (its finalizer ran)");
        return 0;
    }
    call.verb = "get";
    if (st != 200)
        return cli_flow_api_fail(f, c, &call, st, NULL, terr);
    patch = cli_unpeer_strip_patch(t, cli_unpeer_provider_finalizers);
    json_object_put(t);
    if (cli_now_ms() < until) {   /* the command's time ran out, not the signer's grace */
        json_object_put(patch);
        return cli_flow_fail(f, c, TG_EXIT_TIMEOUT, "Tenant %s/%s still being deleted: its finalizer "
                             "is taken off only after %lds", ns, consumer, TENANT_GRACE_MS / 1000);
    }
    call.verb = "patch";
    st = patch ? cli_cluster_call(c, "PATCH", path, patch, TG_KUBE_CT_MERGE_PATCH, NULL, NULL, terr, sizeof(terr))
               : 200;
    json_object_put(patch);
    if (st != 200 && st != 404)
        return cli_flow_api_fail(f, c, &call, st, NULL, terr);
    cli_flow_step(f, c->scope, "Tenant still held after the 30s grace (tenantgate-signer not running, or "
                  "the consumer's replicas never went): its finalizer removed");
    return 0;
}

/* The signer's cluster-scoped objects for consumer: its group's
 * ClusterRoleBinding and its CSRs (labelled for it). */
static int clear_cluster_scoped(cli_flow *f, cli_cluster *c, const char *consumer)
{
    cli_api_call crb = { .verb = "delete", .resource = "clusterrolebindings", .group = "rbac.authorization.k8s.io" };
    cli_api_call csr = { .verb = "delete", .resource = "certificatesigningrequests", .group = "certificates.k8s.io" };
    char path[512], name[320];
    int rc, existed;

    snprintf(name, sizeof(name), CLUSTERWIDE_BINDING_PREFIX "%s", consumer);
    crb.name = name;
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/%s", name);
    if ((rc = cli_unpeer_delete(f, c, &crb, path, &existed)) != 0)
        return rc;
    if (existed)
        cli_flow_step(f, c->scope, "consumer's ClusterRoleBinding deleted");
    /* a collection DELETE by label: liqo.io/remote-tenant-csr=true,liqo.io/remote-cluster-id=<consumer> */
    snprintf(path, sizeof(path), "/apis/certificates.k8s.io/v1/certificatesigningrequests?labelSelector="
             "liqo.io%%2Fremote-tenant-csr%%3Dtrue%%2C" "liqo.io%%2Fremote-cluster-id%%3D%s", consumer);
    return cli_unpeer_delete(f, c, &csr, path, &existed);
}

/* The provider's side of consumer on c; progress with c->scope. */
static int clear_provider(cli_flow *f, cli_cluster *c, const char *consumer)
{
    char ns[128], msg[256];
    int rc, found, stripped = 0;

    if ((rc = cli_unpeer_tenant_ns(f, c, consumer, ns, sizeof(ns), &found)) != 0)
        return rc;
    if (found && (rc = clear_tenant(f, c, ns, consumer)) != 0)
        return rc;
    if ((rc = clear_cluster_scoped(f, c, consumer)) != 0)
        return rc;
    if (!found) {
        cli_flow_step(f, c->scope, "no tenant namespace for the consumer: nothing more to clear");
        return 0;
    }
    if ((rc = cli_unpeer_clear_namespace(f, c, ns, cli_unpeer_provider_kinds, cli_unpeer_provider_finalizers,
                                         &stripped)) != 0)
        return rc;
    snprintf(msg, sizeof(msg), "tenant namespace %s deleted with its slices, Renews and RoleBindings "
             "(%d finalizer(s) removed)", ns, stripped);
    cli_flow_step(f, c->scope, msg);
    return 0;
}

int cli_unauthenticate_provider_side(const char *cmd, online_opts *o)
{
    cli_cluster c;
    cli_flow f;
    int rc;

    if ((rc = cli_cluster_open(&c, cmd, "local", o->kubeconfig, o->context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, o->timeout_ms);
    cli_flow_bind(&f, &c);
    rc = clear_provider(&f, &c, o->remote_id);
    cli_cluster_close(&c);
    return rc;
}

/* --- the consumer's side -------------------------------------------------- */

/* The lines for what an unreachable provider keeps: the Tenant and the
 * copies of the consumer's replicated objects (listed before they go). */
static void print_left(cli_flow *f, cli_cluster *local, const char *lns, const char *why, const char *consumer)
{
    char rns[128], line[768], path[512], terr[256];
    json_object *doc;

    cli_tenant_namespace_name(rns, sizeof(rns), consumer);
    cli_unpeer_left_line(line, sizeof(line), why, "Tenant", rns, consumer, consumer);
    fprintf(f->progress, "%s\n", line);
    for (const cli_unpeer_kind *k = cli_unpeer_consumer_kinds; lns[0] && k->resource != NULL; k++) {
        json_object *items;

        if (!k->replicated)
            continue;
        doc = NULL;
        snprintf(path, sizeof(path), "%s/namespaces/%s/%s?labelSelector=liqo.io%%2Freplication%%3Dtrue",
                 k->api, lns, k->resource);
        if (cli_cluster_call(local, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr, sizeof(terr)) == 200 &&
            (items = tg_json_path(doc, "items", NULL)) != NULL)
            for (size_t i = 0; i < json_object_array_length(items); i++) {
                const char *name = tg_json_path_string(json_object_array_get_idx(items, i), "metadata", "name", NULL);

                cli_unpeer_left_line(line, sizeof(line), why, k->kind, rns, name ? name : "?", consumer);
                fprintf(f->progress, "%s\n", line);
            }
        json_object_put(doc);
    }
}

/* One short try at the provider's side; 0 when it is clear. why gets the
 * reason it is not. */
static int try_provider(const online_opts *o, const char *consumer, char *why, size_t why_len)
{
    cli_cluster remote;
    cli_flow rf;
    int rc;

    if (o->remote_kubeconfig == NULL) {
        snprintf(why, why_len, "not asked (no --remote-kubeconfig)");
        return TG_EXIT_USAGE;
    }
    if ((rc = cli_cluster_open(&remote, "unauthenticate", "remote", o->remote_kubeconfig, o->remote_context)) != 0) {
        snprintf(why, why_len, "kubeconfig unusable");
        return rc;
    }
    cli_flow_init(&rf, "unauthenticate", stdout, FORCE_PROVIDER_TIMEOUT_MS);
    cli_flow_bind(&rf, &remote);
    rc = clear_provider(&rf, &remote, consumer);
    cli_cluster_close(&remote);
    snprintf(why, why_len, "%s", rc == TG_EXIT_UNREACHABLE ? "unreachable"
                                 : rc == TG_EXIT_TIMEOUT   ? "did not finish in 20s"
                                                           : "refused");
    return rc;
}

int cli_unauthenticate_force(const char *cmd, online_opts *o)
{
    char lns[128], why[64], msg[256];
    cli_cluster local;
    cli_flow f;
    int rc, found, stripped = 0;

    if ((rc = cli_cluster_open(&local, cmd, "local", o->kubeconfig, o->context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, o->timeout_ms);
    cli_flow_bind(&f, &local);
    if ((rc = cli_online_discover_ids(&f, o, &local, NULL)) != 0 ||
        (rc = cli_unpeer_tenant_ns(&f, &local, o->remote_id, lns, sizeof(lns), &found)) != 0)
        goto out;
    if (!found)
        lns[0] = '\0';
    if (try_provider(o, o->cluster_id, why, sizeof(why)) != 0)
        print_left(&f, &local, lns, why, o->cluster_id);
    if (!found) {
        cli_flow_step(&f, "local", "no tenant namespace for the provider: nothing to clear");
        goto out;
    }
    if ((rc = cli_unpeer_clear_namespace(&f, &local, lns, cli_unpeer_consumer_kinds, cli_unpeer_consumer_finalizers,
                                         &stripped)) != 0)
        goto out;
    snprintf(msg, sizeof(msg), "tenant namespace %s deleted with its slices, Identities, Renews and "
             "kubeconfig Secrets (%d finalizer(s) removed)", lns, stripped);
    cli_flow_step(&f, "local", msg);
out:
    cli_cluster_close(&local);
    return rc;
}
