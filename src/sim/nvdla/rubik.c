/*
 * RUBIK — data reshape engine (contract, split, merge), bit-exact with
 * NVDLA's RTL.  Present only where NVDLA_RUBIK_ENABLE is set (nv_large; not
 * nv_small).  Pure data movement: no arithmetic on elements.
 *
 * CSB window 0x11000-0x11fff (register prefix RBK), ping-pong (S_POINTER,
 * D_OP_ENABLE).  Interrupt: GLB S_INTR_STATUS RUBIK_DONE_STATUS0/1 (raised by
 * the device core when this engine returns).  Memory ports: reads through
 * D_DAIN_RAM_TYPE, writes through D_DAOUT_RAM_TYPE (0 = CVIF, 1 = MCIF/DBB).
 *
 * Layouts (ref: vmod/nvdla/rubik/NV_NVDLA_RUBIK_seq_gen.v address and counter
 * logic, NV_NVDLA_RUBIK_rf_ctrl.v / _rf_core.v data masks; cmod
 * rubik/NV_NVDLA_rbk.cpp).  Atoms are 32 bytes whatever the configuration's
 * memory atom (the RUBIK datapath is built for 32-byte atoms); B = bytes per
 * element = 1 (IN_PRECISION INT8) or 2 (INT16, FP16: the RTL only tells 8-bit
 * from 16-bit data); M = 32 / B elements per atom.  W, H = DATAIN_WIDTH/HEIGHT
 * + 1; all strides and addresses are in bytes with the low 5 bits dropped.
 *
 *   feature cube: element (c, y, x) at BASE + (c / M) * SURF + y * LINE
 *                 + x * 32 + (c % M) * B.
 *   planes:       element (c, y, x) at BASE + c * PLANAR + y * LINE + x * B.
 *
 *   CONTRACT  (deconvolution reorder), sx = DECONV_X_STRIDE + 1,
 *             sy = DECONV_Y_STRIDE + 1, S = ceil((DATAOUT_CHANNEL + 1) / M)
 *             surfaces: input sub-cube k = dy * sx + dx (W x H x S surfaces)
 *             starts at DAIN + k * CONTRACT_STRIDE_0; its atom (s, h, w) goes
 *             whole to output surface s, line h * sy + dy, atom w * sx + dx
 *             (output line stride DAOUT_LINE_STRIDE, surface stride
 *             DAOUT_SURF_STRIDE).  CONTRACT_STRIDE_1 is not used by the RTL
 *             (seq_gen only monitors it): output lines are counted with
 *             DAOUT_LINE_STRIDE; spec 001 asks software to set it to
 *             (DECONV_Y_STRIDE + 1) * DAOUT_LINE_STRIDE, which gives the same
 *             layout.  DATAIN_CHANNEL is not used.
 *   SPLIT     feature cube (DAIN, LINE, SURF) -> planes (DAOUT, DAOUT_LINE,
 *             DAOUT_PLANAR), C = DATAIN_CHANNEL + 1 planes.  Each plane line is
 *             written as ceil(W * B / 32) whole atoms: bytes after W * B are 0.
 *   MERGE     planes (DAIN, LINE, DAIN_PLANAR) -> feature cube (DAOUT,
 *             DAOUT_LINE, DAOUT_SURF), C = DATAIN_CHANNEL + 1.  Each plane line
 *             is read as ceil(W * B / 32) whole atoms; output atoms are whole:
 *             the lanes of channels >= C in the last surface are 0.
 *
 * Illegal programming refused with DLASIM_ERR_PROG (the layer still
 * completes with its interrupt):
 *   - RUBIK_MODE 3 and IN_PRECISION 3 (reserved encodings).
 *   - SPLIT/MERGE whose DATAIN_CHANNEL and DATAOUT_CHANNEL give different
 *     numbers of surfaces: the read side counts input surfaces, the write
 *     side output surfaces, so the RTL would hang or leave data behind.
 *   - CONTRACT with sx <= 8 and W * sx > 8192: the RTL writes one output line
 *     per DMA request whose 13-bit size field would wrap.
 *
 * Hardware-updated registers: D_PERF_READ_STALL / D_PERF_WRITE_STALL stay 0
 * (modelled memory never stalls).
 *
 * Modelling choices: the RTL streams reads ahead of writes; the model reads
 * what one output line (contract, merge) or one input line (split) needs,
 * then writes it, so overlapping source and destination give one of the
 * possible hardware results.
 */
