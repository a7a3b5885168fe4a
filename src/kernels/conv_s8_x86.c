/*
 * x86-64 micro-kernels of the int8 convolution (see conv_s8_impl.h for the
 * packed formats and struct dla_conv_tile).  Each function is compiled for
 * its instruction set with __attribute__((target)) and only called after
 * __builtin_cpu_supports said yes, so the library still runs on any x86-64.
 *
 * AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes and adds groups
 * of 4 products to int32 lanes without saturation (wraps mod 2^32).  The
 * input cells hold x + 128 (unsigned), the accumulators start at
 * -128 * sum(w), so each lane ends at sum(x * w) mod 2^32: exact.
 * Tiles: 8 channels x 48, 32 or 16 pixels (24, 16 or 8 zmm accumulators).
 *
 * AVX2, P16 cells (any input): the cells hold int16 channel pairs and
 * vpmaddwd forms x0 * w0 + x1 * w1 in int32 (|sum| <= 2 * 128 * 128: no
 * overflow), then vpaddd accumulates (wraps mod 2^32).
 * AVX2, U8 cells (inputs with no negative code, checked by conv_s8.c):
 * vpmaddubsw multiplies unsigned input bytes by signed weight bytes and
 * adds pairs with int16 saturation.  With x in [0, 127] and w in
 * [-128, 127] a pair sum lies in [2 * 127 * -128, 2 * 127 * 127] =
 * [-32512, 32258], inside int16: it never saturates, so it is exact.  (An
 * input of 128..255, i.e. a negative int8 code or the +128 bias of Q8,
 * could reach 2 * 255 * -128 = -65280: that is why the check exists.)
 * vpmaddwd with int16 ones then adds the two pair sums of a cell into
 * int32 (|sum| <= 65024, exact) and vpaddd accumulates mod 2^32 like the
 * reference: the same int32 sums as the P16 path, bit for bit.  Per 32
 * MACs it issues 2 multiplies + 1 add (P16: 2 + 2) and loads and
 * broadcasts half as many bytes.
 * Tiles (both formats): 6 channels x 16 pixels (12 ymm accumulators: fewer
 * loads and broadcasts per multiply), 4 x 16 or 8 x 8 (8 accumulators).
 *
 * AVX-512 VBMI (vpermb) also packs Q8 weights: one byte permute turns a
 * channel group's [channel][tap] bytes into [tap][channel] cells.
 *
 * The row loops are written out with macros for up to 8 rows x 3 vectors;
 * the row and vector counts are constants after inlining, so the unused
 * accumulators and branches disappear and the rest stays in registers.
 */
#include "kernels/conv_s8_impl.h"

#if defined(DLA_CONV_X86)

#include <immintrin.h>
#include <string.h>

static inline int32_t ld32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* ------------------------------------------------------------ AVX-512 VNNI */

#define VNNI_ATTR __attribute__((target("avx512f,avx512vnni")))
#define VNNI_INLINE static inline __attribute__((always_inline, target("avx512f,avx512vnni")))

#define VN_DECL(m)                                                                  \
    __m512i c##m##0 = _mm512_setzero_si512(), c##m##1 = c##m##0, c##m##2 = c##m##0;  \
    if ((m) < MR) {                                                                 \
        c##m##0 = _mm512_set1_epi32(init[(m) < MR ? (m) : 0]);                      \
        c##m##1 = c##m##0;                                                          \
        c##m##2 = c##m##0;                                                          \
    }
#define VN_STEP(m)                                                             \
    if ((m) < MR) {                                                            \
        __m512i b = _mm512_set1_epi32(ld32(w + (m) * wr));                     \
        c##m##0 = _mm512_dpbusd_epi32(c##m##0, x0, b);                         \
        if (NV > 1) {                                                          \
            c##m##1 = _mm512_dpbusd_epi32(c##m##1, x1, b);                     \
        }                                                                      \
        if (NV > 2) {                                                          \
            c##m##2 = _mm512_dpbusd_epi32(c##m##2, x2, b);                     \
        }                                                                      \
    }
