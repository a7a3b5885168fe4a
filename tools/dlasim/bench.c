/* `dlasim bench`: performance table (filled in with the convolution pipeline). */
#include <stdio.h>

#include "cli.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "dlasim bench: not available yet\n");
    return 1;
}
