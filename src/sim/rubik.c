/*
 * RUBIK (reshape engine), CSB window 0x11000-0x11fff, GLB RUBIK_DONE_STATUS0/1.
 * Present only where NVDLA_RUBIK_ENABLE is set (not on nv_small).
 *
 * Not modelled yet: a layer enabled on RUBIK completes with its interrupt and
 * reports DLASIM_ERR_UNSUPPORTED, so a driver is never left waiting.
 */
#include "sim/dla.h"

int dla_rubik_execute(struct dla_dev *d, unsigned group)
{
    (void)group;
    dla_log(d, DLASIM_LOG_UNIMP, "RUBIK: contract/split/merge are not modelled yet");
    return dla_error(d, DLASIM_ERR_UNSUPPORTED, "RUBIK: contract/split/merge are not modelled yet");
}
