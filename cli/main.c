/* main.c - kubectl-tenantgate: find the subcommand and run it.
 *
 * Installed on PATH under this exact name, kubectl runs it for
 * `kubectl tenantgate ...`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const tg_command commands[] = {
    { "keygen", "create the cluster key pair (authentication-keys format)", cmd_keygen },
    { "nonce", "print a new nonce", cmd_nonce },
    { "sign-nonce", "sign a nonce with the cluster key, print the base64 signature",
      cmd_sign_nonce },
    { "generate", "generate a Tenant (consumer) or an Identity (provider)", cmd_generate },
    { "check", "check a Tenant offline, as the admission webhook would", cmd_check },
    { "create", "create nonce (provider) | resourceslice (consumer: ask for resources)", cmd_create },
    { "get", "get nonce (provider) | resourceslice (consumer)", cmd_get },
    { "delete", "delete resourceslice (consumer)", cmd_delete },
    { "authenticate", "the whole handshake, with access to both clusters", cmd_authenticate },
    { "unauthenticate", "undo authenticate: remove the Identity and the Tenant",
      cmd_unauthenticate },
    { "install", "record this cluster's id where Liqo keeps it (no Liqo needed)", cmd_install },
    { "preflight", "before peering: can these two clusters peer? one line per check",
      cmd_preflight },
    { "revoke", "provider: revoke one consumer certificate at once (--revocable ones)", cmd_revoke },
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [--help] [--version] COMMAND [ARGS]\n"
            "\n"
            "Liqo cluster authentication, checked before it is stored.\n"
            "\n"
            "Commands:\n", TG_CLI_NAME);
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-15s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun '%s COMMAND --help' for the options of a command.\n"
                 "Exit status: 0 done, 1 failed or rejected, 2 usage or local error,\n"
                 "3 cluster unreachable, 4 timed out waiting.\n", TG_CLI_NAME);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    cli_getopt_reset();
    /* '+': stop at the command name, its options are its own. */
    while ((ch = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
        switch (ch) {
        case 'h':
            print_usage(stdout);
            return TG_EXIT_OK;
        case 'V':
            printf("%s %s\n", TG_CLI_NAME, TG_VERSION);
            return TG_EXIT_OK;
        default:
            fprintf(stderr, "%s: unknown option %s\n", TG_CLI_NAME, argv[optind - 1]);
            print_usage(stderr);
            return TG_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "%s: no command given\n", TG_CLI_NAME);
        print_usage(stderr);
        return TG_EXIT_USAGE;
    }
    if (strcmp(argv[optind], "help") == 0) {
        print_usage(stdout);
        return TG_EXIT_OK;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[optind], commands[i].name) == 0)
            return commands[i].run(argc - optind, argv + optind);
    fprintf(stderr, "%s: unknown command \"%s\"\n", TG_CLI_NAME, argv[optind]);
    print_usage(stderr);
    return TG_EXIT_USAGE;
}
