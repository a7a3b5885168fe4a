/*
 * Unit tests of the element-wise loops of the pipeline (src/arith/lanes.h):
 * the SDP X stage and output converter (src/arith/sdp_lanes.c) and the
 * byte transposes (src/arith/atoms.c), for every loop variant this CPU
 * runs, against per-element references: the SDP arithmetic of
 * common/sdpref.c (the facts it encodes are listed in sdpref.h: rounding
 * shifts, X stage, converter to 17 bits then int8 or int16) and plain loops
 * written here for the transposes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "arith/atoms.h"
#include "arith/sdp_lanes.h"
#include "common/rng.h"
#include "common/sdpref.h"

static uint64_t rng;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng, lo, hi);
}

/* A value of every magnitude, often small. */
static int32_t rnd_value(void)
{
    uint64_t r = splitmix64_next(&rng);
    switch (r % 4) {
    case 0:
        return (int32_t)(uint32_t)(r >> 32);
    case 1:
        return (int32_t)rnd(0, 2000) - 1000;
    case 2:
        return (int32_t)((uint32_t)(r >> 32) >> rnd(0, 31)) * ((r & 8) ? -1 : 1);
    default:
        return (r & 16) ? INT32_MAX - (int32_t)rnd(0, 3) : INT32_MIN + (int32_t)rnd(0, 3);
    }
}

/* ---- X stage ------------------------------------------------------------------- */

struct xcase {
    enum sdp_lane_alu alu;
    int mul_bypass, prelu, relu_bypass;
    unsigned shift;
};

/* The X stage of common/sdpref.c with the lane loop's settings (no ALU
 * shift: the operands come shifted). */
static int32_t ref_x(const struct xcase *k, int32_t x, int32_t op, int32_t mop)
{
    static const unsigned algo[] = { [SDP_LANE_ALU_MAX] = 0, [SDP_LANE_ALU_MIN] = 1,
                                     [SDP_LANE_ALU_SUM] = 2, [SDP_LANE_ALU_BYPASS] = 0 };
    struct sdp_x st = { 0 };
    st.alu_bypass = k->alu == SDP_LANE_ALU_BYPASS;
    st.algo = algo[k->alu];
    st.mul_bypass = (unsigned)k->mul_bypass;
    st.prelu = (unsigned)k->prelu;
    st.relu_bypass = (unsigned)k->relu_bypass;
    st.mul_shift = k->shift;
    return (int32_t)ref_sdp_x(&st, x, op, mop);
}

/* Inputs of check_x: any value, int8-scale values (the 32-bit lanes), or
 * values whose product with the MUL operand comes near 2^31 (the edge of
 * the 32-bit lanes). */
enum xinputs { X_ANY, X_SMALL, X_EDGE };

static int32_t x_input(enum xinputs kind, int32_t mv)
{
    if (kind == X_ANY) {
        return rnd_value();
    }
    if (kind == X_SMALL) {
        return (int32_t)rnd(0, 4000) - 2000;
    }
    /* |x * mv| just below or just above 2^31 */
    int64_t m = mv < 0 ? -(int64_t)mv : mv;
    int64_t lim = INT32_MAX / (m ? m : 1) + (int64_t)rnd(0, 4) - 2;
    lim = lim > INT32_MAX ? INT32_MAX : lim;
    uint32_t v = rnd(0, 1) ? rnd(0, (uint32_t)lim) : (uint32_t)lim - rnd(0, 3);
    return rnd(0, 1) ? (int32_t)v : -(int32_t)v;
}

/* An X stage's random configuration (every ALU kind, MUL/PReLU/ReLU on or
 * bypassed, small shifts mostly, any up to 63). */
static void random_xcase(struct xcase *k)
{
    k->alu = (enum sdp_lane_alu)rnd(0, 3);
    k->mul_bypass = (int)rnd(0, 1);
    k->prelu = (int)rnd(0, 1);
    k->relu_bypass = (int)rnd(0, 1);
    k->shift = rnd(0, 4) ? rnd(0, 20) : rnd(0, 63);
}

static void check_x(enum dla_lanes_isa isa, size_t n, enum xinputs kind)
{
    struct xcase k;
    random_xcase(&k);
    struct sdp_lane_x_cfg cfg;
    dla_sdp_lane_x_init(&cfg, k.alu, k.mul_bypass, k.prelu, k.relu_bypass, k.shift);
    int per_a = k.alu != SDP_LANE_ALU_BYPASS && rnd(0, 1);
    int per_m = !k.mul_bypass && rnd(0, 1);
    int32_t av = k.alu == SDP_LANE_ALU_BYPASS ? 0 : rnd_value();
    int32_t mv = k.mul_bypass ? 1 : (int32_t)rnd(0, 0xffff) - 32768;
    if (kind != X_ANY) {
        int32_t span = kind == X_EDGE ? 3 : 300; /* operands near 0 */
        av = k.alu == SDP_LANE_ALU_BYPASS ? 0 : (int32_t)rnd(0, 2 * (uint32_t)span) - span;
        per_a = per_a && kind == X_SMALL;
        per_m = per_m && kind == X_SMALL;
        if (!k.mul_bypass) {
            mv = kind == X_SMALL ? (int32_t)rnd(0, 600) - 300 : (int32_t)rnd(0, 0xffff) - 32768;
        }
    }
    int32_t *d = malloc(n * sizeof(*d)), *in = malloc(n * sizeof(*in));
    int32_t *ao = malloc(n * sizeof(*ao)), *mo = malloc(n * sizeof(*mo));
    assert_true(d && in && ao && mo);
    for (size_t i = 0; i < n; i++) {
        in[i] = x_input(kind, mv);
        ao[i] = kind == X_ANY ? rnd_value() : (int32_t)rnd(0, 600) - 300;
        mo[i] = kind == X_ANY ? (int32_t)rnd(0, 0xffff) - 32768 : (int32_t)rnd(0, 600) - 300;
    }
    /* in place, or from another array */
    memcpy(d, in, n * sizeof(*d));
    const int32_t *src = rnd(0, 1) ? d : in;
    dla_sdp_lanes_x(isa, &cfg, src, d, n, per_a ? ao : NULL, av, per_m ? mo : NULL, mv);
    for (size_t i = 0; i < n; i++) {
        int32_t want = ref_x(&k, in[i], per_a ? ao[i] : av, per_m ? mo[i] : mv);
        if (d[i] != want) {
            fail_msg("%s X alu %d mul_bypass %d prelu %d relu_bypass %d shift %u: element "
                     "%zu of %zu: x %d op %d mop %d -> %d, reference %d",
                     dla_lanes_isa_name(isa), (int)k.alu, k.mul_bypass, k.prelu,
                     k.relu_bypass, k.shift, i, n, in[i], per_a ? ao[i] : av,
                     per_m ? mo[i] : mv, d[i], want);
        }
    }
    free(d);
    free(in);
    free(ao);
    free(mo);
}

/* ---- output converter ------------------------------------------------------------ */

static void check_cvt(enum dla_lanes_isa isa, size_t n, int small_inputs)
{
    int32_t offset = rnd(0, 1) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
    unsigned shift = rnd(0, 4) ? rnd(0, 16) : rnd(0, 63);
    unsigned bits = rnd(0, 3) ? 8 : 16;
    struct sdp_lane_cvt cfg;
    dla_sdp_lane_cvt_init(&cfg, offset, scale, shift, bits);
    int32_t *d = malloc(n * sizeof(*d)), *in = malloc(n * sizeof(*in));
    assert_true(d && in);
    for (size_t i = 0; i < n; i++) {
        in[i] = small_inputs ? (int32_t)rnd(0, 4000) - 2000 : rnd_value();
    }
    if (cfg.narrow_ok && rnd(0, 1)) {
        /* the edges of the 32-bit range */
        in[0] = cfg.narrow_lo;
        in[n - 1] = cfg.narrow_hi;
    }
    memcpy(d, in, n * sizeof(*d));
    const int32_t *src = rnd(0, 1) ? d : in;
    uint32_t sat = dla_sdp_lanes_cvt(isa, &cfg, src, d, n);
    uint32_t want_sat = 0;
    for (size_t i = 0; i < n; i++) {
        int s;
        int64_t r = ref_rshift(((int64_t)in[i] - offset) * scale, shift, 49, 17, &s);
        int32_t want = (int32_t)clamp_bits(r, bits);
        want_sat += (uint32_t)s;
        if (d[i] != want) {
            fail_msg("%s CVT offset %d scale %d shift %u bits %u: element %zu of %zu: %d -> "
                     "%d, reference %d",
                     dla_lanes_isa_name(isa), offset, scale, shift, bits, i, n, in[i], d[i],
                     want);
        }
    }
    assert_int_equal(sat, want_sat);
    free(d);
    free(in);
}

