/*
 * The firmware-equivalent executor: internal interface between the
 * scheduler (firmware.c) and the per-engine programming files
 * (fw_conv.c fw_sdp.c fw_pdp.c fw_cdp.c fw_bdma.c fw_rubik.c).
 *
 * Mirrors the structure of NVIDIA's firmware (nvdla/sw kmd/firmware:
 * struct dla_processor / dla_processor_group in dla_engine_internal.h, the
 * scheduler in scheduler.c) with names of our own: `nvrt_` for the runtime.
 */
#ifndef NVRT_FW_H
#define NVRT_FW_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h" /* struct dlasim_reg_write */
#include "dlasim/runtime.h"
#include "driver/port.h"

struct nvrt_fw;
struct prep_rec;

/* One register group of a processor (ref: struct dla_processor_group). */
struct nvrt_group {
    uint8_t id;
    uint8_t rdma_id;
    uint8_t active;      /* enabled on the hardware, not yet completed */
    uint8_t pending;     /* op assigned, not yet programmed */
    uint8_t programming; /* inside program(): enables wait for its end */
    uint8_t is_rdma_needed;
    int16_t op;          /* operation index, -1 = free */
    int16_t lut_index;   /* LUT loaded into the (shared) LUT RAM by this group */
    uint32_t events;     /* 1 << enum dlasim_rt_event, from the interrupt */
};

/* Per-engine behaviour: a const ops table (ref: struct dla_processor). */
struct nvrt_engine {
    const char *name;
    uint8_t op_type;
    uint32_t pointer_reg;      /* S_POINTER (BDMA: STATUS) */
    uint32_t rdma_pointer_reg; /* RDMA S_POINTER, 0 = none */
    const char *enable_param;  /* scalability parameter saying the unit exists */
    void (*set_producer)(struct nvrt_fw *fw, int group, int rdma_group);
    void (*rdma_check)(struct nvrt_fw *fw, struct nvrt_group *g);
    int (*is_ready)(struct nvrt_fw *fw, const struct nvrt_group *g, const struct nvrt_group *other);
    int (*program)(struct nvrt_fw *fw, struct nvrt_group *g);
    /* descriptor checks that need no hardware access (NULL = none) */
    int (*validate)(struct nvrt_fw *fw, const struct nvrt_group *g);
    void (*enable)(struct nvrt_fw *fw, struct nvrt_group *g);
};

extern const struct nvrt_engine nvrt_conv_engine, nvrt_sdp_engine, nvrt_pdp_engine,
    nvrt_cdp_engine, nvrt_bdma_engine, nvrt_rubik_engine;

struct nvrt_processor {
    const struct nvrt_engine *eng;
    struct nvrt_group groups[2];
    uint8_t group_status; /* bit per group holding an op */
    uint8_t rdma_status;
    uint8_t last_group;
    int16_t tail_op;      /* last op assigned to a group */
    uint8_t present;      /* the configuration has this unit */
    uint8_t pointed_at;   /* 1 + group + 2 * RDMA group its S_POINTERs were set to in this run, 0 = not known */
};

struct nvrt_fw {
    const struct nvrt_port *port;
    const struct dlasim_rt_network *net;
    uint8_t *dep_count; /* per op, decremented by events */
    uint8_t *state;     /* per op: 0 new, 1 submitted, 2 completed */
    int counts_owned;   /* dep_count (and state after it) allocated for this run */
    struct nvrt_processor proc[DLASIM_RT_OP_NUM];
    uint32_t atom_size;   /* NVDLA_MEMORY_ATOMIC_SIZE */
    uint32_t data_types;  /* NVDLA_FEATURE_DATA_TYPE mask (INT8 0x10, INT16 0x20, FP16 0x100) */
    uint32_t intr_mask;   /* shadow of what was unmasked */
    uint16_t num_done;
    int rc;               /* first register access error (sticky) */
    char *err;
    size_t errlen;
    struct dlasim_rt_prepared *prep; /* prepared programming (fw_prep.c), NULL = none */
    struct nvrt_prep_op *rec;        /* the operation whose programming is being recorded */
    int rec_pause;                   /* > 0: inside a recorded compound (interrupt unmask) */
    /* Per processor and register group, for replays of the writes that
     * changed (fw_prep.c): the recording whose programming the group holds
     * in this run (NULL: not known), and per RDMA group the serial of the
     * recording that last wrote its registers (0: not known). */
    const struct prep_rec *held_rec[DLASIM_RT_OP_NUM][2];
    uint64_t rdma_held[DLASIM_RT_OP_NUM][2];
};

/* Register access: errors are kept in fw->rc and reported once. */
void nvrt_wr(struct nvrt_fw *fw, uint32_t addr, uint32_t val);
uint32_t nvrt_rd(struct nvrt_fw *fw, uint32_t addr);
/* n writes in order, as n nvrt_wr calls (recorded one by one while a
 * recording is under way); through the port's reg_write_n when it has one. */
