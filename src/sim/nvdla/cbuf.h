/*
 * Convolution pipeline internals: the interface between cdma.c, cbuf.c,
 * csc.c, cmac.c and cacc.c, and the CBUF state that persists across layers
 * (struct dla_conv_state, created by the device with dla_conv_state_create).
 *
 * The pipeline is modelled at the level of what each unit decides, not of
 * its cycle-by-cycle traffic:
 *   - CDMA fetches feature data / pixels / weights from memory (cdma.c) and
 *     writes them into the convolution buffer (CBUF).
 *   - CBUF (cbuf.c) keeps "slices" of data and the raw weight stream, with
 *     the bank ownership and the reuse/release bookkeeping of CDMA and CSC
 *     (ref: cmod/cdma ActDataReadRequestSequenceThread, cmod/csc
 *     DataLoadSequenceThread/WeightLoadSequenceThread).
 *   - CSC (csc.c) decodes the CBUF contents into the padded input cube and
 *     the kernels the MAC array sees, and runs the convolution kernel
 *     (src/kernels/conv_s8.h) for CMAC_A/CMAC_B (cmac.c only validates).
 *   - CACC (cacc.c) rounds/saturates the accumulators into the int32 cube
 *     that flies into SDP.
 *
 * A "slice" is one line of the input as CSC addresses it: for feature input
 * one row (all channels, all x) of one batch, stored planar per slice
 * (element (c, x) at c * w + x), line y of batch b being slice
 * y * BATCHES + b (the batches of a line are adjacent, as CDMA writes
 * them); for pixel input one CBUF line of converted, left/right padded
 * pixels, stored flat (w = bytes of the line, c = 1).
 */
#ifndef DLASIM_SIM_CBUF_H
#define DLASIM_SIM_CBUF_H

#include <stddef.h>
#include <stdint.h>

#include "arith/lanes.h"
#include "sim/nvdla/decode_cache.h"
#include "sim/nvdla/dla.h"

/* Input data format as CBUF bookkeeping tells layers apart
 * (ref: cmod/csc INPUT_DATA_FORMAT_DC / _IMAGE). */
enum dla_conv_in_fmt {
    DLA_CONV_IN_FEATURE = 0,
    DLA_CONV_IN_PIXEL = 1
};

/* CDMA registers of one group, decoded once per layer (real counts, not
 * "minus one" encodings). */
struct dla_cdma_cfg {
    uint32_t conv_mode;        /* D_MISC_CFG.CONV_MODE */
    uint32_t in_precision;     /* D_MISC_CFG.IN_PRECISION */
    uint32_t proc_precision;   /* D_MISC_CFG.PROC_PRECISION */
    int data_reuse;            /* D_MISC_CFG.DATA_REUSE */
    int weight_reuse;          /* D_MISC_CFG.WEIGHT_REUSE */
    int skip_data_rls;         /* D_MISC_CFG.SKIP_DATA_RLS */
    int skip_weight_rls;       /* D_MISC_CFG.SKIP_WEIGHT_RLS */
    int fmt;                   /* enum dla_conv_in_fmt (D_DATAIN_FORMAT.DATAIN_FORMAT) */
    uint32_t pixel_format;     /* D_DATAIN_FORMAT.PIXEL_FORMAT */
    uint32_t pixel_mapping;    /* D_DATAIN_FORMAT.PIXEL_MAPPING */
    int pixel_signed;          /* D_DATAIN_FORMAT.PIXEL_SIGN_OVERRIDE */
    uint32_t width, height, channel;  /* D_DATAIN_SIZE_0/1 */
    uint32_t width_ext, height_ext;   /* D_DATAIN_SIZE_EXT_0 */
    uint32_t pixel_x_offset, pixel_y_offset; /* D_PIXEL_OFFSET */
    int dain_port;             /* D_DAIN_RAM_TYPE as DLASIM_PORT_* */
    uint64_t dain_addr[2];     /* D_DAIN_ADDR_{HIGH,LOW}_{0,1} */
    uint32_t line_stride;      /* D_LINE_STRIDE */
    uint32_t uv_line_stride;   /* D_LINE_UV_STRIDE */
    uint32_t surf_stride;      /* D_SURF_STRIDE */
    int line_packed, surf_packed; /* D_DAIN_MAP */
    uint32_t batches;          /* D_BATCH_NUMBER */
    uint32_t batch_stride;     /* D_BATCH_STRIDE */
    uint32_t entries;          /* D_ENTRY_PER_SLICE */
    uint32_t grains;           /* D_FETCH_GRAIN */
    int weight_compressed;     /* D_WEIGHT_FORMAT */
    uint32_t byte_per_kernel;  /* D_WEIGHT_SIZE_0 */
    uint32_t weight_kernel;    /* D_WEIGHT_SIZE_1 */
    int weight_port;           /* D_WEIGHT_RAM_TYPE as DLASIM_PORT_* */
    uint64_t weight_addr;      /* D_WEIGHT_ADDR_{HIGH,LOW} */
    uint32_t weight_bytes;     /* D_WEIGHT_BYTES */
    int mean_en;               /* D_MEAN_FORMAT */
    int32_t mean[4];           /* D_MEAN_GLOBAL_0/1: RY, GU, BV, AX (signed 16 bit) */
    int cvt_en;                /* D_CVT_CFG.CVT_EN */
    uint32_t cvt_truncate;     /* D_CVT_CFG.CVT_TRUNCATE */
    int32_t cvt_offset;        /* D_CVT_OFFSET (signed 16 bit) */
    int32_t cvt_scale;         /* D_CVT_SCALE (signed 16 bit) */
    uint32_t stride_x, stride_y; /* D_CONV_STRIDE */
    uint32_t pad_left, pad_right, pad_top, pad_bottom; /* D_ZERO_PADDING */
    uint32_t pad_value;        /* D_ZERO_PADDING_VALUE */
    uint32_t data_bank, weight_bank; /* D_BANK, real bank counts */
};

