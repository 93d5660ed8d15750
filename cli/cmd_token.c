/* cmd_token.c - `create / get / delete token` (provider): bootstrap tokens, the
 * one string a provider hands a consumer's administrator (docs/cli.md,
 * "Bootstrap tokens"). Each is a Secret tenantgate-token-ID in a namespace of
 * their own (tenantgate-tokens: whoever reads tokens, tenantgate-auth, then
 * reads no other Secret) holding the SHA-256 of the token's secret only. */
#define _GNU_SOURCE   /* strptime, timegm */
#include "online_cmd.h"
#include "auth_client.h"
#include "authpin.h"

#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "kube/json.h"
#include "pki/bootstrap_token.h"

#define TOKEN_SECRET_TYPE "tenantgate.io/bootstrap-token"
#define TOKEN_ID_LABEL "tenantgate.io/token-id"
#define TOKEN_DESCRIPTION "tenantgate.io/description"
#define TOKEN_DEFAULT_TTL_MS (24L * 3600 * 1000)
#define DESCRIPTION_MAX 256
#define URL_SAFE \
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/[]%"

#define TOKEN_COMMON_HELP                                                                        \
    COMMON_HELP                                                                                  \
    "  -n, --namespace NS       where tokens are kept (default " TG_BTOKEN_NAMESPACE ", made\n"        \
    "                           by create token; tenantgate-auth's --token-namespace)\n"

static const char create_usage[] =
    "Usage: " TG_CLI_NAME " create token [--ttl DURATION] [--single-use] [--description TEXT]\n"
    "           [OPTIONS]\n"
    "\n"
    "On the provider: make a bootstrap token, ID.SECRET, and print it alone on one\n"
    "line. It is shown only now: the cluster keeps the SHA-256 of its secret, in\n"
    "Secret tenantgate-token-ID. Hand it to the consumer's administrator; whoever\n"
    "holds it may peer until it expires or is deleted.\n"
    "\n"
    "Options:\n"
    "  --ttl DURATION           how long it is valid (default 24h, at most 24h)\n"
    "  --single-use             valid for one peering only\n"
    "  --description TEXT       a note kept beside it (who it is for)\n"
    "  --auth-url URL           print instead the consumer's whole command line,\n"
    "                           `authenticate --auth-url URL --token ... --auth-ca-hash\n"
    "                           sha256:...` (the one string), for tenantgate-auth at URL\n"
    "  --auth-ca FILE           the hash is of FILE's CA certificate (default: of the\n"
    "                           root-most certificate URL presents: check it)\n"
    TOKEN_COMMON_HELP
    "  -h, --help               show this help\n"
    EXIT_HELP;

static const char get_usage[] =
    "Usage: " TG_CLI_NAME " get token [ID] [OPTIONS]\n"
    "\n"
    "On the provider: list the bootstrap tokens (ID, expiry, usage, description),\n"
    "or one. Their secrets cannot be shown: only their hashes are kept.\n"
    "\n"
    "Options:\n"
    TOKEN_COMMON_HELP
    "  -h, --help               show this help\n"
    EXIT_HELP;

static const char delete_usage[] =
    "Usage: " TG_CLI_NAME " delete token ID [OPTIONS]\n"
    "\n"
    "On the provider: revoke bootstrap token ID (peerings already made stay).\n"
    "\n"
    "Options:\n"
    TOKEN_COMMON_HELP
    "  -h, --help               show this help\n"
    EXIT_HELP;

typedef struct token_opts {
    const char *kubeconfig, *context, *ns, *ttl, *description, *id, *auth_url, *auth_ca;
    int single_use;
    long ttl_ms;
} token_opts;