#define VN_STORE(m)                                                          \
    if ((m) < MR) {                                                          \
        _mm512_storeu_si512((void *)(acc + (m) * astride), c##m##0);         \
        if (NV > 1) {                                                        \
            _mm512_storeu_si512((void *)(acc + (m) * astride + 16), c##m##1); \
        }                                                                    \
        if (NV > 2) {                                                        \
            _mm512_storeu_si512((void *)(acc + (m) * astride + 32), c##m##2); \
        }                                                                    \
    }

/* MR rows x NV vectors (constants after inlining) over all reduction steps;
 * row m's 16 * NV sums at acc + m * astride. */
VNNI_INLINE void vnni_rows(const struct dla_conv_tile *t, const unsigned char *w,
                           const int32_t *init, int32_t *acc, size_t astride,
                           const unsigned MR, const unsigned NV)
{
    const unsigned char *in = t->in;
    const ptrdiff_t *qoff = t->qoff;
    size_t nq = t->nq, wr = t->wrow;

    VN_DECL(0) VN_DECL(1) VN_DECL(2) VN_DECL(3) VN_DECL(4) VN_DECL(5) VN_DECL(6) VN_DECL(7)
    for (size_t q = 0; q < nq; q++, w += 4) {
        const unsigned char *a = in + qoff[q];
        __m512i x0 = _mm512_loadu_si512((const void *)a);
        __m512i x1 = x0, x2 = x0;
        if (NV > 1) {
            x1 = _mm512_loadu_si512((const void *)(a + 64));
        }
        if (NV > 2) {
            x2 = _mm512_loadu_si512((const void *)(a + 128));
        }
        VN_STEP(0) VN_STEP(1) VN_STEP(2) VN_STEP(3) VN_STEP(4) VN_STEP(5) VN_STEP(6) VN_STEP(7)
    }
    VN_STORE(0) VN_STORE(1) VN_STORE(2) VN_STORE(3) VN_STORE(4) VN_STORE(5) VN_STORE(6)
    VN_STORE(7)
}

/* Copy the real pixels of mr rows of a tile (row length nr) to the output. */
VNNI_INLINE void vnni_store(const struct dla_conv_tile *t, const int32_t *acc, unsigned nr)
{
    for (unsigned r = 0; r < t->nruns; r++) {
        const int32_t *a = acc + t->runs[r].j;
        int32_t *o = t->out + t->runs[r].off;
        unsigned len = t->runs[r].len;
        for (unsigned m = 0; m < t->mr; m++, a += nr, o += t->ostride) {
            for (unsigned i = 0; i < len; i += 16) {
                __mmask16 k = len - i >= 16 ? (__mmask16)0xFFFF
                                            : (__mmask16)((1u << (len - i)) - 1u);
                _mm512_mask_storeu_epi32(o + i, k, _mm512_maskz_loadu_epi32(k, a + i));
            }
        }
    }
}

/* Rows of a tile in blocks of MR_FULL, then 8, 4, 2, 1 for the k tail:
 * into the tile's output planes straight from the registers when all its
 * lanes are one run of real pixels (a 1x1 layer's tiles but its last),
 * else through acc and vnni_store.  (A 14x14x64 -> 384 1x1 layer spent
 * ~25 % of its 8x48 tiles in the copy from acc.) */
#define VNNI_TILE(name, MR_FULL, NV)                                                   \
    VNNI_ATTR void name(const struct dla_conv_tile *t)                                 \
    {                                                                                  \
        _Alignas(64) int32_t acc[(MR_FULL) * 16 * (NV)];                               \
        const int direct = t->nruns == 1 && t->runs[0].j == 0 &&                      \
                           t->runs[0].len == 16 * (NV);                                \
        int32_t *dst = direct ? t->out + t->runs[0].off : acc;                         \
        const size_t ds = direct ? t->ostride : 16 * (NV);                             \
        unsigned m = 0, mr = t->mr;                                                    \
        if (mr == (MR_FULL)) {                                                         \
            vnni_rows(t, t->w, t->init, dst, ds, (MR_FULL), (NV));                     \
        } else {                                                                       \
            if ((MR_FULL) > 8 && mr - m >= 8) {                                        \
                vnni_rows(t, t->w + m * t->wrow, t->init + m, dst + m * ds, ds, 8, (NV)); \
                m += 8;                                                                \
            }                                                                          \
            if (mr - m >= 4) {                                                         \
                vnni_rows(t, t->w + m * t->wrow, t->init + m, dst + m * ds, ds, 4, (NV)); \
                m += 4;                                                                \
            }                                                                          \
            if (mr - m >= 2) {                                                         \
                vnni_rows(t, t->w + m * t->wrow, t->init + m, dst + m * ds, ds, 2, (NV)); \
                m += 2;                                                                \
            }                                                                          \
            if (mr - m >= 1) {                                                         \
                vnni_rows(t, t->w + m * t->wrow, t->init + m, dst + m * ds, ds, 1, (NV)); \
            }                                                                          \
        }                                                                              \
        if (!direct) {                                                                 \
            vnni_store(t, acc, 16 * (NV));                                             \
        }                                                                              \
    }

VNNI_TILE(dla_conv_tile_vnni_8x48, DLA_CONV_VNNI_MR, 3)
VNNI_TILE(dla_conv_tile_vnni_8x32, DLA_CONV_VNNI_MR, 2)
VNNI_TILE(dla_conv_tile_vnni_8x16, DLA_CONV_VNNI_MR, 1)

/* ------------------------------------------------- AVX-512 VNNI on atoms */

/*
 * How far ahead of its loads the atoms and k-lanes tiles prefetch their
 * weight stream.  A network's weights do not stay in this host's caches
 * from one inference to the next (ResNet-50's packs are ~50 MB), so a k
 * block's first tile reads them from memory, one line per step and
 * stream: the hardware prefetchers kept too few lines in flight.  32
 * steps ahead (~400 cycles of dpbusd) covers the memory's latency.
 * Measured with 48 packs of a layer in turn (227 MB, as in the device), two
 * threads, two runs each: 7x7x512 -> 512 3x3 (k-lanes) 322-323 -> 275-287
 * us, 7x7x2048 -> 512 1x1 (atoms) 147-158 -> 112-115 us (1 KB ahead:
 * 274-281 and 106-117; 4 KB: 271-273 and 106-107).
 */
#define WEIGHT_PREFETCH_BYTES 2048

static inline int64_t ld64(const unsigned char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

VNNI_ATTR void dla_conv_atoms_corr_vnni(const int8_t *in, size_t surf, size_t groups, size_t n,
                                        int32_t *corr)
{
    const __m512i ones = _mm512_set1_epi32(0x01010101), zero = _mm512_setzero_si512();
    /* four octets of pixels at a time: four chains of vpdpbusd, not one */
    for (size_t p = 0; p < n; p += 32) {
        __mmask8 m[4];
        for (unsigned v = 0; v < 4; v++) {
            const size_t left = n > p + 8 * v ? n - p - 8 * v : 0;
            m[v] = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1u);
        }
        __m512i s0 = zero, s1 = zero, s2 = zero, s3 = zero;
        const int8_t *x = in + p * 8;
        for (size_t g = 0; g < groups; g++, x += surf) {
            s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_maskz_loadu_epi64(m[0], x));
            s1 = _mm512_dpbusd_epi32(s1, ones, _mm512_maskz_loadu_epi64(m[1], x + 64));
            s2 = _mm512_dpbusd_epi32(s2, ones, _mm512_maskz_loadu_epi64(m[2], x + 128));
            s3 = _mm512_dpbusd_epi32(s3, ones, _mm512_maskz_loadu_epi64(m[3], x + 192));
        }
        const __m512i s[4] = {s0, s1, s2, s3};
        for (unsigned v = 0; v < 4 && p + 8 * v < n; v++) {
            _mm512_storeu_si512((void *)(corr + (p + 8 * v) * 2),
                                _mm512_sub_epi32(zero, _mm512_slli_epi32(s[v], 7)));
        }
    }
}

#define AT_DECL(m) __m512i a##m##0 = _mm512_setzero_si512(), a##m##1 = a##m##0, a##m##2 = a##m##0;
#define AT_STEP(m)                                                  \
    {                                                               \
        const __m512i b = _mm512_set1_epi64(ld64(w + 8 * (m)));     \
        a##m##0 = _mm512_dpbusd_epi32(a##m##0, b, x0);              \
        if (NV > 1) {                                               \
            a##m##1 = _mm512_dpbusd_epi32(a##m##1, b, x1);          \
        }                                                           \
        if (NV > 2) {                                               \
            a##m##2 = _mm512_dpbusd_epi32(a##m##2, b, x2);          \
        }                                                           \
    }
#define AT_STORE(m)                                                            \
    _mm512_store_si512((void *)(acc + (m) * 48), a##m##0);                     \
    if (NV > 1) {                                                              \
        _mm512_store_si512((void *)(acc + (m) * 48 + 16), a##m##1);            \
    }                                                                          \
    if (NV > 2) {                                                              \
        _mm512_store_si512((void *)(acc + (m) * 48 + 32), a##m##2);            \
    }

/* The 8 rows' lane sums of NV octets of pixels into acc (48 a row), the
 * last octet's atoms under `last` (its pixels). */
VNNI_INLINE void atoms_rows(const struct dla_conv_atoms_tile *t, int32_t *acc, const unsigned NV,
                            const __mmask8 last)
{
    AT_DECL(0) AT_DECL(1) AT_DECL(2) AT_DECL(3) AT_DECL(4) AT_DECL(5) AT_DECL(6) AT_DECL(7)
    const int8_t *x = t->in;
    const unsigned char *w = t->w;
    for (size_t g = 0; g < t->groups; g++, x += t->surf, w += 64) {
        _mm_prefetch((const char *)(w + WEIGHT_PREFETCH_BYTES), _MM_HINT_T0);
        const __m512i x0 = NV == 1 ? _mm512_maskz_loadu_epi64(last, x)
                                   : _mm512_loadu_si512((const void *)x);
        const __m512i x1 = NV == 2   ? _mm512_maskz_loadu_epi64(last, x + 64)
                           : NV == 3 ? _mm512_loadu_si512((const void *)(x + 64))
                                     : x0;
        const __m512i x2 = NV == 3 ? _mm512_maskz_loadu_epi64(last, x + 128) : x0;
        AT_STEP(0) AT_STEP(1) AT_STEP(2) AT_STEP(3) AT_STEP(4) AT_STEP(5) AT_STEP(6) AT_STEP(7)
    }
    AT_STORE(0) AT_STORE(1) AT_STORE(2) AT_STORE(3) AT_STORE(4) AT_STORE(5) AT_STORE(6)
    AT_STORE(7)
}

/* Lanes 0-7: the pair sums of a's 16 lanes; 8-15: b's. */
VNNI_INLINE __m512i pair_sums(__m512i a, __m512i b)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b),
                            _mm512_permutex2var_epi32(a, odd, b));
}

/* Each row's pixels: its pair sums and the pixels' corrections. */
VNNI_INLINE void atoms_out(const struct dla_conv_atoms_tile *t, const int32_t *acc,
                           const unsigned NV)
{
    const int32_t *c = t->corr;
    const unsigned n = t->n;
    const __m512i k01 = NV == 1 ? pair_sums(_mm512_loadu_si512((const void *)c),
                                            _mm512_loadu_si512((const void *)c))
                                : pair_sums(_mm512_loadu_si512((const void *)c),
                                            _mm512_loadu_si512((const void *)(c + 16)));
    const __m512i k2 = NV == 3 ? pair_sums(_mm512_loadu_si512((const void *)(c + 32)),
                                           _mm512_loadu_si512((const void *)(c + 32)))
                               : k01;
    const __mmask16 m01 = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
    const __mmask16 m2 = n > 16 ? (__mmask16)((1u << (n - 16)) - 1u) : 0;
    for (unsigned m = 0; m < t->mr; m++) {
        const int32_t *a = acc + m * 48;
        int32_t *o = t->out + m * t->ostride;
        const __m512i lo = _mm512_load_si512((const void *)a);
        const __m512i r01 = _mm512_add_epi32(
            pair_sums(lo, NV == 1 ? lo : _mm512_load_si512((const void *)(a + 16))), k01);
        _mm512_mask_storeu_epi32(o, m01, r01);
        if (NV == 3) {
            const __m512i hi = _mm512_load_si512((const void *)(a + 32));
            _mm512_mask_storeu_epi32(o + 16, m2, _mm512_add_epi32(pair_sums(hi, hi), k2));
        }
    }
}

#define ATOMS_TILE(name, NV)                                                  \
    VNNI_ATTR static __attribute__((noinline)) void name(                     \
        const struct dla_conv_atoms_tile *t, __mmask8 last)                   \
    {                                                                         \
        _Alignas(64) int32_t acc[DLA_CONV_ATOMS_MR * 48];                     \
        atoms_rows(t, acc, (NV), last);                                       \
        atoms_out(t, acc, (NV));                                              \
    }
ATOMS_TILE(atoms_tile_8, 1)
ATOMS_TILE(atoms_tile_16, 2)
ATOMS_TILE(atoms_tile_24, 3)

void dla_conv_atoms_tile_vnni(const struct dla_conv_atoms_tile *t)
{
    const unsigned tail = t->n % 8;
    const __mmask8 last = tail ? (__mmask8)((1u << tail) - 1u) : (__mmask8)0xff;
    if (t->n > 16) {
        atoms_tile_24(t, last);
    } else if (t->n > 8) {
        atoms_tile_16(t, last);
    } else {
        atoms_tile_8(t, last);
    }
}

/* ------------------------------------------------- AVX-512 VNNI k-lanes */

#define KL_DECL(m) __m512i k##m##0 = _mm512_setzero_si512(), k##m##1 = k##m##0;
#define KL_STEP(m)                                                           \
    if ((m) < MR) {                                                          \
        const __m512i b = _mm512_set1_epi32(ld32(a + t->cell[(m)]));         \
        k##m##0 = _mm512_dpbusd_epi32(k##m##0, b, w0);                       \
        k##m##1 = _mm512_dpbusd_epi32(k##m##1, b, w1);                       \
    }
#define KL_STORE(m)                                                          \
    if ((m) < MR) {                                                          \
        _mm512_store_si512((void *)(acc + (m) * 32), k##m##0);               \
        _mm512_store_si512((void *)(acc + (m) * 32 + 16), k##m##1);          \
    }

/* MR pixels' sums of 32 channels (lanes) over every step into acc (32 a
 * pixel), from 0 (the start values are added when stored). */
VNNI_INLINE void klanes_rows(const struct dla_conv_klanes_tile *t, int32_t *acc,
                             const unsigned MR)
{
    KL_DECL(0) KL_DECL(1) KL_DECL(2) KL_DECL(3) KL_DECL(4) KL_DECL(5)
    KL_DECL(6) KL_DECL(7) KL_DECL(8) KL_DECL(9) KL_DECL(10) KL_DECL(11)
    const unsigned char *w = t->w;
    for (size_t q = 0; q < t->nq; q++, w += 64) {
        const unsigned char *a = t->in + t->qoff[q];
        _mm_prefetch((const char *)(w + WEIGHT_PREFETCH_BYTES), _MM_HINT_T0);
        _mm_prefetch((const char *)(w + t->wblock + WEIGHT_PREFETCH_BYTES), _MM_HINT_T0);
        const __m512i w0 = _mm512_loadu_si512((const void *)w);
        const __m512i w1 = _mm512_loadu_si512((const void *)(w + t->wblock));
        KL_STEP(0) KL_STEP(1) KL_STEP(2) KL_STEP(3) KL_STEP(4) KL_STEP(5)
        KL_STEP(6) KL_STEP(7) KL_STEP(8) KL_STEP(9) KL_STEP(10) KL_STEP(11)
    }
    KL_STORE(0) KL_STORE(1) KL_STORE(2) KL_STORE(3) KL_STORE(4) KL_STORE(5)
    KL_STORE(6) KL_STORE(7) KL_STORE(8) KL_STORE(9) KL_STORE(10) KL_STORE(11)
}

/* Each of the n pixels' channels, with their start values, scattered to
 * the channel planes. */
VNNI_INLINE void klanes_out(const struct dla_conv_klanes_tile *t, const int32_t *acc, unsigned n)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)t->ostride));
    const __m512i i0 = _mm512_loadu_si512((const void *)t->init);
    const __m512i i1 = _mm512_loadu_si512((const void *)(t->init + 16));
    const __mmask16 m0 = t->nk >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << t->nk) - 1u);
    const __mmask16 m1 = t->nk >= 32   ? (__mmask16)0xffff
                         : t->nk > 16 ? (__mmask16)((1u << (t->nk - 16)) - 1u)
                                      : 0;
    int32_t *hi = t->out + 16 * t->ostride;
    for (unsigned m = 0; m < n; m++) {
        const int32_t *a = acc + m * 32;
        _mm512_mask_i32scatter_epi32(t->out + t->opix[m], m0, idx,
                                     _mm512_add_epi32(_mm512_load_si512((const void *)a), i0), 4);
        if (m1) {
            _mm512_mask_i32scatter_epi32(
                hi + t->opix[m], m1, idx,
                _mm512_add_epi32(_mm512_load_si512((const void *)(a + 16)), i1), 4);
        }
    }
}