/* CSC registers of one group. */
struct dla_csc_cfg {
    uint32_t conv_mode, in_precision, proc_precision;
    int data_reuse, weight_reuse, skip_data_rls, skip_weight_rls;
    int fmt;                   /* enum dla_conv_in_fmt */
    uint32_t width, height, channel;  /* D_DATAIN_SIZE_EXT_0/1 */
    uint32_t batches;          /* D_BATCH_NUMBER */
    uint32_t y_extension;      /* D_POST_Y_EXTENSION field (0..3) */
    uint32_t entries;          /* D_ENTRY_PER_SLICE */
    int weight_compressed;     /* D_WEIGHT_FORMAT */
    uint32_t kernel_w, kernel_h;      /* D_WEIGHT_SIZE_EXT_0 */
    uint32_t kernel_c, kernels;       /* D_WEIGHT_SIZE_EXT_1 */
    uint32_t weight_bytes;     /* D_WEIGHT_BYTES */
    uint32_t out_w, out_h, out_c;     /* D_DATAOUT_SIZE_0/1 */
    uint32_t atomics;          /* D_ATOMICS */
    uint32_t rls_slices;       /* D_RELEASE */
    uint32_t stride_x, stride_y;      /* D_CONV_STRIDE_EXT */
    uint32_t dil_x, dil_y;            /* D_DILATION_EXT */
    uint32_t pad_left, pad_top;       /* D_ZERO_PADDING */
    uint32_t pad_value;        /* D_ZERO_PADDING_VALUE */
    uint32_t data_bank, weight_bank;  /* D_BANK */
};

/* CMAC_A / CMAC_B registers of one group. */
struct dla_cmac_cfg {
    uint32_t conv_mode;        /* D_MISC_CFG.CONV_MODE */
    uint32_t proc_precision;   /* D_MISC_CFG.PROC_PRECISION */
};

/* CACC registers of one group. */
struct dla_cacc_cfg {
    uint32_t conv_mode, proc_precision; /* D_MISC_CFG */
    uint32_t out_w, out_h, out_c;       /* D_DATAOUT_SIZE_0/1 */
    uint32_t batches;                   /* D_BATCH_NUMBER */
    uint32_t clip_truncate;             /* D_CLIP_CFG.CLIP_TRUNCATE */
};

/* Precision of a convolution layer (D_MISC_CFG.PROC_PRECISION, same
 * encoding in CDMA, CSC, CMAC_A/B and CACC): INT16 or not. */
static inline int dla_conv_int16(uint32_t proc_precision)
{
    return proc_precision == NVDLA_CDMA_D_MISC_CFG_0_PROC_PRECISION_INT16;
}

/* Bytes per feature / weight element: 1 (INT8) or 2 (INT16). */
static inline uint32_t dla_conv_elem_bytes(uint32_t proc_precision)
{
    return dla_conv_int16(proc_precision) ? 2u : 1u;
}

