/*
 * Internal interface between the device core (device.c, regfile.c, mem.c,
 * glb.c) and the engines (sdp.c, pdp.c, cdp.c, cdma.c/csc.c/cmac.c/cacc.c,
 * bdma.c, rubik.c).
 *
 * Engines never decode CSB offsets or touch the register file directly: they
 * read the values of the group they execute with dla_reg() (inline), or a
 * unit's values as one array with dla_unit_values() (the per-operation
 * decodes of SDP, CDMA and CSC), and pull fields out with DLA_FIELD() and the
 * generated __SHIFT/__MASK macros, once per layer.
 * They move data only through dla_dma_read()/dla_dma_write() in bursts (a
 * line, a surface or a whole cube), never per element.
 */
#ifndef DLASIM_SIM_DLA_H
#define DLASIM_SIM_DLA_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"
#include "plan/config.h"
#include "sim/core/regfile.h"
#include "sim/nvdla/nvdla_regs.h"
#include "timing/summary.h"

struct dla_dev;

/* ---- registers ---------------------------------------------------------- */

/* The groups the layer being executed reads, by unit: its units' groups
 * and every other unit's CONSUMER when it was claimed (device.c: a layer
 * started before the one ahead of it completed reads the groups the
 * completion moves to, while the registers still show the old ones). */
const uint8_t *dla_dev_exec_group(const struct dla_dev *d)
#if defined(__GNUC__)
    __attribute__((const))
#endif
    ;

/* The device's register file.  Declared const (the result is &d->rf: no
 * memory is read), so a decode's many dla_reg() calls share one call and
 * each register read is a few loads inline (a decode reads ~100 of them;
 * MobileNetV2 runs ~1,900 decodes an image). */
const struct dla_regfile *dla_dev_rf(const struct dla_dev *d)
#if defined(__GNUC__)
    __attribute__((const))
#endif
    ;

/* Stored value of the register at CSB byte address `addr` (a generated
 * NVDLA_<UNIT>_<REG>_0 constant).  For dual (ping-pong) registers `group`
 * selects the copy; single registers ignore it. */
static inline uint32_t dla_reg(const struct dla_dev *d, uint32_t addr, unsigned group)
{
    return dla_regfile_get(dla_dev_rf(d), addr, group);
}

/* The same register file for the hardware's own stores (const as above). */
struct dla_regfile *dla_dev_rf_hw(struct dla_dev *d)
#if defined(__GNUC__)
    __attribute__((const))
#endif
    ;

/* Unit u's registers as the datapath of `group` reads them, as one array
 * (dla_regfile_unit_values): out[DLA_REG_WORD(NVDLA_<UNIT>_<REG>_0)] is
 * what dla_reg returns, for the unit's first n words. */
static inline void dla_unit_values(const struct dla_dev *d, enum nvdla_unit u, unsigned group,
                                   uint32_t *out, unsigned n)
{
    dla_regfile_unit_values(dla_dev_rf(d), (unsigned)u, group, out, n);
}
/* A register's word in its unit's window (a unit is the CSB address >> 12,
 * src/regs/gen/nvdla_regs.h). */
#define DLA_REG_WORD(addr) (((addr) & 0xfffu) >> 2)
/* The register at addr in such an array `arr` (an array, not a pointer):
 * a register beyond the array is refused at compile time. */
#define DLA_REG_AT(arr, addr)                                                                 \
    ((arr)[DLA_REG_WORD(addr) +                                                               \
           0u * sizeof(char[DLA_REG_WORD(addr) < sizeof(arr) / sizeof((arr)[0]) ? 1 : -1])])

/* Hardware-side update of a register (status, perf counters): bypasses the
 * software access rules. */
static inline void dla_reg_hw_set(struct dla_dev *d, uint32_t addr, unsigned group, uint32_t v)
{
    dla_regfile_hw_set(dla_dev_rf_hw(d), addr, group, v);
}

/* CONSUMER group of a unit: the group its datapath executes.  Linked units
 * (an RDMA and its engine) keep their own pointers, so an engine reads its
 * RDMA's registers from the RDMA's consumer group.  For the engines of the
 * layer being executed (dla_dev_exec_group). */
