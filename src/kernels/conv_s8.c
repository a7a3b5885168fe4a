/*
 * The convolution datapath kernel: exact int8 x int8 -> int32 convolution
 * (what CSC + CMAC + CACC accumulate for one layer), a plain reference and a
 * fast version.  Declarations and the formula: conv_s8.h.  Packed formats:
 * conv_s8_impl.h.  x86 micro-kernels: conv_s8_x86.c.
 *
 * Integer sums modulo 2^32 do not depend on the order of the additions, so
 * the fast kernel may block, reorder and vectorise freely and still return
 * exactly what the reference (and a 32-bit hardware accumulator) returns.
 *
 * Fast kernel, per call:
 *   1. instruction set: AVX-512 VNNI > AVX2 > generic C, asked of
 *      __builtin_cpu_supports at every call (no cached state); tile shape:
 *      the one that wastes the fewest pixel lanes on this image width;
 *   2. pack the input into per-(stride phase, channel group) planes and the
 *      weights into [k][group][tap] cells (SSE2 / AVX-512 VBMI shuffles);
 *   3. compute tiles of MR output channels x NR consecutive pixels with the
 *      ISA's micro-kernel (accumulators in registers over the whole
 *      reduction), storing only the real pixels.  Tiles are numbered pixel
 *      tile major (each weight block is re-read from L1/L2 for every pixel
 *      tile) or, when the packed weights outweigh the packed input, k block
 *      major (the small input is re-read instead).
 * AVX2 U8 cells also: pairs of reduction steps whose weights keep the sum
 * of their two vpmaddubsw pair sums within int16 share one widening
 * (pair_lane_fits, kblock_sched; 3 multiplies per 64 MACs instead of 4);
 * x-stride-1 layers may pack one plane per tap column (shifted planes,
 * conv_shifted) so no pixel lane is junk; one-pixel layers put output
 * channels in the lanes (wk, compute_gemv).
 * Threads: one team per call sharing atomic work counters (see
 * conv_run_team; a kept team's workers are woken before the plan is made,
 * conv_call_body); the calling thread works too and does everything if no
 * thread can be created or joins in time.  Very small layers use fewer threads, tiny ones
 * the plain loops.  Callers that run many layers pack each layer's weights
 * once (dla_conv_wpack_build, then dla_conv_s8_packed) and keep the worker
 * threads of a team kept by the caller (common/team.h) instead of creating them per call.
 */
#include "kernels/conv_s8_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "common/team.h"

#if defined(DLA_CONV_SSE2)
#include <emmintrin.h>
#endif

#define GEN_MR 4
#define GEN_NR 8
#define CONV_MAX_THREADS 64
#define CONV_CELL 4 /* bytes per packed cell */
#define CONV_MIN_SHARE_S 150e-6 /* least work worth a thread created for a call */
/* Least work worth a kept team's worker, at a packed layer's one-thread
 * speed (wpack_macs_per_s): a worker spinning for the next job joins in
 * ~0.1-0.3 us (common/team.h), a sleeping one woken at the call (5-40 us
 * on a virtual machine) overlaps the plan, and one that does not come
 * costs the caller only the wake.  3 us (6 us before, 40 before the team
 * spun): VNNI layers split from 1.5 M MACs.  At 6 us MobileNetV2's
 * projection bands of 2-3 M MACs (112x35x32 -> 16, 56x15x144 -> 24, eleven
 * an image) ran on the calling thread alone, 11-15 us each while the
 * worker waited (rdtsc, 2 threads): the 250 GMAC/s below is a 1x1 layer's
 * with many kernels, those reach 150-220. */
#define CONV_KEPT_SHARE_S 3e-6
#define CONV_TINY_MACS 1024.0   /* below: the plain loops are faster */

/* ---------------------------------------------------------------- helpers */

/* Two's complement reinterpretation without implementation-defined casts. */
static inline int32_t u32_to_s32(uint32_t v)
{
    if (v <= (uint32_t)INT32_MAX) {
        return (int32_t)v;
    }
    return (int32_t)(v - 2147483648u) - INT32_MAX - 1;
}

/* a * b into *r; 0 if it does not fit a size_t. */
static int mul_size(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a) {
        return 0;
    }
    *r = a * b;
    return 1;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Geometry check shared by both kernels: 0 if every tap of every output
 * pixel lies inside the input and all sizes fit a size_t. */
static int geom_valid(const struct dla_conv_geom *g)
{
    size_t t;

    if (g->stride_x == 0 || g->stride_y == 0 || g->dil_x == 0 || g->dil_y == 0) {
        return DLASIM_ERR_INVAL;
    }
    if (!mul_size(g->in_c, g->in_h, &t) || !mul_size(t, g->in_w, &t) ||
        !mul_size(g->out_k, g->out_h, &t) || !mul_size(t, g->out_w, &t) ||
        !mul_size(g->out_k, g->in_c, &t) || !mul_size(t, g->k_h, &t) ||
        !mul_size(t, g->k_w, &t)) {
        return DLASIM_ERR_INVAL;
    }
    if (g->out_w == 0 || g->out_h == 0 || g->out_k == 0 || g->in_c == 0 ||
        g->k_w == 0 || g->k_h == 0) {
        return 0; /* nothing is read */
    }
    /* last tap: (out - 1) * stride + (k - 1) * dil < in, each term < 2^64 */
    uint64_t lx = (uint64_t)(g->out_w - 1) * g->stride_x;
    uint64_t tx = (uint64_t)(g->k_w - 1) * g->dil_x;
    uint64_t ly = (uint64_t)(g->out_h - 1) * g->stride_y;
    uint64_t ty = (uint64_t)(g->k_h - 1) * g->dil_y;
    if (lx >= g->in_w || tx >= g->in_w || lx + tx >= g->in_w ||
        ly >= g->in_h || ty >= g->in_h || ly + ty >= g->in_h) {
        return DLASIM_ERR_INVAL;
    }
    return 0;
}

/* -------------------------------------------------------------- reference */

void dla_conv_s8_ref(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                     int32_t *out)
{
    if (g == NULL || in == NULL || wt == NULL || out == NULL || geom_valid(g) != 0) {
        return; /* nothing sensible to compute */
    }
    size_t plane = (size_t)g->in_h * g->in_w;
    for (size_t k = 0; k < g->out_k; k++) {
        for (size_t oy = 0; oy < g->out_h; oy++) {
            for (size_t ox = 0; ox < g->out_w; ox++) {
                uint32_t acc = 0;
                for (size_t c = 0; c < g->in_c; c++) {
                    for (size_t ky = 0; ky < g->k_h; ky++) {
                        for (size_t kx = 0; kx < g->k_w; kx++) {
                            size_t y = oy * g->stride_y + ky * g->dil_y;
                            size_t x = ox * g->stride_x + kx * g->dil_x;
                            int32_t a = in[c * plane + y * g->in_w + x];
                            int32_t b = wt[((k * g->in_c + c) * g->k_h + ky) * g->k_w + kx];
                            acc += (uint32_t)(a * b);
                        }
                    }
                }
                out[(k * g->out_h + oy) * g->out_w + ox] = u32_to_s32(acc);
            }
        }
    }
}

/* ------------------------------------------------------- instruction sets */

/* Q8: 4 channels as bytes x + 128 (VNNI); P16: 2 channels as int16;
 * U8: 4 channels as the plain bytes of a non-negative input (AVX2
 * vpmaddubsw, see conv_s8_impl.h).  Q8 and U8 weight cells are the same. */
enum cell_format { CELL_Q8, CELL_P16, CELL_U8 };

static int fmt_is_bytes(enum cell_format fmt)
{
    return fmt != CELL_P16;
}

struct conv_shape {
    unsigned mr, nr;
    dla_conv_tile_fn tile;
    dla_conv_tile_fn paired; /* U8: the tile after a schedule of paired steps */
    /* the same rows over the first nr / 2 pixels (NULL: none), for a tile
     * whose real pixels all lie there (the last tile of a 7x7 output: 1
     * pixel of 16); the same k blocks and schedules as the full tile */
    dla_conv_tile_fn half, half_paired;
    /* a tile with at most DLA_CONV_DOT_PIXELS real pixels (NULL: none;
     * U8: with or without a schedule) */
    dla_conv_tile_fn dot;
};

/* speed: measured relative speed per pixel lane of each shape (wider tiles
 * amortise more loads: the 8x16 VNNI tile issues 9 loads per 8 vpdpbusd,
 * the 8x48 one 11 per 24).  On Zen 4 the three VNNI shapes were within 5%;
 * on Zen 5, with the tiles storing their sums straight from registers,
 * 1x1 layers (one thread, best of 2,000) per lane: 14x14x64 -> 384 100 /
 * 95 / 67, 28x28x32 -> 192 100 / 93 / 61, 14x14x384 -> 64 100 / 95 / 83,
 * 7x7x960 -> 160 100 / 85 / 77: {100, 94, 72} picks the fastest of the
 * three on each of them.
 * u8: the shapes of the U8 cell path for inputs with no negative code
 * (tile NULL: the ISA has none). */
struct conv_isa_desc {
    const char *name;
    enum cell_format fmt;
    struct conv_shape shapes[DLA_CONV_SHAPES];
    unsigned speed[DLA_CONV_SHAPES];
    struct conv_shape u8[DLA_CONV_SHAPES];
    unsigned u8_speed[DLA_CONV_SHAPES];
};

static void tile_generic(const struct dla_conv_tile *t);

#define GEN_SHAPES                                                                      \
    {{GEN_MR, GEN_NR, tile_generic, NULL, NULL, NULL, NULL},                            \
     {GEN_MR, GEN_NR, tile_generic, NULL, NULL, NULL, NULL},                            \
     {GEN_MR, GEN_NR, tile_generic, NULL, NULL, NULL, NULL}}, {100, 100, 100},          \
    {{0, 0, NULL, NULL, NULL, NULL, NULL}, {0, 0, NULL, NULL, NULL, NULL, NULL},        \
     {0, 0, NULL, NULL, NULL, NULL, NULL}}, {0, 0, 0}

static const struct conv_isa_desc conv_isas[DLA_CONV_ISA_COUNT] = {
    {"generic", CELL_P16, GEN_SHAPES},
#if defined(DLA_CONV_X86)
    {"avx2", CELL_P16,
     {{DLA_CONV_AVX2_MR2, 16, dla_conv_tile_avx2_6x16, NULL, dla_conv_tile_avx2_6x8, NULL,
       dla_conv_tile_avx2_dot},
      {DLA_CONV_AVX2_MR1, 8, dla_conv_tile_avx2_8x8, NULL, NULL, NULL, dla_conv_tile_avx2_dot},
      {DLA_CONV_AVX2_MR0, 16, dla_conv_tile_avx2_4x16, NULL, dla_conv_tile_avx2_4x8, NULL,
       dla_conv_tile_avx2_dot}},
     {100, 95, 90},
     {{DLA_CONV_AVX2_MR2, 16, dla_conv_tile_avx2u8_6x16, dla_conv_tile_avx2u8p_6x16,
       dla_conv_tile_avx2u8_6x8, dla_conv_tile_avx2u8p_6x8, dla_conv_tile_avx2u8_dot},
      {DLA_CONV_AVX2_MR1, 8, dla_conv_tile_avx2u8_8x8, dla_conv_tile_avx2u8p_8x8, NULL, NULL,
       dla_conv_tile_avx2u8_dot},
      {DLA_CONV_AVX2_MR0, 16, dla_conv_tile_avx2u8_4x16, dla_conv_tile_avx2u8p_4x16,
       dla_conv_tile_avx2u8_4x8, dla_conv_tile_avx2u8p_4x8, dla_conv_tile_avx2u8_dot}},
     {100, 95, 90}},
    {"avx512vnni", CELL_Q8,
     {{DLA_CONV_VNNI_MR, 48, dla_conv_tile_vnni_8x48, NULL, NULL, NULL, NULL},
      {DLA_CONV_VNNI_MR, 32, dla_conv_tile_vnni_8x32, NULL, NULL, NULL, NULL},
      {DLA_CONV_VNNI_MR, 16, dla_conv_tile_vnni_8x16, NULL, NULL, NULL, NULL}},
     {100, 94, 72},
     {{0, 0, NULL, NULL, NULL, NULL, NULL}, {0, 0, NULL, NULL, NULL, NULL, NULL},
      {0, 0, NULL, NULL, NULL, NULL, NULL}}, {0, 0, 0}},
#else
    {"avx2", CELL_P16, GEN_SHAPES},
    {"avx512vnni", CELL_P16, GEN_SHAPES},
#endif
};

const char *dla_conv_isa_name(enum dla_conv_isa isa)
{
    if ((unsigned)isa >= DLA_CONV_ISA_COUNT) {
        return "unknown";
    }
    return conv_isas[isa].name;
}

int dla_conv_isa_supported(enum dla_conv_isa isa)
{
    switch (isa) {
    case DLA_CONV_ISA_GENERIC:
        return 1;
#if defined(DLA_CONV_X86)
    case DLA_CONV_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    case DLA_CONV_ISA_AVX512VNNI:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni") ? 1 : 0;
#endif
    default:
        return 0;
    }
}

/* AVX-512 VBMI byte permutes for packing Q8 weights (conv_s8_x86.c). */
static int conv_vbmi_supported(void)
{
#if defined(DLA_CONV_X86)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi");
#else
    return 0;
#endif
}

static enum dla_conv_isa conv_best_isa(void)
{
    if (dla_conv_isa_supported(DLA_CONV_ISA_AVX512VNNI)) {
        return DLA_CONV_ISA_AVX512VNNI;
    }
    if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
        return DLA_CONV_ISA_AVX2;
    }
    return DLA_CONV_ISA_GENERIC;
}

const char *dla_conv_s8_isa(void)
{
    return dla_conv_isa_name(conv_best_isa());
}

/* ------------------------------------------------------------------- plan */

/* The k blocks of one tile height mr over a pack's rows: block kb (rows
 * kb * mr ..) runs reduction steps [lo[kb], hi[kb]), the union of its
 * rows' qlo/qhi (0, 0 if none); for U8 tiles with paired steps its
 * schedule (dla_conv_tile.sched) is at sched + sched_at[kb] (SIZE_MAX:
 * every step alone, sched_gains; sched NULL: every block alone).  They
 * depend only on the weights and mr. */
struct kb_tables {
    unsigned mr;
    int paired;       /* the schedules were made (U8 tiles with paired steps) */
    size_t kblocks;
    uint32_t *lo, *hi;
    uint32_t *sched;
    size_t *sched_at;
    size_t nsched; /* entries at sched */
};

/* Packed weights of one layer (see conv_s8_impl.h), built per call or once
 * by dla_conv_wpack_build and reused while the weights stay the same. */
struct dla_conv_wpack {
    enum dla_conv_isa isa;
    enum cell_format fmt;
    int use_vbmi;     /* pack Q8 weights with conv_s8_x86.c's VBMI routine */
    uint32_t in_c, k_w, k_h, out_k; /* the packed kernels' shape (folded, see below) */
    /* The caller's kernel shape (what dla_conv_s8_packed* check against).
     * Kernels whose non-zero weights are in fewer channels than a cell
     * holds (a first layer: 1 or 3 channels, padded to Atomic-C) are
     * packed "folded": tap offsets (ty, tx) < (fold_ty, fold_tx) become
     * channels fold_c * fold_ty * fold_tx, so cells carry taps instead of
     * zero channels (fold_input); the same products are summed. */
    uint32_t shape_c, shape_kw, shape_kh;
    uint32_t fold_c, fold_ty, fold_tx; /* fold_ty = fold_tx = 1: not folded */
    uint32_t cell_ch; /* channels per cell: 4 (Q8) or 2 (P16) */
    uint32_t ngrp;    /* channel groups */
    size_t taps;      /* k_h * k_w */
    size_t nq;        /* reduction steps: ngrp * taps */
    size_t bytes;     /* packed weight bytes (out_k * nq cells) */
    unsigned char *wp;
    int32_t *init; /* accumulator start value of each output channel */
    /* reduction steps [qlo[k], qhi[k]) hold every non-zero weight cell of
     * output channel k (empty: qlo = qhi = 0); a tile runs only the union of
     * its rows' ranges, so a dense-lowered depthwise or grouped convolution
     * costs its real MACs (zero weights add nothing: exact) */
    uint32_t *qlo, *qhi;
    /* U8 packs: bit i of row k's pair_words words says that steps 2i and
     * 2i + 1 of output channel k may share an int16 sum (pair_safe) */
    uint64_t *pairs;
    size_t pair_words;
    /* U8 packs of layers with one output pixel (fully connected layers):
     * the cells again as [k / 8][q][k % 8] (DLA_CONV_GEMV_K channels a
     * vector, out_k rounded up with zero rows) for dla_conv_gemv_avx2u8,
     * which puts output channels in the lanes; NULL otherwise */
    unsigned char *wk;
    /* dense 1x1 kernels of whole atoms on AVX-512 VNNI: the weights of the
     * atoms tiles (struct dla_conv_atoms_tile) as [k / 8][c / 8][k % 8][c %
     * 8], each w + 128, out_k rounded up to 8 with rows of w = 0
     * (wpack_fill_atoms); NULL otherwise */
    unsigned char *wat;
    /* deep dense layers of few output pixels on AVX-512 VNNI, out_k a
     * multiple of 32: the cells again as [k / 16][q][k % 16] for the
     * k-lanes tiles (struct dla_conv_klanes_tile; wpack_fill_klanes); NULL
     * otherwise */
    unsigned char *wkl;
    /* packs built by dla_conv_wpack_build*: the k blocks of each tile
     * height its ISA's shapes for fmt have (kb_tables_build), found once
     * instead of by every call (the last packer alone, while the other
     * threads wait: ~1 % of ResNet-50's kernel time); nkbt 0 (packs made
     * per call, or memory short): each call finds its own */
    struct kb_tables kbt[DLA_CONV_SHAPES];
    unsigned nkbt;
};

/* What a tile call takes from its k block alone (struct dla_conv_tile's
 * fields but those of the pixel tile): found once per plan instead of at
 * each of the ntiles calls of the block (~30 of compute_tiles' ~80
 * instructions a call, MobileNetV2's 48,000 calls an image). */
struct kb_desc {
    const int32_t *init;
    const ptrdiff_t *qoff;
    const unsigned char *w;
    const uint32_t *sched;
    int32_t *out;
    size_t nq;
    unsigned mr;
};

struct conv_plan {
    const struct dla_conv_geom *g;
    int cells_vbmi; /* 1x1 input rows packed with AVX-512 VBMI (dla_conv_cells_rows_vbmi) */
    int atoms_avx2; /* an input of atoms packed with AVX2 (dla_conv_atoms_cells_avx2) */
    int atoms_planes; /* src's atoms packed a whole plane at a time (pack_atoms_planes) */
    const int8_t *in, *wt; /* wt: NULL when the weights come packed */
    const struct dla_conv_src *src; /* not NULL: the input as src describes it (in unused) */
    int32_t *out;
    const struct conv_isa_desc *isa;
    const struct conv_shape *shape;
    enum cell_format fmt;
    const struct dla_conv_wpack *w; /* w == &own, or packed by the caller */
    struct dla_conv_wpack own;
    /* own is built from wt, or (wt NULL) converted from these U8 cells */
    const struct dla_conv_wpack *wsrc;
    const struct conv_shape *shapes; /* the ISA's shapes for fmt */
    const unsigned *speed;
    int kmajor;       /* tiles numbered k block major (weights larger than input) */
    uint32_t cell_ch, ngrp;
    size_t taps, nq;  /* as in w */
    size_t vw, vh;    /* virtual plane width and rows that hold data */
    /* shifted planes (x stride and dilation 1): one plane per column
     * offset xo < nxo of the taps, each out_w cells wide, cell x' holding
     * input column x' + xo: no junk lanes between output rows, for nxo
     * times the packing (conv_shifted) */
    int shifted;
    size_t nxo;
    size_t nv;        /* virtual pixels: out_h * vw */
    size_t ntiles;    /* ceil(nv / NR) */
    size_t plane_cells;
    size_t nsy, nsx;  /* stride phases in use */
    uint32_t *phase_y, *phase_x;
    /* one allocation for qoff, the phases, kb_own.lo/hi and zero_row (and
     * plan_build's tap tables): a call of a small layer made ten mallocs */
    void *small;
    size_t nplanes;   /* nsy * nsx * ngrp */
    unsigned char *inp;
    size_t inp_bytes; /* the packed input's bytes */
    int8_t *zero_row; /* in_w zero bytes: the absent channels of the last group */
    ptrdiff_t *qoff;
    size_t kblocks;
    /* the k blocks of shape->mr (struct kb_tables): the pack's, or kb_own's
     * (lo, hi in the small allocation, the schedules freed with the plan) */
    const struct kb_tables *kb;
    struct kb_tables kb_own;
    /* one output pixel and a pack with wk: the channels-in-lanes kernel on
     * xg, the nq input cells of the pixel gathered after packing */
    int gemv;
    unsigned char *xg;
    /* gemv with one phase and no dilation: plane grp's rows, k_w cells
     * each, are its steps grp * taps.. in order, so the planes are packed
     * straight into xg (inp NULL, no gather) */
    int gemv_direct;
    /* gemv_direct of a 1x1 kernel not folded (a fully connected layer):
     * xg is gathered channel by channel (gemv_gather) instead of as ngrp
     * planes of one cell each */
    int gemv_gather;
    /* each k block's part of a tile call (struct kb_desc), made with the
     * k blocks' steps (kblock_steps); NULL: compute_tiles finds them */
    struct kb_desc *kbd;
    /* output channels in the lanes (klanes_plan): ntiles counts tiles of
     * DLA_CONV_KLANES_MR real output pixels, kblocks blocks of
     * DLA_CONV_KLANES_K channels; kl_cell[i], kl_opix[i]: real pixel i's
     * cell offset in a packed plane and its offset in an output plane */
    int klanes;
    uint32_t *kl_cell, *kl_opix;
};

