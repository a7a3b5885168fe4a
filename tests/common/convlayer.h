/*
 * A convolution layer as the tests describe it (direct convolution of a
 * feature cube or of pixels, CACC truncation, an SDP in flying mode writing
 * int8), with everything needed to run it through the public API and to
 * check it: CBUF bank planning, the memory images of input, weights and the
 * SDP operand, the register programming of CDMA, CSC, CMAC, CACC, SDP and
 * SDP_RDMA, and a plain-C reference (direct convolution loops, no code shared
 * with src/).
 *
 * Facts the reference encodes:
 *   - feature memory: surfaces of Atomic-M channels, element (c, y, x) at
 *     base + (c / M) * SURF_STRIDE + y * LINE_STRIDE + x * M + c % M;
 *   - weights in memory: groups of Atomic-K kernels; in a group, blocks of
 *     Atomic-C channels; in a block, kernel positions row-major; at a
 *     position, every kernel of the group with its block of channels
 *     (cmod/csc SendWeightToMacSequencerDirectConvCommon); pixel kernels are
 *     channel-extended (width 1, channel = x * elements + element) and with
 *     post-extension a position holds 2 or 4 kernel rows of each kernel;
 *   - padding: CSC's PAD_VALUE (low byte) where the window leaves the input
 *     (right/bottom too); for pixels CDMA's PAD_VALUE left/right;
 *   - pixels: components stored R,G,B,A (Y,U,V,A); the format name lists
 *     components from the most significant byte of a little-endian word;
 *     the 10-bit formats of an int8-only build are four bytes in memory
 *     order (vmod NV_NVDLA_CDMA_IMG_ctrl.v decodes them only without
 *     NVDLA_FEATURE_DATA_TYPE_INT8);
 *   - batches: batch b of the input at D_DAIN_ADDR + b * D_BATCH_STRIDE,
 *     shared kernels, batch b of the output at D_DST_BASE_ADDR +
 *     b * D_DST_BATCH_STRIDE, SDP operands shared by all batches;
 *     the input converter computes sat8(round_half_away((x - mean or
 *     offset) * scale / 2^truncate));
 *   - CACC: {sum, 16'b0} >>> CLIP_TRUNCATE, round up on the guide bit for
 *     positive sums and on guide + sticky for negative ones, saturate to
 *     int32 (vmod NV_NVDLA_CACC_CALC_int8.v); partial sums are 34-bit;
 *   - SDP: int8 = saturate(cacc [+ bias]).
 */
#ifndef DLASIM_TESTS_CONVLAYER_H
#define DLASIM_TESTS_CONVLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* A field value in place: F(CDMA, D_BANK, DATA_BANK, v). */
#define F(UNIT, REG, FIELD, v) NVDLA_##UNIT##_##REG##_0_##FIELD(v)

#define CONV_IN_ADDR 0x80000000ull  /* feature cube, or pixel plane 0 */
#define CONV_IN1_ADDR 0x84000000ull /* pixel plane 1 (semi-planar UV) */
#define CONV_WT_ADDR 0x90000000ull
#define CONV_OUT_ADDR 0xa0000000ull
#define CONV_OP_ADDR 0xc0000000ull  /* SDP BS operand (BRDMA) */

/* A device and the parameters of its configuration the layers depend on. */
struct tdev {
    struct dlasim_dev *dev;
    uint64_t *rng;                        /* the test's PRNG state */
    unsigned group;                       /* register group of the next layer */
    uint32_t m, ac, ak, bw, depth, banks; /* Atomic-M/C/K, CBUF bank width, depth, count */
};

/* A device of `config` (2 threads) drawing random numbers from `rng`. */
void tdev_open(struct tdev *t, const char *config, uint64_t *rng);

/* ---- pixel formats, as the tests understand their names ---------------------- */

struct tfmt {
    uint32_t id;
    const char *components; /* most significant byte first; "YUV" for semi-planar */
    int semi;               /* Y plane + interleaved UV plane (UV word named by uv) */
    const char *uv;         /* semi-planar: the UV word, most significant byte first */
    unsigned bits;          /* bits of a colour component (the 10-bit ones have A2) */
};