#define KLANES_TILE(name, MR)                                                           \
    VNNI_ATTR static __attribute__((noinline)) void name(const struct dla_conv_klanes_tile *t) \
    {                                                                                   \
        _Alignas(64) int32_t acc[DLA_CONV_KLANES_MR * 32];                              \
        klanes_rows(t, acc, (MR));                                                      \
        klanes_out(t, acc, (MR));                                                       \
    }
KLANES_TILE(klanes_tile_12, 12)
KLANES_TILE(klanes_tile_11, 11)
KLANES_TILE(klanes_tile_10, 10)
KLANES_TILE(klanes_tile_9, 9)
KLANES_TILE(klanes_tile_8, 8)
KLANES_TILE(klanes_tile_7, 7)
KLANES_TILE(klanes_tile_6, 6)
KLANES_TILE(klanes_tile_5, 5)
KLANES_TILE(klanes_tile_4, 4)
KLANES_TILE(klanes_tile_3, 3)
KLANES_TILE(klanes_tile_2, 2)
KLANES_TILE(klanes_tile_1, 1)

/* The tile's pixels in one block of their count (1-12: conv_s8.c
 * compute_klanes makes tiles of even sizes, so that each is one pass over
 * its k block's weights: a band of 7 pixels in one pass, not 4+2+1). */