/* The 32-bit range is exact: |v| plus the rounding's half stays within
 * int32 inside it (the passes round with one add), one past each edge it
 * does not. */
static void test_cvt_narrow_range(void **state)
{
    (void)state;
    rng = 0x1a9e0001u;
    for (int i = 0; i < 2000; i++) {
        int32_t offset = rnd_value();
        int32_t scale = (int32_t)rnd(0, 0xffff) - 32768;
        const unsigned shift = rnd(0, 31);
        const int64_t lim = INT32_MAX - (shift ? (int64_t)1 << (shift - 1) : 0);
        struct sdp_lane_cvt cfg;
        dla_sdp_lane_cvt_init(&cfg, offset, scale, shift, 8);
        if (!cfg.narrow_ok) {
            assert_true(scale != 0);
            continue;
        }
        int64_t lo = (int64_t)cfg.narrow_lo * scale - (int64_t)offset * scale;
        int64_t hi = (int64_t)cfg.narrow_hi * scale - (int64_t)offset * scale;
        assert_true(lo >= -lim && lo <= lim);
        assert_true(hi >= -lim && hi <= lim);
        if (cfg.narrow_lo > INT32_MIN) {
            int64_t v = ((int64_t)cfg.narrow_lo - 1 - offset) * scale;
            assert_true(v < -lim || v > lim);
        }
        if (cfg.narrow_hi < INT32_MAX) {
            int64_t v = ((int64_t)cfg.narrow_hi + 1 - offset) * scale;
            assert_true(v < -lim || v > lim);
        }
    }
}

/* The converter's 17-bit saturation flag on input x (the reference's). */
static int cvt_flag(int32_t x, int32_t offset, int32_t scale, unsigned shift)
{
    int s;
    (void)ref_rshift(((int64_t)x - offset) * scale, shift, 49, 17, &s);
    return s;
}

/* [quiet_lo, quiet_hi] is exactly the inputs without the saturation flag:
 * none inside (its ends and random points), flagged one past each end. */
static void test_cvt_quiet_range(void **state)
{
    (void)state;
    rng = 0x1a9e000bu;
    for (int i = 0; i < 3000; i++) {
        int32_t offset = rnd(0, 1) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
        int32_t scale = rnd(0, 1) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
        unsigned shift = rnd(0, 3) ? rnd(0, 31) : rnd(0, 63);
        if (i % 4 == 0) { /* the identity converter's closed form */
            offset = 0;
            scale = 1;
            shift = 0;
        }
        struct sdp_lane_cvt cfg;
        dla_sdp_lane_cvt_init(&cfg, offset, scale, shift, 8);
        assert_true(cfg.quiet_lo <= offset && offset <= cfg.quiet_hi);
        assert_false(cvt_flag(cfg.quiet_lo, offset, scale, shift));
        assert_false(cvt_flag(cfg.quiet_hi, offset, scale, shift));
        if (cfg.quiet_lo > INT32_MIN) {
            assert_true(cvt_flag(cfg.quiet_lo - 1, offset, scale, shift));
        }
        if (cfg.quiet_hi < INT32_MAX) {
            assert_true(cvt_flag(cfg.quiet_hi + 1, offset, scale, shift));
        }
        for (int j = 0; j < 16; j++) {
            int64_t x = cfg.quiet_lo + (int64_t)(((uint64_t)rnd_value() & 0xffffffffu) %
                                                 ((uint64_t)((int64_t)cfg.quiet_hi - cfg.quiet_lo) + 1));
            assert_false(cvt_flag((int32_t)x, offset, scale, shift));
        }
    }
}

/* around the 8-, 16- and 32-element steps of the variants (49: a 7x7 plane) */
static const size_t run_lengths[] = { 1, 5, 31, 32, 33, 64, 95, 257, 1000, 15, 16, 17, 49, 63 };
#define N_LENGTHS (sizeof(run_lengths) / sizeof(run_lengths[0]))

static void test_x_stage(void **state)
{
    (void)state;
    rng = 0x1a9e0002u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (int i = 0; i < 900; i++) {
            check_x((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS], (enum xinputs)(i % 3));
        }
    }
}

static void test_cvt(void **state)
{
    (void)state;
    rng = 0x1a9e0003u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (int i = 0; i < 400; i++) {
            check_cvt((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS], i % 2);
        }
    }
}

/* ---- X stage and converter fused ---------------------------------------------------- */

/*
 * dla_sdp_lanes_x_cvt on a random X stage (register operands) and converter
 * against ref_x then the converter of sdpref.c: equal values and
 * saturations where it runs; where it declines (the run is not exact in
 * 32-bit lanes) src is unchanged (in place: nothing is written).  Inputs of every kind of check_x: the
 * small ones take the fused pass, the edges and any values often not.
 */
static int check_x_cvt(enum dla_lanes_isa isa, size_t n, enum xinputs kind)
{
    struct xcase k;
    random_xcase(&k);
    struct sdp_lane_x_cfg xc;
    dla_sdp_lane_x_init(&xc, k.alu, k.mul_bypass, k.prelu, k.relu_bypass, k.shift);
    int32_t span = kind == X_ANY ? 32768 : kind == X_EDGE ? 3 : 300;
    int32_t av = k.alu == SDP_LANE_ALU_BYPASS ? 0
                 : kind == X_ANY && rnd(0, 1) ? rnd_value()
                                              : (int32_t)rnd(0, 2 * (uint32_t)span) - span;
    int32_t mv = k.mul_bypass ? 1 : kind == X_SMALL ? (int32_t)rnd(0, 600) - 300
                                                    : (int32_t)rnd(0, 0xffff) - 32768;
    int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
    unsigned cshift = rnd(0, 4) ? rnd(0, 16) : rnd(0, 63);
    unsigned bits = rnd(0, 3) ? 8 : 16;
    if (rnd(0, 3) == 0) { /* the identity converter (the compiler's, after BS) */
        offset = 0;
        scale = 1;
        cshift = 0;
    }
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, bits);
    int32_t *d = malloc(n * sizeof(*d)), *in = malloc(n * sizeof(*in));
    assert_true(d && in);
    for (size_t i = 0; i < n; i++) {
        in[i] = x_input(kind, mv);
    }
    memcpy(d, in, n * sizeof(*d));
    const int32_t *src = rnd(0, 1) ? d : in;
    uint32_t sat = 0, want_sat = 0;
    int done = dla_sdp_lanes_x_cvt(isa, &xc, &cc, src, d, n, av, mv, &sat);
    for (size_t i = 0; i < n; i++) {
        int s;
        int64_t x = ref_x(&k, in[i], av, mv);
        int32_t want = done ? (int32_t)clamp_bits(ref_rshift((x - offset) * scale, cshift, 49,
                                                             17, &s), bits)
                            : in[i];
        want_sat += done ? (uint32_t)s : 0;
        if (!done && src != d) {
            want = d[i]; /* a separate dst may hold a declined pass */
            assert_int_equal(in[i], src[i]);
        }
        if (d[i] != want) {
            fail_msg("%s X+CVT (fused %d) alu %d mul_bypass %d prelu %d relu_bypass %d shift "
                     "%u av %d mv %d, CVT offset %d scale %d shift %u bits %u: element %zu of "
                     "%zu: %d -> %d, reference %d",
                     dla_lanes_isa_name(isa), done, (int)k.alu, k.mul_bypass, k.prelu,
                     k.relu_bypass, k.shift, av, mv, offset, scale, cshift, bits, i, n, in[i],
                     d[i], want);
        }
    }
    assert_int_equal(sat, want_sat);
    free(d);
    free(in);
    return done;
}

