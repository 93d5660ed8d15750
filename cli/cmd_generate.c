/* cmd_generate.c - `generate tenant --offline`: the consumer's Tenant for a
 * provider's nonce (SPEC.md 1 step 2), built from a local key file. Without
 * --offline the online form in cmd_online.c runs (nonce signed by the
 * consumer's signer, key read from the cluster); `generate identity` is there
 * too. Each resource is one entry of the table below. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "online.h"
#include "kube/tenant_json.h"
#include "kube/yaml.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/nonce.h"
#include "pki/signature.h"
#include "pki/tenant.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " generate RESOURCE [OPTIONS]\n"
    "\n"
    "Resources:\n"
    "  tenant    the Tenant a consumer hands to its provider\n"
    "  identity  the Identity a provider hands back to its consumer\n"
    "\n"
    "Run '" TG_CLI_NAME " generate RESOURCE --help' for its options.\n";

static const char tenant_usage[] =
    "Usage: " TG_CLI_NAME " generate tenant --offline --key FILE --cluster-id ID\n"
    "           (--nonce NONCE | --nonce-file FILE) [-o yaml|json]\n"
    "\n"
    "Print the Tenant for the provider's nonce: the public key (PEM), a CSR for\n"
    "CN=ID, O=liqo.io and the signature of the nonce, all made with the key.\n"
    "\n"
    "Options:\n"
    "  --offline           use local files, no cluster (without it: the online\n"
    "                      form, see '" TG_CLI_NAME " generate tenant --help')\n"
    "  --key FILE          this cluster's private key, PEM (privateKey.pem)\n"
    "  --cluster-id ID     this (consumer) cluster's id\n"
    "  --nonce NONCE       the nonce the provider issued, 88 characters\n"
    "  --nonce-file FILE   read the nonce from FILE ('-' = standard input)\n"
    "  -o, --output FMT    yaml (default) or json\n"
    "  -h, --help          show this help\n";

/* Build the three proofs from key and wrap them in a Tenant. */
static json_object *build_tenant(EVP_PKEY *key, const char *cluster_id, const char *nonce)
{
    char *pub = tg_key_public_pem(key, NULL);
    char *csr = tg_csr_build(key, cluster_id, NULL);
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    json_object *obj = NULL;

    if (pub == NULL || csr == NULL) {
        cli_error("generate tenant", "cannot build the public key or the CSR");
    } else if (tg_nonce_sign(key, nonce, TG_NONCE_TEXT_LEN, &sig, &sig_len) != 0) {
        cli_error("generate tenant", "cannot sign the nonce");
    } else {
        obj = tg_tenant_to_json(cluster_id, pub, csr, sig, sig_len);
        if (obj == NULL)
            cli_error("generate tenant", "out of memory");
    }
    free(pub);
    free(csr);
    free(sig);
    return obj;
}

static int generate_tenant(int argc, char **argv)
{
    static const struct option options[] = {
        { "offline", no_argument, NULL, 'O' },
        { "key", required_argument, NULL, 'k' },
        { "cluster-id", required_argument, NULL, 'c' },
        { "nonce", required_argument, NULL, 'n' },
        { "nonce-file", required_argument, NULL, 'N' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *cmd = "generate tenant";
    const char *key_path = NULL, *cluster_id = NULL, *nonce_text = NULL, *nonce_file = NULL;
    const char *output = "yaml";
    char nonce[TG_NONCE_TEXT_LEN + 1];
    int offline = 0, as_json, ch, rc;
    EVP_PKEY *key;
    json_object *obj;

    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--offline") == 0)
            offline = 1;
    if (!offline)
        return cli_generate_tenant_online(argc, argv);
    cli_getopt_reset();
    while ((ch = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (ch) {
        case 'O':
            offline = 1;
            break;
        case 'k':
            key_path = optarg;
            break;
        case 'c':
            cluster_id = optarg;
            break;
        case 'n':
            nonce_text = optarg;
            break;
        case 'N':
            nonce_file = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            fputs(tenant_usage, stdout);
            return TG_EXIT_OK;
        default:
            return cli_bad_option(cmd, tenant_usage, ch, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, tenant_usage, "unexpected argument \"%s\"", argv[optind]);
    if (strcmp(output, "yaml") != 0 && strcmp(output, "json") != 0)
        return cli_usage_error(cmd, tenant_usage, "-o: expected yaml or json, found \"%s\"", output);
    as_json = strcmp(output, "json") == 0;
    if (key_path == NULL || cluster_id == NULL)
        return cli_usage_error(cmd, tenant_usage, "--key and --cluster-id are required");
    if (!tg_cluster_id_valid(cluster_id))
        return cli_usage_error(cmd, tenant_usage,
                               "--cluster-id: expected at most 63 characters of [a-z0-9-], "
                               "starting and ending alphanumeric, found \"%.64s\"", cluster_id);
    rc = cli_nonce_arg(cmd, tenant_usage, nonce_text, nonce_file, nonce);
    if (rc != 0)
        return rc;
    key = cli_load_private_key(cmd, key_path);
    if (key == NULL)
        return TG_EXIT_USAGE;
    obj = build_tenant(key, cluster_id, nonce);
    EVP_PKEY_free(key);
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (obj == NULL)
        return TG_EXIT_USAGE;
    rc = cli_print_object(cmd, obj, as_json);
    json_object_put(obj);
    return rc;
}

static const tg_command resources[] = {
    { "tenant", "the Tenant a consumer hands to its provider", generate_tenant },
    { "identity", "the Identity a provider hands back to its consumer", cli_generate_identity },
};

int cmd_generate(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("generate", usage, "no resource given");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return TG_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(resources) / sizeof(resources[0]); i++)
        if (strcmp(argv[1], resources[i].name) == 0)
            return resources[i].run(argc - 1, argv + 1);
    return cli_usage_error("generate", usage, "unknown resource \"%s\"", argv[1]);
}
