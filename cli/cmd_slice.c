/* cmd_slice.c - create, get and delete resourceslice (liqoctl create
 * resourceslice parity, PROTOCOL.md 5a), on the consumer.
 *
 * create applies the local slice in the tenant namespace of the provider and,
 * unless -o asks for the document instead, waits for the provider's verdict:
 * the Authentication condition, then Resources. Beyond liqoctl, a Denied
 * verdict ends the command with exit 1 and the provider's reason instead of
 * waiting forever. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "online.h"
#include "slice.h"
#include "kube/json.h"

#define SLICE_RESOURCE "resourceslices"
#define MAX_ARGS 64

typedef struct slice_opts {
    const char *kubeconfig, *context, *remote_id, *output, *timeout;
    const char *class_, *cpu, *memory, *pods;
    int no_virtual_node, wait, revocable;
    const char *name;                                   /* the operand */
    const char *resources[CLI_SLICE_MAX_RESOURCES];     /* --resource, repeatable */
    size_t nresources;
    int as_json, output_given;
    long timeout_ms;
} slice_opts;

#define COMMON_HELP                                                                              \
    "  --remote-cluster-id ID   the provider cluster's id\n"                                      \
    "  --kubeconfig FILE        kubeconfig of this (consumer) cluster (':'-list; default\n"       \
    "                           $KUBECONFIG, then ~/.kube/config), as kubectl reads it\n"         \
    "  --context NAME           kubeconfig context (default: current-context)\n"

#define EXIT_HELP                                                                                \
    "\nExit status: 0 done, 1 failed (Denied, refused, forbidden, missing CRD or object),\n"      \
    "2 usage or local error, 3 cluster unreachable, 4 timed out.\n"

static const char create_usage[] =
    "Usage: " TG_CLI_NAME " create resourceslice NAME --remote-cluster-id PROVIDER_ID [OPTIONS]\n"
    "\n"
    "On the consumer: ask the provider for resources. Applies ResourceSlice NAME in the\n"
    "tenant namespace of PROVIDER_ID (labels liqo.io/replication=true, liqo.io/remoteID),\n"
    "then waits for the provider's verdict: Authentication, then Resources. tenantgate-\n"
    "signer fills the CSR, replication carries the slice to the provider and its answer back.\n"
    "A Denied verdict exits 1 with the provider's reason.\n"
    "\n"
    "Options:\n"
    COMMON_HELP
    "  --class CLASS            ResourceSlice class (default \"default\")\n"
    "  --cpu Q, --memory Q, --pods Q   quantities asked for (e.g. 4, 8Gi, 110)\n"
    "  --resource NAME=Q        any other resource, repeatable (e.g. nvidia.com/gpu=2)\n"
    "  --no-virtual-node        do not ask for a virtual node (no liqo.io/create-virtual-node)\n"
    "  --revocable              a certificate the provider can revoke alone (its own group in\n"
    "                           place of Group <consumer>: no Liqo offload rights)\n"
    "  --timeout DURATION       how long to wait for the verdict (default 2m)\n"
    "  -o, --output FMT         print the ResourceSlice as yaml or json instead of applying it\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

static const char get_usage[] =
    "Usage: " TG_CLI_NAME " get resourceslice [NAME] --remote-cluster-id PROVIDER_ID [OPTIONS]\n"
    "\n"
    "On the consumer: the ResourceSlices asked of PROVIDER_ID, as a table (NAME,\n"
    "AUTHENTICATION, RESOURCES), or slice NAME as a document with -o.\n"
    "\n"
    "Options:\n"
    COMMON_HELP
    "  -o, --output FMT         yaml or json (needs NAME)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

static const char delete_usage[] =
    "Usage: " TG_CLI_NAME " delete resourceslice NAME --remote-cluster-id PROVIDER_ID [OPTIONS]\n"
    "\n"
    "On the consumer: delete ResourceSlice NAME. Its Identity and kubeconfig go with it,\n"
    "and replication deletes the provider's copy.\n"
    "\n"
    "Options:\n"
    COMMON_HELP
    "  --wait                   wait until it is gone (finalizers done)\n"
    "  --timeout DURATION       how long to wait (default 2m)\n"
    "  -h, --help               show this help\n"
    EXIT_HELP;