static void test_x_cvt(void **state)
{
    (void)state;
    rng = 0x1a9e0006u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int fused = 0, cases = 1800;
        for (int i = 0; i < cases; i++) {
            fused += check_x_cvt((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS],
                                 (enum xinputs)(i % 3));
        }
        /* both outcomes are exercised */
        assert_true(fused > cases / 10 && fused < cases - cases / 10);
    }
}

#define CHAIN8_CANARY 0xa5

/*
 * dla_sdp_lanes_x_cvt_atoms8: the 8 planes of a surface (real channels of
 * input, zeros after) with per-channel operands, pixels [j0, j1), against
 * ref_x then the converter per element: the atoms' bytes and the
 * saturations where it runs, nothing written outside the pixels' atoms;
 * it runs on AVX2 only.  Returns whether it ran, plus ATOMS8_SATURATED
 * when it ran and counted saturations.  `mode`: ATOMS8_APART channels far
 * apart; ATOMS8_REQUANT the compiler's requantisation after a convolution
 * (ALU sum, MUL per channel of either sign, truncation 0..31 with 0 and 31
 * often, ReLU or not, mostly the identity converter) on accumulators from
 * small to ~2^22, so some runs make the 17-bit saturation flag and most
 * do not (the pass skips counting when it proves there is none).
 */
enum { ATOMS8_PLAIN, ATOMS8_APART, ATOMS8_REQUANT };
#define ATOMS8_SATURATED 2
#define ATOMS8_IDENTITY 4 /* (returned too when the converter was the identity) */

static void requant_case(struct xcase *k)
{
    static const unsigned shifts[] = { 0, 31, 1, 30, 15 };
    k->alu = SDP_LANE_ALU_SUM;
    k->mul_bypass = 0;
    k->prelu = 0;
    k->relu_bypass = (int)rnd(0, 1);
    k->shift = rnd(0, 1) ? shifts[rnd(0, 4)] : rnd(0, 31);
}

static int check_x_cvt_atoms8(enum dla_lanes_isa isa, size_t plane, enum xinputs kind,
                              int mode)
{
    const int apart = mode == ATOMS8_APART;
    struct xcase k;
    random_xcase(&k);
    if (mode == ATOMS8_REQUANT) {
        requant_case(&k);
    }
    struct sdp_lane_x_cfg xc;
    dla_sdp_lane_x_init(&xc, k.alu, k.mul_bypass, k.prelu, k.relu_bypass, k.shift);
    int32_t span = kind == X_ANY ? 32768 : kind == X_EDGE ? 3 : 300;
    int32_t av[8], mv[8];
    for (int l = 0; l < 8; l++) {
        av[l] = k.alu == SDP_LANE_ALU_BYPASS ? 0 : (int32_t)rnd(0, 2 * (uint32_t)span) - span;
        mv[l] = k.mul_bypass ? 1 : kind == X_SMALL ? (int32_t)rnd(0, 600) - 300
                                                  : (int32_t)rnd(0, 0xffff) - 32768;
    }
    int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
    unsigned cshift = rnd(0, 4) ? rnd(0, 16) : rnd(0, 63);
    if (mode == ATOMS8_REQUANT ? rnd(0, 3) != 0 : rnd(0, 2) == 0) {
        offset = 0;
        scale = 1;
        cshift = 0;
    }
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, 8);
    unsigned real = 1 + rnd(0, 7);
    size_t j0 = rnd(0, 1) ? 0 : rnd(0, (uint32_t)plane - 1);
    size_t j1 = rnd(0, 1) ? plane : j0 + 1 + rnd(0, (uint32_t)(plane - j0 - 1));
    int32_t *in = malloc(8 * plane * sizeof(*in));
    uint8_t *d = malloc(8 * plane + 16);
    assert_true(in && d);
    for (size_t i = 0; i < 8 * plane; i++) {
        in[i] = x_input(kind, mv[(i / plane) & 7]);
    }
    if (mode == ATOMS8_REQUANT) { /* accumulators of one magnitude, biases, scales */
        int32_t mag = (int32_t)1 << rnd(4, 22);
        for (size_t i = 0; i < 8 * plane; i++) {
            in[i] = (int32_t)rnd(0, 2 * (uint32_t)mag) - mag;
        }
        for (int l = 0; l < 8; l++) {
            av[l] = (int32_t)rnd(0, 2 * (uint32_t)mag) - mag;
            mv[l] = (int32_t)rnd(0, 0xffff) - 32768;
        }
    }
    if (apart) { /* channel 0 wide with MUL 1, the others narrow with a large MUL */
        for (size_t i = 0; i < 8 * plane; i++) {
            int l = (int)(i / plane);
            in[i] = l == 0 ? (int32_t)rnd(0, 1u << 25) - (1 << 24) : (int32_t)rnd(0, 4000) - 2000;
        }
        for (int l = 0; l < 8; l++) {
            mv[l] = l == 0 || k.mul_bypass ? 1 : 20000 + (int32_t)rnd(0, 10000);
            av[l] = k.alu == SDP_LANE_ALU_BYPASS ? 0 : (int32_t)rnd(0, 200) - 100;
        }
    }
    memset(d, CHAIN8_CANARY, 8 * plane + 16);
    uint32_t sat = 0, want_sat = 0;
    int done = dla_sdp_lanes_x_cvt_atoms8(isa, &xc, &cc, in, plane, real, j0, j1, av, mv, d, &sat);
    if (!dla_lanes_avx2_up(isa)) {
        assert_int_equal(done, 0);
    }
    if (done) { /* the count not wanted: the same decision and bytes */
        uint8_t *d3 = malloc(8 * plane + 16);
        assert_non_null(d3);
        memset(d3, CHAIN8_CANARY, 8 * plane + 16);
        assert_int_equal(dla_sdp_lanes_x_cvt_atoms8(isa, &xc, &cc, in, plane, real, j0, j1, av,
                                                    mv, d3, NULL),
                         done);
        assert_memory_equal(d, d3, 8 * plane + 16);
        free(d3);
    }
    if (isa == DLA_LANES_AVX512) { /* the AVX2 form's bytes and count where it runs (the
                                    * AVX-512 form also runs where only 64-bit products
                                    * are exact: atoms8_wide512) */
        uint8_t *d2 = malloc(8 * plane + 16);
        uint32_t sat2 = 0;
        assert_non_null(d2);
        memset(d2, CHAIN8_CANARY, 8 * plane + 16);
        int done2 = dla_sdp_lanes_x_cvt_atoms8(DLA_LANES_AVX2, &xc, &cc, in, plane, real, j0, j1,
                                               av, mv, d2, &sat2);
        assert_true(done || !done2);
        if (done2) {
            assert_memory_equal(d, d2, 8 * plane + 16);
            assert_int_equal(sat, sat2);
        }
        free(d2);
    }
    for (size_t j = j0; done && j < j1; j++) {
        for (unsigned l = 0; l < 8; l++) {
            int s;
            int64_t x = ref_x(&k, l < real ? in[l * plane + j] : 0, av[l], mv[l]);
            int32_t want = (int32_t)clamp_bits(ref_rshift((x - offset) * scale, cshift, 49, 17,
                                                          &s), 8);
            want_sat += (uint32_t)s;
            if (d[j * 8 + l] != (uint8_t)want) {
                fail_msg("%s X+CVT atoms8 alu %d mul_bypass %d prelu %d relu_bypass %d shift "
                         "%u, CVT offset %d scale %d shift %u: pixel %zu channel %u of %zu "
                         "(real %u): %d, reference %d",
                         dla_lanes_isa_name(isa), (int)k.alu, k.mul_bypass, k.prelu,
                         k.relu_bypass, k.shift, offset, scale, cshift, j, l, plane, real,
                         (int8_t)d[j * 8 + l], want);
            }
        }
    }
    assert_int_equal(sat, want_sat);
    for (size_t i = 0; i < 8 * plane + 16; i++) {
        if (i < j0 * 8 || i >= j1 * 8) {
            assert_int_equal(d[i], CHAIN8_CANARY);
        }
    }
    if (plane == 1) { /* the one-pixel form: the same decision, bytes and count */
        uint8_t p8[16];
        uint32_t p8_sat = 0;
        memset(p8, CHAIN8_CANARY, sizeof(p8));
        int p8_done = dla_sdp_lanes_x_cvt_pixel8(isa, &xc, &cc, in, real, av, mv, p8, &p8_sat);
        assert_true(done || !p8_done); /* (pixel8: the 32-bit lanes only) */
        if (p8_done) {
            assert_memory_equal(p8, d, 8);
            assert_int_equal(p8_sat, sat);
        }
        for (size_t i = done ? 8 : 0; i < sizeof(p8); i++) {
            assert_int_equal(p8[i], CHAIN8_CANARY);
        }
    }
    free(in);
    free(d);
    const int identity = offset == 0 && scale == 1 && cshift == 0;
    return done | (done && sat ? ATOMS8_SATURATED : 0) | (identity ? ATOMS8_IDENTITY : 0);
}

