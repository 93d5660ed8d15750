/* cmd_nonce.c - `nonce`: print a new nonce (PROTOCOL.md 4). */
#include <stdio.h>

#include "cli.h"
#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " nonce\n"
    "\n"
    "Print a new nonce: 64 random bytes as padded base64 (88 characters).\n";

int cmd_nonce(int argc, char **argv)
{
    const cli_option options[] = { { NULL, 0, 0, NULL, NULL } };
    char nonce[TG_NONCE_TEXT_LEN + 1];
    int rc = cli_parse_options("nonce", usage, "", options, argc, argv);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (tg_nonce_generate(nonce) != 0)
        return cli_error("nonce", "cannot generate a nonce (no randomness?)");
    return cli_print_line("nonce", nonce);
}