void dla_conv_klanes_tile_vnni(const struct dla_conv_klanes_tile *t)
{
    static void (*const tile[DLA_CONV_KLANES_MR + 1])(const struct dla_conv_klanes_tile *) = {
        NULL,           klanes_tile_1,  klanes_tile_2, klanes_tile_3, klanes_tile_4,
        klanes_tile_5,  klanes_tile_6,  klanes_tile_7, klanes_tile_8, klanes_tile_9,
        klanes_tile_10, klanes_tile_11, klanes_tile_12,
    };
    if (t->n >= 1 && t->n <= DLA_CONV_KLANES_MR) {
        tile[t->n](t);
    }
}

/* ------------------------------------------------------- AVX-512 VBMI pack */

__attribute__((target("avx512f,avx512bw,avx512vbmi")))
int64_t dla_conv_pack_q8_vbmi(unsigned char *d, const int8_t *s, size_t groups, size_t taps)
{
    size_t gb = 4 * taps;       /* bytes per group: [i][t] in, [t][i] out */
    size_t per = 64 / gb;       /* whole groups per 64-byte vector */
    unsigned char idx[64];
    size_t count = 0;

    for (size_t b = 0; b < 64; b++) {
        size_t grp = b / gb, r = b % gb;
        idx[b] = (unsigned char)(b < per * gb ? grp * gb + (r % 4) * taps + r / 4 : b);
    }
    __m512i perm = _mm512_loadu_si512((const void *)idx);
    __m512i bias = _mm512_set1_epi8(-128), zero = _mm512_setzero_si512(), sum = zero;
    for (size_t g = 0; g < groups; g += per) {
        size_t n = (groups - g < per ? groups - g : per) * gb;
        __mmask64 k = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
        __m512i x = _mm512_maskz_loadu_epi8(k, (const void *)(s + g * gb));
        _mm512_mask_storeu_epi8((void *)(d + g * gb), k, _mm512_permutexvar_epi8(perm, x));
        /* sum of (x ^ 0x80) = sum of (x + 128); masked-off bytes count 128 */
        sum = _mm512_add_epi64(sum, _mm512_sad_epu8(_mm512_xor_si512(x, bias), zero));
        count += 64;
    }
    return (int64_t)_mm512_reduce_add_epi64(sum) - 128 * (int64_t)count;
}

/* Cells of a 1x1 layer's plane whose four channel rows of w <= 32 bytes
 * lie back to back (CBUF's lines: a line's channel rows are w apart): per
 * row, cell x = the four rows' byte x, one byte permute of the 4w bytes
 * (vpermb for w <= 16, vpermi2b over two vectors up to 32); flip: ^ 0x80
 * (Q8 cells).  Replaces q8_cells_simd's unpacks and chunking, whose set-up
 * per 7- or 14-cell row cost more than the cells. */
__attribute__((target("avx512f,avx512bw,avx512vbmi")))
void dla_conv_cells_rows_vbmi(unsigned char *d, const int8_t *s, size_t step, size_t w,
                              size_t rows, int flip)
{
    unsigned char lo[64], hi[64];
    for (size_t b = 0; b < 64; b++) { /* out byte b: cell b / 4, channel row b % 4 */
        lo[b] = (unsigned char)((b % 4) * w + b / 4);
        hi[b] = (unsigned char)((b % 4) * w + 16 + b / 4);
    }
    const __m512i plo = _mm512_loadu_si512((const void *)lo);
    const __m512i phi = _mm512_loadu_si512((const void *)hi);
    const __m512i x80 = _mm512_set1_epi8(flip ? (char)-128 : 0);
    const size_t n = 4 * w; /* bytes in and out a row */
    const __mmask64 kin0 = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
    const __mmask64 kin1 = n >= 128 ? ~(__mmask64)0 : n > 64 ? ((__mmask64)1 << (n - 64)) - 1 : 0;
    if (w <= 16) {
        for (size_t y = 0; y < rows; y++) {
            __m512i a = _mm512_maskz_loadu_epi8(kin0, (const void *)(s + y * step));
            __m512i c = _mm512_xor_si512(_mm512_permutexvar_epi8(plo, a), x80);
            _mm512_mask_storeu_epi8((void *)(d + y * n), kin0, c);
        }
        return;
    }
    for (size_t y = 0; y < rows; y++) {
        const int8_t *r = s + y * step;
        __m512i a = _mm512_maskz_loadu_epi8(kin0, (const void *)r);
        __m512i b = _mm512_maskz_loadu_epi8(kin1, (const void *)(r + 64));
        __m512i c0 = _mm512_xor_si512(_mm512_permutex2var_epi8(a, plo, b), x80);
        __m512i c1 = _mm512_xor_si512(_mm512_permutex2var_epi8(a, phi, b), x80);
        _mm512_storeu_si512((void *)(d + y * n), c0);
        _mm512_mask_storeu_epi8((void *)(d + y * n + 64), kin1, c1);
    }
}

/* -------------------------------------------------------------------- AVX2 */

/* Byte cells: 8 atoms are two vectors of 4; vpermd puts each vector's
 * even dwords (channels 0-3 of its atoms) in its low half and the odd
 * ones (channels 4-7) in its high half, and vperm2i128 joins the two
 * vectors' halves: 8 cells of each group, 6 operations.  P16 cells: a
 * byte shuffle gathers, in each 128-bit lane (2 atoms), each channel
 * pair's bytes; vpermd and the 64-bit unpacks join the 8 atoms' pairs of
 * one group; vpmovsxbw widens them to int16. */
