/*
 * Driver-side convolution planner and programmer (include/dlasim/conv.h).
 *
 * Not a device engine: this is the part of an NVDLA software stack that
 * turns one int8 direct convolution into hardware layers and programs them
 * through the public API only (dlasim_csb_write / dlasim_csb_read,
 * dlasim_mem_write / dlasim_mem_read, dlasim_run).
 *
 * Planning rules (ref: nvdla/sw umd/core/src/compiler/engine-ast/
 * ConvCoreNode.cpp; restated here, not copied):
 *   - entries per slice (one input line in CBUF), direct convolution on a
 *     feature cube: with A = ceil(C / M) memory atoms per pixel and
 *     P = BANK_WIDTH / M atoms per entry, floor(A / P) * W entries, plus for
 *     the A mod P remaining atoms W entries when they fill more than half an
 *     entry, ceil(W / 2) when more than a quarter, else ceil(W / 4)
 *     (calculateEPS; the same rule as cmod/cdma
 *     DirectConvDataResponseSequencerCommon, which the model checks);
 *   - banks for the whole input: ceil(entries * H / BANK_DEPTH)
 *     (calculateTotalBanksForData); for all kernels:
 *     ceil(roundup(K * bytes_per_kernel, BANK_WIDTH) / (BANK_WIDTH * DEPTH));
 *     for one kernel group: the same with Atomic-K kernels
 *     (calculateTotalBanksForWeight / calculateMinBanksForWeight);
 *   - the order of preference (splitNodesInternal): full input + all
 *     kernels; full input + two kernel groups (ping-pong: CDMA streams the
 *     groups, a hardware split along output channels); full input + one
 *     kernel group; otherwise the input is split along its height
 *     ("partial-H", software split into several hardware layers) with the
 *     weight banks chosen by the same preference within the profile's
 *     weight banks, and every remaining bank given to data.  The profile
 *     (conv_weight_banks_allotted / conv_data_banks_allotted) is taken as
 *     half of the banks each: NVDLA's default profile gives 8 + 8 of the 16
 *     banks of its nv_full / nv_large targets (umd/core/include/nvdla/IProfile.h);
 *   - partial-H bands (determineSplitDataRatios): each hardware layer
 *     fetches at most floor(data banks * DEPTH / entries) input lines; the
 *     first band starts at line 0 with the layer's top padding, each next
 *     band starts at the first input line of the first output row not yet
 *     computed (bands overlap by the kernel's reach), the last band ends at
 *     the last input line with the layer's bottom padding; a band computes
 *     every output row whose (dilated) window lies inside it.  With all
 *     kernels in CBUF the first band keeps them (SKIP_WEIGHT_RLS) and the
 *     next ones reuse them (WEIGHT_REUSE), the last one releases them;
 *     otherwise every band fetches its weights.  Data is never reused
 *     between bands (DATA_REUSE = 0, D_RELEASE = the band's lines: the
 *     compiler's ConvolutionOp.cpp emitOp);
 *   - extensions of this planner (where the compiler fails): when the
 *     profile's weight banks leave too few data banks for one kernel
 *     height of input lines, smaller weight modes are tried; bands are also
 *     cut so a hardware layer stays within D_ATOMICS (21 bits) and
 *     D_RELEASE (12 bits); a band never starts at an output row whose
 *     window lies wholly in the bottom padding (no input line to start
 *     from); with a one-column output a band never has a single output
 *     row, because SDP writes a 1x1 cube as consecutive atoms instead of
 *     at the surface stride (the band starts one row earlier and rewrites
 *     that row with the same values).  A software split along output channels is
 *     never needed (and the compiler has none: splitWeightsAndData is "not
 *     yet supported"): CDMA already streams kernel groups, and a group
 *     smaller than Atomic-K kernels would write partial output surfaces,
 *     since SDP writes whole atoms.
 *
 * Programming (ref: nvdla/sw kmd/firmware/conv.c processor_conv_program,
 * dla_conv_enable, dla_conv_set_producer; kmd/firmware/sdp.c
 * processor_sdp_program, dla_sdp_enable; kmd/firmware/scheduler.c: the conv
 * operation waits for its fused SDP's OP_ENABLED event): for each hardware
 * layer the producer pointers are set to the group the units execute next
 * (their CONSUMER), CACC, CMAC_A/B, CSC, CDMA and SDP(_RDMA) registers are
 * written, SDP is enabled, then CACC, CMAC_A, CMAC_B, CSC and CDMA once
 * CDMA's S_CBUF_FLUSH_STATUS reads done.  SDP flies the CACC output to
 * memory with BS/BN/EW bypassed and its output converter
 * ((x - offset) * scale >> shift, int8).  After dlasim_run the layer's
 * interrupt bits are cleared in GLB S_INTR_STATUS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/conv.h"
#include "regs/gen/nvdla_regs.h"
#include "plan/conv_plan.h"

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t div_up64(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint64_t round_up64(uint64_t a, uint64_t b)
{
    return div_up64(a, b) * b;
}

static uint32_t field_max(unsigned width)
{
    return width >= 32 ? 0xffffffffu : (1u << width) - 1u;
}

static int fail(char *err, size_t errlen, int status, const char *msg)
{
    if (err && errlen) {
        snprintf(err, errlen, "%s", msg);
    }
    return status;
}

/* ---- hardware parameters ------------------------------------------------------ */

