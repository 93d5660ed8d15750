/* resource_verb.c - kubectl's shape for create / get / delete: the verb, then
 * the resource word, then that resource's own arguments. */
#include "online.h"

#include <string.h>

static int names(const cli_resource *r, const char *word)
{
    for (size_t i = 0; i < sizeof(r->words) / sizeof(r->words[0]) && r->words[i]; i++)
        if (strcmp(r->words[i], word) == 0)
            return 1;
    return 0;
}

int cli_resource_verb(const char *verb, const char *usage, const cli_resource *resources, int argc,
                      char **argv)
{
    char known[128] = "";

    for (const cli_resource *r = resources; r->run; r++)
        snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                 r == resources ? "" : ", ", r->words[0]);
    if (argc < 2)
        return cli_usage_error(verb, usage, "no resource given (%s)", known);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return TG_EXIT_OK;
    }
    for (const cli_resource *r = resources; r->run; r++)
        if (names(r, argv[1]))
            return r->run(argc - 1, argv + 1);
    return cli_usage_error(verb, usage, "unknown resource \"%s\" (%s)", argv[1], known);
}