/* Options whose value is the next argument, when not given as --opt=value. */
static int takes_value(const char *arg)
{
    static const char *const with_value[] = {"--remote-cluster-id", "--kubeconfig", "--context", "--class",
                                             "--cpu", "--memory", "--pods", "--resource", "--timeout",
                                             "--output", "-o"};

    for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
        if (strcmp(arg, with_value[i]) == 0)
            return 1;
    return 0;
}

/* Take the operand NAME and the repeatable --resource out of argv, so the
 * shared option loop sees only single-valued options. 0 or an exit code. */
static int split_args(const char *cmd, const char *usage, int argc, char **argv, slice_opts *o, int *nargc,
                      char **nargv)
{
    *nargc = 0;
    nargv[(*nargc)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;

        if (*nargc >= MAX_ARGS - 2)
            return cli_usage_error(cmd, usage, "too many arguments");
        if (strcmp(a, "--resource") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(a, "--resource=", 11) == 0)
            value = a + 11;
        if (value != NULL) {
            if (o->nresources == CLI_SLICE_MAX_RESOURCES)
                return cli_usage_error(cmd, usage, "at most %d --resource", CLI_SLICE_MAX_RESOURCES);
            o->resources[o->nresources++] = value;
            continue;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->name != NULL)
                return cli_usage_error(cmd, usage, "unexpected argument \"%s\"", a);
            o->name = a;
            continue;
        }
        nargv[(*nargc)++] = argv[i];
        if (takes_value(a) && i + 1 < argc)
            nargv[(*nargc)++] = argv[++i];
    }
    nargv[*nargc] = NULL;
    return 0;
}

/* Which flags a verb takes beyond the common ones. */
enum { F_REQUEST = 1u << 0, F_TIMEOUT = 1u << 1, F_WAIT = 1u << 2, F_OUTPUT = 1u << 3 };

static int parse(const char *cmd, const char *usage, unsigned allowed, int argc, char **argv, slice_opts *o)
{
    char *nargv[MAX_ARGS];
    int nargc, rc;
    /* A flag of another verb is refused as "does not apply here". */
#define TAKES(g, dest) ((allowed & (g)) ? (dest) : NULL)
    const cli_option options[] = {
        { "remote-cluster-id", required_argument, 'r', &o->remote_id, NULL },
        { "kubeconfig", required_argument, 'K', &o->kubeconfig, NULL },
        { "context", required_argument, 'C', &o->context, NULL },
        { "class", required_argument, 'c', TAKES(F_REQUEST, &o->class_), NULL },
        { "cpu", required_argument, 'P', TAKES(F_REQUEST, &o->cpu), NULL },
        { "memory", required_argument, 'M', TAKES(F_REQUEST, &o->memory), NULL },
        { "pods", required_argument, 'D', TAKES(F_REQUEST, &o->pods), NULL },
        { "no-virtual-node", no_argument, 'V', NULL, TAKES(F_REQUEST, &o->no_virtual_node) },
        { "revocable", no_argument, 'R', NULL, TAKES(F_REQUEST, &o->revocable) },
        { "timeout", required_argument, 't', TAKES(F_TIMEOUT, &o->timeout), NULL },
        { "wait", no_argument, 'w', NULL, TAKES(F_WAIT, &o->wait) },
        { "output", required_argument, 'o', TAKES(F_OUTPUT, &o->output), NULL },
        { NULL, 0, 0, NULL, NULL },
    };
#undef TAKES

    memset(o, 0, sizeof(*o));
    o->timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    if ((rc = split_args(cmd, usage, argc, argv, o, &nargc, nargv)) != 0)
        return rc;
    if (o->nresources > 0 && !(allowed & F_REQUEST))
        return cli_usage_error(cmd, usage, "option --resource does not apply here");
    if (
        (rc = cli_parse_options(cmd, usage, "o:", options, nargc, nargv)) != 0)
        return rc;
    o->output_given = o->output != NULL;
    if ((rc = cli_output_arg(cmd, usage, o->output ? o->output : "yaml", &o->as_json)) != 0)
        return rc;
    if (o->timeout != NULL && (o->timeout_ms = cli_parse_duration(o->timeout)) < 0)
        return cli_usage_error(cmd, usage, "--timeout: expected a duration such as 30s, 2m or 1h (at most "
                               "24h), found \"%.32s\"", o->timeout);
    if (o->remote_id == NULL)
        return cli_usage_error(cmd, usage, "--remote-cluster-id is required");
    if ((rc = cli_cluster_id_arg(cmd, usage, "--remote-cluster-id", o->remote_id)) != 0)
        return rc;
    if (o->name != NULL && !cli_slice_name_valid(o->name))
        return cli_usage_error(cmd, usage, "NAME: expected a lowercase DNS subdomain of at most 253 "
                               "characters, found \"%.64s\"", o->name);
    return 0;
}

