/* args.c - the option loop and the option values every command checks alike,
 * so that each command's flags behave and fail in the same words. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "pki/tenant.h"

/* The most long options one command declares (online_cmd.c's shared table
 * is the largest); the table is fixed at compile time, so this is a bound on
 * our own code, not on input. */
#define MAX_OPTIONS 24

static const cli_option *find_option(const cli_option *opts, int ch)
{
    for (; opts->name != NULL; opts++)
        if (opts->ch == ch)
            return opts;
    return NULL;
}

int cli_parse_options(const char *cmd, const char *usage, const char *shortopts,
                      const cli_option *opts, int argc, char **argv)
{
    struct option longopts[MAX_OPTIONS + 2];
    char optstring[64];
    size_t n = 0;
    int ch;

    for (; opts[n].name != NULL; n++) {
        if (n == MAX_OPTIONS)
            return cli_error(cmd, "internal error: more than %d options", MAX_OPTIONS);
        longopts[n] = (struct option){ opts[n].name, opts[n].has_arg, NULL, opts[n].ch };
    }
    /* help last and the terminator: getopt_long matches abbreviations in
     * table order. */
    longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
    longopts[n + 1] = (struct option){ NULL, 0, NULL, 0 };
    /* ':' first: a missing value is told apart from an unknown option. */
    snprintf(optstring, sizeof(optstring), ":h%s", shortopts);

    cli_getopt_reset();
    while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        const cli_option *o;

        if (ch == 'h') {
            fputs(usage, stdout);
            return CLI_HELP_SHOWN;
        }
        o = ch == '?' || ch == ':' ? NULL : find_option(opts, ch);
        if (o == NULL)
            return cli_bad_option(cmd, usage, ch, argv);
        if (o->value != NULL)
            *o->value = optarg;
        else if (o->set != NULL)
            *o->set = 1;
        else
            return cli_usage_error(cmd, usage, "option %s does not apply here", argv[optind - 1]);
    }
    if (optind < argc)
        return cli_usage_error(cmd, usage, "unexpected argument \"%s\"", argv[optind]);
    return 0;
}

int cli_output_arg(const char *cmd, const char *usage, const char *output, int *as_json)
{
    if (strcmp(output, "yaml") != 0 && strcmp(output, "json") != 0)
        return cli_usage_error(cmd, usage, "-o: expected yaml or json, found \"%s\"", output);
    *as_json = strcmp(output, "json") == 0;
    return 0;
}

int cli_pubkey_format_arg(const char *cmd, const char *usage, const char *text, tg_pubkey_format *out)
{
    *out = TG_PUBKEY_RAW;
    if (text != NULL && tg_pubkey_format_parse(text, out) != 0)
        return cli_usage_error(cmd, usage, "--public-key-format: expected raw or pem, found \"%.32s\"",
                               text);
    return 0;
}

int cli_key_type_error(const char *cmd, const char *usage, const char *text)
{
    return cli_usage_error(cmd, usage, "--key-type: expected ed25519, rsa2048 or ecdsa-p256, found \"%.32s\"",
                           text);
}

int cli_key_type_arg(const char *cmd, const char *usage, const char *text, int *out)
{
    tg_key_type type;

    *out = -1;
    if (text == NULL)
        return 0;
    if (tg_key_type_parse(text, &type) != 0)
        return cli_key_type_error(cmd, usage, text);
    *out = (int)type;
    return 0;
}

int cli_cluster_id_arg(const char *cmd, const char *usage, const char *flag, const char *id)
{
    if (!tg_cluster_id_valid(id))
        return cli_usage_error(cmd, usage, "%s: expected at most 63 characters of [a-z0-9-], "
                               "starting and ending alphanumeric, found \"%.64s\"", flag, id);
    return 0;
}