static void test_x_cvt_atoms8(void **state)
{
    (void)state;
    rng = 0x1a9e0009u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int done = 0, cases = 1800, apart_done = 0, apart_cases = 300;
        for (int i = 0; i < cases; i++) {
            done += check_x_cvt_atoms8((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS],
                                       (enum xinputs)(i % 3), ATOMS8_PLAIN) & 1;
        }
        /* channels whose joint range is too wide where each one's is not
         * (a fully connected layer's outputs) still run in the one pass */
        for (int i = 0; i < apart_cases; i++) {
            apart_done += check_x_cvt_atoms8((enum dla_lanes_isa)isa,
                                             run_lengths[i % N_LENGTHS], X_SMALL, ATOMS8_APART) &
                          1;
        }
        if (dla_lanes_avx2_up((enum dla_lanes_isa)isa)) { /* both outcomes are exercised */
            assert_true(done > cases / 10 && done < cases - cases / 10);
            assert_true(apart_done > apart_cases / 2); /* 106 of 300 on their joint range */
        }
    }
}

/* The requantisation form (check_x_cvt_atoms8's ATOMS8_REQUANT): runs with
 * and without saturations both taken by the pass, bytes and counts exact. */
static void test_x_cvt_atoms8_requant(void **state)
{
    (void)state;
    rng = 0x1a9e000au;
    if (!dla_lanes_supported(DLA_LANES_AVX2)) {
        skip();
    }
    for (int isa = DLA_LANES_AVX2; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int done = 0, saturated = 0, cases = 1500;
        for (int i = 0; i < cases; i++) {
            int r = check_x_cvt_atoms8((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS], X_ANY,
                                       ATOMS8_REQUANT);
            done += r & 1;
            saturated += (r & ATOMS8_SATURATED) != 0;
            /* AVX-512: with the identity converter every run is taken, in
             * 64-bit products where 32 bits do not hold (atoms8_wide512) */
            if (isa == DLA_LANES_AVX512 && (r & ATOMS8_IDENTITY) && !(r & 1)) {
                fail_msg("an identity-converter requantisation refused on AVX-512 (case %d)", i);
            }
        }
        assert_true(done > cases / 2);
        assert_true(saturated > cases / 20 && saturated < done - cases / 20);
    }
}

/*
 * dla_sdp_lanes_x_add_cvt_atoms8 (a residual addition fused after a
 * convolution): BS as the compiler's requantisation (ALU sum, MUL per
 * channel, truncation 0..31, ReLU or not), BN adding an int8 addend per
 * element << shl (its multiplier bypassed, ReLU or not), the converter,
 * against ref_x of both stages then the converter per element: the bytes
 * of pixels [j0, j1), the saturations, nothing written outside.  An
 * accumulator magnitude of 2^4..2^26 makes some runs too wide for the
 * 32-bit lanes (refused: 0).  `wide`: a projection's shape, accumulators
 * of 2^16..2^19 and multipliers of 2^13..2^15 with truncation 16..22,
 * whose products pass 2^31 (taken on AVX-512 in 64-bit products:
 * addcvt_wide512).  Returns whether it ran.
 */
static int check_x_add_cvt_atoms8(enum dla_lanes_isa isa, size_t plane, int wide)
{
    struct xcase k1, k2 = { SDP_LANE_ALU_SUM, 1, 0, (int)rnd(0, 1), 0 };
    requant_case(&k1);
    k1.alu = rnd(0, 3) ? SDP_LANE_ALU_SUM : SDP_LANE_ALU_BYPASS;
    if (wide) {
        k1.shift = rnd(16, 22);
    }
    struct sdp_lane_x_cfg x1, x2;
    dla_sdp_lane_x_init(&x1, k1.alu, k1.mul_bypass, k1.prelu, k1.relu_bypass, k1.shift);
    dla_sdp_lane_x_init(&x2, k2.alu, k2.mul_bypass, k2.prelu, k2.relu_bypass, k2.shift);
    const unsigned shl = rnd(0, 3) ? rnd(4, 9) : rnd(0, 23);
    int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 200) - 100 : 0;
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 0xffff) - 32768 : 1;
    unsigned cshift = scale == 1 ? 0 : rnd(0, 31);
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, 8);
    const unsigned real = rnd(0, 2) ? 8 : 1 + rnd(0, 7);
    const size_t j0 = rnd(0, 1) ? 0 : rnd(0, (uint32_t)plane - 1);
    const size_t j1 = rnd(0, 1) ? plane : j0 + 1 + rnd(0, (uint32_t)(plane - j0 - 1));
    int32_t *in = malloc(8 * plane * sizeof(*in)), av[8], mv[8];
    uint8_t *d = malloc(8 * plane + 16), *d2 = malloc(8 * plane + 16), *opd = malloc(8 * plane);
    assert_true(in && d && d2 && opd);
    const int32_t mag = (int32_t)1 << (wide ? rnd(16, 19) : rnd(4, 26));
    for (size_t i = 0; i < 8 * plane; i++) {
        in[i] = (int32_t)rnd(0, 2 * (uint32_t)mag) - mag;
        opd[i] = (uint8_t)rnd(0, 255);
    }
    for (int l = 0; l < 8; l++) {
        av[l] = k1.alu == SDP_LANE_ALU_BYPASS ? 0 : (int32_t)rnd(0, 2 * (uint32_t)mag) - mag;
        mv[l] = wide ? (int32_t)rnd(8192, 32767) * (rnd(0, 3) ? 1 : -1)
                     : (int32_t)rnd(0, 0xffff) - 32768;
    }
    memset(d, CHAIN8_CANARY, 8 * plane + 16);
    memset(d2, CHAIN8_CANARY, 8 * plane + 16);
    uint32_t sat = 0, want_sat = 0;
    const int done = dla_sdp_lanes_x_add_cvt_atoms8(isa, &x1, &x2, &cc, in, plane, real, j0, j1,
                                                    av, mv, opd, shl, d, &sat);
    if (!dla_lanes_avx2_up(isa)) {
        assert_int_equal(done, 0);
    }
    /* without the count: the same decision and bytes */
    assert_int_equal(dla_sdp_lanes_x_add_cvt_atoms8(isa, &x1, &x2, &cc, in, plane, real, j0, j1,
                                                    av, mv, opd, shl, d2, NULL),
                     done);
    if (done) {
        assert_memory_equal(d, d2, 8 * plane + 16);
    }
    for (size_t j = j0; done && j < j1; j++) {
        for (unsigned l = 0; l < 8; l++) {
            int sv;
            int64_t t = ref_x(&k1, l < real ? in[l * plane + j] : 0, av[l], mv[l]);
            t = ref_x(&k2, (int32_t)t, (int32_t)(int8_t)opd[j * 8 + l] * (1 << shl), 1);
            int32_t want = (int32_t)clamp_bits(ref_rshift((t - offset) * scale, cshift, 49, 17,
                                                          &sv), 8);
            want_sat += (uint32_t)sv;
            if (d[j * 8 + l] != (uint8_t)want) {
                fail_msg("%s X+add+CVT atoms8: BS alu %d shift %u relu_bypass %d, BN relu_bypass "
                         "%d, shl %u, CVT offset %d scale %d shift %u: pixel %zu channel %u of "
                         "%zu (real %u): %d, reference %d",
                         dla_lanes_isa_name(isa), (int)k1.alu, k1.shift, k1.relu_bypass,
                         k2.relu_bypass, shl, offset, scale, cshift, j, l, plane, real,
                         (int8_t)d[j * 8 + l], want);
            }
        }
    }
    assert_int_equal(sat, want_sat);
    for (size_t i = 0; i < 8 * plane + 16; i++) {
        if (i < j0 * 8 || i >= j1 * 8) { /* (refused: the pixels' atoms may be written) */
            assert_int_equal(d[i], CHAIN8_CANARY);
        }
    }
    free(in);
    free(d);
    free(d2);
    free(opd);
    return done;
}