static void kb_tables_free(struct kb_tables *t)
{
    free(t->lo);
    free(t->hi);
    free(t->sched);
    free(t->sched_at);
}

static void wpack_release(struct dla_conv_wpack *w)
{
    for (unsigned i = 0; i < w->nkbt; i++) {
        kb_tables_free(&w->kbt[i]);
    }
    free(w->wp);
    free(w->init);
    free(w->qlo);
    free(w->qhi);
    free(w->pairs);
    free(w->wk);
    free(w->wat);
    free(w->wkl);
}

static void plan_free(struct conv_plan *p)
{
    free(p->small);
    free(p->inp);
    free(p->kb_own.sched);
    free(p->kb_own.sched_at);
    free(p->kbd);
    free(p->xg);
    free(p->kl_cell);
    wpack_release(&p->own);
}

/* 64-byte aligned buffer of at least `size` bytes (size > 0). */
static void *alloc64(size_t size)
{
    size_t rounded = (size + 63u) & ~(size_t)63u;
    if (rounded < size) {
        return NULL;
    }
    return aligned_alloc(64, rounded);
}

/* Distinct phases (tap * dil) mod stride of k taps; slot[i] = index of the
 * phase of tap i, off[i] = its whole-cell offset (tap * dil) / stride. */
static size_t collect_phases(uint32_t k, uint32_t dil, uint32_t stride, uint32_t *phases,
                             uint32_t *slot, uint32_t *off)
{
    size_t n = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t pos = (uint64_t)i * dil;
        uint32_t ph = (uint32_t)(pos % stride);
        size_t s = 0;
        while (s < n && phases[s] != ph) {
            s++;
        }
        if (s == n) {
            phases[n++] = ph;
        }
        slot[i] = (uint32_t)s;
        off[i] = (uint32_t)(pos / stride);
    }
    return n;
}

/* Sizes of the packed weights of g for `isa`; allocates their buffers
 * (contents not set).  0, DLASIM_ERR_INVAL (too large) or _NOMEM; on an
 * error w holds nothing to release. */
static int wpack_init(struct dla_conv_wpack *w, const struct dla_conv_geom *g,
                      enum dla_conv_isa isa, enum cell_format fmt, int use_vbmi)
{
    memset(w, 0, sizeof(*w));
    w->isa = isa;
    w->fmt = fmt;
    w->use_vbmi = use_vbmi;
    w->in_c = g->in_c;
    w->k_w = g->k_w;
    w->k_h = g->k_h;
    w->out_k = g->out_k;
    w->shape_c = g->in_c;
    w->shape_kw = g->k_w;
    w->shape_kh = g->k_h;
    w->fold_c = g->in_c;
    w->fold_ty = 1;
    w->fold_tx = 1;
    w->cell_ch = fmt_is_bytes(w->fmt) ? 4 : 2;
    w->ngrp = (uint32_t)(((uint64_t)g->in_c + w->cell_ch - 1) / w->cell_ch);
    w->taps = (size_t)g->k_h * g->k_w;
    w->nq = (size_t)w->ngrp * w->taps;
    if (!mul_size(g->out_k, w->nq, &w->bytes) || !mul_size(w->bytes, CONV_CELL, &w->bytes) ||
        w->nq > UINT32_MAX) {
        return DLASIM_ERR_INVAL;
    }
    /* at least one element each: an empty layer still gets a valid pack */
    size_t rows = g->out_k ? g->out_k : 1;
    w->wp = alloc64(w->bytes ? w->bytes : 1);
    w->init = malloc(sizeof(int32_t) * rows);
    w->qlo = malloc(sizeof(uint32_t) * rows);
    w->qhi = malloc(sizeof(uint32_t) * rows);
    if (fmt == CELL_U8) {
        w->pair_words = (w->nq / 2 + 63) / 64;
        w->pairs = calloc(rows * (w->pair_words ? w->pair_words : 1), sizeof(uint64_t));
    }
    if (w->wp == NULL || w->init == NULL || w->qlo == NULL || w->qhi == NULL ||
        (fmt == CELL_U8 && w->pairs == NULL)) {
        wpack_release(w);
        memset(w, 0, sizeof(*w));
        return DLASIM_ERR_NOMEM;
    }
    return 0;
}

/* The plan's small tables in one allocation (p->small): qoff (nq), then
 * uint32 phase_y, sy, oy (k_h each), phase_x, sx, ox (k_w each), kb_own.lo,
 * kb_own.hi (kblocks each), then zero_row (in_w zero bytes).  A call of a small
 * layer made ten mallocs for these.  sy/oy/sx/ox: collect_phases' slots and
 * offsets, only plan_build reads them. */
static int plan_tables(struct conv_plan *p, uint32_t **sy, uint32_t **oy, uint32_t **sx,
                       uint32_t **ox)
{
    const struct dla_conv_geom *g = p->g;
    size_t kb1 = p->kblocks ? p->kblocks : 1;
    /* nq and kblocks < 2^32 (wpack_init), k_h, k_w, in_w 32-bit: no overflow in 64 bits */
    uint64_t words = 3 * (uint64_t)g->k_h + 3 * (uint64_t)g->k_w + 2 * (uint64_t)kb1;
    uint64_t bytes = (uint64_t)p->nq * sizeof(ptrdiff_t) + words * sizeof(uint32_t) + g->in_w;
    if (p->nq > UINT32_MAX || kb1 > UINT32_MAX || bytes > SIZE_MAX ||
        p->nq > PTRDIFF_MAX / sizeof(ptrdiff_t)) {
        return DLASIM_ERR_INVAL;
    }
    if ((p->small = malloc((size_t)bytes)) == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    p->qoff = p->small;
    p->phase_y = (uint32_t *)(void *)(p->qoff + p->nq);
    *sy = p->phase_y + g->k_h;
    *oy = *sy + g->k_h;
    p->phase_x = *oy + g->k_h;
    *sx = p->phase_x + g->k_w;
    *ox = *sx + g->k_w;
    p->kb_own.lo = *ox + g->k_w;
    p->kb_own.hi = p->kb_own.lo + kb1;
    p->zero_row = (int8_t *)(void *)(p->kb_own.hi + kb1);
    memset(p->zero_row, 0, g->in_w);
    return 0;
}

/* Sizes, phases and step offsets; allocates the packed input (and the
 * packed weights unless the caller brought them). */
static int plan_build(struct conv_plan *p, enum dla_conv_isa isa, int use_vbmi)
{
    const struct dla_conv_geom *g = p->g;
    uint32_t *sy, *sx, *oy, *ox;
    size_t t, inp_size;
    int rc;

    if (p->w == &p->own && (rc = wpack_init(&p->own, g, isa, p->fmt, use_vbmi)) != 0) {
        return rc;
    }
    p->cell_ch = p->w->cell_ch;
    p->ngrp = p->w->ngrp;
    p->taps = p->w->taps;
    p->nq = p->w->nq;
    p->kblocks = ((size_t)g->out_k + p->shape->mr - 1) / p->shape->mr;
    if ((rc = plan_tables(p, &sy, &oy, &sx, &ox)) != 0) {
        return rc;
    }
    p->nsy = collect_phases(g->k_h, g->dil_y, g->stride_y, p->phase_y, sy, oy);
    p->nsx = collect_phases(g->k_w, g->dil_x, g->stride_x, p->phase_x, sx, ox);
    size_t cymax = oy[g->k_h - 1], cxmax = ox[g->k_w - 1];
    p->nxo = p->shifted ? cxmax + 1 : 1;
    size_t cxtail = p->shifted ? 0 : cxmax; /* the last tap's reach past a row */
    p->vw = (size_t)g->out_w + cxtail;
    p->vh = (size_t)g->out_h + cymax;
    if (!mul_size(g->out_h, p->vw, &p->nv)) {
        return DLASIM_ERR_INVAL;
    }
    p->ntiles = (p->nv + p->shape->nr - 1) / p->shape->nr;
    if (!mul_size(p->ntiles, p->shape->nr, &t) || !mul_size(cymax, p->vw, &p->plane_cells)) {
        return DLASIM_ERR_INVAL;
    }
    p->plane_cells += t + cxtail;
    p->nplanes = p->nsy * p->nsx * p->ngrp * p->nxo;
    if (!mul_size(p->nplanes, p->plane_cells, &inp_size) ||
        !mul_size(inp_size, CONV_CELL, &inp_size) || inp_size > PTRDIFF_MAX) {
        return DLASIM_ERR_INVAL;
    }
    p->gemv_direct = p->gemv && p->nsy == 1 && p->nsx == 1 && p->nxo == 1 &&
                     p->vw == g->k_w && p->vh == g->k_h;
    p->gemv_gather = p->gemv_direct && p->taps == 1 && p->w->fold_ty == 1 && p->w->fold_tx == 1;
    if (!p->gemv_direct && (p->inp = alloc64(inp_size)) == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    p->inp_bytes = inp_size;
    /* (a direct one-pixel plan reads xg in step order: no offsets) */
    for (size_t grp = 0; grp < p->ngrp && !p->gemv_direct; grp++) {
        for (size_t ky = 0; ky < g->k_h; ky++) {
            for (size_t kx = 0; kx < g->k_w; kx++) {
                size_t plane = ((size_t)sy[ky] * p->nsx + sx[kx]) * p->ngrp + grp;
                size_t xo = p->shifted ? ox[kx] : 0;
                size_t cell = (plane * p->nxo + xo) * p->plane_cells +
                              (size_t)oy[ky] * p->vw + ox[kx] - xo;
                p->qoff[grp * p->taps + ky * g->k_w + kx] = (ptrdiff_t)(cell * CONV_CELL);
            }
        }
    }
    if (p->gemv && (p->xg = alloc64(p->nq * CONV_CELL + 1)) == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    p->kmajor = p->w->bytes > inp_size;
    return 0;
}

/* ---------------------------------------------------------------- packing */

static inline void st32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

/* Q8 cell: 4 channels as bytes (callers XOR 0x80808080 for the input bias). */
static inline uint32_t cell_q8(int8_t a, int8_t b, int8_t c, int8_t d)
{
    return (uint32_t)(uint8_t)a | (uint32_t)(uint8_t)b << 8 | (uint32_t)(uint8_t)c << 16 |
           (uint32_t)(uint8_t)d << 24;
}

/* P16 cell: 2 channels as int16 (on a big-endian host the halves of input
 * and weight cells swap alike, so the pair products still match). */
static inline uint32_t cell_p16(int8_t a, int8_t b)
{
    return (uint32_t)(uint16_t)(int16_t)a | (uint32_t)(uint16_t)(int16_t)b << 16;
}

/* ------------------------------------------------ interleaving (SSE2 base) */

#if defined(DLA_CONV_SSE2)
/* Bytes 0, 2, 4, ... 30 of the 32 at p. */
static inline __m128i even_bytes(const int8_t *p)
{
    const __m128i lo = _mm_set1_epi16(0xFF);
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    return _mm_packus_epi16(_mm_and_si128(a, lo), _mm_and_si128(b, lo));
}

/* 16 Q8 cells from 16 bytes of each of 4 channels. */
static inline void q8_emit16(unsigned char *d, __m128i a0, __m128i a1, __m128i a2, __m128i a3)
{
    __m128i l01 = _mm_unpacklo_epi8(a0, a1), h01 = _mm_unpackhi_epi8(a0, a1);
    __m128i l23 = _mm_unpacklo_epi8(a2, a3), h23 = _mm_unpackhi_epi8(a2, a3);
    __m128i *o = (__m128i *)(void *)d;
    _mm_storeu_si128(o, _mm_unpacklo_epi16(l01, l23));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(l01, l23));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(h01, h23));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(h01, h23));
}

/* Bytes 0, sx, 2 sx and 3 sx at p (sx 1 or 2) in the low 4 bytes; reads
 * bytes 0 .. 4 sx - 1. */
static inline __m128i four_bytes(const int8_t *p, size_t sx)
{
    if (sx == 1) {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return _mm_cvtsi32_si128(v);
    }
    __m128i a = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_packus_epi16(_mm_and_si128(a, _mm_set1_epi16(0xFF)), _mm_setzero_si128());
}

/* 4 Q8 cells from 4 bytes of each of 4 channels (sx apart), XOR b. */
static inline void q8_emit4(unsigned char *d, const int8_t *s0, const int8_t *s1,
                            const int8_t *s2, const int8_t *s3, size_t sx, __m128i b)
{
    __m128i l01 = _mm_unpacklo_epi8(four_bytes(s0, sx), four_bytes(s1, sx));
    __m128i l23 = _mm_unpacklo_epi8(four_bytes(s2, sx), four_bytes(s3, sx));
    _mm_storeu_si128((__m128i *)(void *)d, _mm_xor_si128(_mm_unpacklo_epi16(l01, l23), b));
}

/* Q8 cells x .. n - 1 in chunks of 4, the last one overlapping (rows too
 * short for the wider chunks: 7x7 layers' rows of 7 cells, stride-2 rows
 * under 16: one cell at a time they took ~25 ns a row, the packing 14 %
 * of a 7x7x2048 -> 512 call); n if n >= 4, else x. */
static size_t q8_cells4(unsigned char *d, const int8_t *s0, const int8_t *s1, const int8_t *s2,
                        const int8_t *s3, size_t x, size_t n, size_t sx, __m128i b)
{
    if (x >= n || n < 4) {
        return x;
    }
    for (; x + 4 <= n; x += 4) {
        q8_emit4(d + x * CONV_CELL, s0 + x * sx, s1 + x * sx, s2 + x * sx, s3 + x * sx, sx, b);
    }
    if (x < n) {
        x = n - 4;
        q8_emit4(d + x * CONV_CELL, s0 + x * sx, s1 + x * sx, s2 + x * sx, s3 + x * sx, sx, b);
    }
    return n;
}

/* 16 P16 cells from 16 bytes of each of 2 channels (sign extension: the
 * byte doubled to b:b, shifted right arithmetically by 8). */
static inline void p16_emit16(unsigned char *d, __m128i a0, __m128i a1)
{
    __m128i l = _mm_unpacklo_epi8(a0, a1), h = _mm_unpackhi_epi8(a0, a1);
    __m128i *o = (__m128i *)(void *)d;
    _mm_storeu_si128(o, _mm_srai_epi16(_mm_unpacklo_epi8(l, l), 8));
    _mm_storeu_si128(o + 1, _mm_srai_epi16(_mm_unpackhi_epi8(l, l), 8));
    _mm_storeu_si128(o + 2, _mm_srai_epi16(_mm_unpacklo_epi8(h, h), 8));
    _mm_storeu_si128(o + 3, _mm_srai_epi16(_mm_unpackhi_epi8(h, h), 8));
}

static inline __m128i load16(const int8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
#endif

#if defined(DLA_CONV_SSE2)
/* 8 Q8 cells at d from s_i[0..7] ^ b. */
static inline void q8_emit8(unsigned char *d, const int8_t *s0, const int8_t *s1,
                            const int8_t *s2, const int8_t *s3, __m128i b)
{
    __m128i a0 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)s0), b);
    __m128i a1 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)s1), b);
    __m128i a2 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)s2), b);
    __m128i a3 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)s3), b);
    __m128i l01 = _mm_unpacklo_epi8(a0, a1), l23 = _mm_unpacklo_epi8(a2, a3);
    __m128i *o = (__m128i *)(void *)d;
    _mm_storeu_si128(o, _mm_unpacklo_epi16(l01, l23));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(l01, l23));
}
#endif

/* Q8 cells from 4 byte rows: d[4x + i] = s_i[x * sx] ^ bias for x < n, sx
 * 1 or 2, as far as whole chunks go (for sx = 2, n must keep the reads of
 * s_i[2x + 1] inside the rows); returns the number of cells done.  The
 * last 1-15 cells of a row of at least one chunk are one more chunk that
 * ends at cell n and rewrites some cells with the same values (the rows of
 * small layers are short: 14 cells would leave 6 to the scalar loop); rows
 * too short for those chunks go 4 cells a chunk (q8_cells4). */
static size_t q8_cells_simd(unsigned char *d, const int8_t *s0, const int8_t *s1,
                            const int8_t *s2, const int8_t *s3, size_t n, size_t sx, int bias)
{
    size_t x = 0;
#if defined(DLA_CONV_SSE2)
    __m128i b = _mm_set1_epi8(bias ? -128 : 0);
    if (sx == 2) {
        for (; x + 16 <= n; x += 16) {
            q8_emit16(d + x * CONV_CELL, _mm_xor_si128(even_bytes(s0 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s1 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s2 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s3 + 2 * x), b));
        }
        if (x < n && n >= 16) { /* the overlapping last chunk */
            x = n - 16;
            q8_emit16(d + x * CONV_CELL, _mm_xor_si128(even_bytes(s0 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s1 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s2 + 2 * x), b),
                      _mm_xor_si128(even_bytes(s3 + 2 * x), b));
            x = n;
        }
        return q8_cells4(d, s0, s1, s2, s3, x, n, 2, b);
    }
    if (sx != 1) {
        return 0;
    }
    for (; x + 16 <= n; x += 16) {
        q8_emit16(d + x * CONV_CELL, _mm_xor_si128(load16(s0 + x), b),
                  _mm_xor_si128(load16(s1 + x), b), _mm_xor_si128(load16(s2 + x), b),
                  _mm_xor_si128(load16(s3 + x), b));
    }
    for (; x + 8 <= n; x += 8) {
        q8_emit8(d + x * CONV_CELL, s0 + x, s1 + x, s2 + x, s3 + x, b);
    }
    if (x < n && n >= 8) { /* the overlapping last chunk */
        x = n - 8;
        q8_emit8(d + x * CONV_CELL, s0 + x, s1 + x, s2 + x, s3 + x, b);
        x = n;
    }
    x = q8_cells4(d, s0, s1, s2, s3, x, n, 1, b);
#else
    (void)d;
    (void)s0;
    (void)s1;
    (void)s2;
    (void)s3;
    (void)n;
    (void)sx;
    (void)bias;
#endif
    return x;
}

#if defined(DLA_CONV_SSE2)
/* 8 P16 cells at d from s0[0..7], s1[0..7] (sign extension as p16_emit16). */
static inline void p16_emit8(unsigned char *d, const int8_t *s0, const int8_t *s1)
{
    __m128i l = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)s0),
                                  _mm_loadl_epi64((const __m128i *)(const void *)s1));
    __m128i *o = (__m128i *)(void *)d;
    _mm_storeu_si128(o, _mm_srai_epi16(_mm_unpacklo_epi8(l, l), 8));
    _mm_storeu_si128(o + 1, _mm_srai_epi16(_mm_unpackhi_epi8(l, l), 8));
}

/* P16 cells x .. n - 1 in chunks of 4 (bytes sx apart), the last one
 * overlapping, as q8_cells4 (7x7 rows, short stride-2 rows); n if n >= 4,
 * else x. */
static size_t p16_cells4(unsigned char *d, const int8_t *s0, const int8_t *s1, size_t x,
                         size_t n, size_t sx)
{
    if (x >= n || n < 4) {
        return x;
    }
    for (size_t at = x;; at += 4) {
        at = at + 4 > n ? n - 4 : at;
        __m128i l = _mm_unpacklo_epi8(four_bytes(s0 + at * sx, sx), four_bytes(s1 + at * sx, sx));
        _mm_storeu_si128((__m128i *)(void *)(d + at * CONV_CELL),
                         _mm_srai_epi16(_mm_unpacklo_epi8(l, l), 8));
        if (at + 4 >= n) {
            return n;
        }
    }
}
#endif

/* P16 cells from 2 byte rows: int16 s0[x * sx], s1[x * sx] for x < n, sx 1
 * or 2, as far as whole chunks go (same read rule as q8_cells_simd); returns
 * the number of cells done.  As q8_cells_simd, a row's last cells are one
 * more chunk that ends at cell n (rewriting some cells with the same
 * values) and short rows go 4 cells a chunk: the signed expand layers'
 * rows of 14 and 28 cells left 6 and 4 to the scalar loop, 7x7 rows all 7. */
static size_t p16_cells_simd(unsigned char *d, const int8_t *s0, const int8_t *s1, size_t n,
                             size_t sx)
{
    size_t x = 0;
#if defined(DLA_CONV_SSE2)
    if (sx == 2) {
        for (; x + 16 <= n; x += 16) {
            p16_emit16(d + x * CONV_CELL, even_bytes(s0 + 2 * x), even_bytes(s1 + 2 * x));
        }
        if (x < n && n >= 16) { /* the overlapping last chunk */
            x = n - 16;
            p16_emit16(d + x * CONV_CELL, even_bytes(s0 + 2 * x), even_bytes(s1 + 2 * x));
            x = n;
        }
    } else if (sx == 1) {
        for (; x + 16 <= n; x += 16) {
            p16_emit16(d + x * CONV_CELL, load16(s0 + x), load16(s1 + x));
        }
        for (; x + 8 <= n; x += 8) {
            p16_emit8(d + x * CONV_CELL, s0 + x, s1 + x);
        }
        if (x < n && n >= 8) { /* the overlapping last chunk */
            x = n - 8;
            p16_emit8(d + x * CONV_CELL, s0 + x, s1 + x);
            x = n;
        }
    } else {
        return 0;
    }
    x = p16_cells4(d, s0, s1, x, n, sx);
#else
    (void)d;
    (void)s0;
    (void)s1;
    (void)n;
    (void)sx;
#endif
    return x;
}