__attribute__((target("avx2")))
size_t dla_conv_atoms_cells_avx2(unsigned char *const *dst, const int8_t *atoms, size_t n,
                                 int p16, int flip)
{
    size_t i = 0;
    if (!p16) {
        const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        const __m256i x80 = _mm256_set1_epi8(flip ? (char)-128 : 0);
        for (; i + 8 <= n; i += 8) {
            const int8_t *a = atoms + i * 8;
            __m256i v0 = _mm256_permutevar8x32_epi32(
                _mm256_loadu_si256((const __m256i *)(const void *)a), idx);
            __m256i v1 = _mm256_permutevar8x32_epi32(
                _mm256_loadu_si256((const __m256i *)(const void *)(a + 32)), idx);
            __m256i g0 = _mm256_xor_si256(_mm256_permute2x128_si256(v0, v1, 0x20), x80);
            __m256i g1 = _mm256_xor_si256(_mm256_permute2x128_si256(v0, v1, 0x31), x80);
            _mm256_storeu_si256((__m256i *)(void *)(dst[0] + i * 4), g0);
            _mm256_storeu_si256((__m256i *)(void *)(dst[1] + i * 4), g1);
        }
        return i;
    }
    const __m256i pairs = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                           0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    const __m256i idx = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (; i + 8 <= n; i += 8) {
        const int8_t *a = atoms + i * 8;
        /* qword q of each: group q's pairs of 4 atoms */
        __m256i v0 = _mm256_permutevar8x32_epi32(
            _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(const void *)a), pairs), idx);
        __m256i v1 = _mm256_permutevar8x32_epi32(
            _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(a + 32)),
                                pairs),
            idx);
        __m256i lo = _mm256_unpacklo_epi64(v0, v1); /* groups 0 | 2 */
        __m256i hi = _mm256_unpackhi_epi64(v0, v1); /* groups 1 | 3 */
        _mm256_storeu_si256((__m256i *)(void *)(dst[0] + i * 4),
                            _mm256_cvtepi8_epi16(_mm256_castsi256_si128(lo)));
        _mm256_storeu_si256((__m256i *)(void *)(dst[1] + i * 4),
                            _mm256_cvtepi8_epi16(_mm256_castsi256_si128(hi)));
        _mm256_storeu_si256((__m256i *)(void *)(dst[2] + i * 4),
                            _mm256_cvtepi8_epi16(_mm256_extracti128_si256(lo, 1)));
        _mm256_storeu_si256((__m256i *)(void *)(dst[3] + i * 4),
                            _mm256_cvtepi8_epi16(_mm256_extracti128_si256(hi, 1)));
    }
    return i;
}

/* Chunk i of dla_conv_atom_group_cells_avx2 at x stride 2 (cells i .. i+7
 * from atoms 2i .. 2i+14); `last`: the chunk ends at the row's last cell,
 * whose atom may be the row's last: the final load's dwords past that
 * atom's group (the odd atom after it) are masked off, not read. */
__attribute__((target("avx2"))) static inline void atom_cells8_s2(unsigned char *d,
                                                                  const int8_t *s, __m256i x80,
                                                                  int last)
{
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i *a = (const __m256i *)(const void *)s;
    const __m256i a3 = last ? _mm256_maskload_epi32((const int *)(const void *)(a + 3),
                                                    _mm256_setr_epi32(-1, -1, -1, -1, -1, 0, 0, 0))
                            : _mm256_loadu_si256(a + 3);
    __m256i p01 = _mm256_unpacklo_epi32(_mm256_loadu_si256(a), _mm256_loadu_si256(a + 1));
    __m256i p23 = _mm256_unpacklo_epi32(_mm256_loadu_si256(a + 2), a3);
    __m256i v = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(p01, p23), order);
    _mm256_storeu_si256((__m256i *)(void *)d, _mm256_xor_si256(v, x80));
}

/* Chunk i at x stride 1 (cells i .. i+7 from atoms i .. i+7); `last` as
 * above: the final dword (the group after this one, in the atom after the
 * chunk's eighth) masked off. */
__attribute__((target("avx2"))) static inline void atom_cells8_s1(unsigned char *d,
                                                                  const int8_t *s, __m256i x80,
                                                                  int last)
{
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i keep = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
    const __m256i hi = last ? _mm256_maskload_epi32((const int *)(const void *)(s + 32), keep)
                            : _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
    __m256i v0 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(const void *)s),
                                             idx);
    __m256i v1 = _mm256_permutevar8x32_epi32(hi, idx);
    _mm256_storeu_si256((__m256i *)(void *)d,
                        _mm256_xor_si256(_mm256_permute2x128_si256(v0, v1, 0x20), x80));
}

/* One group's byte cells: its dwords, one an atom (sx 1) or every other
 * atom (sx 2), from s (s points into the first atom at the group's bytes).
 * sx 1: vpermd puts each vector's even dwords in its low half, vperm2i128
 * joins the low halves of two vectors, 8 cells in 4 operations.  sx 2:
 * dwords 0 and 4 of four vectors, gathered by two 32-bit and one 64-bit
 * unpack and put in order by vpermd.  Every cell of a row of 8 or more in
 * chunks of 8, the last chunk ending at the row's end (overlapping the one
 * before: the same cells, the same values) with its loads past the row
 * masked off; the scalar tail it replaces (conv_s8.c atom_row_cells) was
 * ~15 % of a 56-cell row's cells and most of its packing time. */
__attribute__((target("avx2"))) size_t dla_conv_atom_group_cells_avx2(unsigned char *d,
                                                                       const int8_t *s, size_t n,
                                                                       size_t sx, int flip)
{
    const __m256i x80 = _mm256_set1_epi8(flip ? (char)-128 : 0);
    if (n < 8 || (sx != 1 && sx != 2)) {
        return 0;
    }
    const size_t step = 8 * sx;
    size_t i = 0;
    for (; i + 8 < n; i += 8) { /* its loads end inside the row's atoms */
        if (sx == 2) {
            atom_cells8_s2(d + i * 4, s + i * step, x80, 0);
        } else {
            atom_cells8_s1(d + i * 4, s + i * step, x80, 0);
        }
    }
    i = n - 8;
    if (sx == 2) {
        atom_cells8_s2(d + i * 4, s + i * step, x80, 1);
    } else {
        atom_cells8_s1(d + i * 4, s + i * step, x80, 1);
    }
    return n;
}

#define AVX2_ATTR __attribute__((target("avx2")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

#define AV_DECL(m)                                                  \
    __m256i d##m##0 = _mm256_setzero_si256(), d##m##1 = d##m##0;    \
    if ((m) < MR) {                                                 \
        d##m##0 = _mm256_set1_epi32(init[(m) < MR ? (m) : 0]);      \
        d##m##1 = d##m##0;                                          \
    }
#define AV_STEP(m)                                                          \
    if ((m) < MR) {                                                         \
        __m256i b = _mm256_set1_epi32(ld32(w + (m) * wr));                  \
        d##m##0 = _mm256_add_epi32(d##m##0, avx2_mac(x0, b, U8));           \
        if (NV > 1) {                                                       \
            d##m##1 = _mm256_add_epi32(d##m##1, avx2_mac(x1, b, U8));       \
        }                                                                   \
    }
#define AV_STORE(m)                                                                 \
    if ((m) < MR) {                                                                 \
        _mm256_storeu_si256((__m256i *)(void *)(acc + (m) * 8 * NV), d##m##0);      \
        if (NV > 1) {                                                               \
            _mm256_storeu_si256((__m256i *)(void *)(acc + (m) * 8 * NV + 8), d##m##1); \
        }                                                                           \
    }

/* The int32 sums of one cell step for 8 pixels: P16 (U8 = 0) vpmaddwd of
 * int16 pairs; U8 vpmaddubsw then vpmaddwd by ones (bounds above). */
AVX2_INLINE __m256i avx2_mac(__m256i x, __m256i b, const int U8)
{
    if (U8) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(x, b), _mm256_set1_epi16(1));
    }
    return _mm256_madd_epi16(x, b);
}