extern const struct tfmt conv_fmts[];
extern const size_t conv_n_fmts;

const struct tfmt *conv_fmt_by_id(uint32_t id);
unsigned conv_fmt_elems(const struct tfmt *f); /* elements of a pixel */
unsigned conv_fmt_bpp0(const struct tfmt *f);  /* bytes of a pixel in plane 0 */

/* ---- a layer ---------------------------------------------------------------------- */

enum conv_op { OP_REG = 0, OP_PER_ELEMENT = 1, OP_PER_KERNEL = 2 };

struct conv {
    int pixel;
    int precision;                   /* 0 INT8, 1 INT16 (feature input): CDMA/CSC IN_ and
                                        PROC_PRECISION, CMAC/CACC PROC_PRECISION, SDP PROC_
                                        and OUT_PRECISION; 2-byte weights */
    uint32_t w, h, c;                /* input: feature cube, or pixels x elements */
    uint32_t fetch_h;                /* lines CDMA fetches (h unless data is reused) */
    uint32_t k, kw, kh, sx, sy, dx, dy; /* kw in pixels for pixel input */
    uint32_t pl, pr, pt, pb;
    uint32_t pad_value;              /* CSC D_ZERO_PADDING_VALUE */
    uint32_t cdma_pad;               /* CDMA D_ZERO_PADDING_VALUE (pixel left/right) */
    uint32_t ow, oh;
    uint32_t trunc;
    int bias_en;
    int32_t bias;
    int32_t sdp_offset;              /* SDP D_CVT_OFFSET */
    uint32_t sdp_scale, sdp_shift;   /* SDP D_CVT_SCALE (0 means 1), D_CVT_SHIFT */
    int data_reuse, weight_reuse, skip_data_rls, skip_weight_rls;
    uint32_t rls;                    /* slices released at the end */
    /* pixel input */
    const struct tfmt *fmt;
    uint32_t x_off;
    int cvt_en, mean_en, sign;
    int32_t cvt_off, cvt_scale, mean[4];
    uint32_t cvt_trunc;
    uint32_t post_ext;               /* D_POST_Y_EXTENSION field */
    /* memory and CBUF */
    uint32_t line_stride, surf_stride, uv_stride, out_line, out_surf;
    int packed_1x1;                  /* 1x1 cube with SURF_PACKED: D_SURF_STRIDE is not used */
    uint32_t extra_entries;          /* pixel input: ENTRY_PER_SLICE beyond the line */
    uint32_t entries, data_bank, weight_bank, wt_bytes;
    /* batches (nv_large) */
    uint32_t batches;                /* D_BATCH_NUMBER + 1; 0 counts as 1 */
    uint32_t batch_stride;           /* CDMA D_BATCH_STRIDE */
    uint32_t out_batch;              /* SDP D_DST_BATCH_STRIDE */
    /* SDP BS ALU operand: register (bias), or one byte from memory (BRDMA) */
    enum conv_op op_mode;
    uint32_t op_line, op_surf;       /* per element: the operand cube's strides */
    int8_t *op;                      /* per element [k][oy][ox], per kernel [k] */
    /* contents */
    int8_t *in;                      /* feature: [b][c][y][x] */
    uint8_t *img0, *img1;            /* pixel planes as in memory, h lines */
    int8_t *wt;                      /* feature: [k][c][ky][kx]; pixel: [k][r][j] */
};

uint32_t conv_div_up(uint32_t a, uint32_t b);
uint32_t conv_round_up(uint32_t a, uint32_t b);

uint32_t conv_batches(const struct conv *L);          /* 1 for an unbatched layer */
void conv_free(struct conv *L);
uint32_t conv_kernel_c(const struct conv *L);         /* kernel channels as CSC counts them */
uint32_t conv_bytes_per_kernel(const struct conv *L); /* bytes: 2 per INT16 weight */

/* CBUF entries of one slice (cmod/cdma *ResponseSequencerCommon; the
 * driver's calculateEPS). */
uint32_t conv_entries(const struct tdev *t, const struct conv *L);
/* Entries, data and weight banks (the weight banks grown by a random share
 * of the spare ones) and the weight bytes; 0 when the layer does not fit. */
