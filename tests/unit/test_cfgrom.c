/*
 * Unit tests of src/sim/nvdla/cfgrom.c.
 *
 * nv_small: the whole image word for word against the reset values of
 * hw_small spec/manual/NVDLA_CFGROM.rdl (each field's reset value placed at
 * its lsb: CIF BASE_BURST_LENGTH_MAX and BASE_MEM_ADDR_WIDTH are [31:5],
 * which the RTL ROM confirms with 0x80 and 0x400), written out below.
 * nv_large: the spec 004 nv_large column.  Overrides: parameters show up
 * in the words derived from them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "plan/config.h"
#include "sim/nvdla/nvdla_regs.h" /* dla_cfgrom_build */

struct rom_word {
    uint32_t offset;
    uint32_t value;
    const char *name;
};

/* NVDLA_CFGROM.rdl, registers in order (4 bytes each from 0x000). */
static const struct rom_word rdl_nv_small[] = {
    { 0x000, 0x00010001, "CFGROM_HW_VERSION" },
    { 0x004, 0x00000001, "CFGROM_GLB_DESC" },
    { 0x008, 0x00180002, "CFGROM_CIF_DESC" },
    { 0x00c, 0x00000000, "CFGROM_CIF_CAP_INCOMPAT" },
    { 0x010, 0x00000000, "CFGROM_CIF_CAP_COMPAT" },
    { 0x014, 0x00000008, "CFGROM_CIF_BASE_WIDTH" },
    { 0x018, 0x00000032, "CFGROM_CIF_BASE_LATENCY" },
    { 0x01c, 0x4u << 5, "CFGROM_CIF_BASE_BURST_LENGTH_MAX[31:5]" },
    { 0x020, 0x20u << 5, "CFGROM_CIF_BASE_MEM_ADDR_WIDTH[31:5]" },
    { 0x024, 0x00340003, "CFGROM_CDMA_DESC" },
    { 0x028, 0x00000000, "CFGROM_CDMA_CAP_INCOMPAT" },
    { 0x02c, 0x00000010, "CFGROM_CDMA_CAP_COMPAT" },
    { 0x030, 0x00000010, "CFGROM_CDMA_BASE_FEATURE_TYPES" },
    { 0x034, 0x00000010, "CFGROM_CDMA_BASE_WEIGHT_TYPES" },
    { 0x038, 0x00000008, "CFGROM_CDMA_BASE_ATOMIC_C" },
    { 0x03c, 0x00000008, "CFGROM_CDMA_BASE_ATOMIC_K" },
    { 0x040, 0x00000008, "CFGROM_CDMA_BASE_ATOMIC_M" },
    { 0x044, 0x00000020, "CFGROM_CDMA_BASE_CBUF_BANK_NUM" },
    { 0x048, 0x00000008, "CFGROM_CDMA_BASE_CBUF_BANK_WIDTH" },
    { 0x04c, 0x00000200, "CFGROM_CDMA_BASE_CBUF_BANK_DEPTH" },
    { 0x050, 0x00000000, "CFGROM_CDMA_MULTI_BATCH_MAX" },
    { 0x054, 0x0cfff001, "CFGROM_CDMA_IMAGE_IN_FORMATS_PACKED" },
    { 0x058, 0x00000003, "CFGROM_CDMA_IMAGE_IN_FORMATS_SEMI" },
    { 0x05c, 0x00180004, "CFGROM_CBUF_DESC" },
    { 0x060, 0x00000000, "CFGROM_CBUF_CAP_INCOMPAT" },
    { 0x064, 0x00000000, "CFGROM_CBUF_CAP_COMPAT" },
    { 0x068, 0x00000020, "CFGROM_CBUF_BASE_CBUF_BANK_NUM" },
    { 0x06c, 0x00000008, "CFGROM_CBUF_BASE_CBUF_BANK_WIDTH" },
    { 0x070, 0x00000200, "CFGROM_CBUF_BASE_CBUF_BANK_DEPTH" },
    { 0x074, 0x00000003, "CFGROM_CBUF_BASE_CDMA_ID" },
    { 0x078, 0x00300005, "CFGROM_CSC_DESC" },
    { 0x07c, 0x00000000, "CFGROM_CSC_CAP_INCOMPAT" },
    { 0x080, 0x00000010, "CFGROM_CSC_CAP_COMPAT" },
    { 0x084, 0x00000010, "CFGROM_CSC_BASE_FEATURE_TYPES" },
    { 0x088, 0x00000010, "CFGROM_CSC_BASE_WEIGHT_TYPES" },
    { 0x08c, 0x00000008, "CFGROM_CSC_BASE_ATOMIC_C" },
    { 0x090, 0x00000008, "CFGROM_CSC_BASE_ATOMIC_K" },
    { 0x094, 0x00000008, "CFGROM_CSC_BASE_ATOMIC_M" },
    { 0x098, 0x00000020, "CFGROM_CSC_BASE_CBUF_BANK_NUM" },
    { 0x09c, 0x00000008, "CFGROM_CSC_BASE_CBUF_BANK_WIDTH" },
    { 0x0a0, 0x00000200, "CFGROM_CSC_BASE_CBUF_BANK_DEPTH" },
    { 0x0a4, 0x00000003, "CFGROM_CSC_BASE_CDMA_ID" },
    { 0x0a8, 0x00000000, "CFGROM_CSC_MULTI_BATCH_MAX" },
    { 0x0ac, 0x001c0006, "CFGROM_CMAC_A_DESC" },
    { 0x0b0, 0x00000000, "CFGROM_CMAC_A_CAP_INCOMPAT" },
    { 0x0b4, 0x00000010, "CFGROM_CMAC_A_CAP_COMPAT" },
    { 0x0b8, 0x00000010, "CFGROM_CMAC_A_BASE_FEATURE_TYPES" },
    { 0x0bc, 0x00000010, "CFGROM_CMAC_A_BASE_WEIGHT_TYPES" },
    { 0x0c0, 0x00000008, "CFGROM_CMAC_A_BASE_ATOMIC_C" },
    { 0x0c4, 0x00000008, "CFGROM_CMAC_A_BASE_ATOMIC_K" },
    { 0x0c8, 0x00000003, "CFGROM_CMAC_A_BASE_CDMA_ID" },
    { 0x0cc, 0x001c0006, "CFGROM_CMAC_B_DESC" },
    { 0x0d0, 0x00000000, "CFGROM_CMAC_B_CAP_INCOMPAT" },
    { 0x0d4, 0x00000010, "CFGROM_CMAC_B_CAP_COMPAT" },
    { 0x0d8, 0x00000010, "CFGROM_CMAC_B_BASE_FEATURE_TYPES" },
    { 0x0dc, 0x00000010, "CFGROM_CMAC_B_BASE_WEIGHT_TYPES" },
    { 0x0e0, 0x00000008, "CFGROM_CMAC_B_BASE_ATOMIC_C" },
    { 0x0e4, 0x00000008, "CFGROM_CMAC_B_BASE_ATOMIC_K" },
    { 0x0e8, 0x00000003, "CFGROM_CMAC_B_BASE_CDMA_ID" },
    { 0x0ec, 0x00200007, "CFGROM_CACC_DESC" },
    { 0x0f0, 0x00000000, "CFGROM_CACC_CAP_INCOMPAT" },
    { 0x0f4, 0x00000000, "CFGROM_CACC_CAP_COMPAT" },
    { 0x0f8, 0x00000010, "CFGROM_CACC_BASE_FEATURE_TYPES" },
    { 0x0fc, 0x00000010, "CFGROM_CACC_BASE_WEIGHT_TYPES" },
    { 0x100, 0x00000008, "CFGROM_CACC_BASE_ATOMIC_C" },
    { 0x104, 0x00000008, "CFGROM_CACC_BASE_ATOMIC_K" },
    { 0x108, 0x00000003, "CFGROM_CACC_BASE_CDMA_ID" },
    { 0x10c, 0x00000000, "CFGROM_CACC_MULTI_BATCH_MAX" },
    { 0x110, 0x000e0008, "CFGROM_SDP_RDMA_DESC" },
    { 0x114, 0x00000000, "CFGROM_SDP_RDMA_CAP_INCOMPAT" },
    { 0x118, 0x00000000, "CFGROM_SDP_RDMA_CAP_COMPAT" },
    { 0x11c, 0x00000008, "CFGROM_SDP_RDMA_BASE_ATOMIC_M" },
    { 0x120, 0x00000009, "CFGROM_SDP_RDMA_BASE_SDP_ID" },
    { 0x124, 0x00200009, "CFGROM_SDP_DESC" },
    { 0x128, 0x00000000, "CFGROM_SDP_CAP_INCOMPAT" },
    { 0x12c, 0x00000018, "CFGROM_SDP_CAP_COMPAT" },
    { 0x130, 0x00000010, "CFGROM_SDP_BASE_FEATURE_TYPES" },
    { 0x134, 0x00000010, "CFGROM_SDP_BASE_WEIGHT_TYPES" },
    { 0x138, 0x00000003, "CFGROM_SDP_BASE_CDMA_ID" },
    { 0x13c, 0x00000000, "CFGROM_SDP_MULTI_BATCH_MAX" },
    { 0x140, 0x00000001, "CFGROM_SDP_BS_THROUGHPUT" },
    { 0x144, 0x00000001, "CFGROM_SDP_BN_THROUGHPUT" },
    { 0x148, 0x00000000, "CFGROM_SDP_EW_THROUGHPUT" },
    { 0x14c, 0x000e000a, "CFGROM_PDP_RDMA_DESC" },
    { 0x150, 0x00000000, "CFGROM_PDP_RDMA_CAP_INCOMPAT" },
    { 0x154, 0x00000000, "CFGROM_PDP_RDMA_CAP_COMPAT" },
    { 0x158, 0x00000008, "CFGROM_PDP_RDMA_BASE_ATOMIC_M" },
    { 0x15c, 0x0000000b, "CFGROM_PDP_RDMA_BASE_PDP_ID" },
    { 0x160, 0x0010000b, "CFGROM_PDP_DESC" },
    { 0x164, 0x00000000, "CFGROM_PDP_CAP_INCOMPAT" },
    { 0x168, 0x00000000, "CFGROM_PDP_CAP_COMPAT" },
    { 0x16c, 0x00000010, "CFGROM_PDP_BASE_FEATURE_TYPES" },
    { 0x170, 0x00000001, "CFGROM_PDP_BASE_THROUGHPUT" },
    { 0x174, 0x000e000c, "CFGROM_CDP_RDMA_DESC" },
    { 0x178, 0x00000000, "CFGROM_CDP_RDMA_CAP_INCOMPAT" },
    { 0x17c, 0x00000000, "CFGROM_CDP_RDMA_CAP_COMPAT" },
    { 0x180, 0x00000008, "CFGROM_CDP_RDMA_BASE_ATOMIC_M" },
    { 0x184, 0x0000000d, "CFGROM_CDP_RDMA_BASE_CDP_ID" },
    { 0x188, 0x0010000d, "CFGROM_CDP_DESC" },
    { 0x18c, 0x00000000, "CFGROM_CDP_CAP_INCOMPAT" },
    { 0x190, 0x00000000, "CFGROM_CDP_CAP_COMPAT" },
    { 0x194, 0x00000010, "CFGROM_CDP_BASE_FEATURE_TYPES" },
    { 0x198, 0x00000001, "CFGROM_CDP_BASE_THROUGHPUT" },
    { 0x19c, 0x00000000, "CFGROM_END_OF_LIST" },
};