void nvrt_wr_n(struct nvrt_fw *fw, const struct dlasim_reg_write *w, size_t n);
/* Record an error naming the operation and what is wrong; returns status. */
int nvrt_fail(struct nvrt_fw *fw, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Device address of a cube (address list entry + offset); checks the index. */
int nvrt_cube_address(struct nvrt_fw *fw, int16_t op, const char *what,
                      const struct dlasim_rt_cube *c, uint64_t *addr);
int nvrt_address(struct nvrt_fw *fw, int16_t op, const char *what, int16_t index,
                 uint64_t *addr);
/* Bytes a cube spans in memory (its size, or from its strides when 0). */
uint64_t nvrt_cube_bytes(const struct nvrt_fw *fw, const struct dlasim_rt_cube *c);
/* Tell the port which surfaces an operation reads and writes. */
void nvrt_mark_input(struct nvrt_fw *fw, uint64_t addr, const struct dlasim_rt_cube *c);
void nvrt_mark_output(struct nvrt_fw *fw, uint64_t addr, const struct dlasim_rt_cube *c);
/* Unmask GLB interrupt bits (ref: engine.c dla_enable_intr). */
void nvrt_enable_intr(struct nvrt_fw *fw, uint32_t mask);
/* The operation a group holds. */
const struct dlasim_rt_op *nvrt_op_of(const struct nvrt_fw *fw, const struct nvrt_group *g);
/* Checks of enumerations and precisions shared by engines. */
int nvrt_check_range(struct nvrt_fw *fw, const struct nvrt_group *g, const char *field,
                     long value, long lo, long hi);
int nvrt_check_precision(struct nvrt_fw *fw, const struct nvrt_group *g, const char *field,
                         uint8_t precision);
/* Program a LUT into SDP's or CDP's LUT RAM (ref: common.c update_lut). */
int nvrt_program_lut(struct nvrt_fw *fw, const struct nvrt_group *g, int is_sdp, int16_t index,
                     uint8_t precision);
/* LUT sharing rule of SDP and CDP (ref: sdp.c/cdp.c dla_*_is_ready). */
int nvrt_lut_is_ready(int16_t lut_index, const struct nvrt_group *other);

/* Prepared programming (fw_prep.c, issue 18): program g's operation from
 * fw->prep when its recording still applies, else through the engine's
 * program() while recording it.  The hooks below add to the recording. */
int nvrt_prep_program(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g);
void nvrt_prep_wrote(struct nvrt_fw *fw, uint32_t addr, uint32_t val);
void nvrt_prep_read(struct nvrt_fw *fw, uint32_t addr, uint32_t val);
void nvrt_prep_unmasked(struct nvrt_fw *fw, uint32_t mask);
void nvrt_prep_address(struct nvrt_fw *fw, int16_t index, uint64_t addr);
void nvrt_prep_lut(struct nvrt_fw *fw, int16_t index);
void nvrt_prep_marked(struct nvrt_fw *fw, int output, uint64_t addr, uint64_t bytes);
/* A hint: op's recordings will be looked at soon (prefetch, no effect). */
void nvrt_prep_prefetch(const struct nvrt_fw *fw, int16_t op);
/* A hint: op is programmed next; its recordings' first lines are fetched
 * (a read of the slots, prefetches of the recordings). */
void nvrt_prep_prefetch_rec(const struct nvrt_fw *fw, int16_t op);
/* 2 * n bytes kept in the prepared form for a run's per-operation
 * counters (NULL when out of host memory: the run allocates its own). */
uint8_t *nvrt_prep_counts(struct dlasim_rt_prepared *p, size_t n);
/* Tell the port an operation reads / writes [addr, addr + bytes). */
void nvrt_mark_range(struct nvrt_fw *fw, int output, uint64_t addr, uint64_t bytes);
/* nvrt_execute with a prepared form (NULL: none). */
int nvrt_execute_prepared(const struct nvrt_port *port, const struct dlasim_rt_network *net,
                          struct dlasim_rt_prepared *prep, char *err, size_t errlen);

/* Check a network against the port's configuration without touching the
 * device: engines present, precisions, modes (firmware.c). */
int nvrt_validate(const struct nvrt_port *port, const struct dlasim_rt_network *net, char *err,
                  size_t errlen);
/* Run a network on a port (firmware.c). */
int nvrt_execute(const struct nvrt_port *port, const struct dlasim_rt_network *net, char *err,
                 size_t errlen);

/* The network of one DLA task in device memory, as NVIDIA's KMD hands it to
 * its firmware (entry 0 of the address list: the network descriptor), read
 * in the layout of firmware interface 0.`minor` (10..12) and bounded by the
 * entries' sizes (runtime.c).  out->net points into out's buffers, released
 * by nvrt_task_network_free.  Messages start with `who` ("task",
 * "loadable"); 0 or a negative status. */
struct nvrt_task_network {
    struct dlasim_rt_network net;
    struct dlasim_rt_op *ops;
    struct dlasim_rt_lut *luts;
};
int nvrt_read_task_network(const struct nvrt_port *port, const struct dlasim_rt_task *task,
                           unsigned minor, const char *who, struct nvrt_task_network *out,
                           char *err, size_t errlen);
void nvrt_task_network_free(struct nvrt_task_network *n);

/* Run every submit of a loadable on a port (loadable.c). */
struct dlasim_loadable;
struct dlasim_loadable_input;
int nvrt_loadable_run_on(const struct nvrt_port *port, struct dlasim_loadable *ld,
                         const struct dlasim_loadable_input *inputs, unsigned n_inputs, char *err,
                         size_t errlen);

/* Run an EMU (CPU) task: addrs/sizes of its address list (emu.c). */
int nvrt_run_emu(const struct nvrt_port *port, const uint64_t *addrs, const uint64_t *sizes,
                 uint32_t n_addrs, char *err, size_t errlen);

#define NVRT_HI32(x) ((uint32_t)((uint64_t)(x) >> 32))
#define NVRT_LO32(x) ((uint32_t)(x))

#endif
