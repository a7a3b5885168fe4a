/*
 * ConfigROM image (CSB window 0x0000-0x0fff, read-only): a hardware version
 * word followed by a list of sub-unit descriptors with their payloads,
 * derived entirely from the scalability parameters (never from the
 * configuration's name), so `--set` overrides show in the ROM.
 *
 * ref: spec 004 "Sub-unit identifier table" and "Descriptors and payloads of
 *      sub-units in ConfigROM"; hw_small spec/manual/NVDLA_CFGROM.rdl and
 *      vmod/nvdla/cfgrom/NV_NVDLA_CFGROM_rom.v (nv_small reset values).
 *
 * Layout (32-bit words, in this order; a unit absent from the
 * configuration has no descriptor):
 *   0x000      HW_VERSION = 0x00010001 (RDL; spec 004 does not list it)
 *   then per sub-unit: DESC = payload_length << 16 | unit_id, payload words
 *   GLB, CIF (MCIF), CIF (SRAMIF, if NVDLA_SECONDARY_MEMIF_ENABLE), CDMA,
 *   CBUF, CSC, CMAC_A, CMAC_B, CACC, SDP_RDMA, SDP, PDP_RDMA + PDP (if
 *   NVDLA_PDP_ENABLE), CDP_RDMA + CDP (if NVDLA_CDP_ENABLE), BDMA (if
 *   NVDLA_BDMA_ENABLE), RUBIK (if NVDLA_RUBIK_ENABLE), END_OF_LIST = 0.
 *
 * Modelling choices where the sources disagree or are silent:
 *   - Every payload field is one 32-bit word, as in the RDL.  The declared
 *     payload lengths are those of the RDL/spec: *_RDMA units declare 0xe
 *     (spec 004 draws their last two fields as 16-bit at 0xc/0xe) but
 *     occupy 16 bytes, and SDP declares 0x20 but occupies 0x24 because the
 *     RDL has SDP_BASE_WEIGHT_TYPES at +0x10 which spec 004 omits.  The
 *     image reproduces the RDL exactly; a reader must know each unit's
 *     layout to step over it (tools/dlasim/info.c does).
 *   - CIF BASE_BURST_LENGTH_MAX and BASE_MEM_ADDR_WIDTH are fields [31:5] in
 *     the RDL; the RTL ROM returns 0x80 and 0x400 for 4 and 32, so the
 *     values are stored shifted left by 5 (spec 004 draws them at bit 0).
 *   - Slot ids (CBUF/CSC/CMAC/CACC/SDP cdma_id, SDP_RDMA sdp_id, PDP_RDMA
 *     pdp_id, CDP_RDMA cdp_id) count register-bearing descriptors from
 *     GLB = 1 (CBUF has no registers, hence no slot).  This reproduces both
 *     spec 004 columns (nv_small cdma 3/sdp 9/pdp 0xb/cdp 0xd, nv_large with
 *     two CIFs 4/0xa/0xc/0xe).
 *   - CMAC CAP_COMPAT: spec 004 defines bit 0 WINOGRAD and shows 0x0, the
 *     RDL has 0x10 (IMAGE_IN) for nv_small.  Derived as WINOGRAD from
 *     NVDLA_WINOGRAD_ENABLE plus IMAGE_IN, which matches the RDL.
 *   - CACC BASE_ATOMIC_C/_K hold Atomic-K and Atomic-M (spec 004's field
 *     column and its nv_large values 0x20/0x20; the RDL's nv_small values
 *     are 8/8 and do not tell).
 *   - BDMA and RUBIK declare 4 payload bytes (spec 004) without naming the
 *     field; one CAP_INCOMPAT word of 0 is emitted.
 *   - Image input formats: the 8-bit formats of the RDL value (packed
 *     0x0cfff001, semi-planar 0x3) are always present; the 16-bit integer
 *     formats are added when the feature types include INT16 and the
 *     half-float ones with FP16 (bit = CDMA D_DATAIN_FORMAT.PIXEL_FORMAT,
 *     spec 004 "Supported packed/semi-planar image formats").
 *   - Throughputs: 0 on an enabled stage counts as 1 (projects.spec,
 *     SDP_EW_THROUGHPUT_x); disabled SDP stages show 0, like EW in nv_small.
 */
#include "sim/nvdla/nvdla_regs.h"

#include <string.h>

