/* cmd_revoke.c - `revoke` (provider admin): take away at once the rights of
 * one leaked or replaced certificate, while the consumer's other
 * certificates keep theirs (docs/revocation.md).
 *
 * Only a certificate carrying a per-certificate group (pki/cert_group.h) can
 * be revoked alone: its rights are bound to that group. The revocation is
 * first recorded (the signer then never binds the group or approves a CSR
 * carrying it again), then the group is removed from every binding that
 * lists it. A certificate without a group, or an identity whose user name
 * still carries rights of its own (guard mode: Liqo binds it), is refused
 * with what would be needed instead, and nothing is changed. */
#include "online_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "kube/kubeconfig.h"
#include "pki/cert_group.h"

#define REVOKED_CONFIGMAP "tenantgate-revoked-certificates"
#define CERT_GROUPS_ANNOTATION "tenantgate.io/cert-groups"
#define RBAC "/apis/rbac.authorization.k8s.io/v1"
#define CONFLICT_TRIES 5

static const char usage[] =
    "Usage: " TG_CLI_NAME " revoke --certificate FILE [OPTIONS]\n"
    "\n"
    "On the provider, as its admin: revoke one consumer certificate at once. The\n"
    "certificate's next request is refused (403); the consumer's other\n"
    "certificates keep working. Only a certificate made with a per-certificate\n"
    "group (`authenticate --revocable`) can be revoked alone; for any other the\n"
    "command says what would take its rights away instead, and changes nothing.\n"
    "\n"
    "Options:\n"
    "  --certificate FILE       the certificate to revoke: PEM, or a kubeconfig\n"
    "                           whose user holds it (the consumer's kubeconfig)\n"
    COMMON_HELP
    "  -n, --namespace NS       tenantgate-signer's namespace on the provider, where\n"
    "                           the revocation records are kept (default liqo)\n"
    "  --timeout DURATION       (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

typedef struct revoke_target {
    char cn[256];
    char group[TG_CERT_GROUP_MAX];
    char key[TG_CERT_GROUP_KEY_MAX];
    int64_t not_after;
} revoke_target;