/* int8 -> int16 of n bytes (P16 weights of 1x1 kernels); returns count done. */
static size_t s8_to_s16_simd(unsigned char *d, const int8_t *s, size_t n)
{
    size_t x = 0;
#if defined(DLA_CONV_SSE2)
    for (; x + 16 <= n; x += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + x));
        __m128i *o = (__m128i *)(void *)(d + 2 * x);
        _mm_storeu_si128(o, _mm_srai_epi16(_mm_unpacklo_epi8(a, a), 8));
        _mm_storeu_si128(o + 1, _mm_srai_epi16(_mm_unpackhi_epi8(a, a), 8));
    }
#else
    (void)d;
    (void)s;
    (void)n;
#endif
    return x;
}

/* Sum of n signed bytes. */
static int64_t sum_s8(const int8_t *s, size_t n)
{
    int64_t sum = 0;
    size_t i = 0;
#if defined(DLA_CONV_SSE2)
    __m128i bias = _mm_set1_epi8(-128), zero = _mm_setzero_si128(), acc = zero;
    /* psadbw of x ^ 0x80 = sum of (x + 128), per 8-byte half; 64-bit lanes */
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), bias);
        acc = _mm_add_epi64(acc, _mm_sad_epu8(a, zero));
    }
    int64_t lanes[2];
    memcpy(lanes, &acc, sizeof lanes);
    sum = lanes[0] + lanes[1] - 128 * (int64_t)i;
#endif
    for (; i < n; i++) {
        sum += s[i];
    }
    return sum;
}

/* One packed input row: cells x' < n from channel rows s[] (stride sx bytes
 * between cells; cells below n_simd may be read in chunks), junk cells
 * x' in [n, vw) set to input value 0 (Q8 holds x + 128: 0x80 bytes). */
static void pack_input_row(unsigned char *d, const int8_t *const s[4], size_t n, size_t n_simd,
                           size_t vw, size_t sx, enum cell_format fmt)
{
    size_t x = 0;
    if (fmt_is_bytes(fmt)) {
        const int8_t *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3];
        int bias = fmt == CELL_Q8;
        uint32_t flip = bias ? 0x80808080u : 0;
        x = q8_cells_simd(d, s0, s1, s2, s3, n_simd, sx, bias);
        for (; x < n; x++) {
            size_t o = x * sx;
            st32(d + x * CONV_CELL, cell_q8(s0[o], s1[o], s2[o], s3[o]) ^ flip);
        }
    } else {
        const int8_t *s0 = s[0], *s1 = s[1];
        x = p16_cells_simd(d, s0, s1, n_simd, sx);
        for (; x < n; x++) {
            st32(d + x * CONV_CELL, cell_p16(s0[x * sx], s1[x * sx]));
        }
    }
    for (; x < vw; x++) {
        st32(d + x * CONV_CELL, fmt == CELL_Q8 ? 0x80808080u : 0);
    }
}

/* The cell of the pad value of p->src for channel group c0 (channels past
 * in_c hold 0) in p's cell format. */
static uint32_t pad_cell(const struct conv_plan *p, size_t c0)
{
    int8_t pad[4], zero = 0;
    const int8_t *s[4];
    unsigned char cell[CONV_CELL];
    uint32_t v;
    for (size_t i = 0; i < 4; i++) {
        pad[i] = p->src->pad;
        s[i] = c0 + i < p->g->in_c ? &pad[i] : &zero;
    }
    pack_input_row(cell, s, 1, 0, 1, 1, p->fmt);
    memcpy(&v, cell, sizeof v);
    return v;
}

/* The columns of a packed row from p->src at phase px (cells x' < xv
 * real): cells [a, b) lie in the data region, the byte of cell a is
 * `first` bytes into a data row, and cells below a + n_simd may be read in
 * chunks.  The same for every row of a plane: found once per plane (the
 * divisions by the stride cost more than packing a short row). */
struct src_cols {
    size_t a, b, first, n_simd;
    /* the group's channel rows at data row 0, column `first`, and the step
     * to the next data row (0 for the zero row of absent channels): set
     * once a plane, not a row (the per-row set-up, its loads redone after
     * every cell store, was a third of pack_input_plane's own time) */
    const int8_t *row0[4];
    size_t step[4];
};

static struct src_cols src_cols_of(const struct conv_plan *p, size_t px, size_t xv)
{
    const struct dla_conv_src *src = p->src;
    size_t sx = p->g->stride_x;
    struct src_cols c;
    c.a = src->x0 > px ? (src->x0 - px + sx - 1) / sx : 0;
    c.b = src->x1 > px ? (src->x1 - px + sx - 1) / sx : 0;
    c.a = min_size(c.a, xv);
    c.b = c.b < c.a ? c.a : min_size(c.b, xv);
    c.first = c.b > c.a ? c.a * sx + px - src->x0 : 0;
    c.n_simd = c.b > c.a ? min_size(c.b - c.a, (src->x1 - src->x0 - c.first) / sx) : 0;
    return c;
}

/* cols' channel rows of the group from channel c0 (src_cols). */
/* Byte offset of channel c in src's first atom when src holds atoms:
 * channel c is byte c % 8 of the atoms of surface c / 8. */
static size_t atom_channel_offset(const struct dla_conv_src *src, size_t c)
{
    return c / 8 * src->ch_stride + c % 8;
}

static void src_cols_rows(const struct conv_plan *p, size_t c0, struct src_cols *c)
{
    const struct dla_conv_src *src = p->src;
    if (src->atoms != 0) { /* the group's bytes in the column's atom (whole atoms) */
        c->row0[0] = src->data + atom_channel_offset(src, c0) + c->first * 8;
        c->step[0] = src->line_stride;
        return;
    }
    for (size_t i = 0; i < 4; i++) {
        int real = c0 + i < p->g->in_c;
        c->row0[i] = real ? src->data + (c0 + i) * src->ch_stride + c->first : p->zero_row;
        c->step[i] = real ? src->line_stride : 0;
    }
}

/* Cells x' < n of one channel group from a line of atoms: cell x' from
 * the atom x' * sx atoms on, the group's channels at s in the first (Q8:
 * bytes ^ 0x80, U8 bytes, P16 two channels as int16), as pack_input_row
 * makes them from channel rows.  An atom holds a pixel's 8 channels side
 * by side: no transposition (CDMA kept the memory's atoms, csc.c
 * fetch_atoms). */
static void atom_row_cells(const struct conv_plan *p, unsigned char *d, const int8_t *s,
                           size_t n, size_t sx)
{
    const size_t step = 8 * sx;
    size_t x = 0;
    if (fmt_is_bytes(p->fmt)) {
        const uint32_t flip = p->fmt == CELL_Q8 ? 0x80808080u : 0;
#if defined(DLA_CONV_X86)
        if (p->atoms_avx2) {
            x = dla_conv_atom_group_cells_avx2(d, s, n, sx, flip != 0);
        }
#endif
        for (; x < n; x++) {
            const int8_t *a = s + x * step;
            st32(d + x * CONV_CELL, cell_q8(a[0], a[1], a[2], a[3]) ^ flip);
        }
        return;
    }
    for (; x < n; x++) {
        st32(d + x * CONV_CELL, cell_p16(s[x * step], s[x * step + 1]));
    }
}

/* Packed row of input row y (cells x' < xv real, up to vw, columns as in
 * cols) of channel group c0 from p->src: the cells left of the data region
 * are the pad cell, the ones inside are packed from the data where they
 * lie, the ones right of it are the pad cell again, and the junk cells hold
 * input 0 (as pack_input_row makes them). */
static void pack_src_row(const struct conv_plan *p, unsigned char *row, size_t y,
                         const struct src_cols *cols, size_t xv, size_t vw, uint32_t padc)
{
    const struct dla_conv_src *src = p->src;
    size_t sx = p->g->stride_x, a = xv, b = xv;
    if (y >= src->y0 && y < src->y1) {
        a = cols->a;
        b = cols->b;
    }
    size_t x = 0;
    for (; x < a; x++) {
        st32(row + x * CONV_CELL, padc);
    }
    if (b > a && src->atoms != 0) {
        atom_row_cells(p, row + a * CONV_CELL,
                       cols->row0[0] + (y - src->y0) * cols->step[0], b - a, sx);
        x = b;
    } else if (b > a) {
        const size_t dy = y - src->y0;
        const int8_t *s[4];
        for (size_t i = 0; i < 4; i++) {
            s[i] = cols->row0[i] + dy * cols->step[i];
        }
        size_t n = b - a;
        pack_input_row(row + a * CONV_CELL, s, n, cols->n_simd, n, sx, p->fmt);
        x = b;
    }
    for (; x < xv; x++) {
        st32(row + x * CONV_CELL, padc);
    }
    for (; x < vw; x++) {
        st32(row + x * CONV_CELL, p->fmt == CELL_Q8 ? 0x80808080u : 0);
    }
}

/* Widest packed row (cells) that the shifted planes of one channel group
 * share (pack_input_plane): 1 KB on the stack. */
#define SHIFT_ROW_CELLS 256

/* How many planes from `plane` on pack_input_plane writes from one packed
 * row: the nxo shifted planes of a channel group when the widest row fits
 * SHIFT_ROW_CELLS (the first plane writes all, the others none), else 1. */
static size_t shift_family(const struct conv_plan *p, size_t plane)
{
    if (p->nxo == 1 || p->vw + p->nxo - 1 > SHIFT_ROW_CELLS) {
        return 1;
    }
    return plane % p->nxo == 0 ? p->nxo : 0;
}

/* One input plane: phase (py, px) of channel group grp, see conv_s8_impl.h.
 * Cells no valid output pixel reads (junk lanes, tail) are filled too so
 * that every byte the micro-kernels load is initialised.  With p->src the
 * rows are packed from the data where they lie (pack_src_row).  Shifted
 * planes (x stride 1): plane xo's cell x' is cell x' + xo of plane 0's row
 * packed nxo - 1 cells wider, so that row is packed once and copied to the
 * group's nxo planes (shift_family; the row's junk and pad cells fall where
 * each plane's own would: its xv is the wide row's less xo). */
/* gemv_gather: the pixel's cells (channels c, c+1, c+2, c+3 of input
 * element (0, 0)) in step order, as pack_input_plane packs them (Q8: the
 * byte x + 128; channels past in_c zero, or src's pad outside its window). */
static void gemv_gather(const struct conv_plan *p)
{
    const struct dla_conv_geom *g = p->g;
    const uint8_t bias = p->fmt == CELL_Q8 ? 0x80u : 0u;
    unsigned char *d = p->xg;
    const size_t n = p->ngrp * p->cell_ch;
    size_t c = 0;
    if (p->src == NULL) { /* planar: channel c's plane starts at c * in_h * in_w */
        const size_t cs = (size_t)g->in_h * g->in_w;
        if (cs == 1) { /* a 1x1 input: the channels are consecutive bytes */
            for (; c < g->in_c; c++) {
                d[c] = (uint8_t)p->in[c] ^ bias;
            }
        }
        for (; c < g->in_c; c++) {
            d[c] = (uint8_t)p->in[c * cs] ^ bias;
        }
    } else if (p->src->x0 == 0 && p->src->x1 > 0 && p->src->y0 == 0 && p->src->y1 > 0 &&
               p->src->atoms != 0) {
        for (; c < g->in_c; c++) {
            d[c] = (uint8_t)p->src->data[atom_channel_offset(p->src, c)] ^ bias;
        }
    } else if (p->src->x0 == 0 && p->src->x1 > 0 && p->src->y0 == 0 && p->src->y1 > 0) {
        const size_t cs = p->src->ch_stride;
        if (cs == 1) {
            for (; c < g->in_c; c++) {
                d[c] = (uint8_t)p->src->data[c] ^ bias;
            }
        }
        for (; c < g->in_c; c++) {
            d[c] = (uint8_t)p->src->data[c * cs] ^ bias;
        }
    } else { /* element (0, 0) is padding */
        for (; c < g->in_c; c++) {
            d[c] = (uint8_t)p->src->pad ^ bias;
        }
    }
    for (; c < n; c++) {
        d[c] = bias;
    }
}

/* The channel rows of group c0 of a planar input when its whole plane is
 * one packed row: no shifted planes, strides 1, phase (0, 0), no junk
 * lanes, every row real (vw = in_w, vh = in_h: a 1x1 layer's input) and
 * all the group's channels present.  Then the plane packs in one
 * pack_input_row call instead of a call a row (a 14x14x64 -> 384 call,
 * one thread: 14.9 -> 13.5 us).  An input from src lines goes through
 * pack_src_plane_1x1. */
static int plane_as_row(const struct conv_plan *p, size_t c0, uint64_t px, uint64_t py,
                        const int8_t *s[4])
{
    const struct dla_conv_geom *g = p->g;
    if (p->src != NULL || p->nxo != 1 || px != 0 || py != 0 || g->stride_x != 1 ||
        g->stride_y != 1 || p->vw != g->in_w || p->vh != g->in_h || c0 + p->cell_ch > g->in_c) {
        return 0;
    }
    for (size_t i = 0; i < 4; i++) { /* P16 cells read s[0] and s[1] */
        s[i] = p->in + (c0 + (i < p->cell_ch ? i : 0)) * (size_t)g->in_h * g->in_w;
    }
    return 1;
}

/* A plane of a 1x1 layer's group from src lines (full window, strides 1,
 * phase (0, 0), no junk lanes, byte cells, rows of 4 cells or more, which
 * q8_cells_simd packs whole with SSE2): each row straight through
 * q8_cells_simd with the four channel rows set once (pack_src_row's pad
 * and pointer set-up per row cost as much as the cells of a 14-cell row).
 * 0 when it does not apply. */
static int pack_src_plane_1x1(const struct conv_plan *p, unsigned char *dst, uint64_t px,
                              uint64_t py, const struct src_cols *cols)
{
#if defined(DLA_CONV_SSE2)
    const struct dla_conv_geom *g = p->g;
    const struct dla_conv_src *src = p->src;
    if (src == NULL || src->atoms != 0 || p->nxo != 1 || px != 0 || py != 0 || g->stride_x != 1 ||
        g->stride_y != 1 || p->vw != g->in_w || p->vh != g->in_h || g->in_w < 4 ||
        !fmt_is_bytes(p->fmt) || src->x0 != 0 || src->x1 != g->in_w || src->y0 != 0 ||
        src->y1 != g->in_h || cols->a != 0 || cols->b != g->in_w ||
        cols->n_simd != g->in_w) {
        return 0;
    }
    const size_t w = g->in_w;
    /* the rows and steps as locals: held in an array they are reloaded
     * after every cell store (+16 % on a 14x14x384 -> 64 layer) */
    const int8_t *s0 = cols->row0[0], *s1 = cols->row0[1], *s2 = cols->row0[2],
                 *s3 = cols->row0[3];
    const size_t t0 = cols->step[0], t1 = cols->step[1], t2 = cols->step[2], t3 = cols->step[3];
#if defined(DLA_CONV_X86)
    if (p->cells_vbmi && w <= 32 && s1 == s0 + w && s2 == s1 + w && s3 == s2 + w && t1 == t0 &&
        t2 == t0 && t3 == t0) { /* the four rows back to back: one permute a row */
        dla_conv_cells_rows_vbmi(dst, s0, t0, w, p->vh, p->fmt == CELL_Q8);
        return 1;
    }
#endif
    for (size_t y = 0; y < p->vh; y++) {
        q8_cells_simd(dst + y * w * CONV_CELL, s0 + y * t0, s1 + y * t1, s2 + y * t2,
                      s3 + y * t3, w, 1, p->fmt == CELL_Q8);
    }
    return 1;
#else
    (void)p;
    (void)dst;
    (void)px;
    (void)py;
    (void)cols;
    return 0;
#endif
}

/* Cells of n consecutive atoms for each channel group an atom holds
 * (group i's to dst[i]): AVX2 chunks, then one atom at a time. */
static void atoms_cells(const struct conv_plan *p, unsigned char *const *dst, const int8_t *a,
                        size_t n)
{
    const int p16 = p->fmt == CELL_P16;
    size_t i = 0;
#if defined(DLA_CONV_X86)
    if (p->atoms_avx2) {
        i = dla_conv_atoms_cells_avx2(dst, a, n, p16, p->fmt == CELL_Q8);
    }
#endif
    const uint32_t flip = p->fmt == CELL_Q8 ? 0x80808080u : 0;
    for (; i < n; i++) {
        const int8_t *v = a + i * 8;
        for (size_t k = 0; k < (p16 ? 4u : 2u); k++) {
            st32(dst[k] + i * CONV_CELL,
                 p16 ? cell_p16(v[2 * k], v[2 * k + 1])
                     : cell_q8(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]) ^ flip);
        }
    }
}

/*
 * The planes of a 1x1 layer whose input is atoms and whose window is the
 * whole input (atoms_whole_planes; other windows: pack_src_row):
 * an atom holds 2 byte cells or 4 P16 cells of one pixel, so the planes of
 * an atom's groups are packed together, by the task of the first one (the
 * others return), a whole surface at a time when its lines are back to
 * back (CBUF's copy of them: docs/architecture.md, the CONV data path).  No transposition:
 * the memory's layout is already pixel-major within an atom.
 */
static void pack_atoms_planes(const struct conv_plan *p, unsigned char *inp, size_t plane)
{
    const struct dla_conv_src *src = p->src;
    const size_t per_atom = 8 / p->cell_ch;
    if (plane % per_atom != 0) {
        return; /* packed with plane - plane % per_atom */
    }
    const size_t w = p->g->in_w, h = p->g->in_h;
    const int8_t *surface = src->data + plane / per_atom * src->ch_stride;
    unsigned char *dst[4] = {NULL, NULL, NULL, NULL};
    for (size_t k = 0; k < per_atom; k++) {
        dst[k] = inp + (plane + k) * p->plane_cells * CONV_CELL;
    }
    if (src->line_stride == w * 8) {
        atoms_cells(p, dst, surface, w * h);
    } else {
        for (size_t y = 0; y < h; y++) {
            unsigned char *row[4] = {NULL, NULL, NULL, NULL};
            for (size_t k = 0; k < per_atom; k++) {
                row[k] = dst[k] + y * w * CONV_CELL;
            }
            atoms_cells(p, row, surface + y * src->line_stride, w);
        }
    }
    for (size_t k = 0; k < per_atom; k++) { /* the cells past the pixels (p->vh * p->vw) */
        memset(dst[k] + w * h * CONV_CELL, 0, (p->plane_cells - w * h) * CONV_CELL);
    }
}

/* Plane `plane` of p's packed input into inp (p->inp, or a seat's own
 * copy: conv_team.own_copies). */
static void pack_input_plane(const struct conv_plan *p, unsigned char *inp, size_t plane)
{
    const struct dla_conv_geom *g = p->g;
    if (p->atoms_planes) {
        pack_atoms_planes(p, inp, plane);
        return;
    }
    if (p->gemv_gather) { /* every plane's cell at once */
        if (plane == 0) {
            gemv_gather(p);
        }
        return;
    }
    size_t nshift = shift_family(p, plane);
    if (nshift == 0) {
        return; /* written with plane - plane % nxo */
    }
    size_t xo = plane % p->nxo, slot = plane / p->nxo / p->ngrp, grp = plane / p->nxo % p->ngrp;
    /* a shifted plane's cell x' is the input column x' + xo (x stride 1) */
    uint64_t py = p->phase_y[slot / p->nsx], px = p->phase_x[slot % p->nsx] + xo;
    unsigned char *dst = p->gemv_direct ? p->xg + plane * p->taps * CONV_CELL
                                        : inp + plane * p->plane_cells * CONV_CELL;
    size_t vw = p->vw, vh = p->vh, row_bytes = vw * CONV_CELL;
    size_t vwp = vw + nshift - 1; /* cells of a packed row */
    _Alignas(64) unsigned char wide[SHIFT_ROW_CELLS * CONV_CELL];
    size_t c0 = grp * p->cell_ch;
    size_t in_w = g->in_w, in_h = g->in_h, sx = g->stride_x;
    /* columns x' < xv map to x = x' * stride_x + px < in_w */
    size_t xv = px < in_w ? (size_t)((in_w - px + sx - 1) / sx) : 0;
    xv = min_size(xv, vwp);
    /* cells whose chunked reads (up to byte x * sx + sx - 1) stay in the row */
    size_t x_simd = px < in_w ? min_size(xv, (size_t)((in_w - px) / sx)) : 0;
    uint32_t padc = p->src != NULL ? pad_cell(p, c0) : 0;
    struct src_cols cols = {0};
    if (p->src != NULL) {
        cols = src_cols_of(p, (size_t)px, xv);
        src_cols_rows(p, c0, &cols);
    }
    const int8_t *whole[4];
    size_t yv0 = 0;
    if (!p->gemv_direct && plane_as_row(p, c0, px, py, whole)) {
        pack_input_row(dst, whole, vh * vw, vh * vw, vh * vw, 1, p->fmt);
        yv0 = vh;
    } else if (!p->gemv_direct && pack_src_plane_1x1(p, dst, px, py, &cols)) {
        yv0 = vh;
    }

    for (size_t yv = yv0; yv < vh; yv++) {
        unsigned char *row = nshift > 1 ? wide : dst + yv * row_bytes;
        uint64_t y = (uint64_t)yv * g->stride_y + py;
        const int8_t *s[4] = {p->zero_row, p->zero_row, p->zero_row, p->zero_row};
        if (y >= in_h || xv == 0) {
            pack_input_row(row, s, 0, 0, vwp, sx, p->fmt);
        } else if (p->src != NULL) {
            pack_src_row(p, row, (size_t)y, &cols, xv, vwp, padc);
        } else {
            /* channels past in_c (last group) read a row of zeros */
            for (size_t i = 0; i < p->cell_ch; i++) {
                s[i] = c0 + i < g->in_c ? p->in + ((c0 + i) * in_h + y) * in_w + px
                                        : p->zero_row;
            }
            pack_input_row(row, s, xv, x_simd, vwp, sx, p->fmt);
        }
        for (size_t k = 0; nshift > 1 && k < nshift; k++) {
            memcpy(dst + k * p->plane_cells * CONV_CELL + yv * row_bytes, wide + k * CONV_CELL,
                   row_bytes);
        }
    }
    for (size_t k = 0; k < nshift && !p->gemv_direct; k++) {
        memset(dst + k * p->plane_cells * CONV_CELL + vh * row_bytes, 0,
               (p->plane_cells - vh * vw) * CONV_CELL);
    }
}