/* Sub-unit identifiers (spec 004 "Sub-unit identifier table"). */
enum cfgrom_unit {
    UNIT_END = 0x0,
    UNIT_GLB = 0x1,
    UNIT_CIF = 0x2,
    UNIT_CDMA = 0x3,
    UNIT_CBUF = 0x4,
    UNIT_CSC = 0x5,
    UNIT_CMAC = 0x6,
    UNIT_CACC = 0x7,
    UNIT_SDP_RDMA = 0x8,
    UNIT_SDP = 0x9,
    UNIT_PDP_RDMA = 0xa,
    UNIT_PDP = 0xb,
    UNIT_CDP_RDMA = 0xc,
    UNIT_CDP = 0xd,
    UNIT_BDMA = 0xe,
    UNIT_RUBIK = 0xf
};

/* Declared payload lengths in bytes (descriptor bits 16-31), spec 004/RDL. */
enum cfgrom_len {
    LEN_GLB = 0x00,
    LEN_CIF = 0x18,
    LEN_CDMA = 0x34,
    LEN_CBUF = 0x18,
    LEN_CSC = 0x30,
    LEN_CMAC = 0x1c,
    LEN_CACC = 0x20,
    LEN_RDMA = 0x0e,
    LEN_SDP = 0x20,
    LEN_PDP = 0x10,
    LEN_CDP = 0x10,
    LEN_BDMA = 0x04,
    LEN_RUBIK = 0x04
};

#define CFGROM_HW_VERSION 0x00010001u

/* Compatible-capability bits (spec 004, CDMA/CSC/CMAC/CACC/SDP tables). */
#define CAP_WINOGRAD (1u << 0)
#define CAP_MULTI_BATCH (1u << 1)
#define CAP_FEATURE_COMPRESSION (1u << 2) /* CDMA/CSC */
#define CAP_WEIGHT_COMPRESSION (1u << 3)  /* CDMA/CSC */
#define CAP_IMAGE_IN (1u << 4)            /* CDMA/CSC */
#define CAP_SDP_LUT (1u << 2)
#define CAP_SDP_BS (1u << 3)
#define CAP_SDP_BN (1u << 4)
#define CAP_SDP_EW (1u << 5)
#define CAP_CIF_IS_SRAM (1u << 0)

/* CIF fields stored at bit 5 (RDL [31:5], RTL ROM 0x80 / 0x400). */
#define CIF_FIELD_SHIFT 5

/* Image formats (bit = PIXEL_FORMAT value; spec 004 tables). */
#define IMG_PACKED_8BIT 0x0cfff001u /* R8, 8-bit RGB(A/X), 10-bit packed RGB/YUV, A8Y8U8V8, V8U8Y8A8 */
#define IMG_PACKED_INT16 0x000006deu /* R10 R12 R16 R16_I A16B16G16R16 X16B16G16R16 A16Y16U16V16 V16U16Y16A16 */
#define IMG_PACKED_FP16 0x00000920u /* R16_F A16B16G16R16_F A16Y16U16V16_F */
#define IMG_SEMI_8BIT 0x03u         /* Y8___U8V8_N444, Y8___V8U8_N444 */
#define IMG_SEMI_INT16 0xfcu        /* Y10/Y12/Y16 semi-planar */

struct rom_writer {
    uint32_t *rom;
    unsigned pos;       /* next word index */
    unsigned next_slot; /* CSB slot of the next register-bearing unit */
};

static void put(struct rom_writer *w, uint32_t v)
{
    /* The longest image (every unit present) is far below 1024 words. */
    if (w->pos < DLA_CFGROM_WORDS) {
        w->rom[w->pos] = v;
    }
    w->pos++;
}

/* Descriptor word; returns the unit's slot (0 for CBUF, which has none). */
static unsigned put_desc(struct rom_writer *w, enum cfgrom_unit id, enum cfgrom_len len)
{
    put(w, ((uint32_t)len << 16) | (uint32_t)id);
    if (id == UNIT_CBUF) {
        return 0;
    }
    return w->next_slot++;
}

static uint32_t on(uint32_t flag, uint32_t bit)
{
    return flag ? bit : 0u;
}

/* Throughput of a stage as the hardware reports it. */
static uint32_t throughput(uint32_t enable, uint32_t t)
{
    if (!enable) {
        return 0;
    }
    return t ? t : 1u;
}

