/*
 * The NVDLA unit table (units.h).  Facts: configuration enables from spec 004
 * (BDMA/RUBIK/PDP/CDP present flags, SECONDARY_MEMIF); LUT ports of SDP and
 * CDP (S_LUT_ACCESS_CFG/DATA).  The done bits each unit raises are the
 * register database's (regdb/nvdla.xml domain `done`).
 */
#include "sim/nvdla/units.h"

#include <string.h>

#include "dlasim/timing.h"

#include "sim/nvdla/dla.h"
#include "sim/core/regfile.h"

_Static_assert(NVDLA_UNIT_COUNT <= DLA_REGFILE_MAX_UNITS, "regfile unit table too small");

static int pdp_alone(struct dla_dev *d, unsigned group)
{
    return dla_pdp_execute(d, group, NULL); /* from memory: PDP_RDMA */
}

#define ENABLE(F) offsetof(struct dla_config, F)

/* (struct dla_unit_behaviour.rdma: unit 0 is no one's read DMA) */
#define NO_RDMA 0u

const struct dla_unit_behaviour dla_unit_table[NVDLA_UNIT_COUNT] = {
    [NVDLA_UNIT_CFGROM] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_GLB] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_MCIF] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CDMA] = {DLA_UNIT_ALWAYS, -1, "CONV", NULL, dla_cdma_summarize,
                         DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CSC] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, dla_csc_summarize,
                        DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CMAC_A] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CMAC_B] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CACC] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_SDP_RDMA] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_SDP, NO_RDMA},
    [NVDLA_UNIT_SDP] = {DLA_UNIT_ALWAYS, DLA_LUT_SDP, "SDP", NULL, dla_sdp_summarize,
                        DLASIM_TU_SDP, NVDLA_UNIT_SDP_RDMA},
    [NVDLA_UNIT_PDP_RDMA] = {ENABLE(pdp_enable), -1, NULL, NULL, NULL, DLASIM_TU_PDP, NO_RDMA},
    [NVDLA_UNIT_PDP] = {ENABLE(pdp_enable), -1, "PDP", pdp_alone, dla_pdp_summarize, DLASIM_TU_PDP,
                        NVDLA_UNIT_PDP_RDMA},
    [NVDLA_UNIT_CDP_RDMA] = {ENABLE(cdp_enable), -1, NULL, NULL, dla_cdp_summarize,
                             DLASIM_TU_CDP, NO_RDMA},
    [NVDLA_UNIT_CDP] = {ENABLE(cdp_enable), DLA_LUT_CDP, "CDP", dla_cdp_execute, NULL,
                        DLASIM_TU_CDP, NVDLA_UNIT_CDP_RDMA},
    [NVDLA_UNIT_GEC] = {DLA_UNIT_ALWAYS, -1, NULL, NULL, NULL, DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_CVIF] = {ENABLE(secondary_memif_enable), -1, NULL, NULL, NULL,
                         DLASIM_TU_CONV, NO_RDMA},
    [NVDLA_UNIT_BDMA] = {ENABLE(bdma_enable), -1, "BDMA", dla_bdma_execute, NULL,
                         DLASIM_TU_BDMA, NO_RDMA},
    [NVDLA_UNIT_RUBIK] = {ENABLE(rubik_enable), -1, "RUBIK", dla_rubik_execute, NULL,
                          DLASIM_TU_RUBIK, NO_RDMA},
};

