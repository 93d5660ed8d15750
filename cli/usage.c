/* usage.c - error and usage messages shared by the commands. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

static void vsay(const char *cmd, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void vsay(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s %s: ", TG_CLI_NAME, cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    return TG_EXIT_USAGE;
}

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    fputs(usage, stderr);
    return TG_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, const char *usage, int ch, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";

    if (ch == ':')
        return cli_usage_error(cmd, usage, "option %s needs a value", arg);
    if (optopt != 0)
        return cli_usage_error(cmd, usage, "unknown option -%c", optopt);
    return cli_usage_error(cmd, usage, "unknown option %s", arg);
}

void cli_getopt_reset(void)
{
    optind = 0;        /* glibc: 0 re-initialises the scanner completely */
    opterr = 0;        /* we print our own messages */
}
