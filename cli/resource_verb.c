/* resource_verb.c - kubectl's shape for create / get / delete: the verb, then
 * the resource word, then that resource's own arguments. */
#include "online.h"

#include <string.h>

int cli_resource_verb(const char *verb, const char *usage, int (*run_nonce)(int, char **),
                      int (*run_slice)(int, char **), int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(verb, usage, "no resource given (%sresourceslice)", run_nonce ? "nonce, " : "");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return TG_EXIT_OK;
    }
    if (run_nonce != NULL && strcmp(argv[1], "nonce") == 0)
        return run_nonce(argc - 1, argv + 1);
    if (cli_is_slice_word(argv[1]))
        return run_slice(argc - 1, argv + 1);
    return cli_usage_error(verb, usage, "unknown resource \"%s\"", argv[1]);
}