int dlasim_conv_hw_of(const struct dlasim_dev *dev, struct dlasim_conv_hw *hw)
{
    static const char *const names[6] = {
        "NVDLA_MEMORY_ATOMIC_SIZE", "NVDLA_MAC_ATOMIC_C_SIZE", "NVDLA_MAC_ATOMIC_K_SIZE",
        "NVDLA_CBUF_BANK_NUMBER",   "NVDLA_CBUF_BANK_WIDTH",   "NVDLA_CBUF_BANK_DEPTH",
    };
    if (!hw) {
        return DLASIM_ERR_INVAL;
    }
    uint32_t *dst[6] = { &hw->atom_m, &hw->atomic_c, &hw->atomic_k,
                         &hw->banks,  &hw->bank_width, &hw->bank_depth };
    for (int i = 0; i < 6; i++) {
        uint64_t v = 0;
        int rc = dlasim_param(dev, names[i], &v);
        if (rc) {
            return rc;
        }
        *dst[i] = (uint32_t)v;
    }
    return 0;
}

void dlasim_conv_desc_init(struct dlasim_conv_desc *d)
{
    if (!d) {
        return;
    }
    memset(d, 0, sizeof(*d));
    d->stride_x = d->stride_y = 1;
    d->dilation_x = d->dilation_y = 1;
    d->out_scale = 1;
}

const char *dlasim_conv_weight_mode_name(enum dlasim_conv_weight_mode m)
{
    switch (m) {
    case DLASIM_CONV_WEIGHTS_FULL:
        return "full";
    case DLASIM_CONV_WEIGHTS_PINGPONG:
        return "ping-pong";
    case DLASIM_CONV_WEIGHTS_ONE_GROUP:
        return "one-group";
    default:
        return "?";
    }
}

/* ---- checks of the description against the register fields --------------------- */

struct range_check {
    const char *what;
    uint64_t value, lo, hi;
};

static int check_ranges(const struct range_check *c, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i].value < c[i].lo || c[i].value > c[i].hi) {
            if (err && errlen) {
                snprintf(err, errlen, "conv plan: %s=%llu is outside %llu..%llu", c[i].what,
                         (unsigned long long)c[i].value, (unsigned long long)c[i].lo,
                         (unsigned long long)c[i].hi);
            }
            return DLASIM_ERR_INVAL;
        }
    }
    return 0;
}

#define FMAX(REG, FIELD) ((uint64_t)field_max(NVDLA_##REG##_0_##FIELD##__WIDTH))