#include "sim/core/budget.h"
#include "sim/nvdla/dla.h"

#include <stdlib.h>
#include <string.h>

#define RBK_ATOM 32u            /* bytes per atom of the RUBIK datapath */
#define RBK_MAX_DMA_ATOMS 8192u /* 13-bit size field of a DMA request */

enum rbk_mode { RBK_CONTRACT = 0, RBK_SPLIT = 1, RBK_MERGE = 2 };

struct rbk_cfg {
    enum rbk_mode mode;
    uint32_t bpe;             /* bytes per element: 1 or 2 */
    uint32_t epa;             /* elements per atom: 32 or 16 */
    uint32_t width, height;   /* W, H */
    uint32_t cin, cout;       /* DATAIN_CHANNEL + 1, DATAOUT_CHANNEL + 1 */
    uint32_t sx, sy;          /* deconvolution strides (contract) */
    uint64_t src, dst;
    uint64_t in_line, in_surf, in_planar, cube_stride;
    uint64_t out_line, out_surf, out_planar;
    int in_port, out_port;
};

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1u) / b;
}

/* Byte value of a stride/address-low register: the low 5 bits are not stored. */
static uint64_t atom_bytes(uint32_t reg)
{
    return reg & ~(uint32_t)(RBK_ATOM - 1u);
}

/* ---- register decode --------------------------------------------------- */

static void decode_geometry(struct dla_dev *d, unsigned g, struct rbk_cfg *c)
{
    c->width = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DATAIN_SIZE_0_0, DATAIN_WIDTH) + 1u;
    c->height = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DATAIN_SIZE_0_0, DATAIN_HEIGHT) + 1u;
    c->cin = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DATAIN_SIZE_1_0, DATAIN_CHANNEL) + 1u;
    c->cout = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DATAOUT_SIZE_1_0, DATAOUT_CHANNEL) + 1u;
    c->sx = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DECONV_STRIDE_0, DECONV_X_STRIDE) + 1u;
    c->sy = DLA_REG_FIELD(d, g, NVDLA_RBK_D_DECONV_STRIDE_0, DECONV_Y_STRIDE) + 1u;
}

static void decode_memory(struct dla_dev *d, unsigned g, struct rbk_cfg *c)
{
    c->in_port = dla_ram_port(DLA_REG_FIELD(d, g, NVDLA_RBK_D_DAIN_RAM_TYPE_0, DATAIN_RAM_TYPE));
    c->out_port =
        dla_ram_port(DLA_REG_FIELD(d, g, NVDLA_RBK_D_DAOUT_RAM_TYPE_0, DATAOUT_RAM_TYPE));
    c->src = dla_addr(dla_reg(d, NVDLA_RBK_D_DAIN_ADDR_HIGH_0, g),
                      (uint32_t)atom_bytes(dla_reg(d, NVDLA_RBK_D_DAIN_ADDR_LOW_0, g)));
    c->dst = dla_addr(dla_reg(d, NVDLA_RBK_D_DAOUT_ADDR_HIGH_0, g),
                      (uint32_t)atom_bytes(dla_reg(d, NVDLA_RBK_D_DAOUT_ADDR_LOW_0, g)));
    c->in_line = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAIN_LINE_STRIDE_0, g));
    c->in_surf = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAIN_SURF_STRIDE_0, g));
    c->in_planar = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAIN_PLANAR_STRIDE_0, g));
    c->cube_stride = atom_bytes(dla_reg(d, NVDLA_RBK_D_CONTRACT_STRIDE_0_0, g));
    c->out_line = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAOUT_LINE_STRIDE_0, g));
    c->out_surf = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAOUT_SURF_STRIDE_0, g));
    c->out_planar = atom_bytes(dla_reg(d, NVDLA_RBK_D_DAOUT_PLANAR_STRIDE_0, g));
}