int conv_plan_banks(struct tdev *t, struct conv *L);

/* Byte offset of weight (kernel k, channel j, row r, column x) in memory. */
size_t conv_wt_offset(const struct tdev *t, const struct conv *L, uint32_t k, uint32_t j,
                      uint32_t r, uint32_t x);
/* The weight bytes in memory order (wt_bytes, zero-padded; the caller frees). */
uint8_t *conv_weight_stream(const struct tdev *t, const struct conv *L);

/* Memory images: weights, the feature cube (random bytes in gaps and
 * padding channels) and the SDP operand of OP_PER_ELEMENT / OP_PER_KERNEL. */
void conv_write_weights(struct tdev *t, const struct conv *L);
void conv_write_feature(struct tdev *t, const struct conv *L);
void conv_write_operand(struct tdev *t, const struct conv *L);
/* All of the layer's memory: pixel planes or feature cube, weights, and the
 * SDP operand when SDP reads it from memory. */
void conv_write(struct tdev *t, const struct conv *L);

/* ---- programming ------------------------------------------------------------------ */

/* S_POINTER of CDMA, CSC, CMAC_A/B, CACC and SDP: `group` is produced next. */
void conv_pointers(struct dlasim_dev *dev, unsigned group);
/* D_OP_ENABLE of SDP, CACC, CMAC_A/B, CSC, CDMA, in that order. */
void conv_enable(struct dlasim_dev *dev);

void conv_program_cdma(struct tdev *t, const struct conv *L);
void conv_program_csc(struct tdev *t, const struct conv *L);
void conv_program_cacc(struct tdev *t, const struct conv *L); /* and CMAC_A/B */
/* SDP on the fly from CACC, to memory: the BS ALU adds the bias or the
 * operand, the converter applies sdp_offset/scale/shift. */
void conv_program_sdp(struct tdev *t, const struct conv *L);
/* SDP_RDMA fetches the BS operand (BRDMA, one byte, ALU) in its own next
 * group: it only moves on in layers using it. */
void conv_program_sdp_rdma(struct tdev *t, const struct conv *L);

/* ---- the weight ring ------------------------------------------------------------- */

/* CDMA writes weight streams into the weight banks as a ring and CSC reads
 * them with pointers kept across layers until D_BANK changes (vmod
 * NV_NVDLA_CDMA_wt.v / NV_NVDLA_CSC_wl.v / NV_NVDLA_CSC_sg.v): a layer that
 * fetched and released weights whose 128-byte padded stream is longer than
 * the entries its kernel groups occupy leaves `lag` entries that the next
 * layer's CSC reads before its own stream.  Call conv_ring_before before
 * programming a layer, conv_ring_after once it ran (rc: dlasim_run's), and
 * compute the reference with conv_ring_view's copy of the layer (its kernels
 * as CSC reads them).  The state is reset by tdev_open. */
void conv_ring_before(struct tdev *t, const struct conv *L);
void conv_ring_after(struct tdev *t, const struct conv *L, int rc);
void conv_ring_view(const struct conv *L, struct conv *view);
void conv_ring_reset(void);
/* Entries the last layer left in the ring for the next one (0: none). */
uint32_t conv_ring_lag(void);

/* ---- reference -------------------------------------------------------------------- */

int8_t sat8(int64_t v);
/* The accumulator of output (b, k, oy, ox), one atomic operation at a time. */
int64_t conv_ref_sum(const struct tdev *t, const struct conv *L, uint32_t b, uint32_t k,
                     uint32_t oy, uint32_t ox);
/* CACC: truncation by `trunc` bits, saturation to int32 (counted in *sat). */
int32_t conv_ref_cacc(int64_t v, unsigned trunc, unsigned *sat);
/* The BS ALU operand of output (k, y, x), the same for every batch. */
int32_t conv_ref_bias(const struct conv *L, uint32_t k, uint32_t y, uint32_t x);
/* SDP: bias, (x - offset) * scale, rounded shift, int8. */
int8_t conv_ref_sdp(const struct conv *L, int32_t cacc, int32_t bias);

#endif