static int check_desc(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *d,
                      char *err, size_t errlen)
{
    if (!hw->atom_m || !hw->atomic_c || !hw->atomic_k || !hw->banks || !hw->bank_width ||
        !hw->bank_depth || hw->bank_width % hw->atom_m) {
        return fail(err, errlen, DLASIM_ERR_INVAL,
                    "conv plan: hardware parameters are zero or BANK_WIDTH is not a multiple of "
                    "the memory atom");
    }
    const uint64_t bpk = (uint64_t)d->kernel_w * d->kernel_h * d->in_c;
    const struct range_check c[] = {
        { "in_w (D_DATAIN_SIZE_0.DATAIN_WIDTH+1)", d->in_w, 1,
          FMAX(CDMA_D_DATAIN_SIZE_0, DATAIN_WIDTH) + 1 },
        { "in_h (D_DATAIN_SIZE_0.DATAIN_HEIGHT+1)", d->in_h, 1,
          FMAX(CDMA_D_DATAIN_SIZE_0, DATAIN_HEIGHT) + 1 },
        { "in_c (D_DATAIN_SIZE_1.DATAIN_CHANNEL+1)", d->in_c, 1,
          FMAX(CDMA_D_DATAIN_SIZE_1, DATAIN_CHANNEL) + 1 },
        { "kernels (D_WEIGHT_SIZE_1.WEIGHT_KERNEL+1)", d->kernels, 1,
          FMAX(CDMA_D_WEIGHT_SIZE_1, WEIGHT_KERNEL) + 1 },
        { "kernel_w (D_WEIGHT_SIZE_EXT_0.WEIGHT_WIDTH_EXT+1)", d->kernel_w, 1,
          FMAX(CSC_D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT) + 1 },
        { "kernel_h (D_WEIGHT_SIZE_EXT_0.WEIGHT_HEIGHT_EXT+1)", d->kernel_h, 1,
          FMAX(CSC_D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT) + 1 },
        { "bytes per kernel (D_WEIGHT_SIZE_0.BYTE_PER_KERNEL+1)", bpk, 1,
          FMAX(CDMA_D_WEIGHT_SIZE_0, BYTE_PER_KERNEL) + 1 },
        { "stride_x (D_CONV_STRIDE.CONV_X_STRIDE+1)", d->stride_x, 1,
          FMAX(CDMA_D_CONV_STRIDE, CONV_X_STRIDE) + 1 },
        { "stride_y (D_CONV_STRIDE.CONV_Y_STRIDE+1)", d->stride_y, 1,
          FMAX(CDMA_D_CONV_STRIDE, CONV_Y_STRIDE) + 1 },
        { "dilation_x (D_DILATION_EXT.X_DILATION_EXT+1)", d->dilation_x, 1,
          FMAX(CSC_D_DILATION_EXT, X_DILATION_EXT) + 1 },
        { "dilation_y (D_DILATION_EXT.Y_DILATION_EXT+1)", d->dilation_y, 1,
          FMAX(CSC_D_DILATION_EXT, Y_DILATION_EXT) + 1 },
        { "pad_left (D_ZERO_PADDING.PAD_LEFT)", d->pad_left, 0,
          FMAX(CSC_D_ZERO_PADDING, PAD_LEFT) },
        { "pad_right (D_ZERO_PADDING.PAD_RIGHT)", d->pad_right, 0,
          FMAX(CDMA_D_ZERO_PADDING, PAD_RIGHT) },
        { "pad_top (D_ZERO_PADDING.PAD_TOP)", d->pad_top, 0, FMAX(CSC_D_ZERO_PADDING, PAD_TOP) },
        { "pad_bottom (D_ZERO_PADDING.PAD_BOTTOM)", d->pad_bottom, 0,
          FMAX(CDMA_D_ZERO_PADDING, PAD_BOTTOM) },
        { "pad_value + 128 (int8)", (uint64_t)((int64_t)d->pad_value + 128), 0, 255 },
        { "clip_truncate (D_CLIP_CFG.CLIP_TRUNCATE)", d->clip_truncate, 0,
          FMAX(CACC_D_CLIP_CFG, CLIP_TRUNCATE) },
        { "out_scale + 32768 (D_CVT_SCALE, int16)", (uint64_t)((int64_t)d->out_scale + 32768), 0,
          65535 },
        { "out_shift (D_CVT_SHIFT)", d->out_shift, 0, FMAX(SDP_D_CVT_SHIFT, CVT_SHIFT) },
    };
    return check_ranges(c, sizeof(c) / sizeof(c[0]), err, errlen);
}

/* ---- CBUF arithmetic --------------------------------------------------------------- */

/* Entries one input line takes (ConvCoreNode.cpp calculateEPS, direct
 * convolution of a feature cube; cmod/cdma DirectConvDataResponseSequencerCommon). */
static uint32_t entries_per_slice(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t c)
{
    uint64_t per_entry = hw->bank_width / hw->atom_m;
    uint64_t atoms = div_up64(c, hw->atom_m);
    uint64_t rest = atoms % per_entry;
    uint64_t e = atoms / per_entry * w;
    if (rest == 0) {
        return (uint32_t)e;
    }
    if (2 * rest > per_entry) {
        return (uint32_t)(e + w);
    }
    if (4 * rest > per_entry) {
        return (uint32_t)(e + div_up64(w, 2));
    }
    return (uint32_t)(e + div_up64(w, 4));
}

static uint32_t banks_for_bytes(const struct dlasim_conv_hw *hw, uint64_t bytes)
{
    uint64_t entries = div_up64(bytes, hw->bank_width);
    uint64_t b = div_up64(entries, hw->bank_depth);
    return b > 0xffffu ? 0xffffu : (uint32_t)(b ? b : 1);
}

/* Weight banks of a mode. */
static uint32_t weight_banks_of(const struct dlasim_conv_plan *p, enum dlasim_conv_weight_mode m)
{
    switch (m) {
    case DLASIM_CONV_WEIGHTS_FULL:
        return p->weight_banks_full;
    case DLASIM_CONV_WEIGHTS_PINGPONG:
        return 2 * p->weight_banks_group;
    default:
        return p->weight_banks_group;
    }
}