static int decode(struct dla_dev *d, unsigned g, struct rbk_cfg *c)
{
    uint32_t mode = DLA_REG_FIELD(d, g, NVDLA_RBK_D_MISC_CFG_0, RUBIK_MODE);
    uint32_t prec = DLA_REG_FIELD(d, g, NVDLA_RBK_D_MISC_CFG_0, IN_PRECISION);

    if (mode > NVDLA_RBK_D_MISC_CFG_0_RUBIK_MODE_MERGE) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "RUBIK: D_MISC_CFG_0.RUBIK_MODE=%u is reserved (0 CONTRACT, 1 SPLIT, "
                         "2 MERGE)", mode);
    }
    if (prec > NVDLA_RBK_D_MISC_CFG_0_IN_PRECISION_FP16) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "RUBIK: D_MISC_CFG_0.IN_PRECISION=%u is reserved (0 INT8, 1 INT16, "
                         "2 FP16)", prec);
    }
    c->mode = (enum rbk_mode)mode;
    /* seq_gen.v: m_byte_data = (IN_PRECISION == 0); anything else moves 16 bits */
    c->bpe = prec == NVDLA_RBK_D_MISC_CFG_0_IN_PRECISION_INT8 ? 1u : 2u;
    c->epa = RBK_ATOM / c->bpe;
    decode_geometry(d, g, c);
    decode_memory(d, g, c);
    return 0;
}

static int validate(struct dla_dev *d, const struct rbk_cfg *c)
{
    if (c->mode == RBK_CONTRACT) {
        /* seq_gen.v contract_wr_size = inwidth_mul_dx[12:0] when sx <= 8 */
        if (c->sx <= 8u && c->width * c->sx > RBK_MAX_DMA_ATOMS) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "RUBIK: contract output line of D_DATAIN_SIZE_0_0.DATAIN_WIDTH+1=%u "
                             "x D_DECONV_STRIDE_0.DECONV_X_STRIDE+1=%u atoms exceeds the %u-atom "
                             "DMA request of the RTL",
                             c->width, c->sx, RBK_MAX_DMA_ATOMS);
        }
        return 0;
    }
    /* seq_gen.v: reads count ceil(DATAIN_CHANNEL+1 / M) surfaces, writes
     * ceil(DATAOUT_CHANNEL+1 / M) */
    if (div_up(c->cin, c->epa) != div_up(c->cout, c->epa)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "RUBIK: %s with D_DATAIN_SIZE_1_0.DATAIN_CHANNEL+1=%u (%u surfaces) but "
                         "D_DATAOUT_SIZE_1_0.DATAOUT_CHANNEL+1=%u (%u surfaces): the read and "
                         "write sequences would disagree",
                         c->mode == RBK_SPLIT ? "split" : "merge", c->cin,
                         div_up(c->cin, c->epa), c->cout, div_up(c->cout, c->epa));
    }
    return 0;
}

/* ---- work and extents ------------------------------------------------------- */

/* The cubes the layer's DMA reads and writes, strides included (the loops of
 * run_contract / run_split / run_merge below). */
static void rbk_extents(const struct rbk_cfg *c, struct dla_strided *rd, struct dla_strided *wr)
{
    uint64_t line = (uint64_t)c->width * RBK_ATOM;
    uint64_t plane = (uint64_t)div_up(c->width * c->bpe, RBK_ATOM) * RBK_ATOM;
    memset(rd, 0, sizeof(*rd));
    memset(wr, 0, sizeof(*wr));
    rd->port = c->in_port;
    rd->base = c->src;
    rd->line_stride = c->in_line;
    rd->lines = c->height;
    rd->batches = 1;
    wr->port = c->out_port;
    wr->base = c->dst;
    wr->line_stride = c->out_line;
    wr->batches = 1;
    switch (c->mode) {
    case RBK_CONTRACT:
        /* sx * sy input sub-cubes CONTRACT_STRIDE_0 apart; output lines of
         * W * sx atoms, H * sy of them per surface */
        rd->line_bytes = line;
        rd->surfaces = div_up(c->cout, c->epa);
        rd->surf_stride = c->in_surf;
        rd->batches = (uint64_t)c->sx * c->sy;
        rd->batch_stride = c->cube_stride;
        wr->line_bytes = line * c->sx;
        wr->lines = (uint64_t)c->height * c->sy;
        wr->surfaces = rd->surfaces;
        wr->surf_stride = c->out_surf;
        break;
    case RBK_SPLIT:
        rd->line_bytes = line;
        rd->surfaces = div_up(c->cin, c->epa);
        rd->surf_stride = c->in_surf;
        wr->line_bytes = plane;
        wr->lines = c->height;
        wr->surfaces = c->cin;
        wr->surf_stride = c->out_planar;
        break;
    case RBK_MERGE:
    default:
        rd->line_bytes = plane;
        rd->surfaces = c->cin;
        rd->surf_stride = c->in_planar;
        wr->line_bytes = line;
        wr->lines = c->height;
        wr->surfaces = div_up(c->cin, c->epa);
        wr->surf_stride = c->out_surf;
        break;
    }
}