/* Cells of `groups` full channel groups of one output channel: each group
 * of cell_ch channel rows of `taps` bytes ([i][t]) becomes [t][i]. */
static void pack_weight_groups(unsigned char *d, const int8_t *src, size_t groups, size_t taps,
                               enum cell_format fmt)
{
    if (taps == 1 && fmt_is_bytes(fmt)) {
        memcpy(d, src, groups * CONV_CELL); /* [c] is already [group][4] */
        return;
    }
    if (taps == 1) {
        size_t i = s8_to_s16_simd(d, src, groups * 2);
        for (; i < groups * 2; i++) {
            int16_t v = src[i];
            memcpy(d + 2 * i, &v, sizeof v);
        }
        return;
    }
    for (size_t grp = 0; grp < groups; grp++) {
        unsigned char *dg = d + grp * taps * CONV_CELL;
        size_t t;
        if (fmt_is_bytes(fmt)) {
            const int8_t *s = src + grp * 4 * taps;
            t = q8_cells_simd(dg, s, s + taps, s + 2 * taps, s + 3 * taps, taps, 1, 0);
            for (; t < taps; t++) {
                st32(dg + t * CONV_CELL,
                     cell_q8(s[t], s[taps + t], s[2 * taps + t], s[3 * taps + t]));
            }
        } else {
            const int8_t *s = src + grp * 2 * taps;
            t = p16_cells_simd(dg, s, s + taps, taps, 1);
            for (; t < taps; t++) {
                st32(dg + t * CONV_CELL, cell_p16(s[t], s[taps + t]));
            }
        }
    }
}

/* First and one past the last non-zero cell of nq packed cells (0, 0 if all are zero). */
static void nonzero_steps(const unsigned char *d, size_t nq, uint32_t *lo, uint32_t *hi)
{
    size_t a = 0, b = nq;
    uint32_t v;
    while (a < b && (memcpy(&v, d + a * CONV_CELL, sizeof v), v == 0)) {
        a++;
    }
    while (b > a && (memcpy(&v, d + (b - 1) * CONV_CELL, sizeof v), v == 0)) {
        b--;
    }
    *lo = a < b ? (uint32_t)a : 0;
    *hi = a < b ? (uint32_t)b : 0;
}

/* Whether one int16 lane may add the pair sums of U8 weight cells a and b
 * (bytes lo..lo+1 of each: one lane of vpmaddubsw): with inputs in
 * [0, 127] the four products sum to within [-127 * N, 127 * P], N and P
 * the magnitudes of the negative and positive weights, so the int16 sum
 * (vpaddw) is exact when 127 * max(N, P) <= 32767, i.e. max(N, P) <= 258
 * (conv_s8_x86.c, "paired steps"). */
static int pair_lane_fits(const int8_t *a, const int8_t *b)
{
    int pos = 0, neg = 0;
    const int v[4] = {a[0], a[1], b[0], b[1]};
    for (int i = 0; i < 4; i++) {
        pos += v[i] > 0 ? v[i] : 0;
        neg += v[i] < 0 ? -v[i] : 0;
    }
    return pos <= 258 && neg <= 258;
}

/* Pair bits of output channel k of a U8 pack (see struct dla_conv_wpack). */
static void pair_mask_row(struct dla_conv_wpack *w, size_t k)
{
    const int8_t *c = (const int8_t *)(const void *)(w->wp + k * w->nq * CONV_CELL);
    uint64_t *bits = w->pairs + k * w->pair_words;
    for (size_t i = 0; i < w->nq / 2; i++) {
        const int8_t *a = c + 2 * i * CONV_CELL, *b = a + CONV_CELL;
        if (pair_lane_fits(a, b) && pair_lane_fits(a + 2, b + 2)) {
            bits[i / 64] |= (uint64_t)1 << (i % 64);
        }
    }
}

/* Weights of output channel k as nq cells (order of q), and its accumulator
 * start value (Q8: -128 * sum of the weights, which cancels the +128 bias
 * of the input cells). */
static void pack_weight_row(struct dla_conv_wpack *w, const int8_t *wt, size_t k)
{
    size_t taps = w->taps, in_c = w->in_c, cell_ch = w->cell_ch;
    const int8_t *src = wt + k * in_c * taps;
    unsigned char *d = w->wp + k * w->nq * CONV_CELL;
    size_t full = in_c / cell_ch; /* groups with every channel present */
    int64_t sum = 0;

#if defined(DLA_CONV_X86)
    if (w->use_vbmi) {
        sum = dla_conv_pack_q8_vbmi(d, src, full, taps);
    }
#endif
    if (!w->use_vbmi) {
        pack_weight_groups(d, src, full, taps, w->fmt);
        if (w->fmt == CELL_Q8) {
            sum = sum_s8(src, full * cell_ch * taps);
        }
    }
    if (full < w->ngrp) { /* last group: missing channels weigh 0 */
        const int8_t *s = src + full * cell_ch * taps;
        unsigned char *dg = d + full * taps * CONV_CELL;
        size_t nc = in_c - full * cell_ch;
        for (size_t t = 0; t < taps; t++) {
            int8_t v[4] = {0, 0, 0, 0};
            for (size_t i = 0; i < nc; i++) {
                v[i] = s[i * taps + t];
                sum += v[i];
            }
            st32(dg + t * CONV_CELL, fmt_is_bytes(w->fmt) ? cell_q8(v[0], v[1], v[2], v[3])
                                                          : cell_p16(v[0], v[1]));
        }
    }
    w->init[k] = w->fmt == CELL_Q8 ? u32_to_s32((uint32_t)(uint64_t)(sum * -128)) : 0;
    nonzero_steps(d, w->nq, &w->qlo[k], &w->qhi[k]);
    if (w->fmt == CELL_U8) {
        pair_mask_row(w, k);
    }
}

/* P16 cells of channels 0-1 (to lo) and 2-3 (to hi, unless NULL) of n
 * U8 cells at s, in chunks of 4 cells; returns the number of cells done. */
static size_t p16_pairs_simd(unsigned char *lo, unsigned char *hi, const unsigned char *s,
                             size_t n)
{
    size_t t = 0;
#if defined(DLA_CONV_SSE2)
    for (; t + 4 <= n; t += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + t * CONV_CELL));
        /* int16 of each byte (byte doubled, shifted right arithmetically):
         * 32-bit lanes a = cells 0, 1 as (c0 c1), (c2 c3); b = cells 2, 3 */
        __m128i a = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8);
        __m128i b = _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8);
        __m128 af = _mm_castsi128_ps(a), bf = _mm_castsi128_ps(b);
        _mm_storeu_si128((__m128i *)(void *)(lo + t * CONV_CELL),
                         _mm_castps_si128(_mm_shuffle_ps(af, bf, _MM_SHUFFLE(2, 0, 2, 0))));
        if (hi != NULL) {
            _mm_storeu_si128((__m128i *)(void *)(hi + t * CONV_CELL),
                             _mm_castps_si128(_mm_shuffle_ps(af, bf, _MM_SHUFFLE(3, 1, 3, 1))));
        }
    }
#else
    (void)lo;
    (void)hi;
    (void)s;
    (void)n;
#endif
    return t;
}

/* Output channel k of a U8 pack s as P16 cells in d (same layer): for an
 * input with negative codes, which the U8 cells cannot take.  U8 group g
 * (channels 4g..4g+3) is P16 groups 2g and 2g + 1; a P16 group past the
 * last (in_c % 4 of 1 or 2) only held zero weights. */
static void p16_row_from_u8(struct dla_conv_wpack *d, const struct dla_conv_wpack *s, size_t k)
{
    size_t taps = s->taps;
    const unsigned char *src = s->wp + k * s->nq * CONV_CELL;
    unsigned char *dst = d->wp + k * d->nq * CONV_CELL;

    if (taps == 1) { /* [g][4 channels] to [g'][2 channels]: int16 of each byte */
        size_t n = d->nq * 2, i = s8_to_s16_simd(dst, (const int8_t *)(const void *)src, n);
        for (; i < n; i++) {
            int16_t v = (int8_t)src[i];
            memcpy(dst + 2 * i, &v, sizeof v);
        }
        d->init[k] = 0;
        nonzero_steps(dst, d->nq, &d->qlo[k], &d->qhi[k]);
        return;
    }
    for (size_t g = 0; g < s->ngrp; g++) {
        int both = 2 * g + 1 < d->ngrp;
        size_t t = p16_pairs_simd(dst + 2 * g * taps * CONV_CELL,
                                  both ? dst + (2 * g + 1) * taps * CONV_CELL : NULL,
                                  src + g * taps * CONV_CELL, taps);
        for (; t < taps; t++) {
            int8_t c[4]; /* byte i of a cell is channel i (U8 cells exist on x86 only) */
            memcpy(c, src + (g * taps + t) * CONV_CELL, sizeof c);
            st32(dst + (2 * g * taps + t) * CONV_CELL, cell_p16(c[0], c[1]));
            if (both) {
                st32(dst + ((2 * g + 1) * taps + t) * CONV_CELL, cell_p16(c[2], c[3]));
            }
        }
    }
    d->init[k] = 0;
    nonzero_steps(dst, d->nq, &d->qlo[k], &d->qhi[k]);
}

/* ---------------------------------------------------------------- compute */

/* Runs of real output pixels among the NR virtual pixels from n0 (which
 * is virtual pixel ox of output row oy). */
static unsigned tile_runs(const struct conv_plan *p, size_t oy, size_t ox,
                          struct dla_conv_run *runs)
{
    const struct dla_conv_geom *g = p->g;
    size_t nr = p->shape->nr, j = 0;
    unsigned n = 0;

    while (j < nr && oy < g->out_h) {
        size_t run = min_size(p->vw - ox, nr - j);
        if (ox < g->out_w) {
            uint32_t len = (uint32_t)min_size(run, g->out_w - ox);
            if (n > 0 && runs[n - 1].j + runs[n - 1].len == j) {
                /* no junk lane since the last run (vw == out_w: 1x1 layers,
                 * shifted planes): lanes and output pixels stay consecutive
                 * across the row end, so one run (and the tile's store
                 * straight from registers) covers both */
                runs[n - 1].len += len;
            } else {
                runs[n].j = (uint32_t)j;
                runs[n].len = len;
                runs[n].off = oy * g->out_w + ox;
                n++;
            }
        }
        j += run;
        ox = 0;
        oy++;
    }
    return n;
}

/* First pair index >= i below n whose bit in m is `want` (n if none). */
static size_t next_pair(const uint64_t *m, size_t i, size_t n, int want)
{
    while (i < n) {
        uint64_t v = want ? m[i / 64] : ~m[i / 64];
        v &= ~(uint64_t)0 << (i % 64);
        if (v != 0) {
            size_t j = (i / 64) * 64 + (size_t)__builtin_ctzll(v);
            return j < n ? j : n;
        }
        i = (i / 64 + 1) * 64;
    }
    return n;
}

/* The schedule of steps [lo, hi) whose pairs (2i, 2i + 1) may be summed
 * together where bit i of m is set (dla_conv_tile.sched: entries relative
 * to lo); writes to out unless NULL; returns the number of entries and
 * the steps it pairs in *paired. */
static size_t pair_schedule(const uint64_t *m, size_t lo, size_t hi, uint32_t *out,
                            size_t *paired)
{
    size_t n = 0, q = lo, npairs = hi / 2;
    *paired = 0;
    do {
        size_t fe = q;
        if (q % 2 == 0) {
            fe = 2 * next_pair(m, q / 2, npairs, 0);
            fe = fe > q ? fe : q;
        }
        size_t se = fe;
        if (se < hi) {
            size_t i2 = next_pair(m, fe / 2 + 1, npairs, 1);
            se = i2 < npairs ? 2 * i2 : hi;
        }
        if (out != NULL) {
            out[n] = (uint32_t)(fe - lo);
            out[n + 1] = (uint32_t)(se - lo);
        }
        *paired += fe - q;
        n += 2;
        q = se;
    } while (q < hi);
    return n;
}

/* AND of the pair bits of rows k0 .. k1 - 1 into m (pair_words words). */
static void kblock_pairs(const struct dla_conv_wpack *w, size_t k0, size_t k1, uint64_t *m)
{
    for (size_t i = 0; i < w->pair_words; i++) {
        m[i] = ~(uint64_t)0;
    }
    for (size_t k = k0; k < k1; k++) {
        const uint64_t *r = w->pairs + k * w->pair_words;
        for (size_t i = 0; i < w->pair_words; i++) {
            m[i] &= r[i];
        }
    }
}

/* Whether a k block's schedule gains: each run of paired steps ends in a
 * branch the CPU mispredicts (~30 cycles of a 6x16 tile), each pair
 * saves ~6 cycles, and the scheduled tile sets up more (its 6x16 keeps 4
 * accumulators in memory); with fewer than 5 pairs a run or 12 in all
 * (measured: ResNet-50's 1x1 layers of 64 input channels, 8 pairs a tile,
 * ran 4-9 % slower paired) every step goes alone. */
static int sched_gains(size_t entries, size_t paired_steps)
{
    return paired_steps / 2 >= 12 && paired_steps / 2 >= 5 * (entries / 2);
}

/* t->lo/t->hi of every k block of t->mr rows of w (after its rows are packed). */
static void kb_ranges(const struct dla_conv_wpack *w, struct kb_tables *t)
{
    for (size_t kb = 0; kb < t->kblocks; kb++) {
        size_t k0 = kb * t->mr, k1 = min_size(k0 + t->mr, w->out_k);
        uint32_t lo = (uint32_t)w->nq, hi = 0;
        for (size_t k = k0; k < k1; k++) {
            if (w->qhi[k] > w->qlo[k]) {
                lo = w->qlo[k] < lo ? w->qlo[k] : lo;
                hi = w->qhi[k] > hi ? w->qhi[k] : hi;
            }
        }
        t->lo[kb] = lo < hi ? lo : 0;
        t->hi[kb] = hi;
    }
}

/* Schedules of paired steps for U8 tiles (t->sched, t->sched_at: SIZE_MAX
 * for a k block whose steps all go alone, sched_gains), after kb_ranges;
 * left NULL (every step alone, also exact) if memory is short. */
static void kb_sched(const struct dla_conv_wpack *w, struct kb_tables *t)
{
    size_t mr = t->mr, total = 0;
    uint64_t *m = malloc(sizeof(uint64_t) * (w->pair_words ? w->pair_words : 1));
    size_t *at = malloc(sizeof(size_t) * (t->kblocks ? t->kblocks : 1));
    t->sched = NULL;
    t->sched_at = NULL;
    t->nsched = 0;
    if (m == NULL || at == NULL) {
        free(m);
        free(at);
        return;
    }
    for (int write = 0; write < 2; write++) {
        for (size_t kb = 0; kb < t->kblocks; kb++) {
            size_t k0 = kb * mr, paired;
            if (write && at[kb] == SIZE_MAX) {
                continue;
            }
            kblock_pairs(w, k0, min_size(k0 + mr, w->out_k), m);
            if (!write) {
                size_t n = pair_schedule(m, t->lo[kb], t->hi[kb], NULL, &paired);
                at[kb] = sched_gains(n, paired) ? total : SIZE_MAX;
                total += sched_gains(n, paired) ? n : 0;
            } else {
                pair_schedule(m, t->lo[kb], t->hi[kb], t->sched + at[kb], &paired);
            }
        }
        if (!write && (t->sched = malloc(sizeof(uint32_t) * (total ? total : 1))) == NULL) {
            break;
        }
    }
    free(m);
    if (t->sched == NULL) {
        free(at);
        return;
    }
    t->sched_at = at;
    t->nsched = total;
}

/* Bytes of t's tables. */
static size_t kb_tables_bytes(const struct kb_tables *t)
{
    size_t n = t->kblocks ? t->kblocks : 1;
    return 2 * sizeof(uint32_t) * n +
           (t->sched != NULL ? sizeof(size_t) * n + sizeof(uint32_t) * t->nsched : 0);
}

/* Whether tiles of `shape` on pack w run schedules of paired steps. */
static int kb_wants_sched(const struct dla_conv_wpack *w, const struct conv_shape *shape)
{
    return w->fmt == CELL_U8 && w->pairs != NULL && shape->paired != NULL;
}

/* The pack's k blocks for tiles of shape (NULL if it has none: a pack made
 * per call, or memory was short when it was built). */
static const struct kb_tables *wpack_kb(const struct dla_conv_wpack *w,
                                        const struct conv_shape *shape)
{
    for (unsigned i = 0; i < w->nkbt; i++) {
        if (w->kbt[i].mr == shape->mr && w->kbt[i].paired == kb_wants_sched(w, shape)) {
            return &w->kbt[i];
        }
    }
    return NULL;
}

/* The k blocks of every tile height among `shapes` (the ISA's for w->fmt)
 * into w->kbt, once per pack; a table memory refuses is left out (calls
 * then find theirs, kblock_steps). */
static void kb_tables_build(struct dla_conv_wpack *w, const struct conv_shape *shapes)
{
    for (int i = 0; i < DLA_CONV_SHAPES; i++) {
        if (shapes[i].mr == 0 || shapes[i].tile == NULL || wpack_kb(w, &shapes[i]) != NULL) {
            continue;
        }
        struct kb_tables *t = &w->kbt[w->nkbt];
        memset(t, 0, sizeof(*t));
        t->mr = shapes[i].mr;
        t->paired = kb_wants_sched(w, &shapes[i]);
        t->kblocks = ((size_t)w->out_k + t->mr - 1) / t->mr;
        size_t n = t->kblocks ? t->kblocks : 1;
        t->lo = malloc(sizeof(uint32_t) * n);
        t->hi = malloc(sizeof(uint32_t) * n);
        if (t->lo == NULL || t->hi == NULL) {
            kb_tables_free(t);
            return;
        }
        kb_ranges(w, t);
        if (t->paired) {
            kb_sched(w, t);
        }
        w->nkbt++;
    }
}

/* Block kb's part of a tile call (struct kb_desc). */
static void kb_desc_of(const struct conv_plan *p, size_t kb, struct kb_desc *d)
{
    const size_t k0 = kb * p->shape->mr, lo = p->kb->lo[kb];
    d->init = p->w->init + k0;
    d->mr = (unsigned)min_size(p->shape->mr, p->g->out_k - k0);
    d->qoff = p->qoff + lo;
    d->nq = p->kb->hi[kb] - lo;
    d->w = p->w->wp + (k0 * p->nq + lo) * CONV_CELL;
    d->out = p->out + k0 * ((size_t)p->g->out_h * p->g->out_w);
    d->sched = p->kb->sched != NULL && p->kb->sched_at[kb] != SIZE_MAX
                   ? p->kb->sched + p->kb->sched_at[kb]
                   : NULL;
}

/* p->kbd for the tiles (left NULL without memory: compute_tiles then
 * finds each block's as it goes). */
static void kb_descs(struct conv_plan *p)
{
    free(p->kbd);
    p->kbd = p->gemv ? NULL : malloc(sizeof *p->kbd * (p->kblocks ? p->kblocks : 1));
    for (size_t kb = 0; p->kbd != NULL && kb < p->kblocks; kb++) {
        kb_desc_of(p, kb, &p->kbd[kb]);
    }
}

/* The k blocks of the plan's shape (the pack's, or found now: after the
 * weights are packed) and their parts of the tile calls (kb_descs), and a
 * one-pixel layer's input cells in step order. */
static void kblock_steps(struct conv_plan *p)
{
    if (p->klanes) {
        return; /* the k-lanes tiles run every step (dense packs only) */
    }
    p->kb = p->w != &p->own ? wpack_kb(p->w, p->shape) : NULL;
    if (p->kb == NULL) {
        p->kb_own.mr = p->shape->mr;
        p->kb_own.kblocks = p->kblocks;
        kb_ranges(p->w, &p->kb_own);
        if (!p->gemv && p->fmt == CELL_U8 && kb_wants_sched(p->w, p->shape)) {
            kb_sched(p->w, &p->kb_own);
        }
        p->kb = &p->kb_own;
    }
    if (p->gemv) { /* the pixel's input cells in step order (packed so if direct) */
        for (size_t q = 0; !p->gemv_direct && q < p->nq; q++) {
            memcpy(p->xg + q * CONV_CELL, p->inp + p->qoff[q], CONV_CELL);
        }
    }
    kb_descs(p);
}

/* The runs of a few pixel tiles, kept while a thread works through k
 * blocks: numbered k block major, consecutive items are consecutive pixel
 * tiles, so each item found its runs again (tile_runs: ~10 % of a 1x1
 * layer of 14x14 k=384); slot nt % RUNS_SLOTS holds tile nt's. */