/* Kernels of a weight group: Atomic-K for INT8, Atomic-K / 2 for INT16 (a
 * MAC cell holds two int8 kernels or one int16 kernel; ref: nv_full cmod/csc
 * KERNEL_PER_GROUP_INT8 32 / KERNEL_PER_GROUP_INT16 16 with Atomic-K 32). */
static inline uint32_t dla_conv_kernels_per_group(const struct dla_config *cfg,
                                                  uint32_t proc_precision)
{
    return dla_conv_int16(proc_precision) ? cfg->mac_atomic_k_size / 2 : cfg->mac_atomic_k_size;
}

/* Slices held in CBUF (see the header comment). */
/* Bytes allocated (and never data) before and after a slice buffer: the
 * depthwise rows read a CBUF row as one 16-byte load whose bytes outside
 * the data are discarded (conv_dw_s8.c dw_src_inside), so a row near
 * either end of the buffer needs no slow path. */
#define DLA_CBUF_GUARD 16u

struct dla_cbuf_slices {
    int8_t *buf;               /* n slices of slice_bytes, contiguous, DLA_CBUF_GUARD
                                  bytes allocated on either side */
    size_t cap;                /* bytes allocated at buf */
    uint32_t n;                /* slices held */
    uint32_t w, c;             /* slice geometry: element (c, x) at c * w + x */
    uint32_t entries;          /* CBUF entries per slice */
    int fmt;                   /* enum dla_conv_in_fmt of the data */
    /* 0: the slices above.  Else the n = atoms_h slices of an INT8 feature
     * cube (c a multiple of 8) held as the memory's 8-byte atoms, surface
     * by surface: surface k's line y at buf + (k * atoms_h + y) * w * 8
     * (dla_cdma_fetch_feature_atoms; the same bytes, another order).  Only
     * within the layer that fetched them: a layer keeping no slice. */
    uint32_t atoms_h;
    /* With atoms_h: the atoms read where the memory keeps them, not copied
     * to buf (cdma.c atoms_view): surface k's line y at atoms_view + k *
     * view_surf + y * view_line; NULL: at buf.  Only while the layer runs,
     * which writes none of those bytes. */
    const int8_t *atoms_view;
    size_t view_surf, view_line;
};

static inline size_t dla_cbuf_slice_bytes(const struct dla_cbuf_slices *s)
{
    return (size_t)s->w * s->c;
}

/* How a layer obtains its data / weights (ref: cmod/cdma
 * ActDataReadRequestSequenceThread and WeightReadRequestSequenceThread). */
enum dla_cbuf_use {
    DLA_CBUF_FRESH = 0,        /* release what is held, fetch everything */
    DLA_CBUF_PARTIAL = 1,      /* keep the slices left by the previous layer, fetch after them */
    DLA_CBUF_REUSE = 2         /* use what the previous layer kept, fetch nothing */
};

/* What the planar kernels decoded from a weight stream depend on besides
 * its bytes (all fields uint32_t: compared with memcmp). */
struct dla_wt_key {
    uint32_t pixel, kernels, kernel_c, kernel_w, kernel_h, y_extension;
    uint32_t atomic_c, atomic_k, in_c, k_w, k_h;
};

/*
 * Kernels packed for the convolution kernel (dla_conv_wpack), kept across
 * layers and inferences so that a network's weights are decoded and packed
 * once, not at every layer run (csc.c, cached_weights).  Host state, not
 * CBUF contents: an entry is used only for a weight stream equal, byte for
 * byte and under the same key, to the one it was made from (a full compare
 * against a copy), so software rewriting weights between runs can never
 * see a stale pack.  The compare is skipped only when the memory proves
 * the bytes equal: both streams were read whole from the same range of the
 * built-in memory and no write reached that range since the earlier of the
 * two reads (struct dla_wt_origin; src/sim/core/mem.h generations).  At most
 * DLA_WT_CACHE_BYTES are held.
 */
#define DLA_WT_CACHE_BYTES ((size_t)256 << 20)
struct dla_conv_wpack;
/* Where a weight stream's bytes came from: `bytes` bytes read at `addr` on
 * `port` when the memory's write generation was `gen`; gen 0: unknown (the
 * stream starts with bytes left in the ring by an earlier layer, or the
 * memory is the host's callbacks). */