static inline unsigned dla_consumer(const struct dla_dev *d, enum nvdla_unit u)
{
    return dla_dev_exec_group(d)[u];
}

/* Field value from a register value: DLA_FIELD(v, NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH). */
#define DLA_FIELD(v, F) (((uint32_t)(v) & F##__MASK) >> F##__SHIFT)
/* Register + field in one step for the group being executed. */
#define DLA_REG_FIELD(d, grp, REG, FIELD) DLA_FIELD(dla_reg((d), REG, (grp)), REG##_##FIELD)

/* Sign-extend the low `bits` bits of v. */
static inline int32_t dla_sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    v &= (bits >= 32) ? 0xffffffffu : ((1u << bits) - 1u);
    return (int32_t)((v ^ m) - m);
}

/* The configuration (scalability parameters) the device was built with. */
const struct dla_config *dla_cfg(const struct dla_dev *d);

/* ---- memory ------------------------------------------------------------- */

/* DMA through the device's memory interface.  `port` is DLASIM_PORT_DBB or
 * DLASIM_PORT_CVIF (from the unit's *_RAM_TYPE field: 0 = CV/SRAM, 1 = MC/DBB
 * in NVDLA's encoding — use dla_ram_port() to translate).  On failure the
 * error message names the unit currently executing, the address and the
 * layer, and a negative status is returned: the engine stops its work and
 * returns that status (the device still completes the layer as hardware
 * would, so the driver sees the interrupt). */
int dla_dma_read(struct dla_dev *d, int port, uint64_t addr, void *dst, size_t len);
/* 1 when dla_dma_read() of that range cannot fail (so an engine may read
 * ahead in one burst what it would otherwise read line by line, with the
 * same bytes and the same traffic), else 0; no side effects. */
int dla_dma_can_read(const struct dla_dev *d, int port, uint64_t addr, size_t len);
/* The memory's write generation on `port` (0: not tracked) and whether no
 * write reached [addr, addr+len) since generation `since` (src/sim/core/mem.h
 * dla_mem_port_unchanged): a cache keyed by a range's bytes may then skip
 * comparing them. */
uint64_t dla_dma_generation(const struct dla_dev *d, int port);
int dla_dma_unchanged(const struct dla_dev *d, int port, uint64_t addr, size_t len,
                      uint64_t since);
/* A read in two halves, for a unit that may never need the bytes it reads
 * (CDMA's weight stream when CSC finds its kernels already packed): the
 * traffic of a read of `len` bytes now (dla_dma_count_read; only where
 * dla_dma_can_read said the read cannot fail), and the bytes later if
 * needed (dla_dma_peek: a read without traffic; the caller makes sure no
 * write can have reached the range in between). */
void dla_dma_count_read(struct dla_dev *d, size_t len);
/* A read of [addr, addr+len) that leaves the bytes in place: their address
 * in the memory and the read's traffic (as dla_dma_read), or NULL and no
 * traffic where the memory cannot lend them (dla_mem_port_view); then the
 * caller reads them.  Valid until the next memory write. */
const uint8_t *dla_dma_view(struct dla_dev *d, int port, uint64_t addr, size_t len);
int dla_dma_peek(struct dla_dev *d, int port, uint64_t addr, void *dst, size_t len);
/* dla_dma_view without the traffic (dla_mem_port_view): for a read of
 * several lent ranges, counted once all are had (dla_dma_count_read). */
const uint8_t *dla_dma_lend(const struct dla_dev *d, int port, uint64_t addr, size_t len);
/* dla_dma_lend over pages that follow each other in the host's memory
 * (mem.h dla_mem_port_view_span), else NULL. */
const uint8_t *dla_dma_lend_span(const struct dla_dev *d, int port, uint64_t addr, size_t len);
/* A write of [addr, addr+len) made in place: dla_dma_write_view gives the
 * bytes' address in the memory where the write could neither fail nor
 * allocate (dla_mem_port_write_view; no side effects), else NULL (then
 * dla_dma_write); the caller fills every byte there and calls
 * dla_dma_wrote: the write's generation stamp and traffic. */
uint8_t *dla_dma_write_view(const struct dla_dev *d, int port, uint64_t addr, size_t len);
void dla_dma_wrote(struct dla_dev *d, int port, uint64_t addr, size_t len);
int dla_dma_write(struct dla_dev *d, int port, uint64_t addr, const void *src, size_t len);