#define RUNS_SLOTS 16
struct runs_slot {
    size_t nt; /* SIZE_MAX: empty */
    unsigned nruns;
    int half, dot;
    struct dla_conv_run runs[DLA_CONV_NR_MAX + 1];
};

/* The runs of pixel tile nt in its slot of cache, found if not there. */
static const struct runs_slot *tile_slot(const struct conv_plan *p, struct runs_slot *cache,
                                         size_t nt)
{
    struct runs_slot *s = &cache[nt % RUNS_SLOTS];
    if (s->nt != nt) {
        size_t nr = p->shape->nr, n0 = nt * nr;
        s->nt = nt;
        s->nruns = tile_runs(p, n0 / p->vw, n0 % p->vw, s->runs);
        s->half = p->shape->half != NULL &&
                  (s->nruns == 0 || s->runs[s->nruns - 1].j + s->runs[s->nruns - 1].len <= nr / 2);
        unsigned real = 0;
        for (unsigned r = 0; r < s->nruns; r++) {
            real += s->runs[r].len;
        }
        s->dot = p->shape->dot != NULL && real <= DLA_CONV_DOT_PIXELS;
    }
    return s;
}

/* Tiles begin..end-1 of k blocks kb0..kb1-1, numbered pixel-tile major
 * (item = nt * (kb1 - kb0) + kb - kb0) or k-block major (item = (kb - kb0)
 * * ntiles + nt).  The indices advance without divisions, and a pixel
 * tile's runs are found once for all the k blocks that follow it
 * (pixel-tile major) or kept in a small cache (k block major, struct
 * runs_slot). */
static void compute_tiles(const struct conv_plan *p, const unsigned char *inp, size_t kb0,
                          size_t kb1, size_t begin, size_t end)
{
    struct runs_slot cache[RUNS_SLOTS];
    size_t nr = p->shape->nr;
    size_t out_plane = (size_t)p->g->out_h * p->g->out_w;
    struct dla_conv_tile t;
    struct kb_desc one;

    if (begin >= end) {
        return;
    }
    for (size_t i = 0; i < RUNS_SLOTS; i++) {
        cache[i].nt = SIZE_MAX;
    }
    t.wrow = p->nq * CONV_CELL;
    t.ostride = out_plane;
    const size_t nk = kb1 - kb0;
    size_t nt = p->kmajor ? begin % p->ntiles : begin / nk;
    size_t kb = kb0 + (p->kmajor ? begin / p->ntiles : begin % nk);
    size_t runs_nt = SIZE_MAX; /* the pixel tile t.runs are of */
    const struct conv_shape *sh = p->shape;
    dla_conv_tile_fn tile = sh->tile, paired = sh->paired;
    for (size_t item = begin; item < end; item++) {
        if (nt != runs_nt) {
            const struct runs_slot *s = tile_slot(p, cache, nt);
            t.runs = s->runs;
            t.nruns = s->nruns;
            t.in = inp + nt * nr * CONV_CELL;
            runs_nt = nt;
            tile = s->dot ? sh->dot : s->half ? sh->half : sh->tile;
            paired = s->dot ? sh->dot : s->half ? sh->half_paired : sh->paired;
        }
        const struct kb_desc *d = p->kbd;
        if (d == NULL) {
            kb_desc_of(p, kb, &one);
            d = &one;
        } else {
            d += kb;
        }
        t.init = d->init;
        t.mr = d->mr;
        t.qoff = d->qoff;
        t.nq = d->nq;
        t.w = d->w;
        t.out = d->out;
        t.sched = d->sched;
        (t.sched != NULL ? paired : tile)(&t);
        if (p->kmajor) {
            if (++nt == p->ntiles) {
                nt = 0;
                kb++;
            }
        } else if (++kb == kb1) {
            kb = kb0;
            nt++;
        }
    }
}

/* Items begin..end-1 of k-lanes tiles from home share kb0 on, k block
 * major (item i: block kb0 + i / ntiles, pixel tile i % ntiles). */
static void compute_klanes(const struct conv_plan *p, const unsigned char *inp, size_t kb0,
                           size_t begin, size_t end)
{
#if defined(DLA_CONV_X86)
    const size_t pixels = (size_t)p->g->out_h * p->g->out_w;
    struct dla_conv_klanes_tile t;
    t.in = inp;
    t.qoff = p->qoff;
    t.nq = p->nq;
    t.wblock = p->nq * 16 * CONV_CELL;
    t.ostride = pixels;
    for (size_t item = begin; item < end; item++) {
        const size_t kb = kb0 + item / p->ntiles, nt = item % p->ntiles;
        /* the tiles' pixels as even as they go (sizes one apart at most,
         * <= DLA_CONV_KLANES_MR): every tile streams the k block's weights
         * once, so 49 pixels (7x7) run 10+10+10+10+9, not 12+12+12+12+1,
         * whose tile of one pixel cost a weight pass for 1/49 of the MACs */
        const size_t k0 = kb * DLA_CONV_KLANES_K, p0 = nt * pixels / p->ntiles,
                     p1 = (nt + 1) * pixels / p->ntiles;
        t.w = p->w->wkl + k0 * p->nq * CONV_CELL;
        t.init = p->w->init + k0;
        t.cell = p->kl_cell + p0;
        t.opix = p->kl_opix + p0;
        t.n = (unsigned)(p1 - p0);
        t.nk = (unsigned)min_size(DLA_CONV_KLANES_K, p->g->out_k - k0);
        t.out = p->out + k0 * pixels;
        dla_conv_klanes_tile_vnni(&t);
    }
#else
    (void)p;
    (void)inp;
    (void)kb0;
    (void)begin;
    (void)end;
#endif
}

/* Cells with a one-pixel kernel on this CPU: U8 (AVX2's vpmaddubsw) and
 * Q8 where AVX-512 VNNI has its 256-bit forms (AVX512VL). */
static int gemv_format(enum cell_format fmt)
{
#if defined(DLA_CONV_X86)
    if (fmt == CELL_Q8) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512vnni");
    }
    return fmt == CELL_U8;
#else
    (void)fmt;
    return 0;
#endif
}

/* Items begin..end-1 of a one-pixel layer on wk: DLA_CONV_GEMV_KB
 * vectors of DLA_CONV_GEMV_K output channels each. */
static void compute_gemv(const struct conv_plan *p, size_t begin, size_t end)
{
#if defined(DLA_CONV_X86)
    const size_t per = (size_t)DLA_CONV_GEMV_K * DLA_CONV_GEMV_KB;
    for (size_t item = begin; item < end; item++) {
        size_t k0 = item * per;
        size_t nk = min_size(per, p->g->out_k - k0);
        const unsigned char *wk = p->w->wk + k0 * p->nq * CONV_CELL;
        if (p->fmt == CELL_Q8) {
            dla_conv_gemv_vnni(p->xg, wk, p->nq, p->w->init + k0, p->out + k0, (unsigned)nk);
        } else {
            dla_conv_gemv_avx2u8(p->xg, wk, p->nq, NULL, p->out + k0, (unsigned)nk);
        }
    }
#else
    (void)p;
    (void)begin;
    (void)end;
#endif
}

/* Generic C micro-kernel, P16 cells, GEN_MR x GEN_NR. */
static void tile_generic(const struct dla_conv_tile *t)
{
    uint32_t acc[GEN_MR][GEN_NR];

    for (unsigned m = 0; m < t->mr; m++) {
        for (unsigned j = 0; j < GEN_NR; j++) {
            acc[m][j] = (uint32_t)t->init[m];
        }
    }
    for (size_t q = 0; q < t->nq; q++) {
        const unsigned char *a = t->in + t->qoff[q];
        const unsigned char *w = t->w + q * CONV_CELL;
        int16_t x[GEN_NR][2];
        memcpy(x, a, sizeof x);
        for (unsigned m = 0; m < t->mr; m++) {
            int16_t wm[2];
            memcpy(wm, w + m * t->wrow, sizeof wm);
            for (unsigned j = 0; j < GEN_NR; j++) {
                acc[m][j] += (uint32_t)((int32_t)x[j][0] * wm[0] + (int32_t)x[j][1] * wm[1]);
            }
        }
    }
    for (unsigned r = 0; r < t->nruns; r++) {
        for (unsigned m = 0; m < t->mr; m++) {
            int32_t *o = t->out + m * t->ostride + t->runs[r].off;
            for (unsigned i = 0; i < t->runs[r].len; i++) {
                o[i] = u32_to_s32(acc[m][t->runs[r].j + i]);
            }
        }
    }
}

/* ---------------------------------------------------------------- threads */

/*
 * One team per call.  Threads are created once and take work from shared
 * counters instead of fixed shares: each its home share first, then the
 * others' (team_homes): on a virtual machine a new thread may start tens
 * of microseconds to milliseconds late, and meanwhile the others (at
 * least the calling thread) do its part.  Stage 1 packs (chunks of input
 * planes, then chunks of weight rows); everyone waits until every packing
 * task is done (spinning, then yielding in case there are more threads
 * than cores); stage 2 computes chunks of consecutive tiles.
 */
#define CONV_HOMES_MAX 8
struct conv_team {
    struct conv_plan *p; /* packing writes p->own */
    size_t plane_chunk;           /* packing: input planes, a home share each ... */
    size_t row_chunk, row_tasks;  /* ... then weight rows, from next_pack */
    size_t pack_units;            /* planes + row tasks (packs_done's end) */
    size_t tile_chunk, tile_chunk_max, tile_guide, items; /* compute: chunks (team_grab) */
    atomic_size_t next_pack, packs_done;
    atomic_int ready; /* packing done and kblock_steps run (by the last packer) */
    unsigned homes;   /* the threads' home shares of the items (team_grab) and planes */
    int own_copies;   /* each thread packs the whole input into its own copy (seat_inp) */
    unsigned copies;  /* own_copies: how many (the threads the plan has work for) */
    atomic_uint copies_taken; /* own_copies: the copies handed out, one a thread */
    /* seats 1.. of the copies (the pool's scratch), p->inp_bytes apart */
    unsigned char *inp_seats;
    struct tile_home {
        _Alignas(64) atomic_size_t next;
        size_t end;
        size_t kb0, kb1; /* a tile share's k blocks (its items count from 0) */
    } home[CONV_HOMES_MAX], pack_home[CONV_HOMES_MAX];
};

/* n packing units done (planes or weight-row tasks); the last one sees
 * every packed row and finds the k blocks' steps. */
static void pack_done(struct conv_team *t, size_t n)
{
    if (atomic_fetch_add_explicit(&t->packs_done, n, memory_order_acq_rel) + n == t->pack_units) {
        kblock_steps(t->p);
        atomic_store_explicit(&t->ready, 1, memory_order_release);
    }
}

/* Packed input copy `copy` (0: p->inp, the one without own_copies). */
static const unsigned char *seat_inp(const struct conv_team *t, unsigned copy)
{
    return copy != 0 ? t->inp_seats + (size_t)(copy - 1) * t->p->inp_bytes : t->p->inp;
}

/* Stage 1 with own copies: the thread packs every plane into its copy, so
 * its tiles read only lines its own core wrote (a tile reads every plane
 * of its pixels; from one shared copy half of them came from the other
 * core: a ResNet-50 band took 33 us on two threads so, 19 with a copy
 * each).  It waits for no other thread (the k blocks' steps were found
 * with the plan, team_init): the threads that join are whichever come,
 * one alone when a spawned task keeps its job (team.h dla_team_spawn). */
static void own_copy_pack(struct conv_team *t, unsigned copy)
{
    struct conv_plan *p = t->p;
    unsigned char *inp = (unsigned char *)seat_inp(t, copy);
    for (size_t pl = 0; pl < p->nplanes; pl++) {
        pack_input_plane(p, inp, pl);
    }
}

/* Stage 1 for the thread in `seat`: the input planes of its home share
 * (the channels the same core wrote as the layer before's output, when
 * that layer split alike), then the others', then weight-row tasks; then
 * wait until everything is packed. */
static void team_pack(struct conv_team *t, unsigned seat, unsigned copy)
{
    struct conv_plan *p = t->p;
    if (t->own_copies) {
        own_copy_pack(t, copy);
        return;
    }
    for (unsigned k = 0; k < t->homes; k++) {
        struct tile_home *m = &t->pack_home[(seat + k) % t->homes];
        for (;;) {
            size_t first = atomic_fetch_add_explicit(&m->next, t->plane_chunk,
                                                     memory_order_relaxed);
            if (first >= m->end) {
                break;
            }
            size_t end = min_size(first + t->plane_chunk, m->end);
            for (size_t pl = first; pl < end; pl++) {
                pack_input_plane(p, p->inp, pl);
            }
            pack_done(t, end - first);
        }
    }
    for (;;) {
        size_t task = atomic_fetch_add_explicit(&t->next_pack, 1, memory_order_relaxed);
        if (task >= t->row_tasks) {
            break;
        }
        size_t first = task * t->row_chunk;
        size_t end = min_size(first + t->row_chunk, p->g->out_k);
        for (size_t k = first; k < end; k++) {
            if (p->wt != NULL) {
                pack_weight_row(&p->own, p->wt, k);
            } else {
                p16_row_from_u8(&p->own, p->wsrc, k);
            }
        }
        pack_done(t, 1);
    }
    unsigned spins = 0;
    while (!atomic_load_explicit(&t->ready, memory_order_acquire)) {
        dla_spin_wait(&spins);
    }
}

/* The next chunk of compute items from home share h: a tile_guide-th of
 * the share's items left, between tile_chunk and tile_chunk_max, so the
 * chunks shrink as the work runs out and the threads finish within a small
 * chunk of each other (fixed chunks of 1/(8n) of a call left the others
 * idle for up to that long at the end of each call); never larger than
 * those fixed chunks, so a thread the host stops holds no more work than
 * before.  SIZE_MAX when the share is done. */
static size_t team_grab(struct conv_team *t, unsigned h, size_t *last)
{
    struct tile_home *m = &t->home[h];
    size_t first = atomic_load_explicit(&m->next, memory_order_relaxed);
    for (;;) {
        if (first >= m->end) {
            return SIZE_MAX;
        }
        size_t chunk = (m->end - first) / t->tile_guide;
        chunk = chunk < t->tile_chunk_max ? chunk : t->tile_chunk_max;
        chunk = chunk > t->tile_chunk ? chunk : t->tile_chunk;
        if (atomic_compare_exchange_weak_explicit(&m->next, &first, first + chunk,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *last = min_size(first + chunk, m->end);
            return first;
        }
    }
}

/* chunk(ctx, h, first, last) on every chunk of items the thread in `seat`
 * takes: its home share first, then what is left of the others'
 * (common/team.h dla_team_run: each core keeps the lines it wrote for the
 * layer after). */
static void walk_homes(struct conv_team *t, unsigned seat,
                       void (*chunk)(void *ctx, unsigned h, size_t first, size_t last),
                       void *ctx)
{
    for (unsigned k = 0; k < t->homes; k++) {
        const unsigned h = (seat + k) % t->homes;
        for (;;) {
            size_t last = 0, first = team_grab(t, h, &last);
            if (first == SIZE_MAX) {
                break;
            }
            chunk(ctx, h, first, last);
        }
    }
}

/* A thread's chunk of a plan's items (walk_homes), its input copy `copy`. */
struct plan_chunks {
    struct conv_team *t;
    unsigned copy;
};

static void compute_chunk(void *ctx, unsigned h, size_t first, size_t last)
{
    const struct plan_chunks *c = ctx;
    const struct conv_team *t = c->t;
    if (t->p->gemv) {
        compute_gemv(t->p, first, last);
    } else if (t->p->klanes) {
        compute_klanes(t->p, seat_inp(t, c->copy), t->home[h].kb0, first, last);
    } else {
        compute_tiles(t->p, seat_inp(t, c->copy), t->home[h].kb0, t->home[h].kb1, first, last);
    }
}

/* The items of the thread in `seat`, on its input copy `copy`. */
static void team_compute(struct conv_team *t, unsigned seat, unsigned copy)
{
    struct plan_chunks c = {t, copy};
    walk_homes(t, seat, compute_chunk, &c);
}

/* A thread of the team: its seat, 0 for the calling thread. */
struct conv_seat {
    struct conv_team *team;
    unsigned seat;
};

static void conv_member(struct conv_team *t, unsigned seat)
{
    /* with own copies, each thread that joins takes the next one: the
     * calling thread and the n - 1 helpers at most (whichever workers) */
    const unsigned copy =
        t->own_copies ? atomic_fetch_add_explicit(&t->copies_taken, 1u, memory_order_relaxed) : 0;
    if (copy >= t->copies && t->own_copies) {
        return; /* more threads joined than the plan has work for (a pool's larger
                 * than the call's items): the others take every item */
    }
    team_pack(t, seat, copy);
    team_compute(t, seat, copy);
}

static void *conv_worker_main(void *arg)
{
    const struct conv_seat *s = arg;
    conv_member(s->team, s->seat);
    return NULL;
}

/* Compute items of p: tiles, or a one-pixel layer's channel blocks. */
static size_t conv_items(const struct conv_plan *p)
{
    const size_t per = (size_t)DLA_CONV_GEMV_K * DLA_CONV_GEMV_KB;
    return p->gemv ? ((size_t)p->g->out_k + per - 1) / per : p->ntiles * p->kblocks;
}

/* The compute shares of n threads over team->items items of kblocks k
 * blocks x ntiles pixel tiles (see team_homes): by k blocks where every
 * thread gets one (by_k_ok), each share's items numbered k block major from
 * 0; else the items as they come. */
static void compute_homes(struct conv_team *team, size_t kblocks, size_t ntiles, size_t n,
                          int by_k_ok)
{
    const size_t nh = min_size(n, CONV_HOMES_MAX);
    const int by_k = by_k_ok && kblocks >= nh;
    team->homes = (unsigned)(by_k || team->items >= nh ? nh : team->items ? team->items : 1);
    for (unsigned h = 0; h < team->homes; h++) {
        struct tile_home *m = &team->home[h];
        if (by_k) {
            m->kb0 = kblocks * h / team->homes;
            m->kb1 = kblocks * (h + 1) / team->homes;
            atomic_init(&m->next, 0);
            m->end = (m->kb1 - m->kb0) * ntiles;
        } else {
            m->kb0 = 0;
            m->kb1 = kblocks;
            atomic_init(&m->next, team->items * h / team->homes);
            m->end = team->items * (h + 1) / team->homes;
        }
    }
}

/* The chunks team_grab hands n threads out of team->items: a quarter of a
 * thread's share of what is left, from 1/(8n) of the call down to 1/(32n). */
static void team_chunks(struct conv_team *team, size_t n)
{
    team->tile_guide = 4;
    team->tile_chunk_max = n == 1 ? team->items : team->items / (8 * n) + 1;
    team->tile_chunk = n == 1 ? team->items : team->items / (32 * n) + 1;
}

/* The home shares of a team of n threads: each thread's input planes and
 * tiles.  The tiles split by k blocks (output channels), as SDP splits
 * the output after them and the next layer's packing its planes
 * (channels), so each core reads the lines it wrote (a line from the other
 * core's cache costs a round trip: MobileNetV2 on two threads was slower
 * than on one with the items interleaved); a layer of fewer k blocks than
 * threads (and a one-pixel layer, whose items are k blocks) splits its
 * items as they come. */
static void team_homes(struct conv_team *team, const struct conv_plan *p, size_t n)
{
    compute_homes(team, p->kblocks, p->ntiles, n, !p->gemv);
    for (unsigned h = 0; h < team->homes; h++) {
        struct tile_home *q = &team->pack_home[h];
        q->kb0 = q->kb1 = 0;
        atomic_init(&q->next, p->nplanes * h / team->homes);
        q->end = p->nplanes * (h + 1) / team->homes;
    }
}

/* Whether each of a team's n threads packs its own copy of the input
 * (own_copy_pack) instead of a share of one copy: a tile reads every plane
 * of its pixels, so with one copy each core's tiles read the planes the
 * other core packed, a line from the other cache at each first touch.
 * bench: a ResNet-50 band (56x8x256 -> 64, 1x1) took 27 us on one thread,
 * 33 us on two with one copy, 19 us with a copy each; 28x28x512 -> 128 160,
 * 124, 97 us; 56x8x64 -> 64 3x3 53, 46, 31 us; a layer of small input and
 * large output (56x8x64 -> 256) 29, 29, 31 us.  model_bench, two threads,
 * three alternated runs: ResNet-50 17.1-17.5 -> 16.5-16.6 ms, ResNet-18
 * 5.87-5.91 -> 5.72-5.73, MobileNetV2 5.44-5.58 -> 5.28-5.44.  Weights
 * packed before the call (the per-call weight rows are shared tasks),
 * CONV_OWN_COPIES_MAX threads at most (a packing each). */
#define CONV_OWN_COPIES_MAX 4
static int own_copies_pay(const struct conv_plan *p, size_t n, size_t row_tasks)
{
    return n >= 2 && n <= CONV_OWN_COPIES_MAX && !p->gemv && p->inp != NULL && row_tasks == 0;
}

/* Work shares of a team of n threads over plan p (counters at 0); pool:
 * the kept team the threads come from, if any (its scratch holds the
 * threads' own input copies). */
static void team_init(struct conv_team *team, struct conv_plan *p, size_t n,
                      struct dla_team *pool)
{
    team->p = p;
    /* about 16 packing tasks per thread: a worker that joins while the
     * last ones run waits for them (the compute needs every plane), for at
     * most one task (with 4 a thread it waited ~1/16 of the packing) */
    team->plane_chunk = p->nplanes / (16 * n) + 1;
    team->row_chunk = p->g->out_k / (4 * n) + 1;
    team->row_tasks = 0;
    if (p->w == &p->own) { /* weight rows to pack too */
        team->row_tasks = (p->g->out_k + team->row_chunk - 1) / team->row_chunk;
    }
    team->pack_units = p->nplanes + team->row_tasks;
    team->items = conv_items(p);
    team_chunks(team, n);
    team_homes(team, p, n);
    /* (the copies from the pool's scratch: the calls' allocations of them
     * cost more than the copies saved, page faults and cold lines) */
    team->own_copies = 0;
    team->copies = (unsigned)n;
    team->inp_seats = NULL;
    if (own_copies_pay(p, n, team->row_tasks)) {
        team->inp_seats = dla_team_scratch(pool, (n - 1) * p->inp_bytes);
        team->own_copies = team->inp_seats != NULL;
    }
    atomic_init(&team->copies_taken, 0);
    atomic_init(&team->next_pack, 0);
    atomic_init(&team->packs_done, 0);
    atomic_init(&team->ready, 0);
    if (team->own_copies) { /* (the weights came packed: the steps need no input) */
        kblock_steps(p);
        atomic_init(&team->ready, 1);
    }
    if (team->pack_units == 0) { /* nothing to pack (not reached: nplanes >= 1) */
        kblock_steps(p);
        atomic_init(&team->ready, 1);
    }
}

static void conv_run_team(struct conv_plan *p, size_t n)
{
    pthread_t tid[CONV_MAX_THREADS];
    int started[CONV_MAX_THREADS];
    struct conv_seat seat[CONV_MAX_THREADS];
    struct conv_team team;

    team_init(&team, p, n, NULL);
    for (size_t i = 1; i < n; i++) {
        seat[i].team = &team;
        seat[i].seat = (unsigned)i;
        started[i] = pthread_create(&tid[i], NULL, conv_worker_main, &seat[i]) == 0;
    }
    conv_member(&team, 0);
    for (size_t i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        }
    }
}