struct dla_wt_origin {
    int port;
    uint64_t addr;
    size_t bytes;
    uint64_t gen;
};
struct dla_wt_cache_entry {
    struct dla_wt_key key;
    uint8_t *src;              /* the weight stream bytes the pack came from */
    size_t len;
    uint64_t print;            /* fingerprint of src (to skip most compares) */
    struct dla_conv_wpack *pack;
    struct dla_conv_wpack *pack_signed; /* pack's kernels for inputs with negative
                                  codes (dla_conv_wpack_build_signed), made on the
                                  first such input to a U8 pack, else NULL */
    int8_t *dw_wt;             /* a depthwise layer's diagonal kernels
                                  (dla_conv_dw_s8_diagonal: run_kernel's depthwise
                                  path reads them), else NULL */
    size_t bytes;              /* src + pack (+ pack_signed, dw_wt) */
    uint64_t last_use;         /* lookup clock of the last hit */
    struct dla_wt_origin origin; /* of src */
};
struct dla_wt_cache {
    struct dla_wt_cache_entry *e;
    size_t n, cap;
    size_t bytes;              /* held by all entries */
    uint64_t clock;            /* lookups so far */
    size_t last;               /* entry of the last hit (n: none) ... */
    uint64_t last_fetch;       /* ... and wt_fetches then (WEIGHT_REUSE: no compare) */
};
void dla_wt_cache_free(struct dla_wt_cache *c);

/*
 * Everything CBUF holds across layers.  After dla_conv_reset() (and at
 * creation) CBUF is empty and no previous layer is known: the first layer
 * always fetches.
 */
struct dla_conv_state {
    int have_prev;             /* a layer ran since reset */
    uint32_t prev_conv_mode;   /* previous layer's CONV_MODE */
    uint32_t prev_data_bank;   /* previous layer's data banks */
    uint32_t prev_weight_bank; /* previous layer's weight banks */
    int prev_fmt;              /* previous layer's enum dla_conv_in_fmt */
    uint32_t prev_precision;   /* previous layer's PROC_PRECISION */
    int prev_skip_data_rls;    /* previous layer kept all its slices */
    int prev_skip_weight_rls;  /* previous layer kept its weights */
    struct dla_cbuf_slices data; /* slices held in the data banks */
    uint8_t *wt;               /* raw weight stream held in the weight banks */
    size_t wt_len;             /* valid bytes at wt (0: none held) */
    size_t wt_cap;             /* bytes allocated at wt */
    uint64_t wt_fetches;       /* weight fetches into wt so far */
    struct dla_wt_origin wt_origin; /* of the bytes at wt */
    /* 1: the wt_len bytes of the stream are not copied to wt yet: they are
     * the memory's bytes at wt_origin, which no write has reached since the
     * fetch (set only while a layer runs; csc.c wt_ready copies them when a
     * decode or a later layer needs them, before the layer ends) */
    int wt_deferred;
    /* The weight banks are a ring that CDMA writes and CSC reads with
     * pointers kept across layers (see dla_cbuf_weight_lag in cbuf.c):
     * wt_lag entries that CDMA wrote and CSC has not released, and their
     * bytes (the end of the previous weight stream), which CSC reads first. */
    uint32_t wt_lag;
    uint8_t *wt_tail;
    size_t wt_tail_cap;
    /* scratch reused between layers (not CBUF contents) */
    uint8_t *fetch;            /* CDMA: the surfaces of an INT8 feature cube as read */
    size_t fetch_cap;
    /* the layer's fetch shares its lines out by rows also when it runs on
     * a chained layer's worker (csc.c dw_fetch_by_rows) */
    int fetch_by_rows;
    int8_t *in;                /* padded planar input cube for the kernel */
    size_t in_cap;
    int8_t *wplanar;           /* kernels as [k][c][ky][kx] */
    size_t wplanar_cap;
    /* wplanar is the decode of the wdec_len raw bytes at wdec_src under
     * wdec_key (0: nothing decoded): a layer whose weights are the same
     * bytes (WEIGHT_REUSE, or the same weights fetched again) skips the
     * decode */
    uint8_t *wdec_src;
    size_t wdec_src_cap;
    size_t wdec_len;
    struct dla_wt_key wdec_key;
    uint64_t wdec_fetch;       /* wt_fetches when wt last equalled wdec_src */
    struct dla_wt_cache wcache; /* packed kernels of earlier weight streams */
    int8_t *wchunk;            /* kernels of a channel chunk */
    size_t wchunk_cap;
    int64_t *acc;              /* wide accumulators for very deep kernels */
    size_t acc_cap;
    int32_t *cube;             /* CACC's output cubes to SDP (every element written) */
    size_t cube_half;          /* elements on each side of its middle (csc.c cacc_cube) */
    int16_t *in16;             /* INT16 layers: padded planar input */
    size_t in16_cap;
    int16_t *wt16;             /* INT16 layers: kernels as [k][c][ky][kx] */
    size_t wt16_cap;
    int8_t *to_pdp;            /* SDP's int8 atoms to PDP on the fly (borrowed by the cube) */
    size_t to_pdp_cap;
    /* PDP's decoded layers (pdp.c): the device gives the engines this one
     * home for state kept across layers */
    struct dla_dcache pdp_dcache;
    /* SDP's decoded layers (sdp.c, created on its first layer) */
    struct dla_sdp_cache *sdp_cache;
};

