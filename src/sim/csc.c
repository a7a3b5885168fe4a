/* PLACEHOLDER until the convolution pipeline lands (owned by the conv work); replace whole. */
#include <stdlib.h>

#include "sim/dla.h"

struct dla_conv_state {
    int unused;
};

int dla_conv_state_create(struct dla_dev *d, struct dla_conv_state **out)
{
    (void)d;
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : DLASIM_ERR_NOMEM;
}

void dla_conv_state_destroy(struct dla_conv_state *s)
{
    free(s);
}

void dla_conv_reset(struct dla_dev *d)
{
    dla_reg_hw_set(d, NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0, 0,
                   NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0_FLUSH_DONE__MASK);
}

int dla_conv_execute(struct dla_dev *d, unsigned group, struct dla_cube *to_sdp)
{
    (void)group;
    (void)to_sdp;
    return dla_error(d, DLASIM_ERR_UNSUPPORTED, "CONV: not built yet");
}