/* Open the consumer cluster and find the provider's tenant namespace. */
static int open_slices(const char *cmd, const slice_opts *o, cli_cluster *c, cli_flow *f, char *ns,
                       size_t ns_len)
{
    int rc = cli_cluster_open(c, cmd, NULL, o->kubeconfig, o->context);

    if (rc != 0)
        return rc;
    cli_flow_init(f, cmd, stderr, o->timeout_ms);
    cli_flow_bind(f, c);
    if ((rc = cli_require_resources(f, c, SLICE_RESOURCE)) == 0)
        rc = cli_find_tenant_namespace(f, c, o->remote_id, 0, ns, ns_len);
    if (rc != 0)
        cli_cluster_close(c);
    return rc;
}

/* Wait for condition type; 0 when Accepted, 1 (printed) when Denied. */
static int verdict(cli_flow *f, cli_cluster *c, const char *ns, const char *name, const char *type,
                   const char *what)
{
    char why[1024], line[160];
    int denied = 0, rc = cli_wait_slice(f, c, ns, name, type, why, sizeof(why), &denied);

    if (rc != 0)
        return rc;
    if (denied)
        return cli_flow_fail(f, c, TG_EXIT_REJECTED, "ResourceSlice %s: Denied by the provider: %s", what, why);
    snprintf(line, sizeof(line), "ResourceSlice %s: Accepted", what);
    cli_flow_step(f, NULL, line);
    return 0;
}

int cli_slice_create(int argc, char **argv)
{
    const char *cmd = "create resourceslice";
    char ns[128], err[256];
    slice_opts o;
    cli_cluster c;
    cli_flow f;
    json_object *obj = NULL;
    cli_slice_request r = {0};
    int rc = parse(cmd, create_usage, F_REQUEST | F_TIMEOUT | F_OUTPUT, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.name == NULL)
        return cli_usage_error(cmd, create_usage, "NAME is required");
    r = (cli_slice_request){.name = o.name, .provider_id = o.remote_id, .class_ = o.class_, .cpu = o.cpu,
                            .memory = o.memory, .pods = o.pods, .nresources = o.nresources,
                            .no_virtual_node = o.no_virtual_node, .revocable = o.revocable};
    memcpy(r.resources, o.resources, sizeof(r.resources));
    r.namespace_ = "check";
    if ((obj = cli_slice_object(&r, err, sizeof(err))) == NULL)   /* bad flags before any call */
        return cli_usage_error(cmd, create_usage, "%s", err);
    json_object_put(obj);
    if ((rc = open_slices(cmd, &o, &c, &f, ns, sizeof(ns))) != 0)
        return rc;
    r.namespace_ = ns;
    obj = cli_slice_object(&r, err, sizeof(err));
    if (o.output_given) {
        cli_cluster_close(&c);
        return cli_print_result(cmd, 0, obj, o.as_json);
    }
    cli_flow_step(&f, NULL, "Creating ResourceSlice");
    rc = cli_apply(&f, &c, SLICE_RESOURCE, obj, NULL);
    json_object_put(obj);
    if (rc == 0) {
        cli_flow_step(&f, NULL, "ResourceSlice created");
        cli_flow_step(&f, NULL, "Waiting for ResourceSlice authentication to be accepted");
        if ((rc = verdict(&f, &c, ns, o.name, "Authentication", "authentication")) == 0)
            rc = verdict(&f, &c, ns, o.name, "Resources", "resources");
    }
    cli_cluster_close(&c);
    return rc;
}