static void test_x_add_cvt_atoms8(void **state)
{
    (void)state;
    rng = 0x1a9e000bu;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int done = 0, cases = 1500, wide_done = 0, wide_cases = 400;
        for (int i = 0; i < cases; i++) {
            done += check_x_add_cvt_atoms8((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS],
                                           0);
        }
        for (int i = 0; i < wide_cases; i++) {
            wide_done += check_x_add_cvt_atoms8((enum dla_lanes_isa)isa,
                                                run_lengths[i % N_LENGTHS], 1);
        }
        if (dla_lanes_avx2_up((enum dla_lanes_isa)isa)) { /* both outcomes are exercised */
            assert_true(done > cases / 3 && done < cases - cases / 10);
        }
        if (isa == DLA_LANES_AVX512) { /* the wide ones in 64-bit products */
            assert_true(wide_done > wide_cases / 2);
        }
    }
}

/*
 * dla_sdp_lanes_x2_cvt_atoms8 (a pre-quantized model's requantization in
 * two multipliers, src/compiler/lower_conv.c quantize_two_stage): BS with
 * an ALU sum or bypass, a 15-bit multiplier and truncation 0..3, BN with a
 * sum, a 15-bit multiplier and truncation 14..40 (its products pass 2^31),
 * either ReLU or not, any converter with 8-bit output, on accumulators of
 * 2^4..2^26 and a few at the int32 ends (BS then saturates), or (a
 * quarter of the cases, `edge`) both stages passing x to the converter at
 * the ends of its 17-bit flag (edge 2: through BS's 32-bit form, BN past
 * 2^31 and the offset-only converter), against ref_x of both stages then
 * the converter: the bytes of pixels [j0, j1), the
 * saturations, nothing written outside.  AVX-512 takes every case; the
 * other instruction sets none (0, nothing written).
 */
static void check_x2_cvt_atoms8(enum dla_lanes_isa isa, size_t plane, unsigned edge)
{
    struct xcase k1 = { rnd(0, 3) ? SDP_LANE_ALU_SUM : SDP_LANE_ALU_BYPASS, 0, 0,
                        (int)rnd(0, 1), rnd(0, 3) },
                 k2 = { SDP_LANE_ALU_SUM, 0, 0, (int)rnd(0, 1), rnd(14, 40) };
    if (edge) { /* both stages pass x (edge 2: x * 2^14 * 2^14 >> 28): the converter's inputs */
        k1 = (struct xcase){ SDP_LANE_ALU_BYPASS, 0, 0, 1, 0 };
        k2 = (struct xcase){ SDP_LANE_ALU_SUM, 0, 0, 1, edge == 2 ? 28 : 0 };
    }
    struct sdp_lane_x_cfg x1, x2;
    dla_sdp_lane_x_init(&x1, k1.alu, k1.mul_bypass, k1.prelu, k1.relu_bypass, k1.shift);
    dla_sdp_lane_x_init(&x2, k2.alu, k2.mul_bypass, k2.prelu, k2.relu_bypass, k2.shift);
    const int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 400) - 200 : 0;
    const int32_t scale = !edge && rnd(0, 2) ? (int32_t)rnd(0, 0xffff) - 32768 : 1;
    const unsigned cshift = edge == 1 ? rnd(1, 14) : scale == 1 ? 0 : rnd(0, 40);
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, 8);
    const unsigned real = rnd(0, 2) ? 8 : 1 + rnd(0, 7);
    const size_t j0 = rnd(0, 1) ? 0 : rnd(0, (uint32_t)plane - 1);
    const size_t j1 = rnd(0, 1) ? plane : j0 + 1 + rnd(0, (uint32_t)(plane - j0 - 1));
    int32_t *in = malloc(8 * plane * sizeof(*in)), a1[8], m1[8], a2[8], m2[8];
    uint8_t *d = malloc(8 * plane + 16), *d2 = malloc(8 * plane + 16);
    assert_true(in && d && d2);
    const int32_t mag = (int32_t)1 << rnd(4, 26);
    for (size_t i = 0; i < 8 * plane; i++) {
        in[i] = rnd(0, 30) ? (int32_t)rnd(0, 2 * (uint32_t)mag) - mag
                           : (rnd(0, 1) ? INT32_MAX : INT32_MIN);
        if (edge) { /* about +-2^16 steps of the converter: its 17-bit flag's ends */
            const int32_t unit = (int32_t)1 << cshift;
            in[i] = offset + (rnd(0, 1) ? 65536 : -65536) * unit +
                    (int32_t)rnd(0, 2 * (uint32_t)unit) - unit;
        }
    }
    for (int l = 0; l < 8; l++) {
        a1[l] = k1.alu == SDP_LANE_ALU_BYPASS ? 0 : (int32_t)rnd(0, 2 * (uint32_t)mag) - mag;
        m1[l] = edge ? (edge == 2 ? 16384 : 1) : (int32_t)rnd(0, 0xffff) - 32768;
        a2[l] = edge ? 0 : (int32_t)rnd(0, 0xffff) - 32768;
        m2[l] = edge ? (edge == 2 ? 16384 : 1) : (int32_t)rnd(16384, 32767) * (rnd(0, 3) ? 1 : -1);
    }
    memset(d, CHAIN8_CANARY, 8 * plane + 16);
    memset(d2, CHAIN8_CANARY, 8 * plane + 16);
    uint32_t sat = 0, want_sat = 0;
    const int done = dla_sdp_lanes_x2_cvt_atoms8(isa, &x1, &x2, &cc, in, plane, real, j0, j1, a1,
                                                 m1, a2, m2, d, &sat);
    assert_int_equal(done, isa == DLA_LANES_AVX512);
    assert_int_equal(dla_sdp_lanes_x2_cvt_atoms8(isa, &x1, &x2, &cc, in, plane, real, j0, j1, a1,
                                                 m1, a2, m2, d2, NULL),
                     done);
    assert_memory_equal(d, d2, 8 * plane + 16);
    for (size_t j = j0; done && j < j1; j++) {
        for (unsigned l = 0; l < 8; l++) {
            int sv;
            int32_t t = ref_x(&k1, l < real ? in[l * plane + j] : 0, a1[l], m1[l]);
            t = ref_x(&k2, t, a2[l], m2[l]);
            int32_t want = (int32_t)clamp_bits(
                ref_rshift(((int64_t)t - offset) * scale, cshift, 49, 17, &sv), 8);
            want_sat += (uint32_t)sv;
            if (d[j * 8 + l] != (uint8_t)want) {
                fail_msg("%s X1+X2+CVT atoms8: BS alu %d shift %u relu_bypass %d, BN shift %u "
                         "relu_bypass %d, CVT offset %d scale %d shift %u: pixel %zu channel %u "
                         "of %zu (real %u): %d, reference %d",
                         dla_lanes_isa_name(isa), (int)k1.alu, k1.shift, k1.relu_bypass,
                         k2.shift, k2.relu_bypass, offset, scale, cshift, j, l, plane, real,
                         (int8_t)d[j * 8 + l], want);
            }
        }
    }
    assert_int_equal(sat, want_sat);
    for (size_t i = 0; i < 8 * plane + 16; i++) {
        if (!done || i < j0 * 8 || i >= j1 * 8) {
            assert_int_equal(d[i], CHAIN8_CANARY);
        }
    }
    free(in);
    free(d);
    free(d2);
}

static void test_x2_cvt_atoms8(void **state)
{
    (void)state;
    rng = 0x2b57c0deu;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (int i = 0; i < 1500; i++) {
            check_x2_cvt_atoms8((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS],
                                i % 4 == 3 ? 1 + i / 4 % 2 : 0);
        }
    }
}

