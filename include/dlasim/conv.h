/*
 * Driver-side convolution API: plan an int8 direct convolution as the
 * hardware layers an NVDLA configuration can run, write its input and
 * weights into device memory in NVDLA's layouts, and program every hardware
 * layer through the CSB (dlasim_csb_write) as NVDLA's firmware does, with
 * SDP on the fly writing the int8 output cube to memory.
 *
 * The planner follows NVDLA's compiler (nvdla/sw umd/core/src/compiler/
 * engine-ast/ConvCoreNode.cpp splitNodesInternal, determineSplitDataRatios,
 * calculateEPS / calculateTotalBanksFor*); the programming follows its
 * firmware (nvdla/sw kmd/firmware/conv.c processor_conv_program and
 * dla_conv_enable, kmd/firmware/sdp.c processor_sdp_program).  See
 * src/plan/conv_plan.c for the rules.
 *
 * Memory layouts (int8):
 *   feature cube  surfaces of Atomic-M channels: element (c, y, x) at
 *                 base + (c / M) * surf_stride + y * line_stride + x * M + c % M
 *   weights       groups of Atomic-K kernels; in a group, blocks of Atomic-C
 *                 channels; in a block, kernel positions row-major; at a
 *                 position, each kernel of the group with its block of
 *                 channels; the stream is padded to 128 bytes.
 * Host-side arrays are planar: input [c][y][x], weights [k][c][ky][kx],
 * output [k][y][x].
 */
#ifndef DLASIM_CONV_H
#define DLASIM_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

/* The scalability parameters the planner uses (spec 004 names). */
struct dlasim_conv_hw {
    uint32_t atom_m;      /* NVDLA_MEMORY_ATOMIC_SIZE: channels per memory atom */
    uint32_t atomic_c;    /* NVDLA_MAC_ATOMIC_C_SIZE */
    uint32_t atomic_k;    /* NVDLA_MAC_ATOMIC_K_SIZE */
    uint32_t banks;       /* NVDLA_CBUF_BANK_NUMBER */
    uint32_t bank_width;  /* NVDLA_CBUF_BANK_WIDTH: bytes per CBUF entry */
    uint32_t bank_depth;  /* NVDLA_CBUF_BANK_DEPTH: entries per bank */
};

/* Read them from a device's configuration (dev and hw required: NULL is
 * DLASIM_ERR_INVAL). */
int dlasim_conv_hw_of(const struct dlasim_dev *dev, struct dlasim_conv_hw *hw);

/* One int8 direct convolution (feature-cube input, one batch). */
struct dlasim_conv_desc {
    uint32_t in_w, in_h, in_c;
    uint32_t kernels;                 /* output channels */
    uint32_t kernel_w, kernel_h;
    uint32_t stride_x, stride_y;      /* >= 1 */
    uint32_t dilation_x, dilation_y;  /* >= 1 */
    uint32_t pad_left, pad_right, pad_top, pad_bottom;
    int32_t pad_value;                /* int8 value read at padded positions */
    uint32_t clip_truncate;           /* CACC D_CLIP_CFG.CLIP_TRUNCATE, 0..31 */
    int32_t out_offset;               /* SDP D_CVT_OFFSET */
    int32_t out_scale;                /* SDP D_CVT_SCALE, -32768..32767 */
    uint32_t out_shift;               /* SDP D_CVT_SHIFT, 0..63 */
};

/* Defaults: strides and dilations 1, output scale 1, everything else 0
 * (NULL: nothing). */
void dlasim_conv_desc_init(struct dlasim_conv_desc *d);

/* How the kernels sit in CBUF (ConvCoreNode.cpp splitNodesInternal). */
enum dlasim_conv_weight_mode {
    DLASIM_CONV_WEIGHTS_FULL = 0,      /* every kernel held at once */
    DLASIM_CONV_WEIGHTS_PINGPONG = 1,  /* two kernel groups, streamed by CDMA */
    DLASIM_CONV_WEIGHTS_ONE_GROUP = 2  /* one kernel group, streamed by CDMA */
};

/* One hardware layer: a band of output rows (all kernels). */
struct dlasim_conv_layer {
    uint32_t in_y0, in_h;         /* input rows CDMA fetches */
    uint32_t pad_top, pad_bottom; /* padding rows of this band */
    uint32_t out_y0, out_h;       /* output rows it writes */
    int weight_reuse;             /* D_MISC_CFG.WEIGHT_REUSE */
    int skip_weight_rls;          /* D_MISC_CFG.SKIP_WEIGHT_RLS */
    uint32_t data_bank;           /* D_BANK.DATA_BANK + 1 of this layer (the plan's
                                   * data_bank, or one less: see conv_plan.c) */
};