/* Free SDP's decode cache (NULL: nothing). */
void dla_sdp_cache_free(struct dla_sdp_cache *c);

/* Grow a scratch buffer to at least `bytes` (contents not kept). */
int dla_conv_scratch(struct dla_dev *d, void **buf, size_t *cap, size_t bytes);
/* CACC's output cube of `elems` elements in s's buffer, placed so that its
 * element `below` (the first of the channel where two threads' shares
 * meet, csc.c cacc_cube) is at the buffer's middle: the same address for
 * every cube while the buffer holds them (it grows when a side is too
 * small, the middle line-aligned).  The cube's first element, or NULL when
 * out of memory (below <= elems). */
int32_t *dla_cacc_cube_place(struct dla_conv_state *s, uint64_t elems, uint64_t below);
/* The buffer dla_cacc_cube_place keeps, `below` elements before its middle
 * on: where [middle - below, middle + above) lies inside it as it is (it
 * is never reallocated here), else NULL. */
int32_t *dla_cacc_cube_middle(struct dla_conv_state *s, uint64_t below, uint64_t above);

/* ---- CDMA (cdma.c) ------------------------------------------------------ */

void dla_cdma_decode(const struct dla_dev *d, unsigned group, struct dla_cdma_cfg *c);
/* Checks of CDMA's own registers against the configuration. */
int dla_cdma_validate(struct dla_dev *d, const struct dla_cdma_cfg *c);
/* CBUF entries one slice of this layer occupies, as CDMA writes them. */
uint32_t dla_cdma_entries_needed(const struct dla_config *cfg, const struct dla_cdma_cfg *c);
/* Append the feature cube (height * batches slices) to `dst`. */
int dla_cdma_fetch_feature(struct dla_dev *d, const struct dla_cdma_cfg *c,
                           struct dla_cbuf_slices *dst);
/* dla_cdma_fetch_feature kept as the memory's atoms (dla_cbuf_slices
 * atoms_h), for a layer whose kernel packs its input from them (csc.c
 * fetch_atoms): one batch, no input conversion, Atomic-M 8, channels a
 * multiple of 8; the same reads and traffic, no transposition. */
int dla_cdma_fetch_feature_atoms(struct dla_dev *d, const struct dla_cdma_cfg *c,
                                 struct dla_cbuf_slices *dst);
/* The planar slices of data held as atoms (dst->atoms_h then 0): for a
 * path of CSC that reads slices. */
int dla_cdma_atoms_to_planar(struct dla_dev *d, struct dla_cbuf_slices *s);
/* The same for an INT16 layer: slices of int16 elements, element (c, x)
 * at int16 index c * w + x (dst->c is twice the channels). */
int dla_cdma_fetch_feature16(struct dla_dev *d, const struct dla_cdma_cfg *c,
                             struct dla_cbuf_slices *dst);
/* Append the converted, padded pixel lines (height slices) to `dst`. */
int dla_cdma_fetch_image(struct dla_dev *d, const struct dla_cdma_cfg *c,
                         struct dla_cbuf_slices *dst);
/* Entries of the weight ring CSC reads before this layer's weight stream
 * (0 when the ring pointers restart); see cbuf.c. */
uint32_t dla_cbuf_weight_lag(const struct dla_conv_state *s, const struct dla_cdma_cfg *c);
/* At the end of a layer: the entries CDMA wrote and CSC did not release and
 * their bytes, for the next layer (`lag` as this layer started, `fetched`:
 * this layer fetched its weights).  0 or DLASIM_ERR_NOMEM. */
int dla_cbuf_weight_ring_end(struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                             const struct dla_cdma_cfg *c, uint32_t lag, int fetched,
                             uint32_t entry_bytes, uint32_t atomic_k);
/* The entries dla_cbuf_weight_ring_end will keep (their bytes are the end
 * of the stream at s->wt), 0 if none. */