#define N_RDL (sizeof(rdl_nv_small) / sizeof(rdl_nv_small[0]))

/*
 * nv_large: spec 004's nv_large column, in the RDL layout.  Where this
 * image departs from the column it is marked DEVIATION:
 *   - MCIF max burst: the column shows 0x4, spec 004's parameter table and
 *     nv_large.spec give NVDLA_PRIMARY_MEMIF_MAX_BURST_LENGTH 1.
 *   - CMAC CAP_COMPAT: the column shows 0x0 (also for nv_small, where the
 *     RDL has 0x10); derived as WINOGRAD | IMAGE_IN.
 *   - SDP: the RDL's BASE_WEIGHT_TYPES word at +0x10 shifts the later SDP
 *     fields by 4 bytes against the column's offsets.
 *   - CIF burst and address width are stored at bit 5 (RDL [31:5]).
 */
static const struct rom_word spec_nv_large[] = {
    { 0x000, 0x00010001, "HW_VERSION" },
    { 0x004, 0x00000001, "GLB_DESC" },
    { 0x008, 0x00180002, "CIF_DESC (MCIF)" },
    { 0x00c, 0x0, "CIF_CAP_INCOMPAT" },
    { 0x010, 0x0, "CIF_CAP_COMPAT (MCIF)" },
    { 0x014, 0x40, "CIF_BASE_WIDTH" },
    { 0x018, 0x4b0, "CIF_BASE_LATENCY" },
    { 0x01c, 0x1u << 5, "CIF_BASE_BURST_LENGTH_MAX (DEVIATION: column 0x4)" },
    { 0x020, 0x40u << 5, "CIF_BASE_MEM_ADDR_WIDTH" },
    { 0x024, 0x00180002, "CIF_DESC (SRAMIF)" },
    { 0x028, 0x0, "CIF_CAP_INCOMPAT" },
    { 0x02c, 0x1, "CIF_CAP_COMPAT (SRAMIF: CIF_IS_SRAM)" },
    { 0x030, 0x40, "CIF_BASE_WIDTH" },
    { 0x034, 0x80, "CIF_BASE_LATENCY" },
    { 0x038, 0x4u << 5, "CIF_BASE_BURST_LENGTH_MAX" },
    { 0x03c, 0x40u << 5, "CIF_BASE_MEM_ADDR_WIDTH" },
    { 0x040, 0x00340003, "CDMA_DESC" },
    { 0x044, 0x0, "CDMA_CAP_INCOMPAT" },
    { 0x048, 0x1b, "CDMA_CAP_COMPAT" },
    { 0x04c, 0x10, "CDMA_BASE_FEATURE_TYPES" },
    { 0x050, 0x10, "CDMA_BASE_WEIGHT_TYPES" },
    { 0x054, 0x40, "CDMA_BASE_ATOMIC_C" },
    { 0x058, 0x20, "CDMA_BASE_ATOMIC_K" },
    { 0x05c, 0x20, "CDMA_BASE_ATOMIC_M" },
    { 0x060, 0x10, "CDMA_BASE_CBUF_BANK_NUM" },
    { 0x064, 0x40, "CDMA_BASE_CBUF_BANK_WIDTH" },
    { 0x068, 0x200, "CDMA_BASE_CBUF_BANK_DEPTH" },
    { 0x06c, 0x20, "CDMA_MULTI_BATCH_MAX" },
    { 0x070, 0x0cfff001, "CDMA_IMAGE_IN_FORMATS_PACKED" },
    { 0x074, 0x3, "CDMA_IMAGE_IN_FORMATS_SEMI" },
    { 0x078, 0x00180004, "CBUF_DESC" },
    { 0x07c, 0x0, "CBUF_CAP_INCOMPAT" },
    { 0x080, 0x0, "CBUF_CAP_COMPAT" },
    { 0x084, 0x10, "CBUF_BASE_BANK_NUM" },
    { 0x088, 0x40, "CBUF_BASE_BANK_WIDTH" },
    { 0x08c, 0x200, "CBUF_BASE_BANK_DEPTH" },
    { 0x090, 0x4, "CBUF_BASE_CDMA_ID" },
    { 0x094, 0x00300005, "CSC_DESC" },
    { 0x098, 0x0, "CSC_CAP_INCOMPAT" },
    { 0x09c, 0x1b, "CSC_CAP_COMPAT" },
    { 0x0a0, 0x10, "CSC_BASE_FEATURE_TYPES" },
    { 0x0a4, 0x10, "CSC_BASE_WEIGHT_TYPES" },
    { 0x0a8, 0x40, "CSC_BASE_ATOMIC_C" },
    { 0x0ac, 0x20, "CSC_BASE_ATOMIC_K" },
    { 0x0b0, 0x20, "CSC_BASE_ATOMIC_M" },
    { 0x0b4, 0x10, "CSC_BASE_CBUF_BANK_NUM" },
    { 0x0b8, 0x40, "CSC_BASE_CBUF_BANK_WIDTH" },
    { 0x0bc, 0x200, "CSC_BASE_CBUF_BANK_DEPTH" },
    { 0x0c0, 0x4, "CSC_BASE_CDMA_ID" },
    { 0x0c4, 0x20, "CSC_MULTI_BATCH_MAX" },
    { 0x0c8, 0x001c0006, "CMAC_A_DESC" },
    { 0x0cc, 0x0, "CMAC_A_CAP_INCOMPAT" },
    { 0x0d0, 0x11, "CMAC_A_CAP_COMPAT (DEVIATION: column 0x0)" },
    { 0x0d4, 0x10, "CMAC_A_BASE_FEATURE_TYPES" },
    { 0x0d8, 0x10, "CMAC_A_BASE_WEIGHT_TYPES" },
    { 0x0dc, 0x40, "CMAC_A_BASE_ATOMIC_C" },
    { 0x0e0, 0x20, "CMAC_A_BASE_ATOMIC_K" },
    { 0x0e4, 0x4, "CMAC_A_BASE_CDMA_ID" },
    { 0x0e8, 0x001c0006, "CMAC_B_DESC" },
    { 0x0ec, 0x0, "CMAC_B_CAP_INCOMPAT" },
    { 0x0f0, 0x11, "CMAC_B_CAP_COMPAT (DEVIATION: column 0x0)" },
    { 0x0f4, 0x10, "CMAC_B_BASE_FEATURE_TYPES" },
    { 0x0f8, 0x10, "CMAC_B_BASE_WEIGHT_TYPES" },
    { 0x0fc, 0x40, "CMAC_B_BASE_ATOMIC_C" },
    { 0x100, 0x20, "CMAC_B_BASE_ATOMIC_K" },
    { 0x104, 0x4, "CMAC_B_BASE_CDMA_ID" },
    { 0x108, 0x00200007, "CACC_DESC" },
    { 0x10c, 0x0, "CACC_CAP_INCOMPAT" },
    { 0x110, 0x3, "CACC_CAP_COMPAT" },
    { 0x114, 0x10, "CACC_BASE_FEATURE_TYPES" },
    { 0x118, 0x10, "CACC_BASE_WEIGHT_TYPES" },
    { 0x11c, 0x20, "CACC_BASE_ATOMIC_C (atomic_k)" },
    { 0x120, 0x20, "CACC_BASE_ATOMIC_K (atomic_m)" },
    { 0x124, 0x4, "CACC_BASE_CDMA_ID" },
    { 0x128, 0x20, "CACC_MULTI_BATCH_MAX" },
    { 0x12c, 0x000e0008, "SDP_RDMA_DESC" },
    { 0x130, 0x0, "SDP_RDMA_CAP_INCOMPAT" },
    { 0x134, 0x0, "SDP_RDMA_CAP_COMPAT" },
    { 0x138, 0x20, "SDP_RDMA_BASE_ATOMIC_M" },
    { 0x13c, 0xa, "SDP_RDMA_BASE_SDP_ID" },
    { 0x140, 0x00200009, "SDP_DESC" },
    { 0x144, 0x0, "SDP_CAP_INCOMPAT" },
    { 0x148, 0x3f, "SDP_CAP_COMPAT" },
    { 0x14c, 0x10, "SDP_BASE_FEATURE_TYPES" },
    { 0x150, 0x10, "SDP_BASE_WEIGHT_TYPES (RDL only)" },
    { 0x154, 0x4, "SDP_BASE_CDMA_ID" },
    { 0x158, 0x20, "SDP_MULTI_BATCH_MAX" },
    { 0x15c, 0x10, "SDP_BS_THROUGHPUT" },
    { 0x160, 0x10, "SDP_BN_THROUGHPUT" },
    { 0x164, 0x4, "SDP_EW_THROUGHPUT" },
    { 0x168, 0x000e000a, "PDP_RDMA_DESC" },
    { 0x16c, 0x0, "PDP_RDMA_CAP_INCOMPAT" },
    { 0x170, 0x0, "PDP_RDMA_CAP_COMPAT" },
    { 0x174, 0x20, "PDP_RDMA_BASE_ATOMIC_M" },
    { 0x178, 0xc, "PDP_RDMA_BASE_PDP_ID" },
    { 0x17c, 0x0010000b, "PDP_DESC" },
    { 0x180, 0x0, "PDP_CAP_INCOMPAT" },
    { 0x184, 0x0, "PDP_CAP_COMPAT" },
    { 0x188, 0x10, "PDP_BASE_FEATURE_TYPES" },
    { 0x18c, 0x8, "PDP_BASE_THROUGHPUT" },
    { 0x190, 0x000e000c, "CDP_RDMA_DESC" },
    { 0x194, 0x0, "CDP_RDMA_CAP_INCOMPAT" },
    { 0x198, 0x0, "CDP_RDMA_CAP_COMPAT" },
    { 0x19c, 0x20, "CDP_RDMA_BASE_ATOMIC_M" },
    { 0x1a0, 0xe, "CDP_RDMA_BASE_CDP_ID" },
    { 0x1a4, 0x0010000d, "CDP_DESC" },
    { 0x1a8, 0x0, "CDP_CAP_INCOMPAT" },
    { 0x1ac, 0x0, "CDP_CAP_COMPAT" },
    { 0x1b0, 0x10, "CDP_BASE_FEATURE_TYPES" },
    { 0x1b4, 0x8, "CDP_BASE_THROUGHPUT" },
    { 0x1b8, 0x0004000e, "BDMA_DESC" },
    { 0x1bc, 0x0, "BDMA payload (4 bytes)" },
    { 0x1c0, 0x0004000f, "RUBIK_DESC" },
    { 0x1c4, 0x0, "RUBIK payload (4 bytes)" },
    { 0x1c8, 0x0, "END_OF_LIST" },
};