/* ------------------------------------------------------------ entry points */

/* Whether to pack g's input as shifted planes (struct conv_plan): x
 * stride and dilation 1 and a kernel wider than 1, when the MACs of the
 * junk lanes it saves (k_w - 1 per output row) cost more than packing
 * k_w - 1 more planes (measured on AVX2: ~45 MACs at the tiles' speed
 * per packed cell).  14x14 3x3: 16 -> 14 lanes a row for 3x the packing
 * of a 16x16 input. */
#define SHIFT_MACS_PER_CELL 45.0
static int conv_shifted(const struct dla_conv_geom *g)
{
    if (g->stride_x != 1 || g->dil_x != 1 || g->k_w < 2) {
        return 0;
    }
    double junk_macs = (double)g->out_h * (g->k_w - 1) * g->out_k * g->in_c * g->k_h * g->k_w;
    double extra_cells = (double)(g->k_w - 1) * (g->in_c + 3) / 4 *
                         ((double)g->out_h * g->stride_y + g->k_h) * g->out_w;
    return junk_macs > SHIFT_MACS_PER_CELL * extra_cells;
}

/* Tile shape with the least expected time: padded pixel lanes / speed. */
static const struct conv_shape *choose_shape(const struct conv_shape *shapes,
                                             const unsigned *speed,
                                             const struct dla_conv_geom *g, int shifted,
                                             int want)
{
    if (want >= 0 && want < DLA_CONV_SHAPES) {
        return &shapes[want];
    }
    uint64_t vw = g->out_w + (shifted ? 0 : (uint64_t)(g->k_w - 1) * g->dil_x / g->stride_x);
    uint64_t nv = vw * g->out_h; /* virtual pixels, as plan_build counts them */
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < DLA_CONV_SHAPES; i++) {
        uint64_t nr = shapes[i].nr, lanes = (nv + nr - 1) / nr * nr;
        if (shapes[i].half != NULL && nv % nr != 0 && nv % nr <= nr / 2) {
            lanes -= nr / 2; /* the last tile runs as a half tile */
        }
        double cost = (double)lanes / speed[i];
        if (i == 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    return &shapes[best];
}

/* 1 if none of the n bytes at s is negative.  The U8 path needs this of
 * every input code a window can read; the whole padded input is checked
 * (padding included), which is exact and costs one pass over bytes that
 * each feed k_h * k_w * out_k MACs.  wide: the CPU has AVX2 (128 bytes a
 * test). */
static int all_nonneg(const int8_t *s, size_t n, int wide)
{
    size_t i = 0;
#if defined(DLA_CONV_X86)
    if (wide && (i = dla_conv_nonneg_prefix_avx2(s, n)) + 128 <= n) {
        return 0;
    }
#else
    (void)wide;
#endif
#if defined(DLA_CONV_SSE2)
    for (; i + 64 <= n; i += 64) {
        const __m128i *v = (const __m128i *)(const void *)(s + i);
        __m128i o = _mm_or_si128(_mm_or_si128(_mm_loadu_si128(v), _mm_loadu_si128(v + 1)),
                                 _mm_or_si128(_mm_loadu_si128(v + 2), _mm_loadu_si128(v + 3)));
        if (_mm_movemask_epi8(o) != 0) {
            return 0;
        }
    }
#endif
    for (; i < n; i++) {
        if (s[i] < 0) {
            return 0;
        }
    }
    return 1;
}

/* The U8 path (AVX2 vpmaddubsw, conv_s8_impl.h) is taken when the ISA has
 * one, the caller did not rule it out, the packed weights (if any) are U8
 * cells and no input code is negative. */
/* all_nonneg of the padded input src describes: its pad (if any element
 * is padding) and each line of data.  Where the channels' rows do not
 * overlap (ch_stride >= their width) a line is checked as one run, the
 * bytes between the rows included (the columns the window leaves out, of
 * the same lines): a negative code there only sends the call to the
 * int16 path, which is exact for any input. */
static int src_nonneg(const struct dla_conv_geom *g, const struct dla_conv_src *src, int wide)
{
    size_t w = src->x1 - src->x0;
    int padded = src->x0 > 0 || src->x1 < g->in_w || src->y0 > 0 || src->y1 < g->in_h;
    if (padded && src->pad < 0) {
        return 0;
    }
    if (src->atoms != 0) { /* each surface's lines (a last surface's absent channels too) */
        const size_t h = src->y1 - src->y0, bytes = w * src->atoms;
        const int whole = src->line_stride == bytes; /* lines back to back: one run */
        for (size_t k = 0; k < (g->in_c + src->atoms - 1) / src->atoms; k++) {
            const int8_t *s0 = src->data + k * src->ch_stride;
            for (size_t y = 0; y < (whole ? 1 : h); y++) {
                if (!all_nonneg(s0 + y * src->line_stride, whole ? h * bytes : bytes, wide)) {
                    return 0;
                }
            }
        }
        return 1;
    }
    for (size_t y = 0; y < (size_t)(src->y1 - src->y0); y++) {
        const int8_t *line = src->data + y * src->line_stride;
        if (src->ch_stride >= w) {
            if (!all_nonneg(line, (g->in_c - 1) * src->ch_stride + w, wide)) {
                return 0;
            }
            continue;
        }
        for (size_t c = 0; c < g->in_c; c++) {
            if (!all_nonneg(line + c * src->ch_stride, w, wide)) {
                return 0;
            }
        }
    }
    return 1;
}

static int use_u8(enum dla_conv_isa isa, unsigned flags, const struct dla_conv_geom *g,
                  const int8_t *in, const struct dla_conv_src *src,
                  const struct dla_conv_wpack *w)
{
    if (conv_isas[isa].u8[0].tile == NULL || (flags & DLA_CONV_NO_U8) ||
        (w != NULL && w->fmt != CELL_U8)) {
        return 0;
    }
    /* (an ISA with U8 tiles has AVX2) */
    if (src != NULL) {
        return src_nonneg(g, src, 1);
    }
    return all_nonneg(in, (size_t)g->in_c * g->in_h * g->in_w, 1);
}

/* Checks shared by the entry points; 1 = nothing to compute (out set). */
static int conv_args(const struct dla_conv_geom *g, int32_t *out, int *rc)
{
    *rc = geom_valid(g);
    if (*rc != 0) {
        return 1;
    }
    size_t nout = (size_t)g->out_k * g->out_h * g->out_w;
    if (nout == 0) {
        return 1;
    }
    if (g->in_c == 0 || g->k_w == 0 || g->k_h == 0) {
        memset(out, 0, nout * sizeof(int32_t)); /* empty sums */
        return 1;
    }
    return 0;
}

int dla_conv_takes_u8(enum dla_conv_isa isa, unsigned flags, const struct dla_conv_geom *g,
                      const int8_t *in)
{
    if ((unsigned)isa >= DLA_CONV_ISA_COUNT || g == NULL || in == NULL || geom_valid(g) != 0 ||
        !dla_conv_isa_supported(isa)) {
        return 0;
    }
    return use_u8(isa, flags, g, in, NULL, NULL);
}

/* One call's arguments and plan: conv_run's, shared with the workers of a
 * kept team, which are woken before the plan is made (conv_call_body). */
struct conv_call {
    enum dla_conv_isa isa;
    int shape, use_vbmi;
    unsigned flags, threads;
    struct dla_team *pool;
    const struct dla_conv_geom *g;
    const int8_t *in, *wt;
    const struct dla_conv_src *src;
    const struct dla_conv_wpack *w;
    int32_t *out;
    struct conv_plan p;
    struct conv_team team;
    int rc;
    pthread_t caller;     /* the thread that plans */
    atomic_int state;     /* CALL_PLANNING, then CALL_READY or CALL_FAILED */
};

enum { CALL_PLANNING, CALL_READY, CALL_FAILED };

/* Whether a plan packs src's atoms a whole plane at a time
 * (pack_atoms_planes): a 1x1 layer, strides 1, its window the whole input
 * of 4 columns or more (lines and surfaces apart: every src of atoms
 * passed dla_conv_src_atoms_takes). */
static int atoms_whole_planes(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    return src != NULL && src->atoms != 0 && g->k_w == 1 && g->k_h == 1 && g->stride_x == 1 &&
           g->stride_y == 1 && g->out_w == g->in_w && g->out_h == g->in_h && g->in_w >= 4 &&
           src->x0 == 0 && src->x1 == g->in_w && src->y0 == 0 && src->y1 == g->in_h;
}

/* Lanes the pixel tiles of plan p compute for every KLANES_WASTE of its
 * real output pixels, above which a pack with k-lanes weights runs the
 * k-lanes tiles instead: 7x7 (49 pixels in 64 lanes), 14x14 (196 in 224),
 * not 28x28 (784 in 816). */
#define KLANES_WASTE 1.06
static int klanes_pay(const struct conv_plan *p)
{
    const double pixels = (double)p->g->out_h * p->g->out_w;
    return p->w->wkl != NULL && !p->gemv && p->fmt == CELL_Q8 &&
           (double)p->ntiles * p->shape->nr > KLANES_WASTE * pixels;
}

/* Plan p's pixel tiles turned into k-lanes tiles (klanes_pay): each real
 * output pixel's cell and output offsets, the tiles and k blocks. */
static int klanes_plan(struct conv_plan *p)
{
    const struct dla_conv_geom *g = p->g;
    const size_t pixels = (size_t)g->out_h * g->out_w;
    p->kl_cell = malloc(2 * pixels * sizeof(uint32_t));
    if (p->kl_cell == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    p->kl_opix = p->kl_cell + pixels;
    size_t i = 0;
    for (size_t n = 0; n < p->nv && i < pixels; n++) {
        const size_t oy = n / p->vw, ox = n % p->vw;
        if (ox < g->out_w && oy < g->out_h) {
            p->kl_cell[i] = (uint32_t)(n * CONV_CELL);
            p->kl_opix[i] = (uint32_t)(oy * g->out_w + ox);
            i++;
        }
    }
    p->klanes = 1;
    p->ntiles = (pixels + DLA_CONV_KLANES_MR - 1) / DLA_CONV_KLANES_MR;
    p->kblocks = ((size_t)g->out_k + DLA_CONV_KLANES_K - 1) / DLA_CONV_KLANES_K;
    return 0;
}

/* The plan of call c in c->p (c->p zeroed; freed by plan_free whatever
 * the result); flags: DLA_CONV_NO_U8 keeps the ISA's own cell format. */
static int conv_plan_make(struct conv_call *c)
{
    struct conv_plan *p = &c->p;
    const struct dla_conv_wpack *w = c->w;
    p->g = c->g;
    p->in = c->in;
    p->src = c->src;
    p->wt = c->wt;
    p->out = c->out;
    p->isa = &conv_isas[c->isa];
    p->fmt = p->isa->fmt;
    p->shapes = p->isa->shapes;
    p->speed = p->isa->speed;
    int use_vbmi = c->use_vbmi;
    p->cells_vbmi = c->isa == DLA_CONV_ISA_AVX512VNNI && !(c->flags & DLA_CONV_NO_VBMI) &&
                    conv_vbmi_supported();
    p->atoms_avx2 = c->isa != DLA_CONV_ISA_GENERIC; /* (the x86 ISAs have AVX2) */
    p->atoms_planes = atoms_whole_planes(c->g, c->src);
    if (use_u8(c->isa, c->flags, c->g, c->in, c->src, w)) {
        p->fmt = CELL_U8;
        p->shapes = p->isa->u8;
        p->speed = p->isa->u8_speed;
        use_vbmi = 0;
    } else if (w != NULL && w->fmt == CELL_U8) {
        p->wsrc = w; /* negative codes: P16 weights converted for this call */
        w = NULL;
    }
    p->w = w != NULL ? w : &p->own;
    p->gemv = gemv_format(p->fmt) && p->w->wk != NULL && (uint64_t)c->g->out_h * c->g->out_w == 1;
    p->shifted = !p->gemv && conv_shifted(c->g); /* gemv reads one cell a step anyway */
    p->shape = choose_shape(p->shapes, p->speed, c->g, p->shifted, c->shape);
    int rc = plan_build(p, c->isa, use_vbmi);
    return rc == 0 && klanes_pay(p) ? klanes_plan(p) : rc;
}

/* Threads a call of `items` compute items can use: `threads` (0: 1), at
 * most one per item, CONV_MAX_THREADS and the kept team's (pool). */
static size_t call_threads(unsigned threads, size_t items, const struct dla_team *pool)
{
    size_t n = min_size(min_size(threads == 0 ? 1 : threads, CONV_MAX_THREADS), items);
    return pool != NULL ? min_size(n, dla_team_threads(pool)) : n;
}

/* Threads call c's plan can use: its threads, at most one per compute
 * item, and at most the kept team's. */
static size_t conv_call_threads(const struct conv_call *c)
{
    return call_threads(c->threads, conv_items(&c->p), c->pool);
}

/* A kept team's job for call c: the caller plans while the woken workers
 * wait for the plan (a sleeping worker takes 5-40 us to start on a
 * virtual machine: its wake-up now overlaps the input check and plan of
 * 2-10 us instead of following them), then all pack and compute. */
static void conv_call_body(void *arg)
{
    struct conv_call *c = arg;
    if (pthread_equal(pthread_self(), c->caller)) {
        c->rc = conv_plan_make(c);
        if (c->rc == 0) {
            team_init(&c->team, &c->p, conv_call_threads(c), c->pool);
        }
        atomic_store_explicit(&c->state, c->rc == 0 ? CALL_READY : CALL_FAILED,
                              memory_order_release);
        if (c->rc != 0) {
            return;
        }
    } else {
        int st;
        unsigned spins = 0;
        while ((st = atomic_load_explicit(&c->state, memory_order_acquire)) == CALL_PLANNING) {
            dla_spin_wait(&spins);
        }
        if (st != CALL_READY) {
            return;
        }
    }
    conv_member(&c->team, dla_team_seat(c->pool));
}

static double conv_work_s(enum dla_conv_isa isa, const struct dla_conv_geom *g,
                          const struct dla_conv_wpack *w);

/* Plan and run with weights `wt` packed per call, or `w` packed before:
 * on up to `threads` threads, the kept team's (pool) or created for the
 * call. */
static int conv_run(enum dla_conv_isa isa, int shape, int use_vbmi, unsigned flags,
                    unsigned threads, struct dla_team *pool, const struct dla_conv_geom *g,
                    const int8_t *in, const struct dla_conv_src *src, const int8_t *wt,
                    const struct dla_conv_wpack *w, int32_t *out)
{
    struct conv_call c;
    memset(&c, 0, sizeof c);
    c.isa = isa;
    c.shape = shape;
    c.use_vbmi = use_vbmi;
    c.flags = flags;
    c.threads = threads;
    c.pool = pool;
    c.g = g;
    c.in = in;
    c.src = src;
    c.wt = wt;
    c.w = w;
    c.out = out;
    if (pool != NULL && threads >= 2 && dla_team_threads(pool) >= 2) {
        c.caller = pthread_self();
        atomic_init(&c.state, CALL_PLANNING);
        size_t n = min_size(min_size(threads, CONV_MAX_THREADS), dla_team_threads(pool));
        dla_team_join_work(pool, n - 1, conv_work_s(isa, g, w), conv_call_body, &c);
    } else {
        c.pool = NULL;
        c.rc = conv_plan_make(&c);
        if (c.rc == 0) {
            conv_run_team(&c.p, conv_call_threads(&c));
        }
    }
    plan_free(&c.p);
    return c.rc;
}

static int use_vbmi_for(enum dla_conv_isa isa, const struct dla_conv_geom *g, unsigned flags)
{
    return conv_isas[isa].fmt == CELL_Q8 && (size_t)g->k_h * g->k_w <= 16 &&
           !(flags & DLA_CONV_NO_VBMI) && conv_vbmi_supported();
}

int dla_conv_s8_opts(const struct dla_conv_opts *o, const struct dla_conv_geom *g,
                     const int8_t *in, const int8_t *wt, int32_t *out)
{
    if (o == NULL || g == NULL || in == NULL || wt == NULL || out == NULL ||
        (unsigned)o->isa >= DLA_CONV_ISA_COUNT) {
        return DLASIM_ERR_INVAL;
    }
    int rc;
    if (conv_args(g, out, &rc)) {
        return rc;
    }
    if (!dla_conv_isa_supported(o->isa)) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    return conv_run(o->isa, o->shape, use_vbmi_for(o->isa, g, o->flags), o->flags, o->threads,
                    NULL, g, in, NULL, wt, NULL, out);
}

unsigned dla_conv_split_threads(double macs, double macs_per_s, unsigned threads, int kept)
{
    double most = macs / macs_per_s / (kept ? CONV_KEPT_SHARE_S : CONV_MIN_SHARE_S);
    if (!(most >= 2.0)) {
        return 1;
    }
    return most < (double)threads ? (unsigned)most : threads;
}

static double geom_macs(const struct dla_conv_geom *g)
{
    return (double)g->out_k * g->out_h * g->out_w * g->in_c * g->k_h * g->k_w;
}

/* A conservative one-thread speed of each ISA on weights packed per call. */
static const double unpacked_macs_per_s[DLA_CONV_ISA_COUNT] = {3e9, 30e9, 100e9};

/* Threads worth giving g (dla_conv_split_threads at unpacked_macs_per_s):
 * a thread created for the call costs up to ~0.1 ms on a virtual machine. */
static unsigned conv_useful_threads(const struct dla_conv_geom *g, enum dla_conv_isa isa,
                                    unsigned threads)
{
    return dla_conv_split_threads(geom_macs(g), unpacked_macs_per_s[isa], threads, 0);
}

/* One thread's speed of the tiles of a layer packed as w.  AVX2 measured
 * (1x1 layers of 4.8-20 M MACs, minima of 200 calls, an EPYC host without
 * VNNI): U8 cells 62-88 GMAC/s, P16 cells 52-57.  The others are not
 * measured here: figures that keep their layers' split where it was
 * (the 100 us shares at 100 and 3 GMAC/s before).  A one-pixel layer (the
 * gemv kernels) streams its weights once, from beyond the caches in a
 * network: MobileNetV2's 1280 -> 1000 classifier, 1.3 M MACs, took 43 us
 * (30 GMAC/s) on the calling thread alone (rdtsc, 2 threads, VNNI). */
#define GEMV_MACS_PER_S 30e9
static double wpack_macs_per_s(const struct dla_conv_geom *g, const struct dla_conv_wpack *w)
{
    if ((uint64_t)g->out_h * g->out_w == 1 && w->wk != NULL) {
        return GEMV_MACS_PER_S;
    }
    switch (w->isa) {
    case DLA_CONV_ISA_AVX2:
        return w->fmt == CELL_U8 ? 75e9 : 52e9;
    case DLA_CONV_ISA_AVX512VNNI:
        return 250e9;
    default:
        return 7.5e9;
    }
}

/* About how long g takes one thread (weights packed as w, or per call). */
static double conv_work_s(enum dla_conv_isa isa, const struct dla_conv_geom *g,
                          const struct dla_conv_wpack *w)
{
    return geom_macs(g) / (w != NULL ? wpack_macs_per_s(g, w) : unpacked_macs_per_s[isa]);
}

/* Threads worth giving g on weights packed as w: its real speed, and a
 * kept team's worker (pool) costs only a futex wake (~5-20 us) and joins
 * late, taking the tiles left. */
static unsigned packed_useful_threads(const struct dla_conv_geom *g,
                                      const struct dla_conv_wpack *w, unsigned threads,
                                      const struct dla_team *pool)
{
    return dla_conv_split_threads(geom_macs(g), wpack_macs_per_s(g, w), threads, pool != NULL);
}

int dla_conv_s8(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                int32_t *out, unsigned threads)
{
    struct dla_conv_opts o;

    if (g == NULL || in == NULL || wt == NULL || out == NULL) {
        return DLASIM_ERR_INVAL;
    }
    int rc = geom_valid(g);
    if (rc != 0) {
        return rc;
    }
    if ((double)g->out_k * g->out_h * g->out_w * g->in_c * g->k_h * g->k_w < CONV_TINY_MACS) {
        dla_conv_s8_ref(g, in, wt, out); /* less than the packing would cost */
        return 0;
    }
    o.isa = conv_best_isa();
    o.shape = -1;
    o.flags = 0;
    o.threads = conv_useful_threads(g, o.isa, threads);
    return dla_conv_s8_opts(&o, g, in, wt, out);
}

int dla_conv_geom_check(const struct dla_conv_geom *g)
{
    return g == NULL ? DLASIM_ERR_INVAL : geom_valid(g);
}

/* ------------------------------------- taps folded into channels */

/* The folded packs' widest cells: 4 channels (Q8, U8).  A fold is chosen
 * for them; P16 (2 a cell) sums the same products either way. */
#define FOLD_CELL_CH 4u
#define FOLD_MAX_C 256u /* folded channels at most (the copy fold_input makes) */

static uint32_t div_up32(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a + b - 1) / b);
}

