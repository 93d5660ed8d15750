/* cmd_get.c - `get nonce` (provider, cmd_get_nonce.c) and `get resourceslice`
 * (consumer, cmd_slice.c). */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " get nonce --remote-cluster-id ID [OPTIONS]\n"
    "       " TG_CLI_NAME " get resourceslice [NAME] --remote-cluster-id ID [OPTIONS]\n";

int cmd_get(int argc, char **argv)
{
    return cli_resource_verb("get", usage, cli_get_nonce, cli_slice_get, argc, argv);
}