uint32_t dla_cbuf_weight_ring_left(const struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                                   const struct dla_cdma_cfg *c, uint32_t lag, int fetched,
                                   uint32_t entry_bytes, uint32_t atomic_k);

/* Read the raw weight stream (D_WEIGHT_BYTES bytes) into dst. */
int dla_cdma_fetch_weights(struct dla_dev *d, const struct dla_cdma_cfg *c, uint8_t *dst);
/* 1 when the weight stream's copy can wait (cbuf.h wt_deferred): an INT8
 * layer whose stream the memory can read without failing; its traffic is
 * counted now.  0: fetch it with dla_cdma_fetch_weights. */
int dla_cdma_defer_weights(struct dla_dev *d, const struct dla_cdma_cfg *c);
/* Status registers CDMA updates at the end of a layer. */
void dla_cdma_finish(struct dla_dev *d, unsigned group);

/* ---- CBUF (cbuf.c) ------------------------------------------------------ */

/* Bank allocation and capacity checks of a layer. */
int dla_cbuf_validate(struct dla_dev *d, const struct dla_cdma_cfg *c);
/* How this layer gets its data and weights; checks reuse requests that can
 * not be honoured. */
int dla_cbuf_plan(struct dla_dev *d, const struct dla_conv_state *s, const struct dla_cdma_cfg *c,
                  enum dla_cbuf_use *data_use, enum dla_cbuf_use *weight_use);
/* Prepare s->data for slices of the given geometry under `use`. */
int dla_cbuf_begin_data(struct dla_dev *d, struct dla_conv_state *s, enum dla_cbuf_use use,
                        const struct dla_cdma_cfg *c, uint32_t slice_w, uint32_t slice_c);
/* Make room for `n` more slices of s->data's geometry; returns the first. */
int8_t *dla_cbuf_append(struct dla_dev *d, struct dla_cbuf_slices *s, uint32_t n);
/* Slices the layer leaves in CBUF for the next one (SKIP_DATA_RLS, D_RELEASE). */
uint32_t dla_cbuf_kept(const struct dla_csc_cfg *csc, uint32_t held);
/* End of layer: releases per SKIP_*_RLS / D_RELEASE and remembers the layer. */
void dla_cbuf_end_layer(struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                        const struct dla_cdma_cfg *c);
/* Forget everything (after an error the CBUF contents are undefined). */
void dla_cbuf_forget(struct dla_conv_state *s);

/* ---- CMAC (cmac.c) ------------------------------------------------------ */

void dla_cmac_decode(const struct dla_dev *d, unsigned group, uint32_t misc_cfg_addr,
                     struct dla_cmac_cfg *m);
int dla_cmac_validate(struct dla_dev *d, const char *unit, const struct dla_cmac_cfg *m,
                      const struct dla_csc_cfg *csc);

/* ---- CACC (cacc.c) ------------------------------------------------------ */

void dla_cacc_decode(const struct dla_dev *d, unsigned group, struct dla_cacc_cfg *a);
int dla_cacc_validate(struct dla_dev *d, const struct dla_cacc_cfg *a,
                      const struct dla_csc_cfg *csc);
/* Round/saturate exact int32 sums in place (the common case). */
uint32_t dla_cacc_deliver_i32(const struct dla_cacc_cfg *a, int32_t *data, size_t n);
/* The same with a given loop variant (tests run every one). */
uint32_t dla_cacc_deliver_i32_isa(const struct dla_cacc_cfg *a, int32_t *data, size_t n,
                                  enum dla_lanes_isa isa);
/* Round/saturate 34-bit accumulators into out. */
uint32_t dla_cacc_deliver_i64(const struct dla_cacc_cfg *a, const int64_t *acc, int32_t *out,
                              size_t n);
/* INT16 layers: exact sums into CACC's 48-bit accumulator, rounded and
 * saturated into out. */
uint32_t dla_cacc_deliver_int16(const struct dla_cacc_cfg *a, const int64_t *acc, int32_t *out,
                                size_t n);
/* Accumulator step of CACC: 34-bit signed saturating add. */
static inline int64_t dla_cacc_accumulate(int64_t partial, int64_t mac)
{
    const int64_t hi = ((int64_t)1 << 33) - 1;
    const int64_t lo = -((int64_t)1 << 33);
    int64_t s = partial + mac;
    return s > hi ? hi : (s < lo ? lo : s);
}
/* Record the saturation count of the layer (D_OUT_SATURATION). */
void dla_cacc_finish(struct dla_dev *d, unsigned group, uint32_t saturations);

#endif
