/*
 * CDP LE/LO lookup tables: index, flags, selection, interpolation.
 * See cdp_lut.h for what is modelled and the references.
 */
#include "arith/cdp_lut.h"

#include <string.h>

/* Where x fell in one table. */
enum cdp_side_flow { SIDE_HIT = 0, SIDE_UFLOW = 1, SIDE_OFLOW = 2 };

struct cdp_side {
    enum cdp_side_flow flow;
    uint32_t index;   /* entry (hit) */
    uint32_t frac;    /* 16-bit interpolation fraction (hit) */
};

static int64_t sext64(uint64_t v, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);
    v &= (bits >= 64) ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    return (int64_t)((v ^ m) - m);
}

/* 38-bit register pair {HIGH[5:0], LOW[31:0]} as a signed value. */
static int64_t reg38(uint32_t low, uint32_t high)
{
    return sext64(((uint64_t)(high & 0x3fu) << 32) | low, 38);
}

/* Position of the leading one of v (v >= 1). */
static unsigned log2_floor(uint64_t v)
{
    unsigned n = 0;
    unsigned step;
    for (step = 32; step != 0; step >>= 1) {
        if (v >> step) {
            v >>= step;
            n += step;
        }
    }
    return n;
}

/*
 * Upper 16 bits of the fraction (the s bits of dec below the index),
 * as the RTL keeps them: f[top:top-15] of dec<<top>>s.
 */
static uint32_t frac16(uint64_t dec, unsigned s)
{
    uint64_t rem;
    if (s == 0) {
        return 0;
    }
    rem = s >= 64 ? dec : (dec & (((uint64_t)1 << s) - 1));
    if (s <= 16) {
        return (uint32_t)(rem << (16 - s));
    }
    return s - 16 >= 64 ? 0 : (uint32_t)(rem >> (s - 16));
}

/*
 * Linear table index of dec = x - start (dec >= 1) with a signed index
 * select: select >= 0 shifts right (remainder is the fraction), select < 0
 * shifts left (fraction 0).  Index >= last entry overflows.
 * ref: LUT_CTRL_unit.v shift_msb_int8 / Y_shift_msb_int8.
 */
static void linear_index(uint64_t dec, int32_t select, uint32_t last, struct cdp_side *sd)
{
    uint64_t idx;
    if (select < 0) {
        unsigned k = (unsigned)(-select);
        /* dec >= 1, so dec << k >= 2^k: beyond any table once k >= 9 */
        if (k >= 9 || (dec << k) >= last) {
            sd->flow = SIDE_OFLOW;
            return;
        }
        sd->flow = SIDE_HIT;
        sd->index = (uint32_t)(dec << k);
        sd->frac = 0;
        return;
    }
    idx = (unsigned)select >= 64 ? 0 : dec >> select;
    if (idx >= last) {
        sd->flow = SIDE_OFLOW;
        return;
    }
    sd->flow = SIDE_HIT;
    sd->index = (uint32_t)idx;
    sd->frac = frac16(dec, (unsigned)select);
}

/*
 * Exponent LE index: leading-one position of dec minus the index offset;
 * the fraction is the bits below the leading one.
 * ref: LUT_CTRL_unit.v log2_datout_msb / dec_Xindex_msb.
 */
static void exp_index(uint64_t dec, int32_t offset, struct cdp_side *sd)
{
    unsigned i = log2_floor(dec);
    int32_t idx;
    if (offset >= 0 && (int32_t)i < offset) {
        sd->flow = SIDE_UFLOW;
        return;
    }
    idx = (int32_t)i - offset;
    if (idx >= CDP_LUT_LE_ENTRIES - 1) {
        sd->flow = SIDE_OFLOW;
        return;
    }
    sd->flow = SIDE_HIT;
    sd->index = (uint32_t)idx;
    sd->frac = frac16(dec - ((uint64_t)1 << i), i);
}

/* Left shift saturating far beyond the 16-bit result range. */
static int64_t shl_sat(int64_t v, unsigned k)
{
    const int64_t lim = (int64_t)1 << 40;
    if (v > (lim >> k)) {
        return lim;
    }
    if (v < -(lim >> k)) {
        return -lim;
    }
    return v * ((int64_t)1 << k);
}

/* Extrapolate beyond a table edge: y + ((x - base) * scale) >> shift.
 * ref: INTP_unit.v (signed shift: negative shifts left). */
static int32_t edge_value(const struct cdp_lut_edge *e, int16_t y, int64_t x)
{
    int64_t m = (x - e->base) * e->scale;
    int64_t v = e->shift >= 0 ? cdp_rshift_round(m, (unsigned)e->shift)
                              : shl_sat(m, (unsigned)(-e->shift));
    return (int32_t)cdp_sat(y + v, 16);
}

/* Interpolate between two neighbouring entries with a 16-bit fraction. */
static int32_t hit_value(const int16_t *t, const struct cdp_side *sd)
{
    int64_t y0 = t[sd->index];
    int64_t y1 = t[sd->index + 1];
    return (int32_t)cdp_sat(y0 + cdp_rshift_round((y1 - y0) * (int64_t)sd->frac, 16), 16);
}