/* One table row per slice: NAME AUTHENTICATION RESOURCES. */
static int print_table(const char *cmd, json_object *list)
{
    json_object *items = tg_json_path(list, "items", NULL);
    size_t n = items && json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;

    printf("%-32s %-15s %s\n", "NAME", "AUTHENTICATION", "RESOURCES");
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(it, "metadata", "name", NULL);
        const char *types[] = {"Authentication", "Resources"}, *shown[2];
        char why[8];

        for (int t = 0; t < 2; t++) {
            cli_slice_state s = cli_slice_condition(it, types[t], why, sizeof(why));
            shown[t] = s == CLI_SLICE_ACCEPTED ? "Accepted" : (s == CLI_SLICE_DENIED ? "Denied" : "<none>");
        }
        printf("%-32s %-15s %s\n", name ? name : "", shown[0], shown[1]);
    }
    return fflush(stdout) == 0 ? TG_EXIT_OK : cli_error(cmd, "cannot write to standard output");
}

int cli_slice_get(int argc, char **argv)
{
    const char *cmd = "get resourceslice";
    char ns[128], path[512], terr[256];
    char *raw = NULL;
    json_object *doc = NULL;
    slice_opts o;
    cli_cluster c;
    cli_flow f;
    long st;
    int rc = parse(cmd, get_usage, F_OUTPUT, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.output_given && o.name == NULL)
        return cli_usage_error(cmd, get_usage, "-o needs NAME");
    if ((rc = open_slices(cmd, &o, &c, &f, ns, sizeof(ns))) != 0)
        return rc;
    snprintf(path, sizeof(path), CLI_AUTH_API "/namespaces/%s/" SLICE_RESOURCE "%s%s", ns, o.name ? "/" : "",
             o.name ? o.name : "");
    st = cli_cluster_call(&c, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, &raw, terr, sizeof(terr));
    if (st != 200 || doc == NULL) {
        cli_api_call call = {.verb = o.name ? "get" : "list", .resource = SLICE_RESOURCE,
                             .group = "authentication.liqo.io", .namespace_ = ns, .name = o.name};
        rc = cli_flow_api_fail(&f, &c, &call, st, raw, terr);
    } else if (o.name == NULL) {
        rc = print_table(cmd, doc);
    } else {
        rc = cli_print_object(cmd, doc, o.as_json);
    }
    json_object_put(doc);
    free(raw);
    cli_cluster_close(&c);
    return rc;
}

int cli_slice_delete(int argc, char **argv)
{
    const char *cmd = "delete resourceslice";
    char ns[128];
    slice_opts o;
    cli_cluster c;
    cli_flow f;
    int existed = 0, rc = parse(cmd, delete_usage, F_WAIT | F_TIMEOUT, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.name == NULL)
        return cli_usage_error(cmd, delete_usage, "NAME is required");
    if ((rc = open_slices(cmd, &o, &c, &f, ns, sizeof(ns))) != 0)
        return rc;
    if ((rc = cli_delete(&f, &c, SLICE_RESOURCE, ns, o.name, o.wait ? CLI_DELETE_WAIT : 0, &existed)) == 0)
        cli_flow_step(&f, NULL, existed ? "ResourceSlice deleted" : "ResourceSlice already absent");
    cli_cluster_close(&c);
    return rc;
}
