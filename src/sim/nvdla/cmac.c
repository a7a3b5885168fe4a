/*
 * CMAC_A / CMAC_B — the MAC array halves (Atomic-K / 2 MAC cells each).
 *
 * CSB windows 0x5000 (CMAC_A) and 0x6000 (CMAC_B).  No interrupt, no memory
 * port.  Their registers carry only the mode and precision of the layer
 * (D_MISC_CFG); the products themselves are computed by the convolution
 * kernel that csc.c calls (ref: cmod/cmac NV_NVDLA_cmac::sc2mac_dat_b_transport:
 * int8 data x int8 weight, summed over Atomic-C per cell; INT16 layers:
 * nv_full cmod/cmac calculation_int16, int16 data x int16 weight summed over
 * Atomic-C per cell, one int16 kernel per cell where int8 has two, so a
 * kernel group holds Atomic-K / 2 kernels: src/kernels/conv_s16.c).
 *
 * Modelled: the checks a layer's CMAC programming must pass — the same
 * CONV_MODE and PROC_PRECISION as CSC (the halves are driven by CSC's
 * data/weight stream and must agree with it).
 */
#include "sim/nvdla/cbuf.h"

void dla_cmac_decode(const struct dla_dev *d, unsigned group, uint32_t misc_cfg_addr,
                     struct dla_cmac_cfg *m)
{
    /* CMAC_A and CMAC_B share the register layout (ref: NVDLA_CMAC_A.rdl,
     * NVDLA_CMAC_B.rdl); the fields are those of CMAC_A */
    uint32_t v = dla_reg(d, misc_cfg_addr, group);
    m->conv_mode = DLA_FIELD(v, NVDLA_CMAC_A_D_MISC_CFG_0_CONV_MODE);
    m->proc_precision = DLA_FIELD(v, NVDLA_CMAC_A_D_MISC_CFG_0_PROC_PRECISION);
}

int dla_cmac_validate(struct dla_dev *d, const char *unit, const struct dla_cmac_cfg *m,
                      const struct dla_csc_cfg *csc)
{
    if (m->conv_mode != csc->conv_mode) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "%s: D_MISC_CFG_0.CONV_MODE=%u differs from CSC D_MISC_CFG_0.CONV_MODE=%u",
                         unit, m->conv_mode, csc->conv_mode);
    }
    if (m->proc_precision != csc->proc_precision) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "%s: D_MISC_CFG_0.PROC_PRECISION=%u differs from CSC "
                         "D_MISC_CFG_0.PROC_PRECISION=%u",
                         unit, m->proc_precision, csc->proc_precision);
    }
    return 0;
}