struct dlasim_conv_plan {
    struct dlasim_conv_desc desc;
    struct dlasim_conv_hw hw;
    uint32_t out_w, out_h;
    uint32_t entries;             /* CBUF entries per input line (D_ENTRY_PER_SLICE + 1) */
    uint32_t data_banks_full;     /* banks the whole input needs */
    uint32_t weight_banks_full;   /* banks every kernel needs */
    uint32_t weight_banks_group;  /* banks one group of Atomic-K kernels needs */
    uint32_t data_bank;           /* D_BANK.DATA_BANK + 1 */
    uint32_t weight_bank;         /* D_BANK.WEIGHT_BANK + 1 */
    enum dlasim_conv_weight_mode weight_mode;
    uint32_t rows_per_layer;      /* input lines the data banks hold */
    uint32_t bytes_per_kernel;    /* D_WEIGHT_SIZE_0.BYTE_PER_KERNEL + 1 */
    uint32_t weight_bytes;        /* D_WEIGHT_BYTES: kernels padded to 128 bytes */
    size_t n_layers;
    struct dlasim_conv_layer *layers;
};

/* Plan the hardware layers (pure: no device).  0, or DLASIM_ERR_INVAL
 * (description out of range of the registers), DLASIM_ERR_UNSUPPORTED
 * (does not fit CBUF in any way the compiler splits), DLASIM_ERR_NOMEM;
 * err (if given) says why.  hw, desc and plan are required (NULL:
 * DLASIM_ERR_INVAL).  Free with dlasim_conv_plan_free (NULL: nothing). */
int dlasim_conv_plan(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *desc,
                     struct dlasim_conv_plan *plan, char *err, size_t errlen);
void dlasim_conv_plan_free(struct dlasim_conv_plan *plan);

/* Name of a weight mode ("full", "ping-pong", "one-group"). */
const char *dlasim_conv_weight_mode_name(enum dlasim_conv_weight_mode m);

/* Where the cubes live in device memory (primary port, DBB).  Strides of 0
 * mean packed: line W * M bytes, surface H * line. */
struct dlasim_conv_mem {
    uint64_t input, weights, output;
    uint32_t in_line_stride, in_surf_stride;
    uint32_t out_line_stride, out_surf_stride;
};

/* Bytes a feature cube occupies in memory with these strides (0 = packed);
 * 0 for an empty cube or a NULL hw. */
uint64_t dlasim_conv_cube_bytes(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h,
                                uint32_t c, uint32_t line_stride, uint32_t surf_stride);

/* Host-side layout conversions (pure).  Every pointer is required; with a
 * NULL one they do nothing. */
void dlasim_conv_pack_weights(const struct dlasim_conv_plan *plan, const int8_t *kcrs,
                              uint8_t *dst /* plan->weight_bytes */);
void dlasim_conv_pack_cube(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h, uint32_t c,
                           uint32_t line_stride, uint32_t surf_stride, const int8_t *chw,
                           uint8_t *dst /* dlasim_conv_cube_bytes() */);
void dlasim_conv_unpack_cube(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h, uint32_t c,
                             uint32_t line_stride, uint32_t surf_stride, const uint8_t *src,
                             int8_t *chw);

/* Device side: write the input cube / the weights, read the output cube
 * (0 or a negative status; dlasim_last_error says why).  Every pointer is
 * required: NULL is DLASIM_ERR_INVAL, as is a plan or mem the hardware
 * cannot use. */
int dlasim_conv_write_input(struct dlasim_dev *dev, const struct dlasim_conv_plan *plan,
                            const struct dlasim_conv_mem *mem, const int8_t *chw);
int dlasim_conv_write_weights(struct dlasim_dev *dev, const struct dlasim_conv_plan *plan,
                              const struct dlasim_conv_mem *mem, const int8_t *kcrs);
int dlasim_conv_read_output(struct dlasim_dev *dev, const struct dlasim_conv_plan *plan,
                            const struct dlasim_conv_mem *mem, int8_t *khw);

/* Program every hardware layer of the plan through the CSB and run it
 * (dlasim_run), clearing the layer's interrupts as a driver does. */
int dlasim_conv_run(struct dlasim_dev *dev, const struct dlasim_conv_plan *plan,
                    const struct dlasim_conv_mem *mem);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