#define N_LARGE (sizeof(spec_nv_large) / sizeof(spec_nv_large[0]))

static uint32_t rom_a[DLA_CFGROM_WORDS];
static uint32_t rom_b[DLA_CFGROM_WORDS];

static void build(const char *cfgname, const char *const *sets, size_t nsets,
                  uint32_t rom[DLA_CFGROM_WORDS])
{
    struct dla_config c;
    char err[512];
    assert_int_equal(dla_config_init(&c, cfgname, err, sizeof(err)), DLASIM_OK);
    for (size_t i = 0; i < nsets; i++) {
        if (dla_config_set(&c, sets[i], err, sizeof(err)) != DLASIM_OK) {
            fail_msg("%s: %s", sets[i], err);
        }
    }
    if (dla_config_validate(&c, err, sizeof(err)) != DLASIM_OK) {
        fail_msg("%s: %s", cfgname, err);
    }
    /* fill with garbage first: the builder must write every word */
    memset(rom, 0xa5, DLA_CFGROM_WORDS * sizeof(rom[0]));
    dla_cfgrom_build(&c, rom);
}

/* Words listed must match; every other word of the 4 KB window is 0. */
static void expect_image(const uint32_t *rom, const struct rom_word *w, size_t n)
{
    uint32_t last = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t got = rom[w[i].offset / 4];
        if (got != w[i].value) {
            fail_msg("0x%03x %s: got 0x%08x, expected 0x%08x", (unsigned)w[i].offset, w[i].name,
                     (unsigned)got, (unsigned)w[i].value);
        }
        if (i > 0) {
            assert_int_equal(w[i].offset, w[i - 1].offset + 4); /* table has no holes */
        }
        last = w[i].offset;
    }
    for (uint32_t off = last + 4; off < DLA_CFGROM_WORDS * 4; off += 4) {
        if (rom[off / 4] != 0) {
            fail_msg("0x%03x after END_OF_LIST: 0x%08x", (unsigned)off, (unsigned)rom[off / 4]);
        }
    }
}