/* ---- BS, BN and the converter chained ------------------------------------------------ */

/*
 * dla_sdp_lanes_chain on int8 or int16 inputs with random stages (each
 * present or not) and per-element operands drawn within the ranges given
 * to dla_sdp_lane_chain_init (the ends included), against ref_x of each
 * present stage then the converter of sdpref.c, values and saturations.
 * Returns whether the chain applied.
 */
static int check_chain(enum dla_lanes_isa isa, size_t n)
{
    struct xcase k[2];
    struct sdp_lane_x_cfg xc[2];
    int on[2] = {(int)rnd(0, 3) != 0, (int)rnd(0, 1)};
    int32_t lo[4], hi[4];
    for (int s = 0; s < 2; s++) {
        random_xcase(&k[s]);
        dla_sdp_lane_x_init(&xc[s], k[s].alu, k[s].mul_bypass, k[s].prelu, k[s].relu_bypass,
                            k[s].shift);
        /* ALU operand: a register value or an int8 << shift; MUL: 16 bits */
        int32_t a = (int32_t)rnd(0, 255) - 128, m = (int32_t)rnd(0, 0xffff) - 32768;
        unsigned sh = rnd(0, 24);
        int per_a = (int)rnd(0, 1), per_m = (int)rnd(0, 1);
        lo[2 * s] = per_a ? (int32_t)((uint32_t)-128 << sh) : a * (1 << (sh & 7));
        hi[2 * s] = per_a ? (int32_t)(127u << sh) : lo[2 * s];
        lo[2 * s + 1] = per_m ? (int32_t)rnd(0, 300) - 300 : (rnd(0, 1) ? m : (int32_t)rnd(0, 40));
        hi[2 * s + 1] = per_m ? lo[2 * s + 1] + (int32_t)rnd(0, 600) : lo[2 * s + 1];
        if (k[s].alu == SDP_LANE_ALU_BYPASS) {
            lo[2 * s] = hi[2 * s] = 0;
        }
        if (k[s].mul_bypass) {
            lo[2 * s + 1] = hi[2 * s + 1] = 1;
        }
    }
    unsigned bits = rnd(0, 3) ? 8 : 16;
    int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
    unsigned cshift = rnd(0, 4) ? rnd(0, 16) : rnd(0, 63);
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, bits);
    struct sdp_lane_chain ch;
    int32_t in_lo = bits == 8 ? -128 : -32768, in_hi = -in_lo - 1;
    if (!dla_sdp_lane_chain_init(&ch, on[0] ? &xc[0] : NULL, on[1] ? &xc[1] : NULL, &cc, in_lo,
                                 in_hi, lo, hi)) {
        return 0;
    }
    int32_t *in = malloc(n * sizeof(*in)), *d = malloc(n * sizeof(*d));
    int32_t *op[4];
    assert_true(in && d);
    for (int j = 0; j < 4; j++) {
        op[j] = malloc(n * sizeof(int32_t));
        assert_true(op[j] != NULL);
        int absent = !on[j / 2];
        for (size_t i = 0; i < n; i++) {
            uint32_t r = rnd(0, 9);
            /* in [lo, hi], computed modulo 2^32 (the span may exceed INT32_MAX) */
            uint32_t span = (uint32_t)hi[j] - (uint32_t)lo[j];
            int32_t v = r == 0 ? lo[j] : r == 1 ? hi[j]
                                                : (int32_t)((uint32_t)lo[j] + rnd(0, span));
            op[j][i] = absent ? (j & 1) : v;
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rnd(0, 9);
        in[i] = r == 0 ? in_lo : r == 1 ? in_hi : in_lo + (int32_t)rnd(0, (uint32_t)(in_hi - in_lo));
    }
    memcpy(d, in, n * sizeof(*d));
    /* an operand of one value (always so for an absent stage) as vals[] */
    const int32_t *ops[4];
    int32_t vals[4];
    for (int j = 0; j < 4; j++) {
        int one = !on[j / 2] || lo[j] == hi[j];
        vals[j] = op[j][0];
        for (size_t i = 0; one && i < n; i++) {
            op[j][i] = vals[j];
        }
        ops[j] = one && rnd(0, 1) ? NULL : op[j];
    }
    uint32_t sat = dla_sdp_lanes_chain(isa, &ch, d, d, n, ops, vals), want_sat = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = in[i];
        for (int s = 0; s < 2; s++) {
            x = on[s] ? ref_x(&k[s], (int32_t)x, op[2 * s][i], op[2 * s + 1][i]) : x;
        }
        int sa;
        int32_t want = (int32_t)clamp_bits(ref_rshift((x - offset) * scale, cshift, 49, 17, &sa),
                                           bits);
        want_sat += (uint32_t)sa;
        if (d[i] != want) {
            fail_msg("%s chain (BS %d BN %d) element %zu of %zu: %d -> %d, reference %d",
                     dla_lanes_isa_name(isa), on[0], on[1], i, n, in[i], d[i], want);
        }
    }
    assert_int_equal(sat, want_sat);
    for (int j = 0; j < 4; j++) {
        free(op[j]);
    }
    free(in);
    free(d);
    return 1;
}

static void test_chain(void **state)
{
    (void)state;
    rng = 0x1a9e0007u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int applied = 0, cases = 2000;
        for (int i = 0; i < cases; i++) {
            applied += check_chain((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS]);
        }
        /* both outcomes are exercised */
        assert_true(applied > cases / 10 && applied < cases - cases / 10);
    }
}

/*
 * dla_sdp_lanes_chain8: int8 inputs in memory, random stages (each present
 * or not), per-element operands as one-byte components (stride 1 or 2,
 * the ALU's shifted left by 0-24 as the ALU uses it) or one value, against
 * ref_x of each present stage then the converter of sdpref.c: the low
 * bytes and the saturations, in place or to another buffer, and nothing
 * written past the run.  Where the 32-bit chain refuses the converter's
 * products, its wide form (dla_sdp_lane_chain_init_wide, 8-bit outputs).
 * Returns 0 when neither applied, 1 the chain, 2 the wide one.
 */