void cdp_lut_setup(struct cdp_lut *l, const struct cdp_lut_fields *f,
                   const uint16_t le[CDP_LUT_LE_ENTRIES],
                   const uint16_t lo[CDP_LUT_LO_ENTRIES], int int16)
{
    unsigned sel_bits = int16 ? 7 : 6;
    int64_t le_start = reg38(f->le_start_low, f->le_start_high);
    int64_t lo_start = reg38(f->lo_start_low, f->lo_start_high);
    int64_t le_min = le_start;
    size_t i;

    memset(l, 0, sizeof(*l));
    l->in_bits = int16 ? 38 : 22;
    l->le_exp = f->le_function == 0;
    l->uflow_lo = f->uflow_priority != 0;
    l->oflow_lo = f->oflow_priority != 0;
    l->hybrid_lo = f->hybrid_priority != 0;
    l->le_index_offset = (int32_t)sext64(f->le_index_offset, 8);
    /* the index select is used with its low 6 (INT8) / 7 (INT16) bits as a
     * signed number; ref: LUT_CTRL_unit.v shift_bits[5], cmod raw_frac_bits */
    l->le_select = l->le_exp ? 0 : (int32_t)sext64(f->le_index_select, sel_bits);
    l->lo_select = (int32_t)sext64(f->lo_index_select, sel_bits);
    /* the range comparators see the start truncated to the input width */
    l->le_start_cmp = sext64((uint64_t)le_start, l->in_bits);
    l->lo_start_cmp = sext64((uint64_t)lo_start, l->in_bits);

    /* Exponent LE underflow extrapolates from start + 2^offset (offset >= 0),
     * computed on 39 bits.  ref: intp.v lut_le_min_int. */
    if (l->le_exp && l->le_index_offset >= 0 && l->le_index_offset < 39) {
        le_min = sext64((uint64_t)le_start + ((uint64_t)1 << l->le_index_offset), 39);
    }
    l->le_uflow.base = le_min;
    l->le_uflow.scale = (int32_t)sext64(f->le_slope_uflow_scale, 16);
    l->le_uflow.shift = (int32_t)sext64(f->le_slope_uflow_shift, 5);
    l->le_oflow.base = reg38(f->le_end_low, f->le_end_high);
    l->le_oflow.scale = (int32_t)sext64(f->le_slope_oflow_scale, 16);
    l->le_oflow.shift = (int32_t)sext64(f->le_slope_oflow_shift, 5);
    l->lo_uflow.base = lo_start;
    l->lo_uflow.scale = (int32_t)sext64(f->lo_slope_uflow_scale, 16);
    l->lo_uflow.shift = (int32_t)sext64(f->lo_slope_uflow_shift, 5);
    l->lo_oflow.base = reg38(f->lo_end_low, f->lo_end_high);
    l->lo_oflow.scale = (int32_t)sext64(f->lo_slope_oflow_scale, 16);
    l->lo_oflow.shift = (int32_t)sext64(f->lo_slope_oflow_shift, 5);

    for (i = 0; i < CDP_LUT_LE_ENTRIES; i++) {
        l->le[i] = (int16_t)sext64(le[i], 16);
    }
    for (i = 0; i < CDP_LUT_LO_ENTRIES; i++) {
        l->lo[i] = (int16_t)sext64(lo[i], 16);
    }
}

/* Value from one table once it is selected. */
static int32_t side_value(const struct cdp_lut *l, int use_lo, const struct cdp_side *sd,
                          int64_t x)
{
    const int16_t *t = use_lo ? l->lo : l->le;
    unsigned last = use_lo ? CDP_LUT_LO_ENTRIES - 1 : CDP_LUT_LE_ENTRIES - 1;
    if (sd->flow == SIDE_HIT) {
        return hit_value(t, sd);
    }
    if (sd->flow == SIDE_UFLOW) {
        return edge_value(use_lo ? &l->lo_uflow : &l->le_uflow, t[0], x);
    }
    return edge_value(use_lo ? &l->lo_oflow : &l->le_oflow, t[last], x);
}

int32_t cdp_lut_eval(const struct cdp_lut *l, int64_t x, enum cdp_lut_class *cls)
{
    struct cdp_side le_sd = { SIDE_UFLOW, 0, 0 };
    struct cdp_side lo_sd = { SIDE_UFLOW, 0, 0 };
    int use_lo;

    /* LE: input <= start underflows (ref: less_than_win_s, "<=") */
    if (x > l->le_start_cmp) {
        uint64_t dec = (uint64_t)(x - l->le_start_cmp);
        if (l->le_exp) {
            exp_index(dec, l->le_index_offset, &le_sd);
        } else {
            linear_index(dec, l->le_select, CDP_LUT_LE_ENTRIES - 1, &le_sd);
        }
    }
    if (x > l->lo_start_cmp) {
        linear_index((uint64_t)(x - l->lo_start_cmp), l->lo_select,
                     CDP_LUT_LO_ENTRIES - 1, &lo_sd);
    }

    /* Priority rules.  ref: NV_NVDLA_CDP_DP_lut.v lut_X_sel / lut_Y_sel. */
    if (le_sd.flow == SIDE_UFLOW && lo_sd.flow == SIDE_UFLOW) {
        *cls = CDP_LUT_CLASS_UFLOW;
        use_lo = l->uflow_lo;
    } else if (le_sd.flow == SIDE_OFLOW && lo_sd.flow == SIDE_OFLOW) {
        *cls = CDP_LUT_CLASS_OFLOW;
        use_lo = l->oflow_lo;
    } else if (le_sd.flow == SIDE_HIT && lo_sd.flow != SIDE_HIT) {
        *cls = CDP_LUT_CLASS_LE_HIT;
        use_lo = 0;
    } else if (le_sd.flow != SIDE_HIT && lo_sd.flow == SIDE_HIT) {
        *cls = CDP_LUT_CLASS_LO_HIT;
        use_lo = 1;
    } else {
        /* both hit, or one underflows while the other overflows */
        *cls = CDP_LUT_CLASS_HYBRID;
        use_lo = l->hybrid_lo;
    }
    return side_value(l, use_lo, use_lo ? &lo_sd : &le_sd, x);
}
