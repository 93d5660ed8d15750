/* cmd_keygen.c - `keygen`: the cluster key pair in the formats of the
 * `authentication-keys` secret (PROTOCOL.md 3): privateKey.pem (PKCS#8, mode 0600)
 * and publicKey.pem (PKIX). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "pki/keys.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " keygen --out DIR [--key-type ed25519|rsa2048|ecdsa-p256]\n"
    "           [--force]\n"
    "\n"
    "Create a cluster key pair: DIR/privateKey.pem (PEM PKCS#8, mode 0600) and\n"
    "DIR/publicKey.pem (PEM PKIX), the formats of the authentication-keys secret.\n"
    "\n"
    "Options:\n"
    "  --out DIR     directory to write to (created, mode 0700, if missing)\n"
    "  --key-type T  ed25519 (default), rsa2048 or ecdsa-p256 (rsa2048 is the key\n"
    "                of Liqo's --tls-compatibility-mode)\n"
    "  --force       overwrite existing key files\n"
    "  -h, --help    show this help\n";

#define PRIVATE_KEY_FILE "privateKey.pem"
#define PUBLIC_KEY_FILE "publicKey.pem"

static int ensure_dir(const char *dir)
{
    struct stat st;

    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    if (errno == EEXIST)
        return cli_error("keygen", "%s exists and is not a directory", dir);
    return cli_error("keygen", "cannot create directory %s: %s", dir, strerror(errno));
}

static int write_keys(EVP_PKEY *key, const char *priv_path, const char *pub_path, int force)
{
    char err[1024];
    size_t priv_len = 0, pub_len = 0;
    char *priv = tg_key_private_pem(key, &priv_len);
    char *pub = tg_key_public_pem(key, &pub_len);
    int rc = TG_EXIT_USAGE;

    if (priv == NULL || pub == NULL) {
        cli_error("keygen", "cannot encode the key");
        goto out;
    }
    if (cli_write_file(priv_path, priv, priv_len, 0600, force, err, sizeof(err)) != 0 ||
        cli_write_file(pub_path, pub, pub_len, 0644, force, err, sizeof(err)) != 0) {
        cli_error("keygen", "%s", err);
        goto out;
    }
    rc = TG_EXIT_OK;
out:
    cli_free_secret(priv, priv_len);
    free(pub);
    return rc;
}

int cmd_keygen(int argc, char **argv)
{
    const char *dir = NULL, *type_name = "ed25519";
    int force = 0;
    const cli_option options[] = {
        { "out", required_argument, 'o', &dir, NULL },
        { "key-type", required_argument, 't', &type_name, NULL },
        { "force", no_argument, 'f', NULL, &force },
        { NULL, 0, 0, NULL, NULL },
    };
    char priv_path[4096], pub_path[4096];
    tg_key_type type;
    EVP_PKEY *key;
    int rc = cli_parse_options("keygen", usage, "", options, argc, argv);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (dir == NULL || *dir == '\0')
        return cli_usage_error("keygen", usage, "--out DIR is required");
    if (tg_key_type_parse(type_name, &type) != 0)
        return cli_key_type_error("keygen", usage, type_name);
    if ((size_t)snprintf(priv_path, sizeof(priv_path), "%s/%s", dir, PRIVATE_KEY_FILE) >=
            sizeof(priv_path) ||
        (size_t)snprintf(pub_path, sizeof(pub_path), "%s/%s", dir, PUBLIC_KEY_FILE) >=
            sizeof(pub_path))
        return cli_usage_error("keygen", usage, "--out: path too long");
    /* Refuse before generating anything, so a refusal leaves no half pair. */
    if (!force && (access(priv_path, F_OK) == 0 || access(pub_path, F_OK) == 0))
        return cli_error("keygen", "%s already holds a key pair (use --force to overwrite)", dir);
    rc = ensure_dir(dir);
    if (rc != 0)
        return rc;
    key = tg_key_generate(type);
    if (key == NULL)
        return cli_error("keygen", "cannot generate a %s key", type_name);
    rc = write_keys(key, priv_path, pub_path, force);
    EVP_PKEY_free(key);
    if (rc == TG_EXIT_OK)
        printf("wrote %s and %s (%s)\n", priv_path, pub_path, type_name);
    return rc;
}