/* Work (bytes moved; RUBIK computes nothing) and address extents, checked
 * before the first byte moves. */
static int check_work(struct dla_dev *d, const struct rbk_cfg *c)
{
    struct dla_strided rd, wr;
    struct dla_work w;
    rbk_extents(c, &rd, &wr);
    dla_work_init(&w, "RUBIK");
    dla_work_read(&w, &rd);
    dla_work_write(&w, &wr);
    int rc = dla_work_check(d, &w);
    if (!rc) {
        rc = dla_strided_check(d, "RUBIK", "input cube", 0, &rd);
    }
    if (!rc) {
        rc = dla_strided_check(d, "RUBIK", "output cube", 1, &wr);
    }
    return rc;
}

/* ---- contract ---------------------------------------------------------------- */

/* One output line (s, h * sy + dy): sx input lines interleaved atom by atom. */
static int contract_line(struct dla_dev *d, const struct rbk_cfg *c, uint32_t s, uint32_t h,
                         uint32_t dy, uint8_t *in, uint8_t *out)
{
    size_t in_bytes = (size_t)c->width * RBK_ATOM;
    for (uint32_t dx = 0; dx < c->sx; dx++) {
        uint64_t k = (uint64_t)dy * c->sx + dx;
        uint64_t addr = c->src + k * c->cube_stride + s * c->in_surf + h * c->in_line;
        int rc = dla_dma_read(d, c->in_port, addr, in, in_bytes);
        if (rc) {
            return rc;
        }
        for (uint32_t w = 0; w < c->width; w++) {
            memcpy(out + ((size_t)w * c->sx + dx) * RBK_ATOM, in + (size_t)w * RBK_ATOM,
                   RBK_ATOM);
        }
    }
    uint64_t line = (uint64_t)h * c->sy + dy;
    uint64_t addr = c->dst + s * c->out_surf + line * c->out_line;
    return dla_dma_write(d, c->out_port, addr, out, (size_t)c->width * c->sx * RBK_ATOM);
}

static int run_contract(struct dla_dev *d, const struct rbk_cfg *c)
{
    uint32_t surfaces = div_up(c->cout, c->epa);
    uint8_t *in = malloc((size_t)c->width * RBK_ATOM);
    uint8_t *out = malloc((size_t)c->width * c->sx * RBK_ATOM);
    int rc = 0;
    if (!in || !out) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "RUBIK: no memory for a contract line");
    }
    for (uint32_t s = 0; !rc && s < surfaces; s++) {
        for (uint32_t h = 0; !rc && h < c->height; h++) {
            for (uint32_t dy = 0; !rc && dy < c->sy; dy++) {
                rc = contract_line(d, c, s, h, dy, in, out);
            }
        }
    }
    free(in);
    free(out);
    return rc;
}

/* ---- split ------------------------------------------------------------------- */

/* Lane p of every atom of a feature line -> one plane line (zero padded). */
static void gather_plane(const struct rbk_cfg *c, const uint8_t *in, uint32_t p, uint8_t *plane,
                         size_t plane_bytes)
{
    memset(plane, 0, plane_bytes);
    if (c->bpe == 1u) {
        for (uint32_t x = 0; x < c->width; x++) {
            plane[x] = in[(size_t)x * RBK_ATOM + p];
        }
    } else {
        for (uint32_t x = 0; x < c->width; x++) {
            memcpy(plane + (size_t)x * 2u, in + (size_t)x * RBK_ATOM + (size_t)p * 2u, 2u);
        }
    }
}

