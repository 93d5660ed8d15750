/* cmd_delete.c - `delete resourceslice` (consumer) and `delete token`
 * (provider). */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " delete resourceslice NAME --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " delete token ID [OPTIONS]\n";

static const cli_resource resources[] = {
    { CLI_SLICE_WORDS, cli_slice_delete },
    { CLI_TOKEN_WORDS, cli_token_delete },
    { { NULL }, NULL },
};

int cmd_delete(int argc, char **argv)
{
    return cli_resource_verb("delete", usage, resources, argc, argv);
}