static uint32_t batch_max(const struct dla_config *c)
{
    return c->batch_enable ? c->max_batch_size : 0u;
}

/* CDMA/CSC compatible capabilities.  No parameter enables feature
 * compression, so bit 2 stays 0; image input is always supported. */
static uint32_t conv_caps(const struct dla_config *c)
{
    return on(c->winograd_enable, CAP_WINOGRAD) | on(c->batch_enable, CAP_MULTI_BATCH) |
           on(c->weight_compression_enable, CAP_WEIGHT_COMPRESSION) | CAP_IMAGE_IN;
}

static uint32_t image_packed(const struct dla_config *c)
{
    return IMG_PACKED_8BIT | on(c->feature_data_type & DLA_TYPE_INT16, IMG_PACKED_INT16) |
           on(c->feature_data_type & DLA_TYPE_FP16, IMG_PACKED_FP16);
}

static uint32_t image_semi(const struct dla_config *c)
{
    return IMG_SEMI_8BIT | on(c->feature_data_type & DLA_TYPE_INT16, IMG_SEMI_INT16);
}

static void put_cif(struct rom_writer *w, uint32_t is_sram, uint32_t width, uint32_t latency,
                    uint32_t burst, uint32_t addr_width)
{
    put_desc(w, UNIT_CIF, LEN_CIF);
    put(w, 0);                                   /* CAP_INCOMPAT */
    put(w, on(is_sram, CAP_CIF_IS_SRAM));        /* CAP_COMPAT */
    put(w, width & 0xffu);                       /* BASE_WIDTH, bytes, bits 0-7 */
    put(w, latency & 0xffffu);                   /* BASE_LATENCY, cycles, bits 0-15 */
    put(w, (burst & 0xffu) << CIF_FIELD_SHIFT);  /* BASE_BURST_LENGTH_MAX */
    put(w, (addr_width & 0xffu) << CIF_FIELD_SHIFT); /* BASE_MEM_ADDR_WIDTH */
}

static unsigned put_cdma(struct rom_writer *w, const struct dla_config *c)
{
    unsigned slot = put_desc(w, UNIT_CDMA, LEN_CDMA);
    put(w, 0);
    put(w, conv_caps(c));
    put(w, c->feature_data_type);
    put(w, c->weight_data_type);
    put(w, c->mac_atomic_c_size);
    put(w, c->mac_atomic_k_size);
    put(w, c->memory_atomic_size);
    put(w, c->cbuf_bank_number);
    put(w, c->cbuf_bank_width);
    put(w, c->cbuf_bank_depth);
    put(w, batch_max(c));
    put(w, image_packed(c));
    put(w, image_semi(c));
    return slot;
}

static void put_cbuf(struct rom_writer *w, const struct dla_config *c, unsigned cdma_slot)
{
    put_desc(w, UNIT_CBUF, LEN_CBUF);
    put(w, 0);
    put(w, 0);
    put(w, c->cbuf_bank_number);
    put(w, c->cbuf_bank_width);
    put(w, c->cbuf_bank_depth);
    put(w, cdma_slot);
}

static void put_csc(struct rom_writer *w, const struct dla_config *c, unsigned cdma_slot)
{
    put_desc(w, UNIT_CSC, LEN_CSC);
    put(w, 0);
    put(w, conv_caps(c));
    put(w, c->feature_data_type);
    put(w, c->weight_data_type);
    put(w, c->mac_atomic_c_size);
    put(w, c->mac_atomic_k_size);
    put(w, c->memory_atomic_size);
    put(w, c->cbuf_bank_number);
    put(w, c->cbuf_bank_width);
    put(w, c->cbuf_bank_depth);
    put(w, cdma_slot);
    put(w, batch_max(c));
}

static void put_cmac(struct rom_writer *w, const struct dla_config *c, unsigned cdma_slot)
{
    put_desc(w, UNIT_CMAC, LEN_CMAC);
    put(w, 0);
    put(w, on(c->winograd_enable, CAP_WINOGRAD) | CAP_IMAGE_IN);
    put(w, c->feature_data_type);
    put(w, c->weight_data_type);
    put(w, c->mac_atomic_c_size);
    put(w, c->mac_atomic_k_size);
    put(w, cdma_slot);
}

