/* cmd_get.c - `get nonce` (provider), `get resourceslice` (consumer) and
 * `get token` (provider). */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " get resourceslice [NAME] --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " get token [ID] [OPTIONS]\n";

static const cli_resource resources[] = {
    { CLI_NONCE_WORDS, cli_get_nonce },
    { CLI_SLICE_WORDS, cli_slice_get },
    { CLI_TOKEN_WORDS, cli_token_get },
    { { NULL }, NULL },
};

int cmd_get(int argc, char **argv)
{
    return cli_resource_verb("get", usage, resources, argc, argv);
}