static int run_split(struct dla_dev *d, const struct rbk_cfg *c)
{
    uint32_t surfaces = div_up(c->cin, c->epa);
    size_t in_bytes = (size_t)c->width * RBK_ATOM;
    size_t plane_bytes = (size_t)div_up(c->width * c->bpe, RBK_ATOM) * RBK_ATOM;
    uint8_t *in = malloc(in_bytes);
    uint8_t *plane = malloc(plane_bytes);
    int rc = 0;
    if (!in || !plane) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "RUBIK: no memory for a split line");
    }
    for (uint32_t s = 0; !rc && s < surfaces; s++) {
        uint32_t planes = c->cin - s * c->epa < c->epa ? c->cin - s * c->epa : c->epa;
        for (uint32_t h = 0; !rc && h < c->height; h++) {
            rc = dla_dma_read(d, c->in_port, c->src + s * c->in_surf + h * c->in_line, in,
                              in_bytes);
            for (uint32_t p = 0; !rc && p < planes; p++) {
                uint64_t ch = (uint64_t)s * c->epa + p;
                gather_plane(c, in, p, plane, plane_bytes);
                rc = dla_dma_write(d, c->out_port, c->dst + ch * c->out_planar + h * c->out_line,
                                   plane, plane_bytes);
            }
        }
    }
    free(in);
    free(plane);
    return rc;
}

/* ---- merge ------------------------------------------------------------------- */

/* One plane line -> lane p of every atom of a feature line. */
static void scatter_plane(const struct rbk_cfg *c, const uint8_t *plane, uint32_t p, uint8_t *out)
{
    if (c->bpe == 1u) {
        for (uint32_t x = 0; x < c->width; x++) {
            out[(size_t)x * RBK_ATOM + p] = plane[x];
        }
    } else {
        for (uint32_t x = 0; x < c->width; x++) {
            memcpy(out + (size_t)x * RBK_ATOM + (size_t)p * 2u, plane + (size_t)x * 2u, 2u);
        }
    }
}

static int run_merge(struct dla_dev *d, const struct rbk_cfg *c)
{
    uint32_t surfaces = div_up(c->cin, c->epa);
    size_t out_bytes = (size_t)c->width * RBK_ATOM;
    size_t plane_bytes = (size_t)div_up(c->width * c->bpe, RBK_ATOM) * RBK_ATOM;
    uint8_t *out = malloc(out_bytes);
    uint8_t *plane = malloc(plane_bytes);
    int rc = 0;
    if (!out || !plane) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "RUBIK: no memory for a merge line");
    }
    for (uint32_t s = 0; !rc && s < surfaces; s++) {
        uint32_t planes = c->cin - s * c->epa < c->epa ? c->cin - s * c->epa : c->epa;
        for (uint32_t h = 0; !rc && h < c->height; h++) {
            memset(out, 0, out_bytes); /* rf_ctrl merge_byte_mask: lanes >= C are 0 */
            for (uint32_t p = 0; !rc && p < planes; p++) {
                uint64_t ch = (uint64_t)s * c->epa + p;
                rc = dla_dma_read(d, c->in_port, c->src + ch * c->in_planar + h * c->in_line,
                                  plane, plane_bytes);
                if (!rc) {
                    scatter_plane(c, plane, p, out);
                }
            }
            if (!rc) {
                rc = dla_dma_write(d, c->out_port, c->dst + s * c->out_surf + h * c->out_line,
                                   out, out_bytes);
            }
        }
    }
    free(out);
    free(plane);
    return rc;
}

/* ---- entry point ------------------------------------------------------------- */

int dla_rubik_execute(struct dla_dev *d, unsigned group)
{
    struct rbk_cfg c;
    memset(&c, 0, sizeof(c));
    int rc = decode(d, group, &c);
    if (!rc) {
        rc = validate(d, &c);
    }
    if (!rc) {
        rc = check_work(d, &c);
    }
    if (rc) {
        return rc;
    }
    dla_log(d, DLASIM_LOG_EXEC, "RUBIK: group %u mode %u, %ux%u, C %u->%u, %u-byte elements",
            group, (unsigned)c.mode, c.width, c.height, c.cin, c.cout, c.bpe);
    switch (c.mode) {
    case RBK_CONTRACT:
        return run_contract(d, &c);
    case RBK_SPLIT:
        return run_split(d, &c);
    case RBK_MERGE:
    default:
        return run_merge(d, &c);
    }
}