/* ---- partial-H bands ------------------------------------------------------------------ */

/* The band whose first output row is `o`: as many lines as the data banks
 * hold (at most to the last input line) and every output row whose window
 * lies in them.  0, or an error when none does. */
static int make_band(const struct dlasim_conv_plan *p, uint32_t o, uint32_t rows_max,
                     uint32_t outs_max, struct dlasim_conv_layer *l, char *err, size_t errlen)
{
    const struct dlasim_conv_desc *d = &p->desc;
    const int64_t eh = (int64_t)(d->kernel_h - 1) * d->dilation_y + 1;
    int64_t first = (int64_t)o * d->stride_y - d->pad_top;
    uint32_t top = first < 0 ? 0 : (uint32_t)first;
    uint32_t pt = first < 0 ? (uint32_t)(-first) : 0;
    uint32_t rows = d->in_h - top < rows_max ? d->in_h - top : rows_max;
    uint32_t pb = top + rows == d->in_h ? d->pad_bottom : 0;
    int64_t span = (int64_t)pt + rows + pb - eh;
    if (span < 0) {
        return fail(err, errlen, DLASIM_ERR_UNSUPPORTED,
                    "conv plan: a band of input lines is shorter than the kernel's height");
    }
    uint32_t outs = (uint32_t)(span / d->stride_y + 1);
    if (outs > p->out_h - o) {
        outs = p->out_h - o;
    }
    if (outs > outs_max) {
        outs = outs_max;
    }
    /* a band's first output row starts at its first line (or in the
     * layer's top padding): leave the next band an output row whose window
     * starts inside the input, not in the bottom padding */
    while (o + outs < p->out_h && outs > 1 &&
           (int64_t)(o + outs) * d->stride_y - d->pad_top >= d->in_h) {
        outs--;
    }
    if (o + outs < p->out_h && (int64_t)(o + outs) * d->stride_y - d->pad_top >= d->in_h) {
        return fail(err, errlen, DLASIM_ERR_UNSUPPORTED,
                    "conv plan: output rows that read only bottom padding cannot start a band "
                    "of input lines");
    }
    memset(l, 0, sizeof(*l));
    l->in_y0 = top;
    l->in_h = rows;
    l->pad_top = pt;
    l->pad_bottom = pb;
    l->out_y0 = o;
    l->out_h = outs;
    return 0;
}

/* Cut the output rows into bands of at most `rows_max` input lines and
 * `outs_max` output rows (determineSplitDataRatios, see the header). */
static int cut_bands(struct dlasim_conv_plan *p, uint32_t rows_max, uint32_t outs_max,
                     char *err, size_t errlen)
{
    size_t cap = 0;
    uint32_t o = 0;
    p->n_layers = 0;
    while (o < p->out_h) {
        struct dlasim_conv_layer band;
        int rc = make_band(p, o, rows_max, outs_max, &band, err, errlen);
        if (!rc && p->out_w == 1 && band.out_h == 1 && p->out_h > 1) {
            /* SDP writes a 1x1 cube as consecutive atoms, not at the
             * surface stride (vmod SDP WDMA; kmd firmware conv.c programs a
             * 1x1 output packed): start this band one output row earlier,
             * which the previous band computed already (same values) */
            rc = o ? make_band(p, o - 1, rows_max, outs_max, &band, err, errlen)
                   : DLASIM_ERR_UNSUPPORTED;
            if (!rc && band.out_h < 2) {
                rc = DLASIM_ERR_UNSUPPORTED;
            }
            if (rc == DLASIM_ERR_UNSUPPORTED) {
                fail(err, errlen, rc,
                     "conv plan: a one-column output would need a band of one output row, "
                     "which SDP writes packed");
            }
        }
        if (rc) {
            return rc;
        }
        if (p->n_layers == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            struct dlasim_conv_layer *nl = realloc(p->layers, ncap * sizeof(*nl));
            if (!nl) {
                return fail(err, errlen, DLASIM_ERR_NOMEM, "conv plan: out of memory");
            }
            p->layers = nl;
            cap = ncap;
        }
        p->layers[p->n_layers++] = band;
        o = band.out_y0 + band.out_h;
    }
    return 0;
}

/* Weight keep/reuse flags of the bands (ConvCoreNode.cpp splitData: all
 * kernels in CBUF are fetched once and reused by the following bands). */
static void set_weight_flags(struct dlasim_conv_plan *p)
{
    int keep = p->weight_mode == DLASIM_CONV_WEIGHTS_FULL && p->n_layers > 1;
    for (size_t i = 0; i < p->n_layers; i++) {
        p->layers[i].weight_reuse = keep && i > 0;
        p->layers[i].skip_weight_rls = keep && i + 1 < p->n_layers;
    }
}

