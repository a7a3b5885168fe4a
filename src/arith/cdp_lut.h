/*
 * CDP lookup-table primitive: the LE (raw / exponent-or-linear, 65 entries)
 * and LO (density / linear, 257 entries) tables of NVDLA's Channel Data
 * Processor, with index computation, under/overflow detection, the
 * LE/LO priority rules, interpolation and the slope extrapolation outside
 * the tables, bit-exact with the RTL.
 *
 * ref: vmod/nvdla/cdp/NV_NVDLA_CDP_DP_LUT_CTRL_unit.v (index, flags),
 *      NV_NVDLA_CDP_DP_lut.v (LE/LO selection), NV_NVDLA_CDP_DP_intp.v and
 *      NV_NVDLA_CDP_DP_INTP_unit.v (interpolation, perf classes),
 *      cmod/cdp/NV_NVDLA_cdp.cpp lookup_lut() for the INT16 widths.
 *
 * The input x is the square sum (or, with SQSUM_BYPASS, the converted
 * input itself); the result is the signed 16-bit LUT output.
 */
#ifndef DLASIM_ARITH_CDP_LUT_H
#define DLASIM_ARITH_CDP_LUT_H

#include <stdint.h>

#define CDP_LUT_LE_ENTRIES 65
#define CDP_LUT_LO_ENTRIES 257

/* Classes counted by D_PERF_LUT_* (one per element). */
enum cdp_lut_class {
    CDP_LUT_CLASS_UFLOW = 0,  /* both tables underflow */
    CDP_LUT_CLASS_OFLOW,      /* both tables overflow */
    CDP_LUT_CLASS_HYBRID,     /* both hit, or one under- and the other overflows */
    CDP_LUT_CLASS_LE_HIT,     /* only LE hits */
    CDP_LUT_CLASS_LO_HIT,     /* only LO hits */
    CDP_LUT_CLASS_COUNT
};

/* Register fields as programmed (unsigned, unshifted). */
struct cdp_lut_fields {
    uint32_t le_function;          /* S_LUT_CFG.LUT_LE_FUNCTION: 0 exponent, 1 linear */
    uint32_t uflow_priority;       /* S_LUT_CFG.LUT_UFLOW_PRIORITY: 0 LE, 1 LO */
    uint32_t oflow_priority;       /* S_LUT_CFG.LUT_OFLOW_PRIORITY */
    uint32_t hybrid_priority;      /* S_LUT_CFG.LUT_HYBRID_PRIORITY */
    uint32_t le_index_offset;      /* S_LUT_INFO.LUT_LE_INDEX_OFFSET (8 bits) */
    uint32_t le_index_select;      /* S_LUT_INFO.LUT_LE_INDEX_SELECT (8 bits) */
    uint32_t lo_index_select;      /* S_LUT_INFO.LUT_LO_INDEX_SELECT (8 bits) */
    uint32_t le_start_low, le_start_high;  /* 32 + 6 bits */
    uint32_t le_end_low, le_end_high;
    uint32_t lo_start_low, lo_start_high;
    uint32_t lo_end_low, lo_end_high;
    uint32_t le_slope_uflow_scale, le_slope_oflow_scale;  /* 16 bits each */
    uint32_t le_slope_uflow_shift, le_slope_oflow_shift;  /* 5 bits each */
    uint32_t lo_slope_uflow_scale, lo_slope_oflow_scale;
    uint32_t lo_slope_uflow_shift, lo_slope_oflow_shift;
};

/* Out-of-range extrapolation of one table edge. */
struct cdp_lut_edge {
    int64_t base;      /* x at which the edge entry applies */
    int32_t scale;     /* signed 16-bit slope */
    int32_t shift;     /* signed 5-bit: >0 right shift with rounding, <0 left shift */
};

/* Decoded, ready-to-evaluate LUT configuration. */
struct cdp_lut {
    unsigned in_bits;        /* width of the LUT input path: 22 (INT8), 38 (INT16) */
    int le_exp;              /* LE is an exponent table */
    int uflow_lo, oflow_lo, hybrid_lo;  /* priority picks LO */
    int32_t le_index_offset; /* signed 8 bits (exponent table) */
    int32_t le_select;       /* signed index select (linear LE) */
    int32_t lo_select;       /* signed index select (LO) */
    int64_t le_start_cmp;    /* LE start as seen by the range comparator */
    int64_t lo_start_cmp;    /* LO start as seen by the range comparator */
    struct cdp_lut_edge le_uflow, le_oflow, lo_uflow, lo_oflow;
    int16_t le[CDP_LUT_LE_ENTRIES];
    int16_t lo[CDP_LUT_LO_ENTRIES];
};

/*
 * Decode fields and table contents.  int16 selects the INT16 widths of
 * NVDLA's C model (38-bit input path, 7-bit index selects); otherwise the
 * INT8 datapath of the RTL (22-bit input path, 6-bit index selects).
 */
void cdp_lut_setup(struct cdp_lut *l, const struct cdp_lut_fields *f,
                   const uint16_t le[CDP_LUT_LE_ENTRIES],
                   const uint16_t lo[CDP_LUT_LO_ENTRIES], int int16);

/* LUT output for input x; *cls receives the element's perf class. */
int32_t cdp_lut_eval(const struct cdp_lut *l, int64_t x, enum cdp_lut_class *cls);

/* Round-half-away-from-zero right shift (NVDLA's HLS shift-right rounding).
 * |v| < 2^62; shifts >= 63 give 0. */
static inline int64_t cdp_rshift_round(int64_t v, unsigned s)
{
    uint64_t m;
    if (s == 0) {
        return v;
    }
    if (s >= 63) {
        return 0;
    }
    m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    m = (m + ((uint64_t)1 << (s - 1))) >> s;
    return v < 0 ? -(int64_t)m : (int64_t)m;
}

/* Saturate v to a signed field of `bits` bits. */
static inline int64_t cdp_sat(int64_t v, unsigned bits)
{
    int64_t hi = ((int64_t)1 << (bits - 1)) - 1;
    int64_t lo = -hi - 1;
    return v > hi ? hi : (v < lo ? lo : v);
}

/*
 * NVDLA converter (input and output converters of CDP): subtract offset,
 * multiply by a signed 16-bit scale, shift right with round-half-away and
 * saturate to out_bits.  ref: vlibs/HLS_cdp_icvt.v, HLS_cdp_ocvt.v,
 * NV_NVDLA_HLS_shiftrightsu.v (a shift >= the product width gives 0, which
 * this rounding reproduces).
 */
static inline int32_t cdp_convert(int64_t v, int64_t offset, int32_t scale,
                                  unsigned shift, unsigned out_bits)
{
    return (int32_t)cdp_sat(cdp_rshift_round((v - offset) * scale, shift), out_bits);
}

#endif
