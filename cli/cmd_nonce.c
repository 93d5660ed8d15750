/* cmd_nonce.c - `nonce`: print a new nonce (SPEC.md 4). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "pki/nonce.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " nonce\n"
    "\n"
    "Print a new nonce: 64 random bytes as padded base64 (88 characters).\n";

int cmd_nonce(int argc, char **argv)
{
    static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char nonce[TG_NONCE_TEXT_LEN + 1];
    int ch;

    cli_getopt_reset();
    while ((ch = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (ch == 'h') {
            fputs(usage, stdout);
            return TG_EXIT_OK;
        }
        return cli_bad_option("nonce", usage, ch, argv);
    }
    if (optind < argc)
        return cli_usage_error("nonce", usage, "unexpected argument \"%s\"", argv[optind]);
    if (tg_nonce_generate(nonce) != 0)
        return cli_error("nonce", "cannot generate a nonce (no randomness?)");
    if (printf("%s\n", nonce) < 0 || fflush(stdout) != 0)
        return cli_error("nonce", "cannot write to standard output");
    return TG_EXIT_OK;
}