/* Entries of the weight ring a layer that streams and releases its weights
 * leaves unreleased: CDMA writes D_WEIGHT_BYTES (padded to 128 bytes), CSC
 * releases per group of Atomic-K kernels the entries the group's bytes
 * occupy (vmod NV_NVDLA_CDMA_wt.v, NV_NVDLA_CSC_wl.v; src/sim/nvdla/cbuf.c). */
static uint64_t weight_ring_lag(const struct dlasim_conv_plan *p)
{
    const uint64_t e = p->hw.bank_width;
    uint64_t released = 0;
    for (uint32_t k0 = 0; k0 < p->desc.kernels; k0 += p->hw.atomic_k) {
        uint32_t kg = p->desc.kernels - k0 < p->hw.atomic_k ? p->desc.kernels - k0 : p->hw.atomic_k;
        released += div_up64((uint64_t)kg * p->bytes_per_kernel, e);
    }
    uint64_t written = div_up64(p->weight_bytes, e);
    return written > released ? written - released : 0;
}

/* With streamed weights the hardware keeps its weight ring pointers from one
 * layer to the next unless D_BANK changes (vmod NV_NVDLA_CSC_sg.v
 * need_pending), so a band after one that left entries unreleased would read
 * its kernels that many entries late.  Bands then alternate between the
 * data banks and one bank less (every band is cut for the smaller count),
 * which restarts the ring at every band.  An extension: NVIDIA's compiler
 * programs every band with the same banks. */
static int restart_weight_ring(struct dlasim_conv_plan *p, uint32_t outs_max, char *err,
                               size_t errlen)
{
    for (size_t i = 0; i < p->n_layers; i++) {
        p->layers[i].data_bank = p->data_bank;
    }
    if (p->weight_mode == DLASIM_CONV_WEIGHTS_FULL || p->n_layers < 2 || !weight_ring_lag(p)) {
        return 0;
    }
    uint64_t rows = p->data_bank > 1
                        ? (uint64_t)(p->data_bank - 1) * p->hw.bank_depth / p->entries : 0;
    if (rows > p->rows_per_layer) {
        rows = p->rows_per_layer;
    }
    int rc = rows ? cut_bands(p, (uint32_t)rows, outs_max, err, errlen) : DLASIM_ERR_UNSUPPORTED;
    if (rc) {
        return rc == DLASIM_ERR_UNSUPPORTED
                   ? fail(err, errlen, rc,
                          "conv plan: streamed weights over several bands need one data bank "
                          "less every other band, and then a band holds too few input lines")
                   : rc;
    }
    p->rows_per_layer = (uint32_t)rows;
    set_weight_flags(p);
    for (size_t i = 0; i < p->n_layers; i++) {
        p->layers[i].data_bank = p->data_bank - (uint32_t)(i & 1u);
    }
    return 0;
}

/* Choose the CBUF split (splitNodesInternal); 0 or an error. */
static int choose_banks(struct dlasim_conv_plan *p, char *err, size_t errlen)
{
    const uint32_t banks = p->hw.banks;
    const uint32_t data = p->data_banks_full;
    static const enum dlasim_conv_weight_mode order[3] = {
        DLASIM_CONV_WEIGHTS_FULL, DLASIM_CONV_WEIGHTS_PINGPONG, DLASIM_CONV_WEIGHTS_ONE_GROUP
    };
    /* the whole input fits with some weight mode */
    for (int i = 0; i < 3; i++) {
        uint32_t wb = weight_banks_of(p, order[i]);
        if ((uint64_t)wb + data <= banks) {
            p->weight_mode = order[i];
            p->weight_bank = wb;
            p->data_bank = data;
            return 0;
        }
    }
    /* partial-H: the compiler takes the first weight mode within the
     * profile's share and gives every other bank to data */
    const uint32_t profile_wt = banks / 2 ? banks / 2 : 1;
    const uint64_t eh = (uint64_t)(p->desc.kernel_h - 1) * p->desc.dilation_y + 1;
    int first = 0;
    while (first < 3 && weight_banks_of(p, order[first]) > profile_wt) {
        first++;
    }
    /* extension: when that leaves fewer input lines than the kernel's
     * height (the compiler fails: "Kernel height greater than single split
     * possible"), or no mode is within the profile, try the other modes */
    for (int n = 0; n < 4; n++) {
        int i = n == 0 ? first : n - 1;
        if (i >= 3 || (n > 0 && i == first)) {
            continue;
        }
        uint32_t wb = weight_banks_of(p, order[i]);
        if (wb >= banks) {
            continue;
        }
        uint64_t rows = (uint64_t)(banks - wb) * p->hw.bank_depth / p->entries;
        if (rows >= eh) {
            p->weight_mode = order[i];
            p->weight_bank = wb;
            p->data_bank = banks - wb;
            return 0;
        }
    }
    if (err && errlen) {
        snprintf(err, errlen,
                 "conv plan: does not fit CBUF: one group of %u kernels takes %u of the %u "
                 "banks and %llu input lines of %u entries need %llu more",
                 p->hw.atomic_k, p->weight_banks_group, banks, (unsigned long long)eh,
                 p->entries,
                 (unsigned long long)div_up64(eh * p->entries, p->hw.bank_depth));
    }
    return DLASIM_ERR_UNSUPPORTED;
}

