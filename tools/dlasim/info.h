/*
 * `dlasim info`: decode the ConfigROM of a device (read through the public
 * CSB API only) into a readable hardware configuration.
 */
#ifndef DLASIM_TOOLS_INFO_H
#define DLASIM_TOOLS_INFO_H

#include <stdio.h>

#include "dlasim/dlasim.h"

/* Walk the ConfigROM from CSB address 0 and print every sub-unit with its
 * decoded capabilities and parameters.  Returns 0 or a negative
 * enum dlasim_status (CSB read failure, malformed descriptor list). */
int dlasim_cmd_info(struct dlasim_dev *dev, FILE *out);

#endif
