/*
 * Element-wise loops of the convolution pipeline (CACC delivery, SDP data
 * path): instruction set selection.
 *
 * The loops are plain C in blocks of DLA_LANES_BLOCK elements: a constant
 * trip count lets gcc vectorise them at -O2 (its cost model there refuses
 * loops that need a remainder or an aliasing check).  Each loop is compiled
 * twice: for the baseline of the build (SSE2 on x86-64), and on x86-64 for
 * AVX2 with __attribute__((target("avx2"))), which the 32- and 64-bit lane
 * arithmetic needs for 8-lane multiplies, min/max and 64-bit compares.  A
 * layer picks the variant once (dla_lanes_best), so the library still runs
 * on any CPU; the unit tests run every variant the CPU supports.
 *
 * DLA_LANES_AVX512 (avx512f/bw/vl/dq) has its own forms of the hottest SDP
 * loops only (16 int32 lanes a step, masked tails); every other loop given
 * it runs its AVX2 form.  Callers with AVX2 code of their own ask
 * dla_lanes_avx2_up(), never `== DLA_LANES_AVX2`, so every variant from
 * AVX2 up takes it.
 */
#ifndef DLASIM_ARITH_LANES_H
#define DLASIM_ARITH_LANES_H

enum dla_lanes_isa {
    DLA_LANES_GENERIC = 0,
    DLA_LANES_AVX2 = 1,
    DLA_LANES_AVX512 = 2, /* AVX2 plus avx512f/bw/vl/dq */
    DLA_LANES_ISA_COUNT = 3
};

/*
 * DLA_SPECIALIZE: whether the kernels compile extra copies of a loop with
 * its shape as constants (MobileNet's 3x3 windows, a form of the SDP
 * converter) beside the one that takes it as a variable.  They are for
 * speed only: the same source computes the same values either way.  The
 * sanitizer and fuzz builds define DLA_ONE_COPY (Makefile) and compile the
 * variable copy alone: with ASan+UBSan every copy is instrumented, and
 * clang 14 took 725 s for sdp_lanes.c and 145 s for conv_dw_s8.c (16 s and
 * 12 s without the sanitizers), most of a fresh `make test`'s build.
 */
#ifdef DLA_ONE_COPY
#define DLA_SPECIALIZE 0
#else
#define DLA_SPECIALIZE 1
#endif

/* Define DLASIM_LANES_GENERIC_ONLY to build the baseline variants alone. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(DLASIM_LANES_GENERIC_ONLY)
#define DLA_LANES_X86 1
#define DLA_LANES_AVX2_ATTR __attribute__((target("avx2")))
#define DLA_LANES_AVX512_ATTR                                                              \
    __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq")))
#endif

#if defined(__GNUC__)
#define DLA_LANES_INLINE static inline __attribute__((always_inline))
#else
#define DLA_LANES_INLINE static inline
#endif

/* Elements per block of the lane loops. */
#define DLA_LANES_BLOCK 32

/* Can this CPU run the variant? */
int dla_lanes_supported(enum dla_lanes_isa isa);
/* The fastest variant this CPU runs. */
enum dla_lanes_isa dla_lanes_best(void);
/* Does the variant include AVX2 (a loop without a wider form runs its AVX2
 * one)? */
static inline int dla_lanes_avx2_up(enum dla_lanes_isa isa)
{
    return isa == DLA_LANES_AVX2 || isa == DLA_LANES_AVX512;
}
const char *dla_lanes_isa_name(enum dla_lanes_isa isa);

#endif