/* 1 + the highest input channel with a non-zero weight (1 if none). */
static uint32_t weight_channels(const struct dla_conv_geom *g, const int8_t *wt)
{
    const size_t taps = (size_t)g->k_h * g->k_w;
    uint32_t used = 1;
    for (size_t k = 0; k < g->out_k; k++) {
        const int8_t *row = wt + k * g->in_c * taps;
        for (uint32_t c = g->in_c; c > used; c--) {
            const int8_t *ch = row + (size_t)(c - 1) * taps;
            size_t t = 0;
            while (t < taps && ch[t] == 0) {
                t++;
            }
            if (t < taps) {
                used = c;
                break;
            }
        }
    }
    return used;
}

/* Reduction steps of c channels and kh x kw taps in 4-channel cells. */
static uint64_t fold_steps(uint32_t c, uint32_t kh, uint32_t kw)
{
    return (uint64_t)div_up32(c, FOLD_CELL_CH) * kh * kw;
}

/* Bytes of the folded input (fold_input) per output pixel, the cost of a
 * fold: a one-tap axis reads the input subsampled, others whole. */
static double fold_bytes_per_pixel(const struct dla_conv_geom *g, uint64_t fc, uint32_t kh,
                                   uint32_t kw)
{
    double h = kh == 1 ? g->out_h : g->in_h, w = kw == 1 ? g->out_w : g->in_w;
    return (double)fc * h * w / ((double)g->out_h * g->out_w);
}

/* The fold (ty, tx) of g's kernels whose weights are in the first c
 * channels that costs least per output pixel: the MACs of its reduction
 * steps (4 a cell, out_k rows) plus FOLD_MACS_PER_BYTE for each byte of
 * the folded input copied and packed (measured on AVX2: ResNet-50's conv1
 * folded whole, 147 channels, ran 1.6x slower for 25 % fewer MACs;
 * Fashion-MNIST's 1-channel 3x3 conv1 folded 1 x 3 runs 1.5x faster).
 * 0 if not folding costs least.  Only kernels within one cell's channels
 * (c < 4): each output channel's unfolded steps are then all its taps, so
 * the fold never runs more steps than the unfolded pack (which skips zero
 * cells per output channel); and it keeps inside
 * dla_conv_wpack_bytes_bound ((channels + 3) * taps). */
#define FOLD_MACS_PER_BYTE 48.0
static int choose_fold(const struct dla_conv_geom *g, uint32_t c, double macs_per_byte,
                       uint32_t *ty, uint32_t *tx)
{
    if (c >= FOLD_CELL_CH || g->out_k == 0 || g->out_h == 0 || g->out_w == 0) {
        return 0;
    }
    const uint64_t bound = ((uint64_t)g->in_c + 3) * g->k_h * g->k_w;
    const double macs_per_step = (double)FOLD_CELL_CH * g->out_k;
    double best = (double)fold_steps(c, g->k_h, g->k_w) * macs_per_step;
    int found = 0;
    for (uint32_t y = 1; y <= g->k_h; y++) {
        for (uint32_t x = 1; x <= g->k_w; x++) {
            uint64_t fc = (uint64_t)c * y * x;
            if (fc > FOLD_MAX_C) {
                break;
            }
            uint32_t kh = div_up32(g->k_h, y), kw = div_up32(g->k_w, x);
            uint64_t steps = fold_steps((uint32_t)fc, kh, kw);
            if (steps >= fold_steps(c, g->k_h, g->k_w) || (fc + 3) * kh * kw > bound) {
                continue;
            }
            double cost = (double)steps * macs_per_step +
                          macs_per_byte * fold_bytes_per_pixel(g, fc, kh, kw);
            if (cost < best) {
                best = cost;
                found = 1;
                *ty = y;
                *tx = x;
            }
        }
    }
    return found;
}

/* The folded kernels' shape (in_c, k_h, k_w; the rest of g as it is). */
static struct dla_conv_geom fold_kernel_geom(const struct dla_conv_geom *g, uint32_t c,
                                             uint32_t ty, uint32_t tx)
{
    struct dla_conv_geom f = *g;
    f.in_c = c * ty * tx;
    f.k_h = div_up32(g->k_h, ty);
    f.k_w = div_up32(g->k_w, tx);
    return f;
}

/* Folded weights: channel (cc * ty + dy) * tx + dx, tap (ky, kx) holds
 * channel cc's tap (ky * ty + dy, kx * tx + dx), 0 past the kernel. */
static void fold_weights(const struct dla_conv_geom *g, const struct dla_conv_geom *f,
                         uint32_t ty, uint32_t tx, const int8_t *wt, int8_t *fw)
{
    size_t i = 0;
    for (size_t k = 0; k < f->out_k; k++) {
        for (uint32_t c = 0; c < f->in_c; c++) {
            uint32_t dx = c % tx, dy = (c / tx) % ty, cc = c / tx / ty;
            const int8_t *src = wt + (k * g->in_c + cc) * g->k_h * g->k_w;
            for (uint32_t ky = 0; ky < f->k_h; ky++) {
                for (uint32_t kx = 0; kx < f->k_w; kx++, i++) {
                    uint32_t y = ky * ty + dy, x = kx * tx + dx;
                    fw[i] = y < g->k_h && x < g->k_w ? src[(size_t)y * g->k_w + x] : 0;
                }
            }
        }
    }
}

/* One axis of the folded convolution: a folded kernel one tap long reads
 * the input subsampled (stride 1 over the outputs' positions); else the
 * original input with the taps tx apart. */
struct fold_axis {
    uint32_t in, stride, dil; /* the folded geometry's */
    uint32_t step, tdil;      /* original position = X * step + t * tdil */
};

static struct fold_axis fold_axis(uint32_t in, uint32_t out, uint32_t k, uint32_t stride,
                                  uint32_t dil, uint32_t t)
{
    if (k == 1) {
        return (struct fold_axis){out, 1, 1, stride, dil};
    }
    return (struct fold_axis){in, stride, dil * t, 1, dil};
}

/* Row y of channel c of the padded input (in, or src's view) into row. */
static void input_row(const struct dla_conv_geom *g, const int8_t *in,
                      const struct dla_conv_src *src, uint32_t c, uint32_t y, int8_t *row)
{
    if (in != NULL) {
        memcpy(row, in + ((size_t)c * g->in_h + y) * g->in_w, g->in_w);
        return;
    }
    if (y < src->y0 || y >= src->y1 || src->x0 >= src->x1) {
        memset(row, src->pad, g->in_w);
        return;
    }
    memset(row, src->pad, src->x0);
    if (src->atoms != 0) {
        const int8_t *a = src->data + (size_t)(y - src->y0) * src->line_stride +
                          atom_channel_offset(src, c);
        for (uint32_t x = 0; x < src->x1 - src->x0; x++) {
            row[src->x0 + x] = a[(size_t)x * 8];
        }
    } else {
        memcpy(row + src->x0,
               src->data + (size_t)(y - src->y0) * src->line_stride + (size_t)c * src->ch_stride,
               src->x1 - src->x0);
    }
    memset(row + src->x1, src->pad, g->in_w - src->x1);
}

/* The folded input: channel (cc * ty + dy) * tx + dx at (Y, X) is channel
 * cc of the padded input at (Y * ay.step + dy * ay.tdil, X * ax.step +
 * dx * ax.tdil), 0 past its edges (read only with zero weights or by
 * lanes never stored).  `buf` holds f->in_c * f->in_h * f->in_w bytes and
 * g->in_w more for one row. */
static void fold_input(const struct dla_conv_geom *g, const struct dla_conv_geom *f,
                       const struct dla_conv_wpack *w, struct fold_axis ay,
                       struct fold_axis ax, const int8_t *in, const struct dla_conv_src *src,
                       int8_t *buf)
{
    int8_t *row = buf + (size_t)f->in_c * f->in_h * f->in_w;
    int8_t *d = buf;
    for (uint32_t cc = 0; cc < w->fold_c; cc++) {
        for (uint32_t dy = 0; dy < w->fold_ty; dy++) {
            for (uint32_t Y = 0; Y < f->in_h; Y++) {
                uint64_t y = (uint64_t)Y * ay.step + (uint64_t)dy * ay.tdil;
                int inside = y < g->in_h;
                if (inside) {
                    input_row(g, in, src, cc, (uint32_t)y, row);
                }
                for (uint32_t dx = 0; dx < w->fold_tx; dx++) {
                    int8_t *o = d + ((size_t)dx * f->in_h + Y) * f->in_w;
                    size_t x0 = (size_t)dx * ax.tdil;
                    if (!inside || x0 >= g->in_w) {
                        memset(o, 0, f->in_w);
                    } else if (ax.step == 1) {
                        size_t n = g->in_w - x0 < f->in_w ? g->in_w - x0 : f->in_w;
                        memcpy(o, row + x0, n);
                        memset(o + n, 0, f->in_w - n);
                    } else {
                        for (size_t X = 0, x = x0; X < f->in_w; X++, x += ax.step) {
                            o[X] = x < g->in_w ? row[x] : 0;
                        }
                    }
                }
            }
            d += (size_t)w->fold_tx * f->in_h * f->in_w;
        }
    }
}

/* ------------------------------------------------- weights packed once */

/* Bytes of a pack's wk: out_k rounded up to DLA_CONV_GEMV_K rows of nq cells. */
static size_t wpack_wk_bytes(const struct dla_conv_wpack *w)
{
    size_t rows = ((size_t)w->out_k + DLA_CONV_GEMV_K - 1) / DLA_CONV_GEMV_K * DLA_CONV_GEMV_K;
    return rows * w->nq * CONV_CELL;
}

/* The reduction steps w's tiles run: each row's range of non-zero steps
 * (qlo, qhi), summed; out_k * nq for dense kernels.  The kernels that run
 * every step of every row (gemv, atoms, k-lanes) are worth their weights'
 * copy only where this is most of out_k * nq. */
static uint64_t wpack_steps(const struct dla_conv_wpack *w)
{
    uint64_t steps = 0;
    for (size_t k = 0; k < w->out_k; k++) {
        steps += w->qhi[k] - w->qlo[k];
    }
    return steps;
}

/* A pack worth a wk copy: cells a channels-in-lanes kernel takes (U8 on
 * AVX2, Q8 on AVX-512 VNNI with VL: gemv_format), one output pixel (where
 * pixel lanes would carry 1 real pixel of 8, 16 or 48), and kernels mostly
 * dense (the kernel runs every step of every row; a dense-lowered depthwise
 * layer keeps the pixel tiles, which skip them). */
static int wpack_gemv_worth(const struct dla_conv_wpack *w, const struct dla_conv_geom *g)
{
    if (!gemv_format(w->fmt) || (uint64_t)g->out_h * g->out_w != 1 || w->nq == 0) {
        return 0;
    }
    return wpack_steps(w) * 2 >= (uint64_t)w->out_k * w->nq;
}

/* wk from wp (cell q of row k to [k / 8][q][k % 8]; rows past out_k zero). */
static void wpack_fill_wk(struct dla_conv_wpack *w)
{
    size_t nkb = ((size_t)w->out_k + DLA_CONV_GEMV_K - 1) / DLA_CONV_GEMV_K;
    for (size_t kb = 0; kb < nkb; kb++) {
        unsigned char *d = w->wk + kb * w->nq * DLA_CONV_GEMV_K * CONV_CELL;
        for (size_t i = 0; i < DLA_CONV_GEMV_K; i++) {
            size_t k = kb * DLA_CONV_GEMV_K + i;
            const unsigned char *src = w->wp + k * w->nq * CONV_CELL;
            for (size_t q = 0; q < w->nq; q++) {
                unsigned char *c = d + (q * DLA_CONV_GEMV_K + i) * CONV_CELL;
                if (k < w->out_k) {
                    memcpy(c, src + q * CONV_CELL, CONV_CELL);
                } else {
                    memset(c, 0, CONV_CELL);
                }
            }
        }
    }
}

/* Bytes of a pack's atoms weights (wat). */
static size_t wpack_atoms_bytes(uint32_t out_k, uint32_t in_c)
{
    return ((size_t)out_k + DLA_CONV_ATOMS_MR - 1) / DLA_CONV_ATOMS_MR * DLA_CONV_ATOMS_MR * in_c;
}

/* A pack worth atoms weights: a 1x1 kernel of whole atoms (in_c a multiple
 * of 8) in Q8 cells on AVX-512 VNNI, of more than one output pixel (one
 * pixel: the gemv kernel), at least 4 surfaces (fewer: each tile's pair
 * sums cost more than its steps; a 56x8x24 -> 144 layer took 13.5 us on
 * the atoms tiles, 8.2 packed, one thread), and dense: the atoms tiles run
 * every step of every row (a pack's zero steps cost nothing). */
static int wpack_atoms_worth(const struct dla_conv_wpack *w, const struct dla_conv_geom *g,
                             unsigned flags)
{
    if ((flags & DLA_CONV_NO_ATOMS) || w->isa != DLA_CONV_ISA_AVX512VNNI || w->fmt != CELL_Q8 ||
        g->k_w != 1 || g->k_h != 1 || g->in_c % 8 != 0 || g->in_c < 32 ||
        (uint64_t)g->out_h * g->out_w == 1 || w->nq == 0) {
        return 0;
    }
    return wpack_steps(w) * 8 >= (uint64_t)w->out_k * w->nq * 7;
}

/* Steps and output pixels from which a pack gets k-lanes weights: below
 * ~500 steps the tiles' scatter of 32 channels a pixel (and their 12
 * broadcasts a step) cost more than the empty lanes they save.  Weights
 * packed once, min of 7 x 300 calls, k-lanes / pixel tiles, one and two
 * threads: 7x7x512 -> 512 3x3 (1152 steps) 455 / 505 and 248 / 273 us;
 * 7x7x256 -> 256 3x3 (576) 125.5 / 134.6 and 75.8 / 80.7; 14x14x256 ->
 * 256 3x3 (576) 429 / 437 and 235 / 238; 7x7x128 -> 128 3x3 (288) 38.1 /
 * 36.1; 14x14x128 -> 128 3x3 (288) 124.5 / 114.2 and 73.0 / 67.3;
 * 7x7x1024 -> 256 1x1 (256) 64.7 / 60.3. */
#define KLANES_MIN_STEPS 512
#define KLANES_MAX_PIXELS 1024

/* A pack worth k-lanes weights (wkl): Q8 cells on AVX-512 VNNI, out_k a
 * multiple of 32, at least KLANES_MIN_STEPS steps, 2 to KLANES_MAX_PIXELS
 * output pixels, dense (the tiles run every step; same test as
 * wpack_atoms_worth). */
static int wpack_klanes_worth(const struct dla_conv_wpack *w, const struct dla_conv_geom *g,
                              unsigned flags)
{
    const uint64_t pixels = (uint64_t)g->out_h * g->out_w;
    if ((flags & DLA_CONV_NO_KLANES) || w->isa != DLA_CONV_ISA_AVX512VNNI ||
        w->fmt != CELL_Q8 || w->out_k % DLA_CONV_KLANES_K != 0 || w->nq < KLANES_MIN_STEPS ||
        pixels < 2 || pixels > KLANES_MAX_PIXELS) {
        return 0;
    }
    return wpack_steps(w) * 8 >= (uint64_t)w->out_k * w->nq * 7;
}

/* Bytes of a pack's k-lanes weights. */
static size_t wpack_klanes_bytes(const struct dla_conv_wpack *w)
{
    return (size_t)w->out_k * w->nq * CONV_CELL;
}

/* wkl from wp (cell q of row k to [k / 16][q][k % 16]). */
static void wpack_fill_klanes(struct dla_conv_wpack *w)
{
    for (size_t k = 0; k < w->out_k; k++) {
        const unsigned char *src = w->wp + k * w->nq * CONV_CELL;
        unsigned char *d = w->wkl + ((k / 16) * w->nq * 16 + k % 16) * CONV_CELL;
        for (size_t q = 0; q < w->nq; q++) {
            memcpy(d + q * 16 * CONV_CELL, src + q * CONV_CELL, CONV_CELL);
        }
    }
}

/* wat from the planar 1x1 weights wt ([k][c]). */
static void wpack_fill_atoms(struct dla_conv_wpack *w, const int8_t *wt)
{
    const size_t c = w->in_c, rows = wpack_atoms_bytes(w->out_k, w->in_c) / c;
    for (size_t k0 = 0; k0 < rows; k0 += DLA_CONV_ATOMS_MR) {
        unsigned char *d = w->wat + k0 * c;
        for (size_t g = 0; g < c / 8; g++) {
            for (size_t m = 0; m < DLA_CONV_ATOMS_MR; m++, d += 8) {
                const size_t k = k0 + m;
                for (size_t i = 0; i < 8; i++) {
                    d[i] = (unsigned char)((k < w->out_k ? (int)wt[k * c + g * 8 + i] : 0) + 128);
                }
            }
        }
    }
}