/* The certificate of file: PEM as it is, else the client certificate of a kubeconfig. */
static int read_certificate(const char *cmd, const char *file, revoke_target *t)
{
    tg_kube_config cfg = {0};
    char err[512], *text = NULL;
    size_t len = 0;
    int r, rc = TG_EXIT_USAGE;

    if (tg_kube_read_file(file, TG_KUBE_FILE_MAX, &text, &len, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s %s: %s\n", TG_CLI_NAME, cmd, err);
        return TG_EXIT_USAGE;
    }
    if (!strstr(text, "-----BEGIN CERTIFICATE-----")) {
        if (tg_kube_config_parse(&cfg, text, len, NULL, NULL, err, sizeof(err)) != 0 || !cfg.cert) {
            fprintf(stderr, "%s %s: --certificate %s: expected a PEM certificate or a kubeconfig with a client "
                    "certificate, found %s\n", TG_CLI_NAME, cmd, file, cfg.cert ? err : "neither");
            goto out;
        }
        free(text);
        text = strdup(cfg.cert);
        len = cfg.cert_len;
    }
    r = tg_cert_group_of_certificate(text, len, t->cn, sizeof(t->cn), t->group, sizeof(t->group), &t->not_after);
    if (r < 0) {
        fprintf(stderr, "%s %s: --certificate %s: expected one certificate with at most one group of the form "
                TG_CERT_GROUP_PREFIX "..., found none that reads so\n", TG_CLI_NAME, cmd, file);
    } else if (r == 0) {
        fprintf(stderr, "%s %s: the certificate of %s carries no per-certificate group: its rights are bound to "
                "its user %s, shared by every certificate of that identity, so it cannot be revoked alone. They "
                "end at its NotAfter or when the peering is removed (unauthenticate --provider-side). Certificates "
                "made with `authenticate --revocable` can be revoked\n", TG_CLI_NAME, cmd, file, t->cn);
        rc = TG_EXIT_REJECTED;
    } else if (tg_cert_group_key(t->group, t->key) != 0) {
        fprintf(stderr, "%s %s: the certificate's group %.120s: expected " TG_CERT_GROUP_PREFIX
                "<identity>:<32 lowercase hex>\n", TG_CLI_NAME, cmd, t->group);
        rc = TG_EXIT_REJECTED;
    } else {
        rc = 0;
    }
out:
    tg_kube_config_free(&cfg);
    free(text);
    return rc;
}

/* 1 when a subject of b is kind/name. */
static int names(json_object *b, const char *kind, const char *name)
{
    json_object *subjects = tg_json_path(b, "subjects", NULL);

    for (size_t i = 0; subjects && json_object_is_type(subjects, json_type_array) &&
                       i < json_object_array_length(subjects); i++) {
        json_object *s = json_object_array_get_idx(subjects, i);
        const char *k = tg_json_path_string(s, "kind", NULL), *n = tg_json_path_string(s, "name", NULL);
        if (k && n && strcmp(k, kind) == 0 && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/* The RoleBindings of the identity's tenant namespace, or (ns NULL) the
 * ClusterRoleBindings (*list, caller puts). */
static int list_bindings(cli_flow *f, cli_cluster *c, const char *ns, json_object **list)
{
    cli_api_call ac = { .verb = "list", .resource = ns ? "rolebindings" : "clusterrolebindings",
                        .group = "rbac.authorization.k8s.io", .namespace_ = ns };
    char path[512], terr[256], *raw = NULL;
    long st;
    int rc = 0;

    if (ns)
        snprintf(path, sizeof(path), RBAC "/namespaces/%s/rolebindings", ns);
    else
        snprintf(path, sizeof(path), RBAC "/clusterrolebindings");
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, list, &raw, terr, sizeof(terr));
    if (st == 404 && !cli_api_type_missing(st, raw))
        st = 200;   /* no tenant namespace: nothing bound there */
    if (st != 200)
        rc = cli_flow_api_fail(f, c, &ac, st, raw, terr);
    free(raw);
    return rc;
}

/* Guard mode, or a binding someone made for the bare user: the user name
 * still carries rights, which removing the group would leave. */
static int user_still_bound(cli_flow *f, cli_cluster *c, json_object *list, const revoke_target *t, const char *ns)
{
    json_object *items = tg_json_path(list, "items", NULL);

    for (size_t i = 0; items && i < json_object_array_length(items); i++) {
        json_object *b = json_object_array_get_idx(items, i);
        if (names(b, "User", t->cn))
            return cli_flow_fail(f, c, TG_EXIT_REJECTED, "%s %s%s%s binds the user %s itself (guard mode: "
                                 "Liqo binds the user names; or a binding made by hand): revoking the group "
                                 "would leave the certificate those rights, so nothing was changed. Remove the "
                                 "peering instead (unauthenticate --provider-side), or run tenantgate in "
                                 "standalone or replace mode", ns ? "RoleBinding" : "ClusterRoleBinding",
                                 ns ? ns : "", ns ? "/" : "", tg_json_path_string(b, "metadata", "name", NULL),
                                 t->cn);
    }
    return 0;
}

/* Record the revocation (merge patch of one data key; the ConfigMap is made
 * on the first one). Records past their certificate's NotAfter are dropped
 * in the same write. */
static int record(cli_flow *f, cli_cluster *c, const char *ns, const revoke_target *t)
{
    cli_api_call ac = { .verb = "patch", .resource = "configmaps", .group = "", .namespace_ = ns,
                        .name = REVOKED_CONFIGMAP };
    json_object *body = json_object_new_object(), *meta = json_object_new_object(), *data = json_object_new_object();
    json_object *cur = NULL, *curdata;
    char path[512], terr[256], na[32], *raw = NULL;
    long st;
    int rc = 0;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/" REVOKED_CONFIGMAP, ns);
    snprintf(na, sizeof(na), "%lld", (long long)t->not_after);
    st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &cur, &raw, terr, sizeof(terr));
    curdata = tg_json_path(cur, "data", NULL);
    if (curdata && json_object_is_type(curdata, json_type_object)) {
        json_object_object_foreach(curdata, k, v) {
            (void)v;
            if (!tg_cert_group_record_needed(tg_cert_group_record_not_after(curdata, k), (int64_t)time(NULL)))
                json_object_object_add(data, k, NULL);
        }
    }
    json_object_object_add(data, t->key, json_object_new_string(na));
    json_object_object_add(body, "data", data);
    free(raw);
    raw = NULL;
    if (st == 404) {
        json_object_object_add(meta, "name", json_object_new_string(REVOKED_CONFIGMAP));
        json_object_object_add(meta, "namespace", json_object_new_string(ns));
        json_object_object_add(body, "metadata", meta);
        json_object_object_add(body, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(body, "kind", json_object_new_string("ConfigMap"));
        *strrchr(path, '/') = '\0';
        ac.verb = "create";
        st = cli_cluster_call(c, "POST", path, body, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    } else {
        json_object_put(meta);
        if (st == 200)
            st = cli_cluster_call(c, "PATCH", path, body, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr, sizeof(terr));
    }
    if (st != 200 && st != 201)
        rc = cli_flow_api_fail(f, c, &ac, st, raw, terr);
    free(raw);
    json_object_put(body);
    json_object_put(cur);
    return rc;
}

/* b without group: its subjects and its annotation's entry. */
static json_object *without_group(json_object *b, const char *group)
{
    json_object *patch = json_object_new_object(), *meta = json_object_new_object(), *ann = json_object_new_object();
    json_object *subjects = tg_json_path(b, "subjects", NULL), *keep = json_object_new_array();
    const char *text = tg_json_path_string(b, "metadata", "annotations", CERT_GROUPS_ANNOTATION, NULL);
    const char *rv = tg_json_path_string(b, "metadata", "resourceVersion", NULL);
    json_object *groups = text ? tg_json_parse(text, strlen(text), NULL, 0) : NULL;

    for (size_t i = 0; subjects && i < json_object_array_length(subjects); i++) {
        json_object *s = json_object_array_get_idx(subjects, i);
        const char *k = tg_json_path_string(s, "kind", NULL), *n = tg_json_path_string(s, "name", NULL);
        if (!(k && n && strcmp(k, "Group") == 0 && strcmp(n, group) == 0))
            json_object_array_add(keep, json_object_get(s));
    }
    json_object_object_add(patch, "subjects", keep);
    if (groups && json_object_is_type(groups, json_type_object)) {
        json_object_object_del(groups, group);
        json_object_object_add(ann, CERT_GROUPS_ANNOTATION,
                               json_object_new_string(json_object_to_json_string_ext(groups, JSON_C_TO_STRING_PLAIN)));
        json_object_object_add(meta, "annotations", ann);
    } else {
        json_object_put(ann);
    }
    json_object_put(groups);
    /* the version read: the signer's own write in between is not undone (409, read again) */
    if (rv)
        json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(patch, "metadata", meta);
    return patch;
}

/* Remove the group from RoleBinding name (ns NULL: ClusterRoleBinding),
 * reading it again on a conflict.
 * *removed set when it was listed. */
static int unbind_one(cli_flow *f, cli_cluster *c, const char *ns, const char *name, const char *group, int *removed)
{
    cli_api_call ac = { .verb = "patch", .resource = ns ? "rolebindings" : "clusterrolebindings",
                        .group = "rbac.authorization.k8s.io", .namespace_ = ns, .name = name };
    char path[768], terr[256], *raw = NULL;
    long st = 409;

    *removed = 0;
    if (ns)
        snprintf(path, sizeof(path), RBAC "/namespaces/%s/rolebindings/%s", ns, name);
    else
        snprintf(path, sizeof(path), RBAC "/clusterrolebindings/%s", name);
    for (int i = 0; i < CONFLICT_TRIES && st == 409; i++) {
        json_object *b = NULL, *patch;

        free(raw);
        raw = NULL;
        if ((st = cli_cluster_call(c, "GET", path, NULL, TG_KUBE_CT_JSON, &b, &raw, terr, sizeof(terr))) != 200 ||
            !names(b, "Group", group)) {
            json_object_put(b);
            if (st == 404 || st == 200)
                st = 200;   /* gone, or no longer listing it */
            break;
        }
        free(raw);
        raw = NULL;
        patch = without_group(b, group);
        st = cli_cluster_call(c, "PATCH", path, patch, TG_KUBE_CT_MERGE_PATCH, NULL, &raw, terr, sizeof(terr));
        *removed = st == 200;
        json_object_put(patch);
        json_object_put(b);
    }
    if (st != 200) {
        int rc = cli_flow_api_fail(f, c, &ac, st, raw, terr);
        free(raw);
        return rc;
    }
    free(raw);
    return 0;
}

static int unbind_all(cli_flow *f, cli_cluster *c, json_object *list, const char *ns, const revoke_target *t,
                      int *count)
{
    json_object *items = tg_json_path(list, "items", NULL);
    int rc = 0, removed;
    char line[600];

    *count = 0;
    for (size_t i = 0; items && rc == 0 && i < json_object_array_length(items); i++) {
        json_object *b = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(b, "metadata", "name", NULL);
        if (!name || !names(b, "Group", t->group))
            continue;
        if ((rc = unbind_one(f, c, ns, name, t->group, &removed)) == 0 && removed) {
            snprintf(line, sizeof(line), "removed from %s %s%s%s", ns ? "RoleBinding" : "ClusterRoleBinding",
                     ns ? ns : "", ns ? "/" : "", name);
            cli_flow_step(f, NULL, line);
            (*count)++;
        }
    }
    return rc;
}

int cmd_revoke(int argc, char **argv)
{
    const char *cmd = "revoke", *certificate = NULL, *kubeconfig = NULL, *context = NULL;
    const char *install_ns = CLI_DEFAULT_INSTALL_NS, *timeout = NULL;
    const cli_option options[] = {
        { "certificate", required_argument, 'c', &certificate, NULL },
        { "kubeconfig", required_argument, 'K', &kubeconfig, NULL },
        { "context", required_argument, 'C', &context, NULL },
        { "namespace", required_argument, 'n', &install_ns, NULL },
        { "timeout", required_argument, 't', &timeout, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    revoke_target t;
    json_object *list = NULL, *cluster = NULL;
    char ns[300], line[700], when[32];
    long timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    cli_cluster c;
    cli_flow f;
    time_t na;
    int rc, count = 0, more = 0;

    if ((rc = cli_parse_options(cmd, usage, "n:", options, argc, argv)) != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (!certificate)
        return cli_usage_error(cmd, usage, "--certificate is required");
    if (timeout && (timeout_ms = cli_parse_duration(timeout)) < 0)
        return cli_usage_error(cmd, usage, "--timeout: expected a duration such as 30s, 2m or 1h (at most 24h), "
                               "found \"%.32s\"", timeout);
    memset(&t, 0, sizeof(t));
    if ((rc = read_certificate(cmd, certificate, &t)) != 0)
        return rc;
    if ((rc = cli_cluster_open(&c, cmd, NULL, kubeconfig, context)) != 0)
        return rc;
    cli_flow_init(&f, cmd, stdout, timeout_ms);
    cli_flow_bind(&f, &c);
    cli_tenant_namespace_name(ns, sizeof(ns), t.cn);
    /* a slice certificate's group is bound cluster-wide (docs/revocation.md "Slices"), and a
     * ClusterRoleBinding of the bare user would outlive the revocation as a RoleBinding would */
    if ((rc = list_bindings(&f, &c, ns, &list)) != 0 || (rc = user_still_bound(&f, &c, list, &t, ns)) != 0 ||
        (rc = list_bindings(&f, &c, NULL, &cluster)) != 0 || (rc = user_still_bound(&f, &c, cluster, &t, NULL)) != 0 ||
        (rc = record(&f, &c, install_ns, &t)) != 0)
        goto out;
    /* listed again after the record: from here on no new binding lists the group */
    json_object_put(list);
    json_object_put(cluster);
    list = cluster = NULL;
    if ((rc = list_bindings(&f, &c, ns, &list)) != 0 || (rc = list_bindings(&f, &c, NULL, &cluster)) != 0)
        goto out;
    na = (time_t)t.not_after;
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&na));
    snprintf(line, sizeof(line), "revoked %s (user %s): recorded in ConfigMap %s/%s until %s", t.group, t.cn,
             install_ns, REVOKED_CONFIGMAP, when);
    cli_flow_step(&f, NULL, line);
    if ((rc = unbind_all(&f, &c, list, ns, &t, &count)) != 0 ||
        (rc = unbind_all(&f, &c, cluster, NULL, &t, &more)) != 0)
        goto out;
    count += more;
    if (count == 0)
        cli_flow_step(&f, NULL, "no binding listed the group (already removed, or expired)");
out:
    json_object_put(list);
    json_object_put(cluster);
    cli_cluster_close(&c);
    return rc;
}