int dlasim_conv_plan(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *desc,
                     struct dlasim_conv_plan *p, char *err, size_t errlen)
{
    if (!hw || !desc || !p) {
        return fail(err, errlen, DLASIM_ERR_INVAL, "conv plan: hw, desc or plan is NULL");
    }
    memset(p, 0, sizeof(*p));
    int rc = check_desc(hw, desc, err, errlen);
    if (rc) {
        return rc;
    }
    p->desc = *desc;
    p->hw = *hw;
    const struct dlasim_conv_desc *d = desc;
    int64_t ew = (int64_t)(d->kernel_w - 1) * d->dilation_x + 1;
    int64_t eh = (int64_t)(d->kernel_h - 1) * d->dilation_y + 1;
    int64_t span_w = (int64_t)d->pad_left + d->in_w + d->pad_right - ew;
    int64_t span_h = (int64_t)d->pad_top + d->in_h + d->pad_bottom - eh;
    if (span_w < 0 || span_h < 0) {
        return fail(err, errlen, DLASIM_ERR_INVAL,
                    "conv plan: the (dilated) kernel is larger than the padded input");
    }
    p->out_w = (uint32_t)(span_w / d->stride_x + 1);
    p->out_h = (uint32_t)(span_h / d->stride_y + 1);
    if (p->out_w > FMAX(CSC_D_DATAOUT_SIZE_0, DATAOUT_WIDTH) + 1) {
        return fail(err, errlen, DLASIM_ERR_INVAL,
                    "conv plan: the output is wider than D_DATAOUT_SIZE_0.DATAOUT_WIDTH allows");
    }
    p->entries = entries_per_slice(hw, d->in_w, d->in_c);
    if (p->entries > FMAX(CDMA_D_ENTRY_PER_SLICE, ENTRIES) + 1) {
        return fail(err, errlen, DLASIM_ERR_UNSUPPORTED,
                    "conv plan: one input line needs more entries than D_ENTRY_PER_SLICE allows");
    }
    p->bytes_per_kernel = d->kernel_w * d->kernel_h * d->in_c;
    uint64_t wbytes = round_up64((uint64_t)p->bytes_per_kernel * d->kernels, 128);
    if (wbytes > 0xffffffffu) {
        return fail(err, errlen, DLASIM_ERR_INVAL,
                    "conv plan: the weights exceed D_WEIGHT_BYTES (32 bits)");
    }
    p->weight_bytes = (uint32_t)wbytes;
    p->data_banks_full = banks_for_bytes(hw, (uint64_t)p->entries * d->in_h * hw->bank_width);
    p->weight_banks_full = banks_for_bytes(hw, (uint64_t)p->bytes_per_kernel * d->kernels);
    p->weight_banks_group = banks_for_bytes(hw, (uint64_t)p->bytes_per_kernel * hw->atomic_k);
    rc = choose_banks(p, err, errlen);
    if (rc) {
        return rc;
    }
    uint64_t rows = (uint64_t)p->data_bank * hw->bank_depth / p->entries;
    uint64_t rls_max = FMAX(CSC_D_RELEASE, RLS_SLICES) + 1;
    rows = rows < rls_max ? rows : rls_max;
    p->rows_per_layer = (uint32_t)(rows < d->in_h ? rows : d->in_h);
    uint64_t outs_max = (FMAX(CSC_D_ATOMICS, ATOMICS) + 1) / p->out_w;
    uint64_t outs_h = FMAX(CSC_D_DATAOUT_SIZE_0, DATAOUT_HEIGHT) + 1;
    outs_max = outs_max < outs_h ? outs_max : outs_h;
    rc = cut_bands(p, p->rows_per_layer, (uint32_t)outs_max, err, errlen);
    if (rc) {
        dlasim_conv_plan_free(p);
        return rc;
    }
    set_weight_flags(p);
    rc = restart_weight_ring(p, (uint32_t)outs_max, err, errlen);
    if (rc) {
        dlasim_conv_plan_free(p);
    }
    return rc;
}