static void test_nv_small_equals_rdl(void **state)
{
    (void)state;
    assert_int_equal(N_RDL, 104);
    build("nv_small", NULL, 0, rom_a);
    expect_image(rom_a, rdl_nv_small, N_RDL);
}

static void test_nv_large_spec_column(void **state)
{
    (void)state;
    build("nv_large", NULL, 0, rom_a);
    expect_image(rom_a, spec_nv_large, N_LARGE);
}

/* nv_small_256 differs from nv_small exactly in Atomic-C and CBUF
 * width/depth words. */
static void test_nv_small_256(void **state)
{
    static const struct rom_word diff[] = {
        { 0x038, 32, "CDMA_BASE_ATOMIC_C" },     { 0x048, 32, "CDMA_BASE_CBUF_BANK_WIDTH" },
        { 0x04c, 128, "CDMA_BASE_CBUF_BANK_DEPTH" }, { 0x06c, 32, "CBUF_BASE_CBUF_BANK_WIDTH" },
        { 0x070, 128, "CBUF_BASE_CBUF_BANK_DEPTH" }, { 0x08c, 32, "CSC_BASE_ATOMIC_C" },
        { 0x09c, 32, "CSC_BASE_CBUF_BANK_WIDTH" },   { 0x0a0, 128, "CSC_BASE_CBUF_BANK_DEPTH" },
        { 0x0c0, 32, "CMAC_A_BASE_ATOMIC_C" },       { 0x0e0, 32, "CMAC_B_BASE_ATOMIC_C" },
    };
    (void)state;
    build("nv_small_256", NULL, 0, rom_a);
    for (size_t i = 0; i < DLA_CFGROM_WORDS; i++) {
        uint32_t expect = i < N_RDL ? rdl_nv_small[i].value : 0;
        for (size_t k = 0; k < sizeof(diff) / sizeof(diff[0]); k++) {
            if (diff[k].offset == i * 4) {
                expect = diff[k].value;
            }
        }
        if (rom_a[i] != expect) {
            fail_msg("0x%03x: got 0x%08x, expected 0x%08x", (unsigned)(i * 4),
                     (unsigned)rom_a[i], (unsigned)expect);
        }
    }
}