/* `rows` lines of `line_bytes` bytes, `stride` apart from `base`, to or from
 * a packed host buffer: one burst when the lines are contiguous, one per line
 * otherwise.  Each line address is ANDed with `wrap_mask` (UINT64_MAX for
 * engines that refuse addresses beyond the address width; SDP wraps them as
 * its RTL truncates addresses). */
int dla_dma_read_lines(struct dla_dev *d, int port, uint64_t wrap_mask, uint64_t base,
                       uint64_t stride, uint32_t rows, size_t line_bytes, void *dst);
int dla_dma_write_lines(struct dla_dev *d, int port, uint64_t wrap_mask, uint64_t base,
                        uint64_t stride, uint32_t rows, size_t line_bytes, const void *src);

/* NVDLA *_RAM_TYPE / *_RAM_CFG encoding: 0 = CVIF, 1 = MCIF (DBB). */
static inline int dla_ram_port(uint32_t ram_type)
{
    return ram_type ? DLASIM_PORT_DBB : DLASIM_PORT_CVIF;
}

/* 64-bit address from a HIGH/LOW register pair. */
static inline uint64_t dla_addr(uint32_t high, uint32_t low)
{
    return ((uint64_t)high << 32) | low;
}

/* ---- errors and logging -------------------------------------------------- */

/* Record an error for the layer being executed: `status` is returned so
 * engines can write `return dla_error(d, DLASIM_ERR_PROG, "...", ...)`.
 * Messages name the unit and register, e.g.
 * "PDP: D_POOLING_KERNEL_CFG_0.KERNEL_WIDTH=9 exceeds the maximum 8". */
int dla_error(struct dla_dev *d, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The layer running never completes on the hardware (an engine's model of a
 * programming the RTL hangs on): `units` (bit per NVDLA_UNIT_*) stay enabled
 * with no done interrupt, and layers using them are not started again until
 * reset; the layer's other units complete.  `fmt` says why (the trace player
 * and the runtime report it as the reason the wait can never complete). */
