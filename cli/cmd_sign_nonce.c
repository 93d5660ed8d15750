/* cmd_sign_nonce.c - `sign-nonce`: what the consumer's nonce signer does
 * (PROTOCOL.md 4 and 7), by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "kube/base64.h"
#include "pki/nonce.h"
#include "pki/signature.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " sign-nonce --key FILE (--nonce NONCE | --nonce-file FILE)\n"
    "\n"
    "Sign the nonce text with the cluster private key and print the signature\n"
    "in base64.\n"
    "\n"
    "Options:\n"
    "  --key FILE          private key, PEM (privateKey.pem from keygen)\n"
    "  --nonce NONCE       the nonce text, 88 characters\n"
    "  --nonce-file FILE   read the nonce from FILE ('-' = standard input)\n"
    "  -h, --help          show this help\n";

int cmd_sign_nonce(int argc, char **argv)
{
    const char *key_path = NULL, *nonce_text = NULL, *nonce_file = NULL;
    const cli_option options[] = {
        { "key", required_argument, 'k', &key_path, NULL },
        { "nonce", required_argument, 'n', &nonce_text, NULL },
        { "nonce-file", required_argument, 'N', &nonce_file, NULL },
        { NULL, 0, 0, NULL, NULL },
    };
    char nonce[TG_NONCE_TEXT_LEN + 1];
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    char *b64;
    EVP_PKEY *key;
    int rc = cli_parse_options("sign-nonce", usage, "", options, argc, argv);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (key_path == NULL)
        return cli_usage_error("sign-nonce", usage, "--key is required");
    rc = cli_nonce_arg("sign-nonce", usage, nonce_text, nonce_file, nonce);
    if (rc != 0)
        return rc;
    key = cli_load_private_key("sign-nonce", key_path);
    if (key == NULL)
        return TG_EXIT_USAGE;
    rc = tg_nonce_sign(key, nonce, TG_NONCE_TEXT_LEN, &sig, &sig_len);
    EVP_PKEY_free(key);
    OPENSSL_cleanse(nonce, sizeof(nonce));
    if (rc != 0)
        return cli_error("sign-nonce", "cannot sign with the key in %s", key_path);
    b64 = tg_base64_encode(sig, sig_len, NULL);
    free(sig);
    if (b64 == NULL)
        return cli_error("sign-nonce", "out of memory");
    rc = cli_print_line("sign-nonce", b64);
    free(b64);
    return rc;
}
