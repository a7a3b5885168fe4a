/*
 * BDMA (bridge DMA), CSB window 0x10000-0x10fff, GLB BDMA_DONE_STATUS0/1.
 * Present only where NVDLA_BDMA_ENABLE is set (not on nv_small).
 *
 * Not modelled yet: a layer enabled on BDMA completes with its interrupt and
 * reports DLASIM_ERR_UNSUPPORTED, so a driver is never left waiting.
 */
#include "sim/dla.h"

int dla_bdma_execute(struct dla_dev *d, unsigned group)
{
    (void)group;
    dla_log(d, DLASIM_LOG_UNIMP, "BDMA: transfers are not modelled yet");
    return dla_error(d, DLASIM_ERR_UNSUPPORTED, "BDMA: transfers are not modelled yet");
}
