/* `dlasim estimate`: whole-network cycle and fps estimates (placeholder). */
#include <stdio.h>

#include "cli.h"

int cmd_estimate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "dlasim estimate: not yet\n");
    return 2;
}
