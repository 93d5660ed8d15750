/* cmd_delete.c - `delete resourceslice` (consumer, cmd_slice.c); a nonce is
 * not deleted by hand. */
#include "online.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " delete resourceslice NAME --remote-cluster-id ID [OPTIONS]\n";

int cmd_delete(int argc, char **argv)
{
    return cli_resource_verb("delete", usage, NULL, cli_slice_delete, argc, argv);
}