/* Flags; with takes_id, the ID right after the resource word (argv[1]). */
static int parse(const char *cmd, const char *usage, int is_create, int takes_id, int argc, char **argv,
                 token_opts *o)
{
    const cli_option options[] = {
        { "kubeconfig", required_argument, 'K', &o->kubeconfig, NULL },
        { "context", required_argument, 'C', &o->context, NULL },
        { "namespace", required_argument, 'n', &o->ns, NULL },
        { "ttl", required_argument, 'T', is_create ? &o->ttl : NULL, NULL },
        { "single-use", no_argument, 'S', NULL, is_create ? &o->single_use : NULL },
        { "description", required_argument, 'D', is_create ? &o->description : NULL, NULL },
        { "auth-url", required_argument, 'U', is_create ? &o->auth_url : NULL, NULL },
        { "auth-ca", required_argument, 'A', is_create ? &o->auth_ca : NULL, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->ns = TG_BTOKEN_NAMESPACE;
    o->ttl_ms = TOKEN_DEFAULT_TTL_MS;
    if (takes_id && argc > 1 && argv[1][0] != '-') {
        o->id = argv[1];
        argc--;
        argv++;
    }
    if ((rc = cli_parse_options(cmd, usage, "n:", options, argc, argv)) != 0)
        return rc;
    if (o->id != NULL && !tg_btoken_id_valid(o->id, strlen(o->id)))
        return cli_usage_error(cmd, usage, "ID: expected %d characters of a-z and 0-9, found \"%.16s\"",
                               TG_BTOKEN_ID_LEN, o->id);
    if (o->ttl != NULL && (o->ttl_ms = cli_parse_duration(o->ttl)) <= 0)
        return cli_usage_error(cmd, usage, "--ttl: expected a duration such as 30m, 2h or 24h (at most "
                               "24h), found \"%.32s\"", o->ttl);
    if (o->auth_ca != NULL && o->auth_url == NULL)
        return cli_usage_error(cmd, usage, "--auth-ca goes with --auth-url");
    /* it is printed into a command line: no characters a shell would read */
    if (o->auth_url != NULL && (strncmp(o->auth_url, "https://", 8) != 0 ||
                                strspn(o->auth_url, URL_SAFE) != strlen(o->auth_url)))
        return cli_usage_error(cmd, usage, "--auth-url: expected https://HOST[:PORT][/PATH] of letters, digits "
                               "and -._~:/[]%%");
    if (o->description != NULL && strlen(o->description) > DESCRIPTION_MAX)
        return cli_usage_error(cmd, usage, "--description: at most %d characters", DESCRIPTION_MAX);
    return 0;
}

static void secret_name(char *buf, size_t len, const char *id)
{
    snprintf(buf, len, "tenantgate-token-%s", id);
}

static void rfc3339_after(char *buf, size_t len, long ms)
{
    time_t at = time(NULL) + ms / 1000;
    struct tm tm;

    gmtime_r(&at, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_object *token_secret(const token_opts *o, const tg_btoken *t, const char *expires)
{
    json_object *sec = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object(), *data = json_object_new_object();
    char name[64], hash[TG_BTOKEN_HASH_HEX_LEN + 1];

    secret_name(name, sizeof(name), t->id);
    tg_btoken_hash_hex(t->secret, hash);
    json_object_object_add(sec, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(sec, "kind", json_object_new_string("Secret"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(o->ns));
    json_object_object_add(labels, "app.kubernetes.io/part-of", json_object_new_string("tenantgate"));
    json_object_object_add(labels, TOKEN_ID_LABEL, json_object_new_string(t->id));
    json_object_object_add(meta, "labels", labels);
    if (o->description) {
        json_object *ann = json_object_new_object();
        json_object_object_add(ann, TOKEN_DESCRIPTION, json_object_new_string(o->description));
        json_object_object_add(meta, "annotations", ann);
    }
    json_object_object_add(sec, "metadata", meta);
    json_object_object_add(sec, "type", json_object_new_string(TOKEN_SECRET_TYPE));
    json_object_object_add(data, "token-id", json_object_new_string(t->id));
    json_object_object_add(data, "secret-sha256", json_object_new_string(hash));
    json_object_object_add(data, "expiration", json_object_new_string(expires));
    json_object_object_add(data, "usage", json_object_new_string(o->single_use ? "single-use" : "reusable"));
    json_object_object_add(sec, "stringData", data);
    OPENSSL_cleanse(hash, sizeof(hash));
    return sec;
}

/* The tokens' namespace, made on the first token (409: there already). */
static int ensure_token_namespace(cli_flow *f, cli_cluster *c, const char *ns)
{
    cli_api_call call = { .verb = "create", .resource = "namespaces", .group = "", .name = ns };
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object();
    char terr[256], *raw = NULL;
    long st;
    int rc = 0;

    json_object_object_add(obj, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(obj, "kind", json_object_new_string("Namespace"));
    json_object_object_add(meta, "name", json_object_new_string(ns));
    json_object_object_add(labels, "app.kubernetes.io/part-of", json_object_new_string("tenantgate"));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(obj, "metadata", meta);
    st = cli_cluster_call(c, "POST", "/api/v1/namespaces", obj, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    /* 403: one may keep tokens in a namespace without the right to make
     * namespaces; the Secret's POST says it if the namespace is missing. */
    if (st != 201 && st != 409 && st != 403)
        rc = cli_flow_api_fail(f, c, &call, st, raw, terr);
    json_object_put(obj);
    free(raw);
    return rc;
}

static int open_cluster(const char *cmd, const token_opts *o, cli_cluster *c, cli_flow *f)
{
    int rc = cli_cluster_open(c, cmd, NULL, o->kubeconfig, o->context);

    if (rc == 0) {
        cli_flow_init(f, cmd, stderr, CLI_DEFAULT_TIMEOUT_MS);
        cli_flow_bind(f, c);
    }
    return rc;
}

/* The one string: the consumer's whole command line. */
static int print_command_line(const char *cmd, const token_opts *o, const char *token, const char *pin)
{
    char line[1024];

    if (!o->auth_ca)
        fprintf(stderr, "The hash is of the root-most certificate %s presents now: check that it is your auth "
                "server's CA (or give --auth-ca).\n", o->auth_url);
    int rc;

    snprintf(line, sizeof(line), "kubectl tenantgate authenticate --auth-url %s --token %s --auth-ca-hash %s",
             o->auth_url, token, pin);
    rc = cli_print_line(cmd, line);
    OPENSSL_cleanse(line, sizeof(line));
    return rc;
}

int cli_token_create(int argc, char **argv)
{
    const char *cmd = "create token";
    cli_api_call call = { .verb = "create", .resource = "secrets", .group = "" };
    char path[256], expires[32], text[TG_BTOKEN_LEN + 1], terr[256], pin[CLI_PIN_TEXT_LEN + 1];
    char *raw = NULL;
    token_opts o;
    tg_btoken t;
    cli_cluster c;
    cli_flow f;
    json_object *sec;
    long st;
    int rc = parse(cmd, create_usage, 1, 0, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.auth_url != NULL && cli_auth_pin_for(o.auth_url, o.auth_ca, pin, sizeof(pin), terr, sizeof(terr)) != 0)
        return cli_error(cmd, "cannot take the hash of the auth server's certificate: %s", terr);
    if (tg_btoken_generate(&t) != 0)
        return cli_error(cmd, "cannot read the random number generator");
    if ((rc = open_cluster(cmd, &o, &c, &f)) != 0)
        return rc;
    if ((rc = ensure_token_namespace(&f, &c, o.ns)) != 0) {
        OPENSSL_cleanse(&t, sizeof(t));
        cli_cluster_close(&c);
        return rc;
    }
    rfc3339_after(expires, sizeof(expires), o.ttl_ms);
    sec = token_secret(&o, &t, expires);
    call.namespace_ = o.ns;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", o.ns);
    st = cli_cluster_call(&c, "POST", path, sec, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    json_object_put(sec);
    if (st != 201)
        rc = cli_flow_api_fail(&f, &c, &call, st, raw, terr);
    free(raw);
    if (rc == 0) {
        cli_flow_step(&f, NULL, "Token created");
        fprintf(stderr, "Token %s expires %s (%s). It is shown only now.\n", t.id, expires,
                o.single_use ? "single use" : "reusable until then");
        tg_btoken_format(&t, text);
        rc = o.auth_url ? print_command_line(cmd, &o, text, pin) : cli_print_line(cmd, text);
        OPENSSL_cleanse(text, sizeof(text));
    }
    OPENSSL_cleanse(&t, sizeof(t));
    cli_cluster_close(&c);
    return rc;
}

/* A Secret's data[key] as text in buf ("" when absent). */
static void data_text(json_object *sec, const char *key, char *buf, size_t len)
{
    size_t n = 0;
    unsigned char *v = cli_secret_data(sec, key, &n);

    snprintf(buf, len, "%.*s", v ? (int)n : 0, v ? (const char *)v : "");
    free(v);
}

static void print_token_row(json_object *sec, time_t now)
{
    char id[16], expires[48], usage[16], when[32];
    const char *desc = tg_json_path_string(sec, "metadata", "annotations", TOKEN_DESCRIPTION, NULL);
    struct tm tm = { 0 };

    data_text(sec, "token-id", id, sizeof(id));
    data_text(sec, "expiration", when, sizeof(when));
    data_text(sec, "usage", usage, sizeof(usage));
    snprintf(expires, sizeof(expires), "%s", when);
    if (strptime(when, "%Y-%m-%dT%H:%M:%SZ", &tm) == NULL || timegm(&tm) <= now)
        snprintf(expires, sizeof(expires), "%s (expired)", when);
    printf("%-8s %-32s %-11s %s\n", id, expires, usage, desc ? desc : "");
}

int cli_token_get(int argc, char **argv)
{
    const char *cmd = "get token";
    cli_api_call call = { .verb = "list", .resource = "secrets", .group = "" };
    char path[384], name[64], terr[256];
    char *raw = NULL;
    json_object *got = NULL, *items;
    token_opts o;
    cli_cluster c;
    cli_flow f;
    long st;
    int rc = parse(cmd, get_usage, 0, 1, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = open_cluster(cmd, &o, &c, &f)) != 0)
        return rc;
    call.namespace_ = o.ns;
    if (o.id) {
        secret_name(name, sizeof(name), o.id);
        call.verb = "get";
        call.name = name;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", o.ns, name);
    } else
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets?labelSelector=%s", o.ns,
                 "tenantgate.io%2Ftoken-id");
    st = cli_cluster_call(&c, "GET", path, NULL, TG_KUBE_CT_JSON, &got, &raw, terr, sizeof(terr));
    if (st != 200)
        rc = cli_flow_api_fail(&f, &c, &call, st, raw, terr);
    else {
        time_t now = time(NULL);
        printf("%-8s %-32s %-11s %s\n", "ID", "EXPIRES", "USAGE", "DESCRIPTION");
        if (o.id)
            print_token_row(got, now);
        else if ((items = tg_json_path(got, "items", NULL)) && json_object_is_type(items, json_type_array))
            for (size_t i = 0; i < json_object_array_length(items); i++)
                print_token_row(json_object_array_get_idx(items, i), now);
    }
    json_object_put(got);
    free(raw);
    cli_cluster_close(&c);
    return rc;
}

int cli_token_delete(int argc, char **argv)
{
    const char *cmd = "delete token";
    cli_api_call call = { .verb = "delete", .resource = "secrets", .group = "" };
    char path[384], name[64], terr[256];
    char *raw = NULL;
    token_opts o;
    cli_cluster c;
    cli_flow f;
    long st;
    int rc = parse(cmd, delete_usage, 0, 1, argc, argv, &o);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (o.id == NULL)
        return cli_usage_error(cmd, delete_usage, "ID is required");
    if ((rc = open_cluster(cmd, &o, &c, &f)) != 0)
        return rc;
    secret_name(name, sizeof(name), o.id);
    call.namespace_ = o.ns;
    call.name = name;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", o.ns, name);
    st = cli_cluster_call(&c, "DELETE", path, NULL, TG_KUBE_CT_JSON, NULL, &raw, terr, sizeof(terr));
    if (st != 200 && st != 202)
        rc = cli_flow_api_fail(&f, &c, &call, st, raw, terr);
    else
        cli_flow_step(&f, NULL, "Token deleted");
    free(raw);
    cli_cluster_close(&c);
    return rc;
}
