/* cmd_create.c - `create nonce` (provider, cmd_create_nonce.c), `create
 * resourceslice` (consumer, cmd_slice.c) and `create token` (provider,
 * cmd_token.c). */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " create nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " create resourceslice NAME --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " create token [--ttl DURATION] [--single-use] [OPTIONS]\n";

static const cli_resource resources[] = {
    { CLI_NONCE_WORDS, cli_create_nonce },
    { CLI_SLICE_WORDS, cli_slice_create },
    { CLI_TOKEN_WORDS, cli_token_create },
    { { NULL }, NULL },
};

int cmd_create(int argc, char **argv)
{
    return cli_resource_verb("create", usage, resources, argc, argv);
}