/* Offsets (nv_small layout) whose words change, with their new values. */
struct override_case {
    const char *sets[4];
    struct rom_word changed[16];
};

static void test_overrides_same_layout(void **state)
{
    static const struct override_case cases[] = {
        { { "NVDLA_SDP_EW_ENABLE=1" },
          { { 0x12c, 0x38, "SDP_CAP_COMPAT: BS|BN|EW" },
            { 0x148, 0x1, "SDP_EW_THROUGHPUT: unspecified -> 1" } } },
        { { "NVDLA_SDP_EW_ENABLE=YES", "NVDLA_SDP_EW_THROUGHPUT=4", "NVDLA_SDP_LUT_ENABLE=YES" },
          { { 0x12c, 0x3c, "SDP_CAP_COMPAT: LUT|BS|BN|EW" },
            { 0x148, 0x4, "SDP_EW_THROUGHPUT" } } },
        { { "NVDLA_SDP_BS_ENABLE=NO" },
          { { 0x12c, 0x10, "SDP_CAP_COMPAT: BN" }, { 0x140, 0x0, "SDP_BS_THROUGHPUT" } } },
        { { "NVDLA_WINOGRAD_ENABLE=YES" },
          { { 0x02c, 0x11, "CDMA_CAP_COMPAT" }, { 0x080, 0x11, "CSC_CAP_COMPAT" },
            { 0x0b4, 0x11, "CMAC_A_CAP_COMPAT" }, { 0x0d4, 0x11, "CMAC_B_CAP_COMPAT" },
            { 0x0f4, 0x01, "CACC_CAP_COMPAT" }, { 0x12c, 0x19, "SDP_CAP_COMPAT" } } },
        { { "NVDLA_BATCH_ENABLE=YES", "NVDLA_MAX_BATCH_SIZE=16" },
          { { 0x02c, 0x12, "CDMA_CAP_COMPAT" }, { 0x050, 16, "CDMA_MULTI_BATCH_MAX" },
            { 0x080, 0x12, "CSC_CAP_COMPAT" }, { 0x0a8, 16, "CSC_MULTI_BATCH_MAX" },
            { 0x0f4, 0x02, "CACC_CAP_COMPAT" }, { 0x10c, 16, "CACC_MULTI_BATCH_MAX" },
            { 0x12c, 0x1a, "SDP_CAP_COMPAT" }, { 0x13c, 16, "SDP_MULTI_BATCH_MAX" } } },
        { { "NVDLA_WEIGHT_COMPRESSION_ENABLE=YES" },
          { { 0x02c, 0x18, "CDMA_CAP_COMPAT" }, { 0x080, 0x18, "CSC_CAP_COMPAT" } } },
        { { "NVDLA_MEMIF_ADDRESS_WIDTH=64", "NVDLA_PRIMARY_MEMIF_WIDTH=32B",
            "NVDLA_PRIMARY_MEMIF_LATENCY=1200", "NVDLA_PRIMARY_MEMIF_MAX_BURST_LENGTH=1" },
          { { 0x014, 32, "CIF_BASE_WIDTH" }, { 0x018, 1200, "CIF_BASE_LATENCY" },
            { 0x01c, 1u << 5, "CIF_BASE_BURST_LENGTH_MAX" },
            { 0x020, 64u << 5, "CIF_BASE_MEM_ADDR_WIDTH" } } },
        { { "NVDLA_PDP_THROUGHPUT=8", "NVDLA_CDP_THROUGHPUT=2" },
          { { 0x170, 8, "PDP_BASE_THROUGHPUT" }, { 0x198, 2, "CDP_BASE_THROUGHPUT" } } },
        { { "NVDLA_FEATURE_DATA_TYPE=INT8|INT16", "NVDLA_CBUF_BANK_WIDTH=16" },
          { { 0x030, 0x30, "CDMA_BASE_FEATURE_TYPES" },
            { 0x048, 16, "CDMA_BASE_CBUF_BANK_WIDTH" },
            { 0x054, 0x0cfff6df, "CDMA_IMAGE_IN_FORMATS_PACKED: + 16-bit integer" },
            { 0x058, 0xff, "CDMA_IMAGE_IN_FORMATS_SEMI: + Y10/Y12/Y16" },
            { 0x06c, 16, "CBUF_BASE_CBUF_BANK_WIDTH" }, { 0x084, 0x30, "CSC_BASE_FEATURE_TYPES" },
            { 0x09c, 16, "CSC_BASE_CBUF_BANK_WIDTH" }, { 0x0b8, 0x30, "CMAC_A_FEATURE_TYPES" },
            { 0x0d8, 0x30, "CMAC_B_FEATURE_TYPES" }, { 0x0f8, 0x30, "CACC_FEATURE_TYPES" },
            { 0x130, 0x30, "SDP_FEATURE_TYPES" }, { 0x16c, 0x30, "PDP_FEATURE_TYPES" },
            { 0x194, 0x30, "CDP_FEATURE_TYPES" } } },
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t nsets = 0;
        while (nsets < 4 && cases[i].sets[nsets] != NULL) {
            nsets++;
        }
        build("nv_small", cases[i].sets, nsets, rom_b);
        for (size_t w = 0; w < DLA_CFGROM_WORDS; w++) {
            uint32_t expect = w < N_RDL ? rdl_nv_small[w].value : 0;
            const char *what = w < N_RDL ? rdl_nv_small[w].name : "after END_OF_LIST";
            for (size_t k = 0; k < 16 && cases[i].changed[k].name != NULL; k++) {
                if (cases[i].changed[k].offset == w * 4) {
                    expect = cases[i].changed[k].value;
                    what = cases[i].changed[k].name;
                }
            }
            if (rom_b[w] != expect) {
                fail_msg("%s: 0x%03x %s: got 0x%08x, expected 0x%08x", cases[i].sets[0],
                         (unsigned)(w * 4), what, (unsigned)rom_b[w], (unsigned)expect);
            }
        }
    }
}