/* The accumulators of row m straight to the output plane (a tile whose
 * pixels are one run of all NR lanes). */
#define AV_STORE_OUT(m)                                                             \
    if ((m) < MR) {                                                                 \
        _mm256_storeu_si256((__m256i *)(void *)(out + (m) * os), d##m##0);          \
        if (NV > 1) {                                                               \
            _mm256_storeu_si256((__m256i *)(void *)(out + (m) * os + 8), d##m##1);  \
        }                                                                           \
    }

/* Every row's accumulators: to the output plane when `out` is set, else to acc. */
#define AV_STORE_ROWS                                                               \
    if (out != NULL) {                                                              \
        AV_STORE_OUT(0) AV_STORE_OUT(1) AV_STORE_OUT(2) AV_STORE_OUT(3) AV_STORE_OUT(4) \
        AV_STORE_OUT(5) AV_STORE_OUT(6) AV_STORE_OUT(7)                             \
    } else {                                                                        \
        AV_STORE(0) AV_STORE(1) AV_STORE(2) AV_STORE(3) AV_STORE(4) AV_STORE(5)     \
        AV_STORE(6) AV_STORE(7)                                                     \
    }

/* Rows of one tile; the sums go to acc (rows of 8 * NV), or with `out`
 * not NULL straight to out (rows os int32s apart). */
AVX2_INLINE void avx2_rows(const struct dla_conv_tile *t, const unsigned char *w,
                           const int32_t *init, int32_t *acc, int32_t *out, size_t os,
                           const unsigned MR, const unsigned NV, const int U8)
{
    const unsigned char *in = t->in;
    const ptrdiff_t *qoff = t->qoff;
    size_t nq = t->nq, wr = t->wrow;

    AV_DECL(0) AV_DECL(1) AV_DECL(2) AV_DECL(3) AV_DECL(4) AV_DECL(5) AV_DECL(6) AV_DECL(7)
    for (size_t q = 0; q < nq; q++, w += 4) {
        const unsigned char *a = in + qoff[q];
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)a);
        __m256i x1 = x0;
        if (NV > 1) {
            x1 = _mm256_loadu_si256((const __m256i *)(const void *)(a + 32));
        }
        AV_STEP(0) AV_STEP(1) AV_STEP(2) AV_STEP(3) AV_STEP(4) AV_STEP(5) AV_STEP(6) AV_STEP(7)
    }
    AV_STORE_ROWS
}

/* Paired steps (U8 only): the vpmaddubsw pair sums of two steps added in
 * int16 (vpaddw) before one widening vpmaddwd, where the schedule says
 * the weights keep that sum within int16 (conv_s8.c pair_lane_fits): 3
 * multiplies per 64 MACs instead of 4. */
#define AP_STEP(m)                                                                  \
    if ((m) < MR) {                                                                 \
        __m256i b = _mm256_set1_epi32(ld32(w + (m) * wr));                          \
        __m256i b2 = _mm256_set1_epi32(ld32(w + 4 + (m) * wr));                     \
        __m256i s0 = _mm256_add_epi16(_mm256_maddubs_epi16(x0, b),                  \
                                      _mm256_maddubs_epi16(y0, b2));                \
        d##m##0 = _mm256_add_epi32(d##m##0, _mm256_madd_epi16(s0, ones));           \
        if (NV > 1) {                                                               \
            __m256i s1 = _mm256_add_epi16(_mm256_maddubs_epi16(x1, b),              \
                                          _mm256_maddubs_epi16(y1, b2));            \
            d##m##1 = _mm256_add_epi32(d##m##1, _mm256_madd_epi16(s1, ones));       \
        }                                                                           \
    }

/* avx2_rows of U8 cells after t->sched (paired and single steps). */
AVX2_INLINE void avx2_rows_sched(const struct dla_conv_tile *t, const unsigned char *w,
                                 const int32_t *init, int32_t *acc, int32_t *out, size_t os,
                                 const unsigned MR, const unsigned NV)
{
    const unsigned char *in = t->in;
    const ptrdiff_t *qoff = t->qoff;
    const uint32_t *sc = t->sched;
    const int U8 = 1;
    const __m256i ones = _mm256_set1_epi16(1);
    size_t nq = t->nq, wr = t->wrow, q = 0;

    AV_DECL(0) AV_DECL(1) AV_DECL(2) AV_DECL(3) AV_DECL(4) AV_DECL(5) AV_DECL(6) AV_DECL(7)
    for (;; sc += 2) {
        for (size_t e = sc[0]; q < e; q += 2, w += 8) {
            const unsigned char *a = in + qoff[q], *a2 = in + qoff[q + 1];
            __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)a);
            __m256i y0 = _mm256_loadu_si256((const __m256i *)(const void *)a2);
            __m256i x1 = x0, y1 = y0;
            if (NV > 1) {
                x1 = _mm256_loadu_si256((const __m256i *)(const void *)(a + 32));
                y1 = _mm256_loadu_si256((const __m256i *)(const void *)(a2 + 32));
            }
            AP_STEP(0) AP_STEP(1) AP_STEP(2) AP_STEP(3) AP_STEP(4) AP_STEP(5) AP_STEP(6)
            AP_STEP(7)
        }
        for (size_t e = sc[1]; q < e; q++, w += 4) {
            const unsigned char *a = in + qoff[q];
            __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)a);
            __m256i x1 = x0;
            if (NV > 1) {
                x1 = _mm256_loadu_si256((const __m256i *)(const void *)(a + 32));
            }
            AV_STEP(0) AV_STEP(1) AV_STEP(2) AV_STEP(3) AV_STEP(4) AV_STEP(5) AV_STEP(6)
            AV_STEP(7)
        }
        if (q >= nq) {
            break;
        }
    }
    AV_STORE_ROWS
}

/* MODE 0: avx2_rows of P16 cells; 1: of U8 cells; 2: avx2_rows_sched. */
AVX2_INLINE void avx2_rows_any(const struct dla_conv_tile *t, const unsigned char *w,
                               const int32_t *init, int32_t *acc, int32_t *out, size_t os,
                               const unsigned MR, const unsigned NV, const int MODE)
{
    if (MODE == 2) {
        avx2_rows_sched(t, w, init, acc, out, os, MR, NV);
    } else {
        avx2_rows(t, w, init, acc, out, os, MR, NV, MODE);
    }
}

/* The last len < 8 int32s of a run: 4, 2 and 1 at a time (vpmaskmovd's
 * store is microcoded on AMD's Zen cores: one took longer than a whole
 * row of plain stores). */
AVX2_INLINE void avx2_store_tail(int32_t *o, const int32_t *a, unsigned len)
{
    if (len & 4) {
        _mm_storeu_si128((__m128i *)(void *)o, _mm_loadu_si128((const __m128i *)(const void *)a));
        o += 4;
        a += 4;
    }
    if (len & 2) {
        memcpy(o, a, 2 * sizeof(int32_t));
        o += 2;
        a += 2;
    }
    if (len & 1) {
        *o = *a;
    }
}

