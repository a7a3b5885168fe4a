/* PLACEHOLDER until the SDP engine lands (owned by the SDP work); replace this file whole. */
#include "sim/dla.h"

int dla_sdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in,
                    struct dla_cube *to_pdp)
{
    (void)group;
    (void)in;
    (void)to_pdp;
    return dla_error(d, DLASIM_ERR_UNSUPPORTED, "SDP: not built yet");
}

int dla_sdp_needs_rdma(const struct dla_dev *d, unsigned group)
{
    return !DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, FLYING_MODE);
}

int dla_sdp_output_to_pdp(const struct dla_dev *d, unsigned group)
{
    return DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, OUTPUT_DST) != 0;
}

int dla_sdp_flying(const struct dla_dev *d, unsigned group)
{
    return DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, FLYING_MODE) != 0;
}