void dlasim_conv_plan_free(struct dlasim_conv_plan *p)
{
    if (!p) {
        return;
    }
    free(p->layers);
    p->layers = NULL;
    p->n_layers = 0;
}

/* ---- memory layouts -------------------------------------------------------------------- */

static uint32_t line_stride_of(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t s)
{
    return s ? s : w * hw->atom_m;
}

static uint32_t surf_stride_of(uint32_t h, uint32_t line, uint32_t s)
{
    return s ? s : line * h;
}

uint64_t dlasim_conv_cube_bytes(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h,
                                uint32_t c, uint32_t line_stride, uint32_t surf_stride)
{
    if (!hw || !hw->atom_m || !w || !h || !c) {
        return 0;
    }
    uint32_t line = line_stride_of(hw, w, line_stride);
    uint32_t surf = surf_stride_of(h, line, surf_stride);
    uint64_t surfaces = div_up64(c, hw->atom_m);
    /* the last surface ends with its last line */
    return (surfaces - 1) * surf + (uint64_t)(h - 1) * line + (uint64_t)w * hw->atom_m;
}

void dlasim_conv_pack_cube(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h, uint32_t c,
                           uint32_t line_stride, uint32_t surf_stride, const int8_t *chw,
                           uint8_t *dst)
{
    if (!hw || !chw || !dst || !hw->atom_m) {
        return;
    }
    const uint32_t m = hw->atom_m;
    const uint32_t line = line_stride_of(hw, w, line_stride);
    const uint32_t surf = surf_stride_of(h, line, surf_stride);
    memset(dst, 0, (size_t)dlasim_conv_cube_bytes(hw, w, h, c, line_stride, surf_stride));
    const size_t plane = (size_t)w * h;
    for (uint32_t c0 = 0; c0 < c; c0 += m) {
        uint32_t n = c - c0 < m ? c - c0 : m;
        for (uint32_t y = 0; y < h; y++) {
            uint8_t *row = dst + (size_t)(c0 / m) * surf + (size_t)y * line;
            for (uint32_t i = 0; i < n; i++) {
                const int8_t *src = chw + (size_t)(c0 + i) * plane + (size_t)y * w;
                for (uint32_t x = 0; x < w; x++) {
                    row[(size_t)x * m + i] = (uint8_t)src[x];
                }
            }
        }
    }
}

void dlasim_conv_unpack_cube(const struct dlasim_conv_hw *hw, uint32_t w, uint32_t h, uint32_t c,
                             uint32_t line_stride, uint32_t surf_stride, const uint8_t *src,
                             int8_t *chw)
{
    if (!hw || !src || !chw || !hw->atom_m) {
        return;
    }
    const uint32_t m = hw->atom_m;
    const uint32_t line = line_stride_of(hw, w, line_stride);
    const uint32_t surf = surf_stride_of(h, line, surf_stride);
    const size_t plane = (size_t)w * h;
    for (uint32_t c0 = 0; c0 < c; c0 += m) {
        uint32_t n = c - c0 < m ? c - c0 : m;
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *row = src + (size_t)(c0 / m) * surf + (size_t)y * line;
            for (uint32_t i = 0; i < n; i++) {
                int8_t *out = chw + (size_t)(c0 + i) * plane + (size_t)y * w;
                for (uint32_t x = 0; x < w; x++) {
                    out[x] = (int8_t)row[(size_t)x * m + i];
                }
            }
        }
    }
}

/*
 * Weight stream (ref: cmod/csc SendWeightToMacSequencerDirectConvCommon, the
 * order CSC consumes it and CDMA fetches it): groups of Atomic-K kernels;
 * in a group, blocks of Atomic-C channels; in a block, kernel positions in
 * row-major order; at a position, the block's channels of each kernel of
 * the group.  Padded with zeros to D_WEIGHT_BYTES.
 */
void dlasim_conv_pack_weights(const struct dlasim_conv_plan *p, const int8_t *kcrs,
                              uint8_t *dst)
{
    if (!p || !kcrs || !dst) {
        return;
    }
    const uint32_t kn = p->desc.kernels, ch = p->desc.in_c;
    const uint32_t kw = p->desc.kernel_w, kh = p->desc.kernel_h;
    const uint32_t ak = p->hw.atomic_k, ac = p->hw.atomic_c;
    const size_t npos = (size_t)kw * kh;
    uint8_t *out = dst;
    memset(dst, 0, p->weight_bytes);
    for (uint32_t k0 = 0; k0 < kn; k0 += ak) {
        uint32_t kpg = kn - k0 < ak ? kn - k0 : ak;
        for (uint32_t c0 = 0; c0 < ch; c0 += ac) {
            uint32_t cb = ch - c0 < ac ? ch - c0 : ac;
            for (size_t pos = 0; pos < npos; pos++) {
                for (uint32_t k = k0; k < k0 + kpg; k++) {
                    const int8_t *src = kcrs + ((size_t)k * ch + c0) * npos + pos;
                    for (uint32_t i = 0; i < cb; i++) {
                        *out++ = (uint8_t)src[(size_t)i * npos];
                    }
                }
            }
        }
    }
}