/* A new pack of wt in cell format fmt into *out. */
static int wpack_alloc(const struct dla_conv_geom *g, const int8_t *wt, enum dla_conv_isa isa,
                       enum cell_format fmt, int use_vbmi, unsigned flags,
                       struct dla_conv_wpack **out)
{
    struct dla_conv_wpack *w = malloc(sizeof(*w));
    if (w == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = wpack_init(w, g, isa, fmt, use_vbmi);
    if (rc != 0) {
        free(w);
        return rc;
    }
    for (size_t k = 0; k < g->out_k; k++) {
        pack_weight_row(w, wt, k);
    }
    if (wpack_gemv_worth(w, g) && (w->wk = alloc64(wpack_wk_bytes(w))) != NULL) {
        wpack_fill_wk(w);
    }
    if (wpack_atoms_worth(w, g, flags) &&
        (w->wat = alloc64(wpack_atoms_bytes(w->out_k, w->in_c))) != NULL) {
        wpack_fill_atoms(w, wt);
    }
    if (wpack_klanes_worth(w, g, flags) && (w->wkl = alloc64(wpack_klanes_bytes(w))) != NULL) {
        wpack_fill_klanes(w);
    }
    kb_tables_build(w, fmt == CELL_U8 ? conv_isas[isa].u8 : conv_isas[isa].shapes);
    *out = w;
    return 0;
}

/* A pack of wt's kernels folded (choose_fold; DLA_CONV_FOLD_STEPS: the
 * fewest steps whatever the copy), or 0 with *out NULL when folding saves
 * nothing. */
static int wpack_fold(const struct dla_conv_geom *g, const int8_t *wt, enum dla_conv_isa isa,
                      enum cell_format fmt, int use_vbmi, unsigned flags,
                      struct dla_conv_wpack **out)
{
    *out = NULL;
    uint32_t c = weight_channels(g, wt), ty = 1, tx = 1;
    double per_byte = flags & DLA_CONV_FOLD_STEPS ? 0.0 : FOLD_MACS_PER_BYTE;
    if (!choose_fold(g, c, per_byte, &ty, &tx)) {
        return 0;
    }
    struct dla_conv_geom f = fold_kernel_geom(g, c, ty, tx);
    int8_t *fw = malloc((size_t)f.out_k * f.in_c * f.k_h * f.k_w);
    if (fw == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    fold_weights(g, &f, ty, tx, wt, fw);
    int rc = wpack_alloc(&f, fw, isa, fmt, use_vbmi && (size_t)f.k_h * f.k_w <= 16,
                         flags | DLA_CONV_NO_ATOMS | DLA_CONV_NO_KLANES, out);
    free(fw);
    if (rc == 0) {
        (*out)->shape_c = g->in_c;
        (*out)->shape_kw = g->k_w;
        (*out)->shape_kh = g->k_h;
        (*out)->fold_c = c;
        (*out)->fold_ty = ty;
        (*out)->fold_tx = tx;
    }
    return rc;
}

/* Whether w was packed for g's kernel shape. */
static int wpack_fits(const struct dla_conv_wpack *w, const struct dla_conv_geom *g)
{
    return w->shape_c == g->in_c && w->shape_kw == g->k_w && w->shape_kh == g->k_h &&
           w->out_k == g->out_k;
}

/* Folded inputs up to this size live on packed_run's stack. */
#define FOLD_STACK_BYTES 8192

/* The packed kernel on g's input (in, or src's view): folded packs run
 * the folded convolution on a folded copy of the input. */
static int packed_run(const struct dla_conv_geom *g, const int8_t *in,
                      const struct dla_conv_src *src, const struct dla_conv_wpack *w,
                      int32_t *out, int shape, unsigned threads, int useful,
                      struct dla_team *pool)
{
    if (w->fold_ty == 1 && w->fold_tx == 1) {
        return conv_run(w->isa, shape, w->use_vbmi, 0,
                        useful ? packed_useful_threads(g, w, threads, pool) : threads, pool, g,
                        in, src, NULL, w, out);
    }
    struct dla_conv_geom f = fold_kernel_geom(g, w->fold_c, w->fold_ty, w->fold_tx);
    struct fold_axis ay = fold_axis(g->in_h, g->out_h, f.k_h, g->stride_y, g->dil_y, w->fold_ty);
    struct fold_axis ax = fold_axis(g->in_w, g->out_w, f.k_w, g->stride_x, g->dil_x, w->fold_tx);
    f.in_h = ay.in;
    f.stride_y = ay.stride;
    f.dil_y = ay.dil;
    f.in_w = ax.in;
    f.stride_x = ax.stride;
    f.dil_x = ax.dil;
    size_t bytes;
    if (!mul_size((size_t)f.in_c * f.in_h, f.in_w, &bytes) || bytes + g->in_w < bytes) {
        return DLASIM_ERR_INVAL;
    }
    /* a small folded input (a first layer of 28x28: 2.5 KB) on the stack:
     * the team's workers read it only while conv_run runs, as its plan */
    int8_t small[FOLD_STACK_BYTES];
    int8_t *buf = bytes + g->in_w <= sizeof small ? small : malloc(bytes + g->in_w);
    if (buf == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    fold_input(g, &f, w, ay, ax, in, src, buf);
    int rc = conv_run(w->isa, shape, w->use_vbmi, 0,
                      useful ? packed_useful_threads(&f, w, threads, pool) : threads, pool, &f,
                      buf, NULL, NULL, w, out);
    if (buf != small) {
        free(buf);
    }
    return rc;
}

int dla_conv_wpack_build_isa(const struct dla_conv_geom *g, const int8_t *wt,
                             enum dla_conv_isa isa, unsigned flags, struct dla_conv_wpack **out)
{
    if (g == NULL || wt == NULL || out == NULL || (unsigned)isa >= DLA_CONV_ISA_COUNT) {
        return DLASIM_ERR_INVAL;
    }
    *out = NULL;
    int rc = geom_valid(g);
    if (rc != 0) {
        return rc;
    }
    if (!dla_conv_isa_supported(isa)) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    /* AVX2 keeps U8 cells (1 byte a weight): inputs with a negative code
     * get P16 cells converted from them per call (conv_run) */
    enum cell_format fmt = conv_isas[isa].fmt;
    int use_vbmi = use_vbmi_for(isa, g, flags);
    if (conv_isas[isa].u8[0].tile != NULL && !(flags & DLA_CONV_NO_U8)) {
        fmt = CELL_U8;
        use_vbmi = 0;
    }
    if (!(flags & DLA_CONV_NO_FOLD)) {
        rc = wpack_fold(g, wt, isa, fmt, use_vbmi, flags, out);
        if (rc != 0 || *out != NULL) {
            return rc;
        }
    }
    return wpack_alloc(g, wt, isa, fmt, use_vbmi, flags, out);
}

int dla_conv_wpack_build(const struct dla_conv_geom *g, const int8_t *wt,
                         struct dla_conv_wpack **out)
{
    return dla_conv_wpack_build_isa(g, wt, conv_best_isa(), 0, out);
}

int dla_conv_wpack_build_signed(const struct dla_conv_geom *g, const int8_t *wt,
                                const struct dla_conv_wpack *w, struct dla_conv_wpack **out)
{
    if (g == NULL || wt == NULL || w == NULL || out == NULL) {
        return DLASIM_ERR_INVAL;
    }
    *out = NULL;
    if (w->fmt != CELL_U8) {
        return 0;
    }
    return dla_conv_wpack_build_isa(g, wt, w->isa, DLA_CONV_NO_U8, out);
}

int dla_conv_wpack_takes_signed(const struct dla_conv_wpack *w)
{
    return w != NULL && w->fmt != CELL_U8;
}

int dla_conv_wpack_has_atoms(const struct dla_conv_wpack *w)
{
    return w != NULL && w->wat != NULL;
}

int dla_conv_wpack_has_klanes(const struct dla_conv_wpack *w)
{
    return w != NULL && w->wkl != NULL;
}

int dla_conv_src_nonneg(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    return src_nonneg(g, src, dla_conv_isa_supported(DLA_CONV_ISA_AVX2));
}

size_t dla_conv_wpack_bytes(const struct dla_conv_wpack *w)
{
    if (w == NULL) {
        return 0;
    }
    size_t kb = 0;
    for (unsigned i = 0; i < w->nkbt; i++) {
        kb += kb_tables_bytes(&w->kbt[i]);
    }
    return sizeof(*w) + w->bytes + (size_t)w->out_k * 3 * sizeof(uint32_t) +
           (size_t)w->out_k * w->pair_words * sizeof(uint64_t) +
           (w->wk != NULL ? wpack_wk_bytes(w) : 0) +
           (w->wat != NULL ? wpack_atoms_bytes(w->out_k, w->in_c) : 0) +
           (w->wkl != NULL ? wpack_klanes_bytes(w) : 0) + kb;
}

/* Cells: 4 bytes per group of 4 channels (Q8, U8) or of 2 (P16), so at
 * most 2 bytes per weight of in_c rounded up to 4 channels; per output
 * channel init, qlo and qhi and (U8) a bit per pair of steps (nq / 2
 * bits, nq <= (in_c + 3) / 4 * taps, in whole words); a one-pixel
 * layer's wk; a 1x1 layer's atoms weights; the k-lanes weights; the
 * header. */
size_t dla_conv_wpack_bytes_bound(const struct dla_conv_geom *g)
{
    size_t per_k = ((size_t)g->in_c + 3) * g->k_w * g->k_h * 2 + 3 * sizeof(uint32_t) +
                   (((size_t)g->in_c + 3) * g->k_w * g->k_h / 512 + 1) * sizeof(uint64_t);
    /* U8 cells take 1 byte a weight of the 2 counted, which leaves the wk
     * copy room but for its up to DLA_CONV_GEMV_K - 1 zero rows */
    size_t wk_pad = ((size_t)g->in_c + 3) * g->k_w * g->k_h * (DLA_CONV_GEMV_K - 1);
    /* the k blocks' tables of up to DLA_CONV_SHAPES tile heights of at
     * least 4 rows (kb_tables_build): per block lo, hi, sched_at and a
     * schedule of at most nq / 5 entries (sched_gains: 5 paired steps
     * for each of its runs, 2 entries a run) */
    size_t nq = ((size_t)g->in_c + 3) / 4 * g->k_w * g->k_h;
    size_t kb = ((size_t)g->out_k / 4 + 1) * DLA_CONV_SHAPES *
                (2 * sizeof(uint32_t) + sizeof(size_t) + sizeof(uint32_t) * (nq / 5 + 1));
    /* a 1x1 kernel's atoms weights (wat); the k-lanes weights (wkl), one
     * byte a weight of in_c rounded up to 4 */
    size_t atoms = g->k_w == 1 && g->k_h == 1 ? wpack_atoms_bytes(g->out_k, g->in_c) : 0;
    size_t klanes = ((size_t)g->in_c + 3) / 4 * 4 * g->k_w * g->k_h * g->out_k;
    return per_k * g->out_k + wk_pad + kb + atoms + klanes + sizeof(struct dla_conv_wpack);
}

size_t dla_conv_wpack_pairs(const struct dla_conv_wpack *w)
{
    size_t n = 0;
    for (size_t i = 0; w != NULL && w->pairs != NULL && i < w->out_k * w->pair_words; i++) {
        n += (size_t)__builtin_popcountll(w->pairs[i]);
    }
    return n;
}

void dla_conv_wpack_free(struct dla_conv_wpack *w)
{
    if (w != NULL) {
        wpack_release(w);
        free(w);
    }
}

int dla_conv_s8_packed_opts(const struct dla_conv_geom *g, const int8_t *in,
                            const struct dla_conv_wpack *w, int32_t *out, int shape,
                            unsigned threads, struct dla_team *pool)
{
    if (g == NULL || in == NULL || w == NULL || out == NULL) {
        return DLASIM_ERR_INVAL;
    }
    if (!wpack_fits(w, g)) {
        return DLASIM_ERR_INVAL; /* packed for another kernel shape */
    }
    int rc;
    if (conv_args(g, out, &rc)) {
        return rc;
    }
    return packed_run(g, in, NULL, w, out, shape, threads, 0, pool);
}

/* ------------------------------------------------ 1x1 layers on atoms */

/*
 * A dense 1x1 layer whose input is the memory's atoms, lines back to back
 * (every layer of a network's 1x1 convolutions that CDMA keeps as atoms:
 * csc.c fetch_atoms) runs on them as they are (struct dla_conv_atoms_tile):
 * no packed copy of the input, only each pixel's channel sum (corr, 8
 * bytes a pixel).  The packed path made a copy per thread (own_copies_pay)
 * and a thread packed every plane: the input-heavy layers scaled 1.4-1.6x
 * on two threads.  Two threads, weights packed once (min of 7 x 300
 * calls): 56x8x256 -> 64 20.5 -> 14.4 us, 28x28x512 -> 128 100.9 -> 90.9,
 * 14x14x1024 -> 256 109.0 -> 86.1, 7x7x2048 -> 512 125.2 -> 87.7,
 * 14x14x576 -> 96 30.2 -> 18.5, 56x8x64 -> 256 19.4 -> 16.8.
 */
struct atoms_call {
    const int8_t *in;     /* surface 0's first atom */
    size_t surf, groups;  /* surfaces: their distance, their count */
    size_t pixels, ntiles, kblocks;
    uint32_t out_k;
    const unsigned char *wat;
    int32_t *out;
    int32_t *corr;        /* a thread's corrections at corr + copy * corr_ints */
    size_t corr_ints;
    /* a layer of stride 2 (atoms_halved): the input's every other atom of
     * every other line, src's, copied by each thread to halves + copy *
     * halves_bytes; NULL otherwise */
    const struct dla_conv_src *src;
    uint32_t out_w, out_h;
    int8_t *halves;
    size_t halves_bytes;
    unsigned copies;      /* threads the call has corrections for */
    atomic_uint taken;
    struct dla_team *pool;
    struct conv_team team; /* its homes and chunks alone (team_grab) */
};

/*
 * A 1x1 layer of x and y stride 2 whose window is its whole input (no
 * padding: a ResNet's downsampling layers) runs on the atoms tiles too,
 * on a compact copy of the atoms it reads, each thread its own (the
 * packed path's per-thread copy, 8 bytes a used pixel instead of its
 * cells): the tiles then read lines back to back from the thread's cache.
 * In the device (rdtsc, ResNet-50, 101 images, the same runs): its three
 * such layers 328-337 GMAC/s on the packed path, 431-441 so; its stride-1
 * 1x1 layers 412-420.
 */
static int atoms_halved(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    return src != NULL && src->atoms != 0 && g->k_w == 1 && g->k_h == 1 && g->stride_x == 2 &&
           g->stride_y == 2 && src->x0 == 0 && src->x1 == g->in_w && src->y0 == 0 &&
           src->y1 == g->in_h;
}

/* Whether a call of g on src with pack w runs on the atoms tiles. */
static int atoms_tiles_take(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                            const struct dla_conv_wpack *w)
{
    if (w->wat == NULL || w->fold_ty != 1 || w->fold_tx != 1) {
        return 0;
    }
    return (atoms_whole_planes(g, src) && src->line_stride == (size_t)g->in_w * 8) ||
           atoms_halved(g, src);
}

/* The atoms an atoms_halved layer reads, compact: surface after surface,
 * line after line, out_w x out_h atoms each (the input's atom 2x of line
 * 2y at x, y). */
static void halve_atoms(const struct atoms_call *c, int8_t *dst)
{
    const struct dla_conv_src *src = c->src;
    for (size_t k = 0; k < c->groups; k++) {
        const int8_t *surface = src->data + k * src->ch_stride;
        for (uint32_t y = 0; y < c->out_h; y++) {
            const int8_t *line = surface + (size_t)2 * y * src->line_stride;
            for (uint32_t x = 0; x < c->out_w; x++, dst += 8) {
                memcpy(dst, line + (size_t)16 * x, 8);
            }
        }
    }
}

/* Items begin..end-1 of home share kb0 on, k block major (item i: k block
 * kb0 + i / ntiles, pixel tile i % ntiles), with corrections corr. */
static void atoms_items(const struct atoms_call *c, const int8_t *in, const int32_t *corr,
                        size_t kb0, size_t begin, size_t end)
{
#if defined(DLA_CONV_X86)
    struct dla_conv_atoms_tile t;
    t.surf = c->surf;
    t.groups = c->groups;
    t.ostride = c->pixels;
    size_t kb = kb0 + begin / c->ntiles, nt = begin % c->ntiles;
    for (size_t item = begin; item < end; item++) {
        const size_t p0 = nt * DLA_CONV_ATOMS_NR, k0 = kb * DLA_CONV_ATOMS_MR;
        t.in = in + p0 * 8;
        t.w = c->wat + kb * c->groups * 64;
        t.corr = corr + p0 * 2;
        t.out = c->out + k0 * c->pixels + p0;
        t.mr = (unsigned)min_size(DLA_CONV_ATOMS_MR, c->out_k - k0);
        t.n = (unsigned)min_size(DLA_CONV_ATOMS_NR, c->pixels - p0);
        dla_conv_atoms_tile_vnni(&t);
        if (++nt == c->ntiles) {
            nt = 0;
            kb++;
        }
    }
#else
    (void)c;
    (void)in;
    (void)corr;
    (void)kb0;
    (void)begin;
    (void)end;
#endif
}

/* A thread's chunk of an atoms call's items (walk_homes), with its
 * corrections. */
struct atoms_chunks {
    const struct atoms_call *c;
    const int8_t *in;
    const int32_t *corr;
};

static void atoms_chunk(void *ctx, unsigned h, size_t first, size_t last)
{
    const struct atoms_chunks *a = ctx;
    atoms_items(a->c, a->in, a->corr, a->c->team.home[h].kb0, first, last);
}

/* A thread of an atoms call: its corrections, then its home share's items,
 * then what is left of the others'. */
static void atoms_member(void *arg)
{
    struct atoms_call *c = arg;
    const unsigned copy = atomic_fetch_add_explicit(&c->taken, 1u, memory_order_relaxed);
    if (copy >= c->copies) {
        return; /* more threads joined than the call has corrections for */
    }
    int32_t *corr = c->corr + copy * c->corr_ints;
    const int8_t *in = c->in;
    if (c->halves != NULL) {
        int8_t *mine = c->halves + copy * c->halves_bytes;
        halve_atoms(c, mine);
        in = mine;
    }
#if defined(DLA_CONV_X86)
    dla_conv_atoms_corr_vnni(in, c->surf, c->groups, c->pixels, corr);
#endif
    struct atoms_chunks ac = {c, in, corr};
    walk_homes(&c->team, dla_team_seat(c->pool), atoms_chunk, &ac);
}

/* Corrections of up to this many bytes live on atoms_run's stack when the
 * call has no team (a band on the calling thread). */
#define ATOMS_CORR_STACK_BYTES 4096

/* g on src's atoms with w's atoms weights (atoms_tiles_take) on up to
 * `threads` threads of pool. */
static int atoms_run(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                     const struct dla_conv_wpack *w, int32_t *out, unsigned threads,
                     struct dla_team *pool)
{
    struct atoms_call c;
    memset(&c, 0, sizeof c);
    c.in = src->data;
    c.surf = src->ch_stride;
    c.groups = g->in_c / 8;
    c.pixels = (size_t)g->out_w * g->out_h; /* (stride 1: the input's) */
    c.ntiles = (c.pixels + DLA_CONV_ATOMS_NR - 1) / DLA_CONV_ATOMS_NR;
    c.kblocks = ((size_t)g->out_k + DLA_CONV_ATOMS_MR - 1) / DLA_CONV_ATOMS_MR;
    c.out_k = g->out_k;
    c.wat = w->wat;
    c.out = out;
    c.pool = pool;
    c.corr_ints = (c.pixels + 7) / 8 * 16;
    if (atoms_halved(g, src)) {
        c.src = src;
        c.out_w = g->out_w;
        c.out_h = g->out_h;
        c.surf = c.pixels * 8;
        c.halves_bytes = (c.groups * c.surf + 63) / 64 * 64;
    }
    /* (no team: the calling thread alone, a band's call) */
    const size_t n = pool != NULL ? call_threads(threads, c.ntiles * c.kblocks, pool) : 1;
    const size_t corr_bytes = n * c.corr_ints * sizeof(int32_t);
    const size_t bytes = corr_bytes + n * c.halves_bytes;
    _Alignas(64) int32_t small[ATOMS_CORR_STACK_BYTES / sizeof(int32_t)];
    void *heap = NULL, *scratch;
    if (pool != NULL) {
        scratch = dla_team_scratch(pool, bytes);
    } else if (bytes <= sizeof small) {
        scratch = small;
    } else {
        scratch = heap = alloc64(bytes);
    }
    if (scratch == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    c.corr = scratch; /* (corr_bytes: whole lines, the copies aligned after them) */
    c.halves = c.src != NULL ? (int8_t *)scratch + corr_bytes : NULL;
    c.copies = (unsigned)n;
    atomic_init(&c.taken, 0);
    /* home shares and chunks as the packed path's (team_homes) */
    c.team.items = c.ntiles * c.kblocks;
    team_chunks(&c.team, n);
    compute_homes(&c.team, c.kblocks, c.ntiles, n, 1);
    if (n >= 2) {
        dla_team_join_work(pool, n - 1, conv_work_s(w->isa, g, w), atoms_member, &c);
    } else {
        atoms_member(&c);
    }
    free(heap);
    return 0;
}

int dla_conv_src_atoms_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    if (g == NULL || src == NULL || src->atoms != 8 || src->data == NULL || geom_valid(g) != 0 ||
        src->x0 > src->x1 || src->x1 > g->in_w || src->y0 > src->y1 || src->y1 > g->in_h) {
        return 0;
    }
    const uint64_t rows = src->y1 - src->y0 ? src->y1 - src->y0 : 1;
    return g->in_c > 0 && g->in_c % 8 == 0 && src->line_stride / 8 >= src->x1 - src->x0 &&
           src->ch_stride / rows >= src->line_stride;
}


int dla_conv_s8_packed_src(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                           const struct dla_conv_wpack *w, int32_t *out, unsigned threads,
                           struct dla_team *pool)
{
    if (g == NULL || src == NULL || w == NULL || out == NULL) {
        return DLASIM_ERR_INVAL;
    }
    int rc = geom_valid(g);
    if (rc != 0) {
        return rc;
    }
    if (src->x0 > src->x1 || src->x1 > g->in_w || src->y0 > src->y1 || src->y1 > g->in_h ||
        (src->data == NULL && src->x0 < src->x1 && src->y0 < src->y1) ||
        (src->atoms != 0 && !dla_conv_src_atoms_takes(g, src))) {
        return DLASIM_ERR_INVAL;
    }
    if (!wpack_fits(w, g)) {
        return DLASIM_ERR_INVAL; /* packed for another kernel shape */
    }
    if (conv_args(g, out, &rc)) {
        return rc;
    }
    if (atoms_tiles_take(g, src, w)) {
        return atoms_run(g, src, w, out, packed_useful_threads(g, w, threads, pool), pool);
    }
    return packed_run(g, NULL, src, w, out, -1, threads, 1, pool);
}

struct dla_conv_src dla_conv_src_rows(const struct dla_conv_src *src, uint32_t ys,
                                      uint32_t n_rows)
{
    struct dla_conv_src v = *src;
    const uint64_t lo = src->y0 > ys ? src->y0 : ys;
    const uint64_t hi = (uint64_t)ys + n_rows < src->y1 ? (uint64_t)ys + n_rows : src->y1;
    if (lo >= hi) {
        v.y0 = v.y1 = 0; /* every row of the band is padding */
        return v;
    }
    v.data = src->data + (size_t)(lo - src->y0) * src->line_stride;
    v.y0 = (uint32_t)(lo - ys);
    v.y1 = (uint32_t)(hi - ys);
    return v;
}

int dla_conv_s8_packed_src_rows(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                                const struct dla_conv_wpack *w, uint32_t y0, uint32_t y1,
                                int32_t *out)
{
    if (g == NULL || src == NULL || geom_valid(g) != 0 || y0 >= y1 || y1 > g->out_h ||
        src->y0 > src->y1 || src->y1 > g->in_h) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom sub = *g;
    sub.out_h = y1 - y0;
    sub.in_h = (sub.out_h - 1) * g->stride_y + (g->k_h - 1) * g->dil_y + 1;
    const struct dla_conv_src band = dla_conv_src_rows(src, y0 * g->stride_y, sub.in_h);
    return dla_conv_s8_packed_src(&sub, &band, w, out, 1, NULL);
}

int dla_conv_s8_packed(const struct dla_conv_geom *g, const int8_t *in,
                       const struct dla_conv_wpack *w, int32_t *out, unsigned threads,
                       struct dla_team *pool)
{
    if (g == NULL || w == NULL) {
        return DLASIM_ERR_INVAL;
    }
    if (geom_valid(g) != 0) {
        return geom_valid(g);
    }
    return dla_conv_s8_packed_opts(g, in, w, out, -1,
                                   packed_useful_threads(g, w, threads, pool), pool);
}
