/* cmd_create.c - `create nonce` (provider, cmd_create_nonce.c) and `create
 * resourceslice` (consumer, cmd_slice.c). */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " create nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " create resourceslice NAME --remote-cluster-id ID [OPTIONS]\n";

int cmd_create(int argc, char **argv)
{
    return cli_resource_verb("create", usage, cli_create_nonce, cli_slice_create, argc, argv);
}