void dla_stall(struct dla_dev *d, uint32_t units, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Log (only if the category is enabled for this device). */
void dla_log(struct dla_dev *d, unsigned category, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- engine-owned RAMs ---------------------------------------------------- */

const struct dla_lut_ram *dla_lut(const struct dla_dev *d, enum dla_lut_id id);

/* ---- on-the-fly data between engines -------------------------------------- */

/*
 * A feature cube streamed between engines without memory: CACC -> SDP
 * (SDP flying mode) and SDP -> PDP (PDP on-the-fly), with n batches
 * (D_BATCH_NUMBER + 1; 1 where the configuration has no batch).  Element
 * (b, c, y, x) is data[(((size_t)b * c_count + c) * h + y) * w + x]: each
 * batch is one planar cube.  The producer allocates with dla_cube_alloc();
 * the device frees it after the consumer ran.
 */
struct dla_cube {
    uint32_t w, h, c, n;
    int32_t *data;
    int borrowed; /* data is the producer's reused buffer: dla_cube_free leaves it */
    /* non-NULL: CACC's values are not computed yet; the consumer (SDP)
     * takes them in bands of output rows or whole (dla_conv_band_*) */
    struct dla_conv_band *band;
    /* non-NULL (data NULL): SDP's int8 output to PDP as the bytes SDP would
     * write to memory, c / atom_lanes surfaces of h lines of w atoms of
     * atom_lanes bytes; element (c, y, x) is the sign-extended byte
     * atoms[((c / atom_lanes * h + y) * w + x) * atom_lanes + c % atom_lanes]
     * (one batch).  dla_cube_alloc_atoms; dla_cube_planes makes data. */
    int8_t *atoms;
    uint32_t atom_lanes;
    int atoms_borrowed; /* atoms is the device's kept buffer: dla_cube_free leaves it */
};
int dla_cube_alloc(struct dla_cube *cube, uint32_t w, uint32_t h, uint32_t c, uint32_t n);
/* A one-batch cube of int8 atoms (c a multiple of lanes), in *buf (grown
 * to fit, kept by the caller across layers: no allocation a layer) or, with
 * buf NULL, in memory of its own. */
int dla_cube_alloc_atoms(struct dla_cube *cube, uint32_t w, uint32_t h, uint32_t c,
                         uint32_t lanes, int8_t **buf, size_t *cap);
/* The planar int32 data of an atoms cube (made once; kept until
 * dla_cube_free): 0 or DLASIM_ERR_NOMEM. */
int dla_cube_planes(struct dla_cube *cube);
/* Elements of one batch. */
static inline size_t dla_cube_batch_elems(const struct dla_cube *cube)
{
    return (size_t)cube->w * cube->h * cube->c;
}
void dla_cube_free(struct dla_cube *cube);

/* ---- engine state that persists across layers --------------------------- */

/* Convolution pipeline state (CBUF contents and bank ownership, weights kept
 * for weight_reuse, ...), defined by the conv engine (src/sim/nvdla/cbuf.h).  The
 * device creates it with the device, resets it on dlasim_reset() (CBUF empty,
 * CDMA flush status done) and destroys it with the device. */
struct dla_conv_state;
int dla_conv_state_create(struct dla_dev *d, struct dla_conv_state **out);
void dla_conv_state_destroy(struct dla_conv_state *s);
void dla_conv_reset(struct dla_dev *d);
struct dla_conv_state *dla_dev_conv_state(struct dla_dev *d);

/*
 * BDMA transfer queue (src/sim/nvdla/bdma.c).  BDMA is not ping-pong: it has no
 * D_OP_ENABLE.  Writing CFG_OP_0.EN=1 queues the transfer the CFG_* registers
 * describe; CFG_LAUNCH0/1 hand the transfers queued since the previous launch
 * to the engine as group 0/1, and the device runs each launched group as one
 * layer (LAYER_BDMA).  The device creates the state with the device, resets
 * it on dlasim_reset() and destroys it with the device.
 * ref: vmod/nvdla/bdma/NV_NVDLA_BDMA_csb.v (csb_fifo, gather/launch counts).
 */
struct dla_bdma_state;
int dla_bdma_state_create(struct dla_dev *d, struct dla_bdma_state **out);
void dla_bdma_state_destroy(struct dla_bdma_state *s);
void dla_bdma_reset(struct dla_dev *d);
struct dla_bdma_state *dla_dev_bdma_state(struct dla_dev *d);
const struct dla_bdma_state *dla_dev_bdma_state_const(const struct dla_dev *d);
/* A CSB write to BDMA register `addr` was stored: CFG_OP / CFG_LAUNCH act. */
void dla_bdma_csb_written(struct dla_dev *d, uint32_t addr, uint32_t v);
/* Group (0/1) of the oldest launched group of transfers not yet run, or -1. */
int dla_bdma_runnable(const struct dla_dev *d);
/* The group dla_bdma_execute() ran is done (whatever its outcome): retire its
 * transfers and update STATUS_0.  The device then raises BDMA_DONE_STATUS<g>. */
void dla_bdma_complete(struct dla_dev *d);

/* Worker threads an engine may use for a large layer (>= 1). */
unsigned dla_threads(const struct dla_dev *d);
/* The device's worker team (src/common/team.h), started on first use;
 * NULL with one thread (dla_team_run then runs on the caller). */
struct dla_team *dla_dev_team(struct dla_dev *d);

/* Refuse a layer whose work exceeds the caller's limit
 * (dlasim_options.max_layer_work); returns 0 or DLASIM_ERR_UNSUPPORTED.
 * `work` counts as operations only: engines count the bytes their DMA moves
 * too, with struct dla_work (sim/budget.h). */
int dla_check_work(struct dla_dev *d, const char *unit, uint64_t work);
/* The layer's work (struct dla_work, src/sim/core/budget.h) and a cube's
 * extent checked by the device core's rules (dla_exec_work_check,
 * dla_exec_extent_check) for the layer being executed. */
struct dla_work;
struct dla_strided;
int dla_work_check(struct dla_dev *d, const struct dla_work *w);
int dla_strided_check(struct dla_dev *d, const char *unit, const char *what, int is_write,
                      const struct dla_strided *s);


/* ---- engines ---------------------------------------------------------------- */

/*
 * Each engine computes the whole layer programmed in register group `group`
 * of its units and returns 0 or a negative status.  The device core owns
 * everything else: it decides when all units of a pipeline are enabled, calls
 * the engines in dataflow order, then completes the layer (clears OP_EN,
 * flips CONSUMER, raises the GLB done bits, updates the IRQ line).
 */

/* CDMA+CSC+CMAC+CACC: direct/image convolution.  Output goes to `to_sdp`
 * (allocated by the engine): CACC's output, always flying into SDP. */
int dla_conv_execute(struct dla_dev *d, unsigned group, struct dla_cube *to_sdp);
/*
 * A convolution whose CACC output goes to SDP may leave its values to be
 * computed when SDP takes them (csc.c): in bands of output rows, each
 * computed, delivered by CACC and post-processed while in cache, over the
 * device's team.  dla_conv_band_rows: rows [y0, y1) of the output into out
 * as planar [k][y1 - y0][w] values CACC delivers (thread-safe, no device
 * calls; 0 or a DLASIM_ERR_*).  dla_conv_band_whole: every row into the
 * cube's data.  dla_conv_band_end: the layer's end (CBUF releases, as on
 * the whole-layer path, where they precede SDP), once, whatever the
 * consumer did; returns rc, the consumer's status.
 */
int dla_conv_band_rows(const struct dla_conv_band *b, uint32_t y0, uint32_t y1, int32_t *out);
int dla_conv_band_whole(struct dla_dev *d, const struct dla_cube *cube);
int dla_conv_band_end(const struct dla_cube *cube, int rc);
/* Output rows a band, as the convolution planned them (the last may have fewer). */
uint32_t dla_conv_band_height(const struct dla_conv_band *b);
/* SDP (with SDP_RDMA): `in` is the flying input from CACC, or NULL when SDP
 * reads its input from memory.  When the SDP output goes to PDP
 * (D_FEATURE_MODE_CFG.OUTPUT_DST), `to_pdp` receives it instead of memory. */
/* SDP's set-up of the layer in `group` made ahead (sdp.c struct
 * dla_sdp_prep: a convolution job's prologue), and dropped if that layer's
 * dla_sdp_execute did not take it. */
void dla_sdp_prepare(struct dla_dev *d, unsigned group);
void dla_sdp_prepared_drop(struct dla_dev *d);
int dla_sdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in,
                    struct dla_cube *to_pdp);
/* Does this SDP layer need SDP_RDMA (memory input or any operand from memory)? */
int dla_sdp_needs_rdma(const struct dla_dev *d, unsigned group);
/* Does this SDP layer send its output to PDP (on the fly)? */
int dla_sdp_output_to_pdp(const struct dla_dev *d, unsigned group);
/* Does this SDP layer take its input from CACC (flying mode)? */
int dla_sdp_flying(const struct dla_dev *d, unsigned group);
/* Whether that layer's output writes nothing of [lo, hi) on memory port
 * `port` (sdp.c), so its convolution may read its input there in place. */
int dla_sdp_writes_apart(const struct dla_dev *d, unsigned group, int port, uint64_t lo,
                         uint64_t hi);
/* PDP (with PDP_RDMA unless on the fly): `in` is the flying input from SDP or NULL. */
int dla_pdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in);
int dla_pdp_flying(const struct dla_dev *d, unsigned group);
/* CDP with CDP_RDMA. */
int dla_cdp_execute(struct dla_dev *d, unsigned group);
/* BDMA and RUBIK (configurations that have them).  For BDMA `group` is the
 * launch group of the oldest launched transfers (dla_bdma_runnable()). */
int dla_bdma_execute(struct dla_dev *d, unsigned group);
int dla_rubik_execute(struct dla_dev *d, unsigned group);

/* ---- summaries (src/timing/summary.h) ------------------------------------------ */

/* Each engine describes the layer it executes in group `group` once, in
 * numbers, next to its execute: the unit table (units.c) says which unit
 * fills which part of a struct dla_layer_summary, and the device hands the
 * summary to the cycle model.  Called only when timing is on. */
void dla_cdma_summarize(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);
void dla_csc_summarize(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);
void dla_sdp_summarize(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);
void dla_pdp_summarize(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);
/* `group` is CDP_RDMA's. */
void dla_cdp_summarize(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);

#endif
