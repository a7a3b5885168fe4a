/* `dlasim info`: decode the ConfigROM read through the CSB. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dlasim/rk3588.h"
#include "info.h"

int cmd_info(int argc, char **argv)
{
    struct cli_common c;
    memset(&c, 0, sizeof(c));
    for (int i = 1; i < argc; i++) {
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0) {
            return 2;
        }
        if (!r) {
            fprintf(stderr, "dlasim info: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    struct dlasim_dev *dev = cli_create_device(&c);
    if (!dev) {
        return 1;
    }
    int rc = dlasim_rk_cores(dev) ? rk_info(dev, stdout) : dlasim_cmd_info(dev, stdout);
    if (rc) {
        fprintf(stderr, "dlasim info: %s\n", dlasim_last_error(dev));
    }
    dlasim_destroy(dev);
    return rc ? 1 : 0;
}