static int check_chain8(enum dla_lanes_isa isa, size_t n)
{
    struct xcase k[2];
    struct sdp_lane_x_cfg xc[2];
    int on[2] = {(int)rnd(0, 3) != 0, (int)rnd(0, 1)};
    /* a third of the cases: the residual Add's form (chain8_residual) */
    int residual = rnd(0, 2) == 0;
    if (residual) {
        on[0] = on[1] = 1;
    }
    int32_t lo[4], hi[4];
    struct sdp_lane_op8 ops[4];
    uint8_t *ob[4] = {NULL, NULL, NULL, NULL};
    for (int j = 0; j < 4; j++) {
        int s = j / 2, per = residual ? j == 2 : on[s] && rnd(0, 1);
        if (j % 2 == 0) {
            random_xcase(&k[s]);
            if (residual && s == 0) {
                k[0].alu = rnd(0, 1) ? SDP_LANE_ALU_SUM : SDP_LANE_ALU_BYPASS;
                k[0].prelu = 0;
            } else if (residual) {
                k[1].alu = SDP_LANE_ALU_SUM;
                k[1].mul_bypass = 1;
                k[1].prelu = 0;
                k[1].shift = 0;
            }
        }
        ops[j].stride = residual && j == 2 ? 1 : 1 + rnd(0, 1);
        ops[j].shl = j % 2 ? 0 : rnd(0, 24);
        ops[j].p = NULL;
        ops[j].val = j % 2 ? (int32_t)rnd(0, 0xffff) - 32768 : (int32_t)rnd(0, 255) - 128;
        if (per) {
            ob[j] = malloc(n * ops[j].stride + 1);
            assert_true(ob[j] != NULL);
            for (size_t i = 0; i < n * ops[j].stride + 1; i++) {
                ob[j][i] = (uint8_t)rnd(0, 255);
            }
            ops[j].p = ob[j] + rnd(0, 1);
            if (ops[j].p + (n - 1) * ops[j].stride >= ob[j] + n * ops[j].stride + 1) {
                ops[j].p = ob[j];
            }
            lo[j] = (int32_t)((uint32_t)-128 << ops[j].shl);
            hi[j] = (int32_t)(127u << ops[j].shl);
        } else {
            lo[j] = hi[j] = ops[j].val;
        }
    }
    for (int s = 0; s < 2; s++) {
        dla_sdp_lane_x_init(&xc[s], k[s].alu, k[s].mul_bypass, k[s].prelu, k[s].relu_bypass,
                            k[s].shift);
        if (!on[s] || k[s].alu == SDP_LANE_ALU_BYPASS) {
            lo[2 * s] = hi[2 * s] = 0;
            ops[2 * s].p = NULL;
            ops[2 * s].val = 0;
        }
        if (!on[s] || k[s].mul_bypass) {
            lo[2 * s + 1] = hi[2 * s + 1] = 1;
            ops[2 * s + 1].p = NULL;
            ops[2 * s + 1].val = 1;
        }
    }
    unsigned bits = rnd(0, 3) ? 8 : 16;
    int32_t offset = rnd(0, 2) ? (int32_t)rnd(0, 200) - 100 : rnd_value();
    int32_t scale = rnd(0, 3) ? (int32_t)rnd(0, 8) - 4 : (int32_t)rnd(0, 0xffff) - 32768;
    unsigned cshift = rnd(0, 4) ? rnd(0, 16) : rnd(0, 63);
    if (residual && rnd(0, 1)) { /* the identity converter */
        offset = 0;
        scale = 1;
        cshift = 0;
    }
    struct sdp_lane_cvt cc;
    dla_sdp_lane_cvt_init(&cc, offset, scale, cshift, bits);
    struct sdp_lane_chain ch;
    int applied = dla_sdp_lane_chain_init(&ch, on[0] ? &xc[0] : NULL, on[1] ? &xc[1] : NULL,
                                          &cc, -128, 127, lo, hi);
    int wide = 0; /* the converter past 32 bits: its 64-bit form (8-bit outputs) */
    if (!applied && bits == 8) {
        applied = wide = dla_sdp_lane_chain_init_wide(&ch, on[0] ? &xc[0] : NULL,
                                                      on[1] ? &xc[1] : NULL, &cc, -128, 127, lo,
                                                      hi);
    }
    uint8_t *in = malloc(n + 1), *d = malloc(n + 1);
    assert_true(in && d);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rnd(0, 9);
        in[i] = r == 0 ? 0x80 : r == 1 ? 0x7f : (uint8_t)rnd(0, 255);
    }
    in[n] = d[n] = CHAIN8_CANARY;
    memcpy(d, in, n);
    int in_place = (int)rnd(0, 1);
    uint32_t sat = 0, want_sat = 0;
    if (applied) {
        sat = dla_sdp_lanes_chain8(isa, &ch, in_place ? d : in, d, n, ops);
    }
    if (applied && isa != DLA_LANES_GENERIC) { /* the generic form's bytes and count */
        uint8_t *g = malloc(n + 1);
        assert_non_null(g);
        g[n] = CHAIN8_CANARY;
        uint32_t gsat = dla_sdp_lanes_chain8(DLA_LANES_GENERIC, &ch, in, g, n, ops);
        assert_memory_equal(g, d, n + 1);
        assert_int_equal(gsat, sat);
        free(g);
    }
    for (size_t i = 0; applied && i < n; i++) {
        int64_t x = (int8_t)in[i];
        for (int s = 0; s < 2; s++) {
            int32_t op[2];
            for (int m = 0; m < 2; m++) {
                const struct sdp_lane_op8 *o = &ops[2 * s + m];
                op[m] = o->p ? (int32_t)((uint32_t)(int32_t)(int8_t)o->p[i * o->stride] << o->shl)
                             : o->val;
            }
            x = on[s] ? ref_x(&k[s], (int32_t)x, op[0], op[1]) : x;
        }
        int sa;
        int32_t want = (int32_t)clamp_bits(ref_rshift((x - offset) * scale, cshift, 49, 17, &sa),
                                           bits);
        want_sat += (uint32_t)sa;
        if (d[i] != (uint8_t)want) {
            fail_msg("%s chain8 (BS %d BN %d) element %zu of %zu: %d -> %d, reference %d",
                     dla_lanes_isa_name(isa), on[0], on[1], i, n, (int8_t)in[i], d[i],
                     (uint8_t)want);
        }
    }
    assert_int_equal(sat, want_sat);
    assert_int_equal(d[n], CHAIN8_CANARY);
    for (int j = 0; j < 4; j++) {
        free(ob[j]);
    }
    free(in);
    free(d);
    return applied ? 1 + wide : 0;
}

static void test_chain8(void **state)
{
    (void)state;
    rng = 0x1a9e0008u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        int applied = 0, wide = 0, cases = 2000;
        for (int i = 0; i < cases; i++) {
            const int r = check_chain8((enum dla_lanes_isa)isa, run_lengths[i % N_LENGTHS]);
            applied += r != 0;
            wide += r == 2;
        }
        assert_true(applied > cases / 10);
        assert_true(wide > cases / 20);
    }
}

/* ---- atoms ----------------------------------------------------------------------- */

#define CANARY 0x5a

static void check_transpose(enum dla_lanes_isa isa, size_t rows, size_t cols, int packed)
{
    size_t src_stride = cols + rnd(0, 9), dst_stride = rows + rnd(0, 3);
    if (packed) { /* output rows back to back (CDMA's 7-pixel lines), 8-byte atoms */
        dst_stride = rows;
        src_stride = cols < 8 ? 8 : src_stride;
    }
    if (packed == 2) { /* a line of whole 8-byte atoms (CDMA, 8 channels) */
        src_stride = 8;
    }
    size_t dst_bytes = dst_stride * cols + 8;
    uint8_t *src = malloc(src_stride * rows + 1);
    uint8_t *dst = malloc(dst_bytes);
    assert_true(src && dst);
    for (size_t i = 0; i < src_stride * rows; i++) {
        src[i] = (uint8_t)splitmix64_next(&rng);
    }
    memset(dst, CANARY, dst_bytes);
    dla_transpose_bytes(isa, src, src_stride, rows, cols, dst, dst_stride);
    for (size_t c = 0; c < cols; c++) {
        for (size_t r = 0; r < dst_stride; r++) {
            uint8_t want = r < rows ? src[r * src_stride + c] : CANARY;
            if (dst[c * dst_stride + r] != want) {
                fail_msg("%s transpose %zu x %zu (strides %zu, %zu): dst[%zu][%zu] = %u, want %u",
                         dla_lanes_isa_name(isa), rows, cols, src_stride, dst_stride, c, r,
                         dst[c * dst_stride + r], want);
            }
        }
    }
    for (size_t i = dst_stride * cols; i < dst_bytes; i++) {
        assert_int_equal(dst[i], CANARY);
    }
    free(src);
    free(dst);
}

/* dla_transpose_lines against a line-by-line scalar transpose: a surface
 * of `lines` lines, back to back on both sides (gap 0), with gaps between
 * lines (1: CBUF's other surfaces) or also between rows (2). */
static void check_transpose_lines(enum dla_lanes_isa isa, size_t rows, size_t cols, size_t lines,
                                  size_t gap)
{
    const size_t src_stride = cols <= 8 ? 8 : cols, dst_stride = rows + (gap > 1 ? rnd(0, 2) : 0);
    const size_t src_line = rows * src_stride + gap * rnd(0, 9);
    const size_t dst_line = dst_stride * cols + gap * rnd(0, 9);
    const size_t dst_bytes = dst_line * lines + 16;
    uint8_t *src = malloc(src_line * lines + 1), *dst = malloc(dst_bytes);
    assert_true(src && dst);
    for (size_t i = 0; i < src_line * lines; i++) {
        src[i] = (uint8_t)splitmix64_next(&rng);
    }
    memset(dst, CANARY, dst_bytes);
    dla_transpose_lines(isa, src, src_stride, rows, cols, dst, dst_stride, lines, src_line,
                        dst_line);
    for (size_t i = 0; i < dst_bytes; i++) {
        const size_t l = i / dst_line, c = i % dst_line / dst_stride, r = i % dst_line % dst_stride;
        const int in = l < lines && c < cols && r < rows;
        const uint8_t want = in ? src[l * src_line + r * src_stride + c] : CANARY;
        if (dst[i] != want) {
            fail_msg("%s transpose_lines %zu x %zu x %zu lines (gap %zu): byte %zu = %u, want %u",
                     dla_lanes_isa_name(isa), rows, cols, lines, gap, i, dst[i], want);
        }
    }
    free(src);
    free(dst);
}

