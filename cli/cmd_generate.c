/* cmd_generate.c - `generate tenant --offline`: the consumer's Tenant for a
 * provider's nonce (PROTOCOL.md 1 step 2), built from a local key file. Without
 * --offline the online form in cmd_generate_tenant.c runs (nonce signed by
 * the consumer's signer, key read from the cluster); `generate identity` is
 * cmd_generate_identity.c. Each resource is one entry of the table below. */
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
    "           (--nonce NONCE | --nonce-file FILE) [--public-key-format raw|pem]\n"
    "           [-o yaml|json]\n"
    "\n"
    "Print the Tenant for the provider's nonce: the public key, a CSR for\n"
    "CN=ID, O=liqo.io and the signature of the nonce, all made with the key.\n"
    "\n"
    "Options:\n"
    "  --offline           use local files, no cluster (without it: the online\n"
    "                      form, see '" TG_CLI_NAME " generate tenant --help')\n"
    "  --key FILE          this cluster's private key, PEM (privateKey.pem)\n"
    "  --cluster-id ID     this (consumer) cluster's id\n"
    "  --nonce NONCE       the nonce the provider issued, 88 characters\n"
    "  --nonce-file FILE   read the nonce from FILE ('-' = standard input)\n"
    "  --public-key-format raw|pem\n"
    "                      how an Ed25519 public key is written: raw 32 bytes\n"
    "                      (default; every Liqo provider reads it) or PEM (Liqo\n"
    "                      1.0.2+). RSA and ECDSA keys are always PEM and need a\n"
    "                      Liqo 1.0.3+ provider\n"
    "  -o, --output FMT    yaml (default) or json\n"
    "  -h, --help          show this help\n";

/* Build the three proofs from key and wrap them in a Tenant. */
static json_object *build_tenant(EVP_PKEY *key, const char *cluster_id, const char *nonce,
                                 tg_pubkey_format format)
{
    size_t pub_len = 0;
    unsigned char *pub = tg_key_public_spec(key, format, &pub_len);
    char *csr = tg_csr_build(key, cluster_id, NULL);
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    json_object *obj = NULL;

    if (pub == NULL || csr == NULL) {
        cli_error("generate tenant", "cannot build the public key or the CSR");
    } else if (tg_nonce_sign(key, nonce, TG_NONCE_TEXT_LEN, &sig, &sig_len) != 0) {
        cli_error("generate tenant", "cannot sign the nonce");
    } else {
        obj = tg_tenant_to_json(cluster_id, pub, pub_len, csr, sig, sig_len);
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
    const char *cmd = "generate tenant";
    const char *key_path = NULL, *cluster_id = NULL, *nonce_text = NULL, *nonce_file = NULL;
    const char *output = "yaml", *pubkey_format = NULL;
    int offline = 0;
    const cli_option options[] = {
        { "offline", no_argument, 'O', NULL, &offline },
        { "key", required_argument, 'k', &key_path, NULL },
        { "cluster-id", required_argument, 'c', &cluster_id, NULL },
        { "nonce", required_argument, 'n', &nonce_text, NULL },
        { "nonce-file", required_argument, 'N', &nonce_file, NULL },
        { "output", required_argument, 'o', &output, NULL },
        { "public-key-format", required_argument, 'P', &pubkey_format, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    char nonce[TG_NONCE_TEXT_LEN + 1];
    tg_pubkey_format format;
    int as_json, rc;
    EVP_PKEY *key;
    json_object *obj;

    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--offline") == 0)
            offline = 1;
    if (!offline)
        return cli_generate_tenant_online(argc, argv);
    rc = cli_parse_options(cmd, tenant_usage, "o:", options, argc, argv);
    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if ((rc = cli_output_arg(cmd, tenant_usage, output, &as_json)) != 0 ||
        (rc = cli_pubkey_format_arg(cmd, tenant_usage, pubkey_format, &format)) != 0)
        return rc;
    if (key_path == NULL || cluster_id == NULL)
        return cli_usage_error(cmd, tenant_usage, "--key and --cluster-id are required");
    if ((rc = cli_cluster_id_arg(cmd, tenant_usage, "--cluster-id", cluster_id)) != 0)
        return rc;
    rc = cli_nonce_arg(cmd, tenant_usage, nonce_text, nonce_file, nonce);
    if (rc != 0)
        return rc;
    key = cli_load_private_key(cmd, key_path);
    if (key == NULL)
        return TG_EXIT_USAGE;
    obj = build_tenant(key, cluster_id, nonce, format);
    EVP_PKEY_free(key);
    OPENSSL_cleanse(nonce, sizeof(nonce));
    return cli_print_result(cmd, obj != NULL ? TG_EXIT_OK : TG_EXIT_USAGE, obj, as_json);
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