/* ---- device memory ------------------------------------------------------------------------ */

uint32_t nvrt_conv_in_line(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m)
{
    return line_stride_of(&p->hw, p->desc.in_w, m->in_line_stride);
}

uint32_t nvrt_conv_in_surf(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m)
{
    return surf_stride_of(p->desc.in_h, nvrt_conv_in_line(p, m), m->in_surf_stride);
}

uint32_t nvrt_conv_out_line(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m)
{
    return line_stride_of(&p->hw, p->out_w, m->out_line_stride);
}

uint32_t nvrt_conv_out_surf(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m)
{
    return surf_stride_of(p->out_h, nvrt_conv_out_line(p, m), m->out_surf_stride);
}

/* Addresses and strides: atom aligned (kmd firmware conv.c CHECK_ALIGN,
 * the model's CDMA/SDP checks), lines and surfaces not overlapping. */
int nvrt_conv_check_mem(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m)
{
    if (!p || !m || !p->hw.atom_m) {
        return DLASIM_ERR_INVAL;
    }
    const uint64_t a = p->hw.atom_m;
    const uint64_t il = nvrt_conv_in_line(p, m), is = nvrt_conv_in_surf(p, m), ol = nvrt_conv_out_line(p, m), os = nvrt_conv_out_surf(p, m);
    if (!p->n_layers || !p->layers || m->input % a || m->weights % a || m->output % a || il % a ||
        is % a || ol % a || os % a || il < (uint64_t)p->desc.in_w * a ||
        is < il * p->desc.in_h || ol < (uint64_t)p->out_w * a || os < ol * p->out_h) {
        return DLASIM_ERR_INVAL;
    }
    return 0;
}

int dlasim_conv_write_input(struct dlasim_dev *dev, const struct dlasim_conv_plan *p,
                            const struct dlasim_conv_mem *m, const int8_t *chw)
{
    if (!dev || !chw || nvrt_conv_check_mem(p, m)) {
        return DLASIM_ERR_INVAL;
    }
    const struct dlasim_conv_desc *d = &p->desc;
    uint64_t n = dlasim_conv_cube_bytes(&p->hw, d->in_w, d->in_h, d->in_c, nvrt_conv_in_line(p, m),
                                        nvrt_conv_in_surf(p, m));
    uint8_t *buf = malloc((size_t)n);
    if (!buf) {
        return DLASIM_ERR_NOMEM;
    }
    dlasim_conv_pack_cube(&p->hw, d->in_w, d->in_h, d->in_c, nvrt_conv_in_line(p, m), nvrt_conv_in_surf(p, m), chw,
                          buf);
    int rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, m->input, buf, (size_t)n);
    free(buf);
    return rc;
}

int dlasim_conv_write_weights(struct dlasim_dev *dev, const struct dlasim_conv_plan *p,
                              const struct dlasim_conv_mem *m, const int8_t *kcrs)
{
    if (!dev || !kcrs || nvrt_conv_check_mem(p, m)) {
        return DLASIM_ERR_INVAL;
    }
    uint8_t *buf = malloc(p->weight_bytes);
    if (!buf) {
        return DLASIM_ERR_NOMEM;
    }
    dlasim_conv_pack_weights(p, kcrs, buf);
    int rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, m->weights, buf, p->weight_bytes);
    free(buf);
    return rc;
}

int dlasim_conv_read_output(struct dlasim_dev *dev, const struct dlasim_conv_plan *p,
                            const struct dlasim_conv_mem *m, int8_t *khw)
{
    if (!dev || !khw || nvrt_conv_check_mem(p, m)) {
        return DLASIM_ERR_INVAL;
    }
    uint64_t n = dlasim_conv_cube_bytes(&p->hw, p->out_w, p->out_h, p->desc.kernels,
                                        nvrt_conv_out_line(p, m), nvrt_conv_out_surf(p, m));
    uint8_t *buf = malloc((size_t)n);
    if (!buf) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = dlasim_mem_read(dev, DLASIM_PORT_DBB, m->output, buf, (size_t)n);
    if (!rc) {
        dlasim_conv_unpack_cube(&p->hw, p->out_w, p->out_h, p->desc.kernels, nvrt_conv_out_line(p, m),
                                nvrt_conv_out_surf(p, m), buf, khw);
    }
    free(buf);
    return rc;
}
