/* flag_table.h - one way for every program to take its command-line flags:
 * a table of rows (name, value, help, id), from which the getopt_long
 * options, --help and the "bad value" messages are made. Each program keeps
 * one take() that stores a row's value (flags.h parses the common kinds). */
#ifndef TG_COMMON_FLAG_TABLE_H
#define TG_COMMON_FLAG_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum tg_flag_value {
    TG_FLAG_NONE = 0,            /* --name */
    TG_FLAG_REQUIRED,            /* --name VALUE, --name=VALUE */
    TG_FLAG_OPTIONAL,            /* --name, --name=VALUE (a Go bool flag) */
} tg_flag_value;

typedef struct tg_flag {
    const char *name;            /* without "--" */
    tg_flag_value value;
    const char *arg;             /* what the value is, for --help ("FILE", "SECONDS") */
    int id;                      /* passed to take(); unique in the table */
    const char *help;            /* its --help text; "\n" starts an indented line */
    const char *expected;        /* appended to the "bad value" message, or NULL */
} tg_flag;

typedef struct tg_flag_program {
    const char *name;            /* "tenantgate-webhook": --help and messages */
    const char *synopsis;        /* "--cert FILE --key FILE [options]" */
    const char *about;           /* paragraph(s) between the usage line and the flags */
    const tg_flag *flags;
    size_t nflags;
    /* Store flag id's value (NULL for TG_FLAG_NONE, or an optional value
     * left out): 0, or -1 when the value is bad. */
    int (*take)(void *ctx, int id, const char *value);
} tg_flag_program;

/* Parse argv with the table: every flag to take(). -1 when the program goes
 * on (every flag taken, no operand left); otherwise its exit status: 0 after
 * --help (on stdout), 2 after an unknown flag, a bad value or an operand
 * (a message and --help on stderr). Resets getopt first, so it may be called
 * again (tests). */
int tg_flags_parse(const tg_flag_program *p, int argc, char **argv, void *ctx);

/* "usage: NAME SYNOPSIS", the about text, then one row per flag. */
void tg_flags_usage(const tg_flag_program *p, FILE *out);

#endif
