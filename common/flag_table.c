/* flag_table.c - see flag_table.h. getopt_long does the parsing; this file
 * only turns the table into its options and its --help. */
#include "common/flag_table.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* --help: the flag and its value, then its help from this column on. */
#define HELP_COLUMN 28

/* ids of the table become getopt values past every character */
#define ID_BASE 256

static void usage_row(const tg_flag *f, FILE *out)
{
    char head[128];
    const char *line = f->help, *nl;
    int n;

    if (f->value == TG_FLAG_NONE)
        n = snprintf(head, sizeof(head), "  --%s", f->name);
    else
        n = snprintf(head, sizeof(head), f->value == TG_FLAG_OPTIONAL ? "  --%s[=%s]" : "  --%s %s", f->name,
                     f->arg ? f->arg : "VALUE");
    /* a long head keeps two blanks before its help, as a short one keeps at least one */
    fprintf(out, "%s%*s", head, n < HELP_COLUMN - 1 ? HELP_COLUMN - n : 2, "");
    for (;;) {
        nl = strchr(line, '\n');
        fprintf(out, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
        if (!nl)
            break;
        line = nl + 1;
        fprintf(out, "%*s", HELP_COLUMN, "");
    }
}

void tg_flags_usage(const tg_flag_program *p, FILE *out)
{
    fprintf(out, "usage: %s %s\n\n", p->name, p->synopsis);
    if (p->about)
        fprintf(out, "%s\n\n", p->about);
    for (size_t i = 0; i < p->nflags; i++)
        usage_row(&p->flags[i], out);
    fprintf(out, "  -h, --help\n");
}

/* The table as getopt_long's options, help last, then the terminator. */
static struct option *options_of(const tg_flag_program *p)
{
    static const int has_arg[] = {
        [TG_FLAG_NONE] = no_argument, [TG_FLAG_REQUIRED] = required_argument, [TG_FLAG_OPTIONAL] = optional_argument,
    };
    struct option *o = calloc(p->nflags + 2, sizeof(*o));

    if (!o)
        return NULL;
    for (size_t i = 0; i < p->nflags; i++)
        o[i] = (struct option){p->flags[i].name, has_arg[p->flags[i].value], NULL, ID_BASE + (int)i};
    o[p->nflags] = (struct option){"help", no_argument, NULL, 'h'};
    return o;
}

static int bad_value(const tg_flag_program *p, const tg_flag *f, const char *value)
{
    fprintf(stderr, "%s: bad value for --%s: %s%s%s\n", p->name, f->name, value ? value : "(none)",
            f->expected ? ": " : "", f->expected ? f->expected : "");
    return 2;
}

int tg_flags_parse(const tg_flag_program *p, int argc, char **argv, void *ctx)
{
    struct option *opts = options_of(p);
    int c, status = -1;

    if (!opts) {
        fprintf(stderr, "%s: out of memory\n", p->name);
        return 2;
    }
    optind = 0;     /* glibc: a full re-initialisation of getopt */
    while (status < 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        const tg_flag *f = c >= ID_BASE && (size_t)(c - ID_BASE) < p->nflags ? &p->flags[c - ID_BASE] : NULL;

        if (c == 'h') {
            tg_flags_usage(p, stdout);
            status = 0;
        } else if (!f) {
            tg_flags_usage(p, stderr);      /* getopt_long said which flag */
            status = 2;
        } else if (p->take(ctx, f->id, optarg) != 0) {
            status = bad_value(p, f, optarg);
        }
    }
    if (status < 0 && optind != argc) {
        fprintf(stderr, "%s: unexpected argument: %s\n", p->name, argv[optind]);
        tg_flags_usage(p, stderr);
        status = 2;
    }
    free(opts);
    return status;
}