/* An independent walk: descriptor ids in spec order, slot fields. */
struct walked {
    unsigned n;
    uint32_t id[32];
    uint32_t off[32];
};

/* Payload words per unit id in the RDL layout (index = unit id). */
static const unsigned payload_words[16] = { 0, 0, 6, 13, 6, 12, 7, 8, 4, 9, 4, 4, 4, 4, 1, 1 };

static void walk(const uint32_t *rom, struct walked *wk)
{
    uint32_t off = 4;
    wk->n = 0;
    while (rom[off / 4] != 0) {
        uint32_t id = rom[off / 4] & 0xffff;
        assert_true(id >= 1 && id <= 15);
        assert_true(wk->n < 32);
        wk->id[wk->n] = id;
        wk->off[wk->n] = off;
        wk->n++;
        off += 4 + 4 * payload_words[id];
        assert_true(off < 4096);
    }
}

static uint32_t field(const uint32_t *rom, const struct walked *wk, uint32_t id, unsigned nth,
                      unsigned word)
{
    for (unsigned i = 0; i < wk->n; i++) {
        if (wk->id[i] == id && nth-- == 0) {
            return rom[wk->off[i] / 4 + word];
        }
    }
    fail_msg("unit 0x%x not found", (unsigned)id);
    return 0;
}