static void put_cacc(struct rom_writer *w, const struct dla_config *c, unsigned cdma_slot)
{
    put_desc(w, UNIT_CACC, LEN_CACC);
    put(w, 0);
    put(w, on(c->winograd_enable, CAP_WINOGRAD) | on(c->batch_enable, CAP_MULTI_BATCH));
    put(w, c->feature_data_type);
    put(w, c->weight_data_type);
    put(w, c->mac_atomic_k_size);  /* BASE_ATOMIC_C: atomic_k (spec 004) */
    put(w, c->memory_atomic_size); /* BASE_ATOMIC_K: atomic_m (spec 004) */
    put(w, cdma_slot);
    put(w, batch_max(c));
}

/* A read DMA unit directly precedes its processor, whose slot is next. */
static void put_rdma(struct rom_writer *w, const struct dla_config *c, enum cfgrom_unit id)
{
    unsigned slot = put_desc(w, id, LEN_RDMA);
    put(w, 0);
    put(w, 0);
    put(w, c->memory_atomic_size);
    put(w, slot + 1u);
}

static void put_sdp(struct rom_writer *w, const struct dla_config *c, unsigned cdma_slot)
{
    put_desc(w, UNIT_SDP, LEN_SDP);
    put(w, 0);
    put(w, on(c->winograd_enable, CAP_WINOGRAD) | on(c->batch_enable, CAP_MULTI_BATCH) |
               on(c->sdp_lut_enable, CAP_SDP_LUT) | on(c->sdp_bs_enable, CAP_SDP_BS) |
               on(c->sdp_bn_enable, CAP_SDP_BN) | on(c->sdp_ew_enable, CAP_SDP_EW));
    put(w, c->feature_data_type);
    put(w, c->weight_data_type); /* RDL only; spec 004 omits this word */
    put(w, cdma_slot);
    put(w, batch_max(c));
    put(w, throughput(c->sdp_bs_enable, c->sdp_bs_throughput));
    put(w, throughput(c->sdp_bn_enable, c->sdp_bn_throughput));
    put(w, throughput(c->sdp_ew_enable, c->sdp_ew_throughput));
}

/* PDP or CDP: its read DMA, then the processor itself. */
static void put_planar(struct rom_writer *w, const struct dla_config *c, enum cfgrom_unit rdma,
                       enum cfgrom_unit unit, enum cfgrom_len len, uint32_t t)
{
    put_rdma(w, c, rdma);
    put_desc(w, unit, len);
    put(w, 0);
    put(w, 0);
    put(w, c->feature_data_type);
    put(w, throughput(1, t));
}

void dla_cfgrom_build(const struct dla_config *c, uint32_t rom[DLA_CFGROM_WORDS])
{
    struct rom_writer w = { rom, 0, 1 };
    unsigned cdma_slot;

    memset(rom, 0, DLA_CFGROM_WORDS * sizeof(rom[0]));
    put(&w, CFGROM_HW_VERSION);
    put_desc(&w, UNIT_GLB, LEN_GLB);
    put_cif(&w, 0, c->primary_memif_width, c->primary_memif_latency,
            c->primary_memif_max_burst_length, c->memif_address_width);
    if (c->secondary_memif_enable) {
        put_cif(&w, 1, c->secondary_memif_width, c->secondary_memif_latency,
                c->secondary_memif_max_burst_length, c->memif_address_width);
    }
    cdma_slot = put_cdma(&w, c);
    put_cbuf(&w, c, cdma_slot);
    put_csc(&w, c, cdma_slot);
    put_cmac(&w, c, cdma_slot); /* CMAC_A */
    put_cmac(&w, c, cdma_slot); /* CMAC_B */
    put_cacc(&w, c, cdma_slot);
    put_rdma(&w, c, UNIT_SDP_RDMA);
    put_sdp(&w, c, cdma_slot);
    if (c->pdp_enable) {
        put_planar(&w, c, UNIT_PDP_RDMA, UNIT_PDP, LEN_PDP, c->pdp_throughput);
    }
    if (c->cdp_enable) {
        put_planar(&w, c, UNIT_CDP_RDMA, UNIT_CDP, LEN_CDP, c->cdp_throughput);
    }
    if (c->bdma_enable) {
        put_desc(&w, UNIT_BDMA, LEN_BDMA);
        put(&w, 0);
    }
    if (c->rubik_enable) {
        put_desc(&w, UNIT_RUBIK, LEN_RUBIK);
        put(&w, 0);
    }
    put(&w, UNIT_END); /* END_OF_LIST */
}