static void check_atoms_from_planes(enum dla_lanes_isa isa, size_t plane, unsigned m)
{
    int32_t *planes = malloc(plane * m * sizeof(*planes));
    uint8_t *out = malloc(plane * m + 8);
    assert_true(planes && out);
    for (size_t i = 0; i < plane * m; i++) {
        planes[i] = rnd_value();
    }
    memset(out, CANARY, plane * m + 8);
    dla_atoms_from_planes(isa, planes, plane, m, out);
    for (size_t j = 0; j < plane; j++) {
        for (unsigned l = 0; l < m; l++) {
            uint8_t want = (uint8_t)((uint32_t)planes[l * plane + j] & 0xffu);
            if (out[j * m + l] != want) {
                fail_msg("%s atoms_from_planes plane %zu m %u: element %zu channel %u = %u, "
                         "want %u",
                         dla_lanes_isa_name(isa), plane, m, j, l, out[j * m + l], want);
            }
        }
    }
    for (size_t i = plane * m; i < plane * m + 8; i++) {
        assert_int_equal(out[i], CANARY);
    }
    free(planes);
    free(out);
}

static void test_atoms(void **state)
{
    (void)state;
    rng = 0x1a9e0004u;
    static const uint32_t sizes[] = { 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 56, 100 };
    const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
    static const uint32_t atoms[] = { 8, 16, 32 };
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (size_t i = 0; i < ns; i++) {
            for (size_t j = 0; j < ns; j++) {
                check_transpose((enum dla_lanes_isa)isa, sizes[i], sizes[j], 0);
            }
            for (size_t a = 0; a < 3; a++) {
                check_atoms_from_planes((enum dla_lanes_isa)isa, sizes[i] * rnd(1, 3), atoms[a]);
            }
        }
        for (size_t rows = 1; rows < 10; rows++) {
            for (size_t j = 0; j < ns; j++) {
                check_transpose((enum dla_lanes_isa)isa, rows, sizes[j], 1);
            }
        }
        for (size_t rows = 1; rows <= 140; rows++) { /* lines of 8-byte atoms, n channels */
            for (size_t n = 2; n <= 8; n++) {
                check_transpose((enum dla_lanes_isa)isa, rows, n, 2);
            }
        }
        static const uint32_t line_cols[] = { 1, 3, 8, 9, 16 };
        for (size_t rows = 1; rows <= 40; rows++) { /* surfaces: CDMA's put_int8 */
            for (size_t j = 0; j < 5; j++) {
                for (size_t lines = 0; lines <= 6; lines++) {
                    check_transpose_lines((enum dla_lanes_isa)isa, rows, line_cols[j], lines, 0);
                    check_transpose_lines((enum dla_lanes_isa)isa, rows, line_cols[j], lines, 1);
                    check_transpose_lines((enum dla_lanes_isa)isa, rows, line_cols[j], lines, 2);
                }
            }
        }
        for (size_t i = 0; i < ns; i++) { /* one channel of 8-byte atoms (CDMA, conv1) */
            check_transpose((enum dla_lanes_isa)isa, sizes[i], 1, 1);
            check_transpose((enum dla_lanes_isa)isa, sizes[i] + 20, 1, 1);
        }
    }
}

/* ---- memory elements (SDP's memory-input layers) ------------------------------- */

/* Widening of int8 / int16 elements, narrowing to their low bytes, and the
 * shifted operand components against sext() / ref_shl32() of sdpref.c, on
 * random bytes (every value of a byte, both signs of an int16), for every
 * shift without saturation including the largest (-2^31 reached exactly). */
static void check_mem_elems(enum dla_lanes_isa isa, size_t n)
{
    uint8_t *bytes = malloc(4 * n + 4), *back = malloc(2 * n + 8);
    int32_t *got = malloc((n + 8) * sizeof(int32_t));
    assert_true(bytes && back && got);
    for (size_t i = 0; i < 4 * n + 4; i++) {
        bytes[i] = (uint8_t)rnd(0, 255);
    }
    if (n > 1) { /* the extremes of both widths */
        bytes[0] = 0x80, bytes[1] = 0x7f, bytes[2] = 0x00, bytes[3] = 0x80;
    }
    for (unsigned b = 1; b <= 2; b++) {
        for (size_t i = 0; i < n + 8; i++) {
            got[i] = (int32_t)0x5a5a5a5a;
        }
        dla_sdp_lanes_widen(isa, bytes, b, got, n);
        for (size_t j = 0; j < n; j++) {
            uint64_t raw = b == 1 ? bytes[j] : (uint64_t)(bytes[2 * j] | (bytes[2 * j + 1] << 8));
            assert_int_equal(got[j], sext(raw, 8 * b));
        }
        assert_int_equal(got[n], (int32_t)0x5a5a5a5a);
        memset(back, CANARY, 2 * n + 8);
        dla_sdp_lanes_narrow(isa, got, n, b, back);
        assert_memory_equal(back, bytes, n * b);
        assert_int_equal(back[n * b], CANARY);
        for (size_t stride = b; stride <= 4; stride += b) {
            for (unsigned sh = 0; sh <= 32 - 8 * b; sh++) {
                dla_sdp_lanes_shl_ops(isa, bytes, stride, b, sh, got, n);
                for (size_t j = 0; j < n; j++) {
                    const uint8_t *e = bytes + j * stride;
                    int64_t v = sext(b == 1 ? e[0] : (uint64_t)(e[0] | (e[1] << 8)), 8 * b);
                    if (got[j] != ref_shl32(v, sh)) {
                        fail_msg("%s shl_ops n %zu bytes %u stride %zu shift %u: element %zu "
                                 "(%lld) = %d, want %lld",
                                 dla_lanes_isa_name(isa), n, b, stride, sh, j, (long long)v,
                                 got[j], (long long)ref_shl32(v, sh));
                    }
                }
            }
        }
    }
    free(bytes);
    free(back);
    free(got);
}

static void test_mem_elems(void **state)
{
    (void)state;
    rng = 0x1a9e0005u;
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (size_t i = 0; i < sizeof(run_lengths) / sizeof(run_lengths[0]); i++) {
            check_mem_elems((enum dla_lanes_isa)isa, run_lengths[i]);
        }
    }
}

/* dla_sdp_lanes_any_nonzero (SDP's D_STATUS): all-zero runs of every length
 * around the block and chunk sizes, and one non-zero byte anywhere. */
static void test_any_nonzero(void **state)
{
    (void)state;
    rng = 0x1a9e000bu;
    enum { MAXN = 1100 };
    uint8_t *b = calloc(MAXN, 1);
    assert_non_null(b);
    for (size_t n = 0; n <= MAXN; n++) {
        assert_int_equal(dla_sdp_lanes_any_nonzero(b, n), 0);
        if (n == 0) {
            continue;
        }
        size_t at = n < 4 ? n - 1 : (size_t)rnd(0, (uint32_t)n - 1);
        b[at] = (uint8_t)rnd(1, 255);
        assert_int_equal(dla_sdp_lanes_any_nonzero(b, n), 1);
        assert_int_equal(dla_sdp_lanes_any_nonzero(b, at), 0);
        b[at] = 0;
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cvt_narrow_range),
        cmocka_unit_test(test_x_stage),
        cmocka_unit_test(test_cvt),
        cmocka_unit_test(test_atoms),
        cmocka_unit_test(test_mem_elems),
        cmocka_unit_test(test_x_cvt),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_chain8),
        cmocka_unit_test(test_x_cvt_atoms8),
        cmocka_unit_test(test_x_cvt_atoms8_requant),
        cmocka_unit_test(test_x_add_cvt_atoms8),
        cmocka_unit_test(test_x2_cvt_atoms8),
        cmocka_unit_test(test_cvt_quiet_range),
        cmocka_unit_test(test_any_nonzero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