static void test_units_present(void **state)
{
    static const char *const no_pdp[] = { "NVDLA_PDP_ENABLE=NO" };
    static const char *const sram[] = {
        "NVDLA_SECONDARY_MEMIF_ENABLE=YES", "NVDLA_SECONDARY_MEMIF_WIDTH=32B",
        "NVDLA_SECONDARY_MEMIF_LATENCY=100", "NVDLA_SECONDARY_MEMIF_MAX_BURST_LENGTH=2",
    };
    static const char *const engines[] = { "NVDLA_BDMA_ENABLE=YES", "NVDLA_RUBIK_ENABLE=YES",
                                           "NVDLA_CDP_ENABLE=NO" };
    static const uint32_t ids_no_pdp[] = { 1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 0xc, 0xd };
    static const uint32_t ids_engines[] = { 1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 0xa, 0xb, 0xe, 0xf };
    struct walked wk;
    (void)state;

    /* PDP absent: CDP moves down two slots (0xd -> 0xb). */
    build("nv_small", no_pdp, 1, rom_a);
    walk(rom_a, &wk);
    assert_int_equal(wk.n, sizeof(ids_no_pdp) / sizeof(ids_no_pdp[0]));
    assert_memory_equal(wk.id, ids_no_pdp, sizeof(ids_no_pdp));
    assert_int_equal(field(rom_a, &wk, 0xc, 0, 4), 0xb);

    /* SRAMIF: a second CIF, every later slot id one higher. */
    build("nv_small", sram, 4, rom_a);
    walk(rom_a, &wk);
    assert_int_equal(wk.id[1], 2);
    assert_int_equal(wk.id[2], 2);
    assert_int_equal(field(rom_a, &wk, 2, 1, 2), 1);            /* CIF_IS_SRAM */
    assert_int_equal(field(rom_a, &wk, 2, 1, 3), 32);           /* width */
    assert_int_equal(field(rom_a, &wk, 2, 1, 4), 100);          /* latency */
    assert_int_equal(field(rom_a, &wk, 2, 1, 5), 2u << 5);      /* burst */
    assert_int_equal(field(rom_a, &wk, 4, 0, 6), 4);            /* CBUF cdma_id */
    assert_int_equal(field(rom_a, &wk, 8, 0, 4), 0xa);          /* sdp_id */
    assert_int_equal(field(rom_a, &wk, 0xa, 0, 4), 0xc);        /* pdp_id */
    assert_int_equal(field(rom_a, &wk, 0xc, 0, 4), 0xe);        /* cdp_id */

    /* BDMA and RUBIK follow PDP; CDP absent. */
    build("nv_small", engines, 3, rom_a);
    walk(rom_a, &wk);
    assert_int_equal(wk.n, sizeof(ids_engines) / sizeof(ids_engines[0]));
    assert_memory_equal(wk.id, ids_engines, sizeof(ids_engines));
    assert_int_equal(rom_a[wk.off[12] / 4], 0x0004000e);
    assert_int_equal(rom_a[wk.off[13] / 4], 0x0004000f);
}

/* The descriptor list of every named configuration is well formed and
 * the declared payload lengths are the spec/RDL ones. */
static void test_declared_lengths(void **state)
{
    static const uint32_t declared[16] = { 0,    0,    0x18, 0x34, 0x18, 0x30, 0x1c, 0x20,
                                           0x0e, 0x20, 0x0e, 0x10, 0x0e, 0x10, 0x04, 0x04 };
    static const char *const names[] = { "nv_small", "nv_small_256", "nv_large" };
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        struct walked wk;
        build(names[k], NULL, 0, rom_a);
        assert_int_equal(rom_a[0], 0x00010001);
        walk(rom_a, &wk);
        for (unsigned i = 0; i < wk.n; i++) {
            assert_int_equal(rom_a[wk.off[i] / 4] >> 16, declared[wk.id[i]]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nv_small_equals_rdl),
        cmocka_unit_test(test_nv_small_256),
        cmocka_unit_test(test_nv_large_spec_column),
        cmocka_unit_test(test_overrides_same_layout),
        cmocka_unit_test(test_units_present),
        cmocka_unit_test(test_declared_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