#define PERF(UNIT, EN_REG, EN_FIELD, COUNTER, REG)                                                \
    {NVDLA_UNIT_##UNIT, NVDLA_##UNIT##_##EN_REG, NVDLA_##UNIT##_##EN_REG##_##EN_FIELD##__MASK,     \
     DLA_PERF_##COUNTER, NVDLA_##UNIT##_##REG}

/* The time-counting D_PERF_* registers (regdb/nvdla.xml; the bit-exact
 * counters, saturation and LUT hits, are the engines'). */
const struct dla_unit_perf dla_unit_perf[] = {
    PERF(CDMA, D_PERF_ENABLE_0, DMA_EN, DAT_READ_STALL, D_PERF_DAT_READ_STALL_0),
    PERF(CDMA, D_PERF_ENABLE_0, DMA_EN, WT_READ_STALL, D_PERF_WT_READ_STALL_0),
    PERF(CDMA, D_PERF_ENABLE_0, DMA_EN, DAT_READ_LATENCY, D_PERF_DAT_READ_LATENCY_0),
    PERF(CDMA, D_PERF_ENABLE_0, DMA_EN, WT_READ_LATENCY, D_PERF_WT_READ_LATENCY_0),
    PERF(SDP_RDMA, D_PERF_ENABLE_0, PERF_DMA_EN, READ_STALL, D_PERF_MRDMA_READ_STALL_0),
    PERF(SDP, D_PERF_ENABLE_0, PERF_DMA_EN, WRITE_STALL, D_PERF_WDMA_WRITE_STALL_0),
    PERF(PDP_RDMA, D_PERF_ENABLE_0, DMA_EN, READ_STALL, D_PERF_READ_STALL_0),
    PERF(PDP, D_PERF_ENABLE_0, DMA_EN, WRITE_STALL, D_PERF_WRITE_STALL_0),
    PERF(CDP_RDMA, D_PERF_ENABLE_0, DMA_EN, READ_STALL, D_PERF_READ_STALL_0),
    PERF(CDP, D_PERF_ENABLE_0, DMA_EN, WRITE_STALL, D_PERF_WRITE_STALL_0),
};
const size_t dla_unit_perf_count = sizeof(dla_unit_perf) / sizeof(dla_unit_perf[0]);

int dla_unit_present(const struct dla_config *cfg, unsigned u)
{
    if (u >= NVDLA_UNIT_COUNT) {
        return 0;
    }
    size_t f = dla_unit_table[u].present_field;
    if (f == DLA_UNIT_ALWAYS) {
        return 1;
    }
    uint32_t v;
    memcpy(&v, (const char *)cfg + f, sizeof(v));
    return v != 0;
}

uint32_t dla_unit_done_bits(unsigned u, unsigned group)
{
    return u < NVDLA_UNIT_COUNT ? nvdla_units[u].done_bits[group ? 1 : 0] : 0; /* regdb/nvdla.xml */
}

/* ---- NVDLA's pointer semantics (spec 001 "Ping-pong Synchronization
 * Mechanism"): S_POINTER stores PRODUCER only (CONSUMER is read-only);
 * enabling moves nothing; completing a layer moves CONSUMER to the other
 * group; writes to a group whose OP_EN is set are dropped; GLB S_INTR_MASK
 * bits mask their interrupt. */

static void nvdla_pointer_write(struct dla_regfile *rf, struct dla_unit_state *us,
                                const struct nvdla_reg_desc *r, uint32_t v)
{
    DLA_UNIT_PTR(rf, us).producer = (uint8_t)(v & r->write_mask & 1u);
}

static void nvdla_completed(struct dla_regfile *rf, struct dla_unit_state *us)
{
    DLA_UNIT_PTR(rf, us).consumer ^= 1u;
}

const struct dla_pointer_ops dla_nvdla_pointer_ops = {
    .pointer_write = nvdla_pointer_write,
    .enabled = NULL,
    .completed = nvdla_completed,
    .drop_writes_when_enabled = 1,
    .device_write = dla_nvdla_reg_write, /* LUT ports, ConfigROM: lut_port.c */
    .device_read = dla_nvdla_reg_read,
    .device_reset = dla_nvdla_reg_reset,
};

int dla_regfile_init_nvdla(struct dla_regfile *rf, struct dla_nvdla_regs *x,
                           const struct dla_config *cfg)
{
    int rc = dla_regfile_init(rf, &nvdla_db, &dla_nvdla_pointer_ops);
    if (rc) {
        return rc;
    }
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        rf->unit[u].present = (uint8_t)dla_unit_present(cfg, u);
    }
    memset(x, 0, sizeof(*x));
    dla_cfgrom_build(cfg, x->rom);
    rf->owner = x;
    return 0;
}