AVX2_INLINE void avx2_store(const struct dla_conv_tile *t, const int32_t *acc, unsigned nr)
{
    for (unsigned r = 0; r < t->nruns; r++) {
        const int32_t *a = acc + t->runs[r].j;
        int32_t *o = t->out + t->runs[r].off;
        unsigned len = t->runs[r].len;
        for (unsigned m = 0; m < t->mr; m++, a += nr, o += t->ostride) {
            unsigned i = 0;
            for (; i + 8 <= len; i += 8) {
                _mm256_storeu_si256((__m256i *)(void *)(o + i),
                                    _mm256_loadu_si256((const __m256i *)(const void *)(a + i)));
            }
            if (i < len) {
                avx2_store_tail(o + i, a + i, len - i);
            }
        }
    }
}

/* A tile of all MR_FULL rows whose NR pixels are one run (the common case
 * away from the image's right edge and last pixels) stores from the
 * registers; any other goes through acc and the runs.  U8 (avx2_rows_any's
 * MODE) 0: P16 cells, 1: U8 cells, 2: U8 cells after t->sched (the
 * avx2u8p tiles; separate functions, so each loop gets the registers to
 * itself). */
#define AVX2_TILE_FN(qual, name, MR_FULL, NV, U8)                                       \
    qual AVX2_ATTR void name(const struct dla_conv_tile *t)                             \
    {                                                                                   \
        _Alignas(64) int32_t acc[(MR_FULL) * 8 * (NV)];                                 \
        unsigned m = 0, mr = t->mr;                                                     \
        if (mr == (MR_FULL) && t->nruns == 1 && t->runs[0].j == 0 &&                    \
            t->runs[0].len == 8 * (NV)) {                                               \
            avx2_rows_any(t, t->w, t->init, acc, t->out + t->runs[0].off, t->ostride,       \
                      (MR_FULL), (NV), (U8));                                           \
            return;                                                                     \
        }                                                                               \
        if (mr == (MR_FULL)) {                                                          \
            avx2_rows_any(t, t->w, t->init, acc, NULL, 0, (MR_FULL), (NV), (U8));           \
        } else {                                                                        \
            if ((MR_FULL) > 4 && mr - m >= 4) {                                         \
                avx2_rows_any(t, t->w + m * t->wrow, t->init + m, acc + m * 8 * (NV), NULL, 0, \
                          4, (NV), (U8));                                               \
                m += 4;                                                                 \
            }                                                                           \
            if (mr - m >= 2) {                                                          \
                avx2_rows_any(t, t->w + m * t->wrow, t->init + m, acc + m * 8 * (NV), NULL, 0, \
                          2, (NV), (U8));                                               \
                m += 2;                                                                 \
            }                                                                           \
            if (mr - m >= 1) {                                                          \
                avx2_rows_any(t, t->w + m * t->wrow, t->init + m, acc + m * 8 * (NV), NULL, 0, \
                          1, (NV), (U8));                                               \
            }                                                                           \
        }                                                                               \
        avx2_store(t, acc, 8 * (NV));                                                   \
    }

AVX2_TILE_FN(, dla_conv_tile_avx2_6x16, DLA_CONV_AVX2_MR2, 2, 0)
AVX2_TILE_FN(, dla_conv_tile_avx2_4x16, DLA_CONV_AVX2_MR0, 2, 0)
AVX2_TILE_FN(, dla_conv_tile_avx2_8x8, DLA_CONV_AVX2_MR1, 1, 0)
AVX2_TILE_FN(, dla_conv_tile_avx2u8_6x16, DLA_CONV_AVX2_MR2, 2, 1)
AVX2_TILE_FN(, dla_conv_tile_avx2u8_4x16, DLA_CONV_AVX2_MR0, 2, 1)
AVX2_TILE_FN(, dla_conv_tile_avx2u8_8x8, DLA_CONV_AVX2_MR1, 1, 1)
AVX2_TILE_FN(, dla_conv_tile_avx2u8p_6x16, DLA_CONV_AVX2_MR2, 2, 2)
AVX2_TILE_FN(, dla_conv_tile_avx2u8p_4x16, DLA_CONV_AVX2_MR0, 2, 2)
AVX2_TILE_FN(, dla_conv_tile_avx2u8p_8x8, DLA_CONV_AVX2_MR1, 1, 2)
/* Half tiles: the rows of 6x16 and 4x16 over 8 pixels (the last tile of a
 * layer whose pixels end in its first half). */
AVX2_TILE_FN(, dla_conv_tile_avx2_6x8, DLA_CONV_AVX2_MR2, 1, 0)
AVX2_TILE_FN(, dla_conv_tile_avx2_4x8, DLA_CONV_AVX2_MR0, 1, 0)
AVX2_TILE_FN(, dla_conv_tile_avx2u8_6x8, DLA_CONV_AVX2_MR2, 1, 1)
AVX2_TILE_FN(, dla_conv_tile_avx2u8_4x8, DLA_CONV_AVX2_MR0, 1, 1)
AVX2_TILE_FN(, dla_conv_tile_avx2u8p_6x8, DLA_CONV_AVX2_MR2, 1, 2)
AVX2_TILE_FN(, dla_conv_tile_avx2u8p_4x8, DLA_CONV_AVX2_MR0, 1, 2)

/* ---- tiles of one or two real pixels (dla_conv_tile_avx2_dot) ----
 * The last pixel tile of an output whose pixel count is one or two past a
 * multiple of 16 (7x7: 49 = 3 x 16 + 1) ran as a half tile, eight lanes
 * for one pixel: in 7x7 layers its 6x8 tiles took ~18 % of the tiles'
 * instructions for 1/49 of the pixels (callgrind, 7x7 160 -> 960 -> 160).
 * Here the pixel's cells are read in step order once a tile, and each
 * row is a dot product over the steps, eight steps a vector: P16
 * vpmaddwd, U8 vpmaddubsw then vpmaddwd by ones (the tiles' bounds: a U8
 * input is below 128), summed mod 2^32 as the tiles sum. */
#define DOT_CHUNK 128u /* steps whose cells are gathered at a time */

AVX2_INLINE uint32_t avx2_hsum_u32(__m256i a)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(s);
}

/* One cell's products summed: input cell x, weight cell w. */
static inline uint32_t cell_dot(const unsigned char *x, const unsigned char *w, const int U8)
{
    if (U8) {
        uint32_t s = 0;
        for (int i = 0; i < 4; i++) {
            s += (uint32_t)((int32_t)x[i] * (int8_t)w[i]);
        }
        return s;
    }
    int16_t xv[2], wv[2];
    memcpy(xv, x, sizeof xv);
    memcpy(wv, w, sizeof wv);
    return (uint32_t)((int32_t)xv[0] * wv[0]) + (uint32_t)((int32_t)xv[1] * wv[1]);
}

