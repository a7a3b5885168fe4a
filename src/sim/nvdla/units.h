/*
 * What each NVDLA unit does, as data (design note R15, "a per-unit table of
 * behaviour"): whether the configuration has it, its LUT port, the engine
 * that executes the layers it leads and the part of a layer summary it
 * fills.  The GLB done bits it raises are a register database fact
 * (nvdla_units[u].done_bits[group], regdb/nvdla.xml).
 * The register file, the scheduler and the interrupt logic read this table
 * instead of switching on unit names; a device built from the same parts
 * (src/sim/rk3588/rk_npu.c for the RK3588) keeps its own table of the same kind.
 */
#ifndef DLASIM_SIM_UNITS_H
#define DLASIM_SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "regs/gen/nvdla_regs.h"
#include "plan/config.h"
#include "timing/summary.h"

struct dla_dev;

#define DLA_UNIT_ALWAYS SIZE_MAX

struct dla_unit_behaviour {
    size_t present_field;  /* offsetof(struct dla_config, <unit>_enable), or DLA_UNIT_ALWAYS */
    int lut;               /* enum dla_lut_id of its LUT RAM port, -1 = none */
    const char *engine;    /* name of the layers it leads in messages, NULL = none */
    /* Executes a layer this unit leads alone (PDP, CDP, BDMA, RUBIK); NULL for
     * units that only take part in others' layers or whose layers are
     * composite (the convolution pipeline, the SDP chain: device.c). */
    int (*execute)(struct dla_dev *d, unsigned group);
    /* Fills its part of the layer's summary (src/timing/summary.h), or NULL. */
    void (*summarize)(const struct dla_dev *d, unsigned group, struct dla_layer_summary *s);
    /* The engine of the cycle model it belongs to (enum dlasim_timing_unit). */
    unsigned timing_unit;
    /* The read DMA unit whose registers its engine reads (SDP, PDP, CDP),
     * 0 for none (unit 0, CFGROM, is no one's read DMA). */
    unsigned rdma;
};

extern const struct dla_unit_behaviour dla_unit_table[NVDLA_UNIT_COUNT];

/* NVDLA's pointer semantics (spec 001), and the register file of a
 * configuration (units present, LUT ports, ConfigROM). */
struct dla_regfile;
struct dla_nvdla_regs;
extern const struct dla_pointer_ops dla_nvdla_pointer_ops;
/* x: the device's LUT RAMs and ConfigROM (nvdla_regs.h), the hooks' owner. */
int dla_regfile_init_nvdla(struct dla_regfile *rf, struct dla_nvdla_regs *x,
                           const struct dla_config *cfg);

/* A D_PERF_* register that counts time: unit, the perf enable that gates
 * it (as in RTL), and the cycle model's counter it receives. */
struct dla_unit_perf {
    unsigned unit;
    uint32_t enable_reg, enable_mask;
    enum dla_perf_counter counter;
    uint32_t reg;
};
extern const struct dla_unit_perf dla_unit_perf[];
extern const size_t dla_unit_perf_count;

/* Does configuration cfg have unit u? */
int dla_unit_present(const struct dla_config *cfg, unsigned u);
/* GLB done bits unit u raises when group `group` completes (0 if none). */
uint32_t dla_unit_done_bits(unsigned u, unsigned group);

#endif