/* Every row of pixel `lane` of tile t, to out (rows t->ostride apart). */
AVX2_INLINE void avx2_dot_pixel(const struct dla_conv_tile *t, unsigned lane, int32_t *out,
                                const int U8)
{
    _Alignas(32) unsigned char xs[DOT_CHUNK * 4];
    uint32_t sum[DLA_CONV_AVX2_MR1];
    const unsigned mr = t->mr < DLA_CONV_AVX2_MR1 ? t->mr : DLA_CONV_AVX2_MR1;
    const unsigned char *in = t->in + 4 * (size_t)lane;
    for (unsigned m = 0; m < mr; m++) {
        sum[m] = (uint32_t)t->init[m];
    }
    for (size_t q0 = 0; q0 < t->nq; q0 += DOT_CHUNK) {
        const size_t n = t->nq - q0 < DOT_CHUNK ? t->nq - q0 : DOT_CHUNK;
        for (size_t q = 0; q < n; q++) {
            memcpy(xs + 4 * q, in + t->qoff[q0 + q], 4);
        }
        for (unsigned m = 0; m < mr; m++) {
            const unsigned char *w = t->w + m * t->wrow + 4 * q0;
            __m256i a = _mm256_setzero_si256();
            size_t q = 0;
            for (; q + 8 <= n; q += 8) {
                __m256i x = _mm256_load_si256((const __m256i *)(const void *)(xs + 4 * q));
                __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(w + 4 * q));
                a = _mm256_add_epi32(a, avx2_mac(x, b, U8));
            }
            uint32_t s = avx2_hsum_u32(a);
            for (; q < n; q++) {
                s += cell_dot(xs + 4 * q, w + 4 * q, U8);
            }
            sum[m] += s;
        }
    }
    for (unsigned m = 0; m < mr; m++) {
        int32_t v;
        memcpy(&v, &sum[m], sizeof v); /* two's complement, as the tiles' lanes */
        out[m * t->ostride] = v;
    }
}

/* Every real pixel of tile t (its runs). */
AVX2_INLINE void avx2_dot_tile(const struct dla_conv_tile *t, const int U8)
{
    for (unsigned r = 0; r < t->nruns; r++) {
        for (unsigned i = 0; i < t->runs[r].len; i++) {
            avx2_dot_pixel(t, t->runs[r].j + i, t->out + t->runs[r].off + i, U8);
        }
    }
}

AVX2_ATTR void dla_conv_tile_avx2_dot(const struct dla_conv_tile *t)
{
    avx2_dot_tile(t, 0);
}

AVX2_ATTR void dla_conv_tile_avx2u8_dot(const struct dla_conv_tile *t)
{
    avx2_dot_tile(t, 1);
}

/* The one-pixel kernels (conv_s8_impl.h): output channels in the lanes, 8
 * a ymm, NV ymm (acc[0 .. 8 NV) in and out); at step q the input cell is
 * broadcast and STEP(c, b, w) adds its products with one vector's weight
 * cells; every lane a real output, where a pixel tile would use 1 lane of
 * 8 or 16.  U8 (AVX2): vpmaddubsw then vpmaddwd, exact for the tiles'
 * reasons; Q8 (AVX-512 VNNI with VL): vpdpbusd (u8 x s8, four products a
 * lane, no saturation), from each channel's start value (the bias's
 * correction, exact mod 2^32 as in the tiles). */
#define GEMV_LD(v) _mm256_loadu_si256((const __m256i *)(const void *)(acc + 8 * (v)))
#define GEMV_WT(v) _mm256_load_si256((const __m256i *)(const void *)(wk + (v) * vs))
#define GEMV_ST(v, c) _mm256_storeu_si256((__m256i *)(void *)(acc + 8 * (v)), (c))
#define GEMV_ROWS_FN(name, SPEC, STEP)                                                     \
    SPEC void name(const unsigned char *x, const unsigned char *wk, size_t nq, int32_t *acc, \
                   const unsigned NV)                                                      \
    {                                                                                      \
        const size_t vs = nq * 32; /* bytes from one vector's weights to the next */      \
        const __m256i z = _mm256_setzero_si256();                                          \
        __m256i c0 = GEMV_LD(0), c1 = NV > 1 ? GEMV_LD(1) : z, c2 = NV > 2 ? GEMV_LD(2) : z, \
                c3 = NV > 3 ? GEMV_LD(3) : z;                                              \
        for (size_t q = 0; q < nq; q++, wk += 32) {                                        \
            __m256i b = _mm256_set1_epi32(ld32(x + 4 * q));                                \
            c0 = STEP(c0, b, GEMV_WT(0));                                                  \
            c1 = NV > 1 ? STEP(c1, b, GEMV_WT(1)) : c1;                                    \
            c2 = NV > 2 ? STEP(c2, b, GEMV_WT(2)) : c2;                                    \
            c3 = NV > 3 ? STEP(c3, b, GEMV_WT(3)) : c3;                                    \
        }                                                                                  \
        GEMV_ST(0, c0);                                                                    \
        if (NV > 1) {                                                                      \
            GEMV_ST(1, c1);                                                                \
        }                                                                                  \
        if (NV > 2) {                                                                      \
            GEMV_ST(2, c2);                                                                \
        }                                                                                  \
        if (NV > 3) {                                                                      \
            GEMV_ST(3, c3);                                                                \
        }                                                                                  \
    }

/* out[0 .. nk) of the one-pixel kernel rows_fn, from init (NULL: 0). */
#define GEMV_FN(name, ATTR, rows_fn)                                                       \
    ATTR void name(const unsigned char *x, const unsigned char *wk, size_t nq,             \
                   const int32_t *init, int32_t *out, unsigned nk)                         \
    {                                                                                      \
        int32_t acc[DLA_CONV_GEMV_K * DLA_CONV_GEMV_KB] = {0}; /* rows past nk: 0 */       \
        if (init != NULL) {                                                                \
            memcpy(acc, init, nk * sizeof(int32_t));                                       \
        }                                                                                  \
        unsigned nv = (nk + DLA_CONV_GEMV_K - 1) / DLA_CONV_GEMV_K;                        \
        if (nv >= 4) {                                                                     \
            rows_fn(x, wk, nq, acc, 4);                                                    \
        } else if (nv == 3) {                                                              \
            rows_fn(x, wk, nq, acc, 3);                                                    \
        } else if (nv == 2) {                                                              \
            rows_fn(x, wk, nq, acc, 2);                                                    \
        } else {                                                                           \
            rows_fn(x, wk, nq, acc, 1);                                                    \
        }                                                                                  \
        memcpy(out, acc, nk * sizeof(int32_t));                                            \
    }

#define GEMV_STEP_U8(c, b, w) \
    _mm256_add_epi32((c), _mm256_madd_epi16(_mm256_maddubs_epi16((b), (w)), _mm256_set1_epi16(1)))
#define GEMV_STEP_Q8(c, b, w) _mm256_dpbusd_epi32((c), (b), (w))
#define VNNI_VL_TARGET target("avx512f,avx512vl,avx512vnni")

GEMV_ROWS_FN(gemv_rows_u8, AVX2_INLINE, GEMV_STEP_U8)
GEMV_ROWS_FN(gemv_rows_q8, static inline __attribute__((always_inline, VNNI_VL_TARGET)),
             GEMV_STEP_Q8)
GEMV_FN(dla_conv_gemv_avx2u8, AVX2_ATTR, gemv_rows_u8)
GEMV_FN(dla_conv_gemv_vnni, __attribute__((VNNI_VL_TARGET)), gemv_rows_q8)

AVX2_ATTR size_t dla_conv_nonneg_prefix_avx2(const int8_t *s, size_t n)
{
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        const __m256i *v = (const __m256i *)(const void *)(s + i);
        __m256i o = _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1)),
                                    _mm256_or_si256(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3)));
        if (_mm256_movemask_epi8(o) != 0) {
            break;
        }
    }
    return i;
}

#else

/* Not x86-64 GCC/Clang: only the generic path of conv_s8.c exists. */
typedef int dla_conv_s8_x86_unused;

#endif
