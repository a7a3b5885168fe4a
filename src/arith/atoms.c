/*
 * Memory atoms <-> planar rows (see atoms.h).
 */
#include "arith/atoms.h"

#include <string.h>

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

/* ---- byte transpose --------------------------------------------------------------- */

/* Kept out of line: inlined into transpose_avx2 it ran at half the speed
 * (MobileNetV2's 3-channel first layer: 40,000 -> 75,000 ticks). */
__attribute__((noinline)) static void transpose_generic(const uint8_t *src, size_t src_stride,
                                                        size_t rows, size_t cols, uint8_t *dst,
                                                        size_t dst_stride)
{
    for (size_t c = 0; c < cols; c++) {
        uint8_t *d = dst + c * dst_stride;
        for (size_t r = 0; r < rows; r++) {
            d[r] = src[r * src_stride + c];
        }
    }
}

#if defined(DLA_LANES_X86)
static inline __m128i load8(const uint8_t *p)
{
    return _mm_loadl_epi64((const __m128i *)(const void *)p);
}

static inline void store8(uint8_t *p, __m128i v)
{
    _mm_storel_epi64((__m128i *)(void *)p, v);
}

/* One 8 x 8 tile: rows of 8 bytes are interleaved by bytes, pairs and
 * quads (SSE2 unpacks); each 16-byte result holds two output rows.
 * Written out so that everything stays in registers.  The last output
 * row: its first `last` bytes alone when 4 <= last < 8, else all 8. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
tile8_rows(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds, size_t last)
{
    __m128i a0 = _mm_unpacklo_epi8(load8(src), load8(src + ss));
    __m128i a1 = _mm_unpacklo_epi8(load8(src + 2 * ss), load8(src + 3 * ss));
    __m128i a2 = _mm_unpacklo_epi8(load8(src + 4 * ss), load8(src + 5 * ss));
    __m128i a3 = _mm_unpacklo_epi8(load8(src + 6 * ss), load8(src + 7 * ss));
    __m128i b0 = _mm_unpacklo_epi16(a0, a1); /* rows 0..3 of columns 0..3 */
    __m128i b1 = _mm_unpackhi_epi16(a0, a1); /* rows 0..3 of columns 4..7 */
    __m128i b2 = _mm_unpacklo_epi16(a2, a3); /* rows 4..7 of columns 0..3 */
    __m128i b3 = _mm_unpackhi_epi16(a2, a3);
    __m128i c0 = _mm_unpacklo_epi32(b0, b2); /* columns 0, 1 */
    __m128i c1 = _mm_unpackhi_epi32(b0, b2); /* columns 2, 3 */
    __m128i c2 = _mm_unpacklo_epi32(b1, b3); /* columns 4, 5 */
    __m128i c3 = _mm_unpackhi_epi32(b1, b3); /* columns 6, 7 */
    store8(dst, c0);
    store8(dst + ds, _mm_unpackhi_epi64(c0, c0));
    store8(dst + 2 * ds, c1);
    store8(dst + 3 * ds, _mm_unpackhi_epi64(c1, c1));
    store8(dst + 4 * ds, c2);
    store8(dst + 5 * ds, _mm_unpackhi_epi64(c2, c2));
    store8(dst + 6 * ds, c3);
    if (last >= 8 || last < 4) {
        store8(dst + 7 * ds, _mm_unpackhi_epi64(c3, c3));
        return;
    }
    uint8_t t[8]; /* two 4-byte copies of the row's bytes */
    store8(t, _mm_unpackhi_epi64(c3, c3));
    memcpy(dst + 7 * ds, t, 4);
    memcpy(dst + 7 * ds + last - 4, t + last - 4, 4);
}

DLA_LANES_AVX2_ATTR static inline void tile8(const uint8_t *src, size_t ss, uint8_t *dst,
                                             size_t ds)
{
    tile8_rows(src, ss, dst, ds, 8);
}

/* Fewer than 8 rows (a 7-pixel line of 8-channel atoms: the 7x7 layers)
 * written back to back (dst_stride == rows): 8 x 8 tiles of the rows and
 * zeros; each output row is stored with up to 8 - rows bytes of surplus,
 * which land on the rows after it (rewritten next, in ascending order),
 * never past the block. */
DLA_LANES_AVX2_ATTR static void transpose_short_avx2(const uint8_t *src, size_t src_stride,
                                                     size_t rows, size_t cols, uint8_t *dst)
{
    uint8_t tile[64], pad[8 * 8] = {0}; /* rows past `rows` stay zero: never read */
    const size_t end = rows * cols;
    for (size_t c0 = 0; c0 < cols; c0 += 8) {
        size_t c = c0 + 8 <= cols ? c0 : cols - 8;
        for (size_t r = 0; r < rows; r++) {
            memcpy(pad + r * 8, src + r * src_stride + c, 8);
        }
        tile8(pad, 8, tile, 8);
        for (size_t k = 0; k < 8; k++) {
            const size_t at = (c + k) * rows;
            if (end - at >= 8) { /* a constant size: one store, not a call */
                memcpy(dst + at, tile + k * 8, 8);
            } else {
                memcpy(dst + at, tile + k * 8, end - at);
            }
        }
    }
}

/* One column of 8-byte atoms (a one-channel surface: byte 0 of each atom),
 * 8 rows a step: byte 0 of each 64-bit lane of two 32-byte loads moved to
 * its own byte of the output 8 (the shuffles stay within 128-bit halves,
 * which are then OR-ed). */
DLA_LANES_AVX2_ATTR static void column8_avx2(const uint8_t *src, size_t rows, uint8_t *dst)
{
    const __m256i ia = _mm256_setr_epi8(0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1, -1, 0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1);
    const __m256i ib = _mm256_setr_epi8(-1, -1, -1, -1, 0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1, -1, -1, -1, -1, -1, 0, 8, -1, -1, -1, -1, -1, -1,
                                        -1, -1);
    size_t r = 0;
    for (; r + 8 <= rows; r += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(src + r * 8));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(src + r * 8 + 32));
        __m256i t = _mm256_or_si256(_mm256_shuffle_epi8(a, ia), _mm256_shuffle_epi8(b, ib));
        store8(dst + r, _mm_or_si128(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
    }
    for (; r < rows; r++) {
        dst[r] = src[r * 8];
    }
}

/* Pixels of 8-byte atoms (two a 16-byte half) paired by channel: word k of
 * a half = channel k of its two pixels. */
#define ATOM_PAIR_BYTES 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15

/* An 8 x 8 transpose of 16-bit words in each 128-bit half (word k of
 * v_i -> word i of row k) by unpacking words, pairs and quads, then the 8
 * rows stored ds apart: row k = channel k of 16 pixels a half.  Written
 * out so that everything stays in registers (loops over arrays of vectors
 * are kept in memory at -O2). */
#define ATOM_WORDS_STORE(P, STORE, LAST, v0, v1, v2, v3, v4, v5, v6, v7, dst, ds)                 \
    do {                                                                                          \
        const T_ t0 = P##_unpacklo_epi16(v0, v1), t1 = P##_unpackhi_epi16(v0, v1);                \
        const T_ t2 = P##_unpacklo_epi16(v2, v3), t3 = P##_unpackhi_epi16(v2, v3);                \
        const T_ t4 = P##_unpacklo_epi16(v4, v5), t5 = P##_unpackhi_epi16(v4, v5);                \
        const T_ t6 = P##_unpacklo_epi16(v6, v7), t7 = P##_unpackhi_epi16(v6, v7);                \
        const T_ u0 = P##_unpacklo_epi32(t0, t2), u1 = P##_unpackhi_epi32(t0, t2); /* ch 0-3 */   \
        const T_ u2 = P##_unpacklo_epi32(t1, t3), u3 = P##_unpackhi_epi32(t1, t3); /* ch 4-7 */   \
        const T_ u4 = P##_unpacklo_epi32(t4, t6), u5 = P##_unpackhi_epi32(t4, t6);                \
        const T_ u6 = P##_unpacklo_epi32(t5, t7), u7 = P##_unpackhi_epi32(t5, t7);                \
        STORE((T_ *)(void *)(dst), P##_unpacklo_epi64(u0, u4));                                   \
        STORE((T_ *)(void *)(dst + ds), P##_unpackhi_epi64(u0, u4));                              \
        STORE((T_ *)(void *)(dst + 2 * ds), P##_unpacklo_epi64(u1, u5));                          \
        STORE((T_ *)(void *)(dst + 3 * ds), P##_unpackhi_epi64(u1, u5));                          \
        STORE((T_ *)(void *)(dst + 4 * ds), P##_unpacklo_epi64(u2, u6));                          \
        STORE((T_ *)(void *)(dst + 5 * ds), P##_unpackhi_epi64(u2, u6));                          \
        STORE((T_ *)(void *)(dst + 6 * ds), P##_unpacklo_epi64(u3, u7));                          \
        LAST((T_ *)(void *)(dst + 7 * ds), P##_unpackhi_epi64(u3, u7));                           \
    } while (0)

/* The last channel row of a short line (8 <= n < 16 pixels) stored with
 * its n bytes alone: two 8-byte copies of a 16-byte spill. */
#define STORE_ROW_EXACT(p, v)                                                                     \
    do {                                                                                          \
        uint8_t t_[16];                                                                           \
        _mm_storeu_si128((__m128i *)(void *)t_, v);                                               \
        memcpy((uint8_t *)(p), t_, 8);                                                            \
        memcpy((uint8_t *)(p) + n - 8, t_ + n - 8, 8);                                            \
    } while (0)

/* 16 pixels of 8-byte atoms (8 channels) at src to 8 channel rows of 16
 * bytes, ds apart (all loads before the stores); exact: the last row's
 * first n bytes alone (8 <= n <= 16), else 16. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
atoms16_rows_avx2(const uint8_t *src, uint8_t *dst, size_t ds, int exact, size_t n)
{
    typedef __m128i T_;
    const __m128i pair = _mm_setr_epi8(ATOM_PAIR_BYTES);
#define LD_(i) _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(src + 16 * (i))), pair)
    const __m128i v0 = LD_(0), v1 = LD_(1), v2 = LD_(2), v3 = LD_(3);
    const __m128i v4 = LD_(4), v5 = LD_(5), v6 = LD_(6), v7 = LD_(7);
#undef LD_
    if (exact) {
        ATOM_WORDS_STORE(_mm, _mm_storeu_si128, STORE_ROW_EXACT, v0, v1, v2, v3, v4, v5, v6, v7,
                         dst, ds);
    } else {
        ATOM_WORDS_STORE(_mm, _mm_storeu_si128, _mm_storeu_si128, v0, v1, v2, v3, v4, v5, v6, v7,
                         dst, ds);
    }
}

DLA_LANES_AVX2_ATTR static inline void atoms16_avx2(const uint8_t *src, uint8_t *dst, size_t ds)
{
    atoms16_rows_avx2(src, dst, ds, 0, 16);
}

/* 32 pixels of 8-byte atoms to 8 channel rows of 32 bytes: pixels 0..15
 * in the low halves, 16..31 in the high ones (the unpacks stay in halves). */
DLA_LANES_AVX2_ATTR static inline void atoms32_avx2(const uint8_t *src, uint8_t *dst, size_t ds)
{
    typedef __m256i T_;
    const __m256i pair = _mm256_setr_epi8(ATOM_PAIR_BYTES, ATOM_PAIR_BYTES);
#define LD_(i)                                                                                    \
    _mm256_shuffle_epi8(                                                                          \
        _mm256_inserti128_si256(                                                                  \
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(src + 16 * (i)))), \
            _mm_loadu_si128((const __m128i *)(const void *)(src + 128 + 16 * (i))), 1),          \
        pair)
    const __m256i v0 = LD_(0), v1 = LD_(1), v2 = LD_(2), v3 = LD_(3);
    const __m256i v4 = LD_(4), v5 = LD_(5), v6 = LD_(6), v7 = LD_(7);
#undef LD_
    ATOM_WORDS_STORE(_mm256, _mm256_storeu_si256, _mm256_storeu_si256, v0, v1, v2, v3, v4, v5, v6, v7, dst, ds);
}

/* A line of at least 16 pixels of 8-byte atoms, all 8 channels: blocks of
 * 32 (or 16) pixels, the last one moved back to end at the edge (a few
 * bytes rewritten with the same values).  Half the shuffles and a quarter
 * of the stores of 8 x 8 tiles. */
DLA_LANES_AVX2_ATTR static void atoms_line_avx2(const uint8_t *src, size_t rows, uint8_t *dst,
                                                size_t ds)
{
    size_t r = 0;
    for (; r + 32 <= rows; r += 32) {
        atoms32_avx2(src + 8 * r, dst + r, ds);
    }
    if (r == rows) {
        return;
    }
    if (rows - r > 16 && rows >= 32) {
        atoms32_avx2(src + 8 * (rows - 32), dst + rows - 32, ds);
        return;
    }
    if (rows - r > 16) { /* 17..31 pixels: two blocks of 16 */
        atoms16_avx2(src + 8 * r, dst + r, ds);
    }
    atoms16_avx2(src + 8 * (rows - 16), dst + rows - 16, ds);
}

/* A line of at least 32 pixels of 8-byte atoms, the first 1 < cols < 8
 * channels (the 3-channel first layer's): blocks of 32 pixels transposed
 * whole on the stack, then `cols` rows of 32 bytes copied out. */
DLA_LANES_AVX2_ATTR static void atoms_line_few_avx2(const uint8_t *src, size_t rows,
                                                    size_t cols, uint8_t *dst, size_t ds)
{
    _Alignas(64) uint8_t tmp[8 * 32];
    for (size_t r0 = 0; r0 < rows; r0 += 32) {
        const size_t r = r0 + 32 <= rows ? r0 : rows - 32;
        atoms32_avx2(src + 8 * r, tmp, 32);
        for (size_t k = 0; k < cols; k++) {
            memcpy(dst + k * ds + r, tmp + 32 * k, 32);
        }
    }
}

/* Whole 8 x 8 tiles; the last tile of a row or column of tiles is moved
 * back to end at the edge, rewriting a few bytes with the same values. */
DLA_LANES_AVX2_ATTR static void transpose_avx2(const uint8_t *src, size_t src_stride,
                                               size_t rows, size_t cols, uint8_t *dst,
                                               size_t dst_stride)
{
    if (cols == 1 && src_stride == 8) {
        column8_avx2(src, rows, dst);
        return;
    }
    if (cols == 8 && src_stride == 8 && rows >= 16) {
        atoms_line_avx2(src, rows, dst, dst_stride);
        return;
    }
    if (cols > 1 && cols < 8 && src_stride == 8 && rows >= 32) {
        atoms_line_few_avx2(src, rows, cols, dst, dst_stride);
        return;
    }
    if (rows > 0 && rows < 8 && cols >= 8 && dst_stride == rows) {
        transpose_short_avx2(src, src_stride, rows, cols, dst);
        return;
    }
    if (rows < 8 || cols < 8) {
        transpose_generic(src, src_stride, rows, cols, dst, dst_stride);
        return;
    }
    for (size_t c0 = 0; c0 < cols; c0 += 8) {
        size_t c = c0 + 8 <= cols ? c0 : cols - 8;
        for (size_t r0 = 0; r0 < rows; r0 += 8) {
            size_t r = r0 + 8 <= rows ? r0 : rows - 8;
            tile8(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride);
        }
    }
}
#endif

#if defined(DLA_LANES_X86)
/* Lines of fewer than 16 pixels of 8-channel atoms, lines and their
 * channel rows back to back on both sides (an 8-channel cube: the
 * depthwise layers' 7x7 and 14x14 surfaces): a line is one 8 x 8 tile (or
 * one 16-pixel block) read from the atoms in place, the pixels past the
 * line being the next line's; each channel row is stored whole with up to
 * 8 (16) - rows bytes of surplus that the next row's store rewrites, the
 * last one's landing on the next line, written after it.  The lines that
 * have no such successor are left: returns how many lines were done. */
DLA_LANES_AVX2_ATTR static size_t atom_lines_short_avx2(const uint8_t *src, size_t rows,
                                                         uint8_t *dst, size_t lines)
{
    const size_t block = rows < 8 ? 8 : 16, line = 8 * rows;
    size_t l = 0;
    for (; l + 1 < lines && (lines - l) * rows >= block; l++) {
        if (rows < 8) {
            tile8(src + l * line, 8, dst + l * line, rows);
        } else {
            atoms16_avx2(src + l * line, dst + l * line, rows);
        }
    }
    return l;
}

/* The same with the lines' channel rows dst_line apart in CBUF (a cube of
 * more than 8 channels: the other surfaces' rows lie between), 4 <= rows
 * < 16: the last channel row of a line is stored with its own bytes
 * alone; the others' surplus lands on the row after them, within the
 * line. */
DLA_LANES_AVX2_ATTR static size_t atom_lines_apart_avx2(const uint8_t *src, size_t rows,
                                                         uint8_t *dst, size_t lines,
                                                         size_t dst_line)
{
    const size_t block = rows < 8 ? 8 : 16;
    size_t l = 0;
    for (; (lines - l) * rows >= block; l++) {
        if (rows < 8) {
            tile8_rows(src + l * 8 * rows, 8, dst + l * dst_line, rows, rows);
        } else {
            atoms16_rows_avx2(src + l * 8 * rows, dst + l * dst_line, rows, 1, rows);
        }
    }
    return l;
}
#endif

void dla_transpose_lines(enum dla_lanes_isa isa, const uint8_t *src, size_t src_stride,
                         size_t rows, size_t cols, uint8_t *dst, size_t dst_stride, size_t lines,
                         size_t src_line_stride, size_t dst_line_stride)
{
    size_t l = 0;
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        if (cols == 8 && src_stride == 8 && rows > 0 && rows < 16 && dst_stride == rows &&
            src_line_stride == 8 * rows && dst_line_stride == 8 * rows) {
            l = atom_lines_short_avx2(src, rows, dst, lines);
        } else if (cols == 8 && src_stride == 8 && rows >= 4 && rows < 16 && dst_stride == rows &&
                   src_line_stride == 8 * rows && dst_line_stride > 8 * rows) {
            l = atom_lines_apart_avx2(src, rows, dst, lines, dst_line_stride);
        }
        for (; l < lines; l++) {
            transpose_avx2(src + l * src_line_stride, src_stride, rows, cols,
                           dst + l * dst_line_stride, dst_stride);
        }
        return;
    }
#endif
    (void)isa;
    for (; l < lines; l++) {
        transpose_generic(src + l * src_line_stride, src_stride, rows, cols,
                          dst + l * dst_line_stride, dst_stride);
    }
}

void dla_transpose_bytes(enum dla_lanes_isa isa, const uint8_t *src, size_t src_stride,
                         size_t rows, size_t cols, uint8_t *dst, size_t dst_stride)
{
    if (rows == 1 && dst_stride == 1) { /* one pixel (a 1x1 cube's atom): a copy */
        memcpy(dst, src, cols);
        return;
    }
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        transpose_avx2(src, src_stride, rows, cols, dst, dst_stride);
        return;
    }
#endif
    (void)isa;
    transpose_generic(src, src_stride, rows, cols, dst, dst_stride);
}

/* ---- planes to atoms (SDP) ------------------------------------------------------- */

static void planes_to_atoms_generic(const int32_t *planes, size_t plane, unsigned m,
                                    uint8_t *out)
{
    for (unsigned l = 0; l < m; l++) {
        const int32_t *src = planes + (size_t)l * plane;
        for (size_t j = 0; j < plane; j++) {
            out[j * m + l] = (uint8_t)((uint32_t)src[j] & 0xffu);
        }
    }
}

#if defined(DLA_LANES_X86)
/* Low bytes of 16 int32 (masked first: the saturating packs keep 0..255). */
DLA_LANES_AVX2_ATTR static inline __m128i low_bytes16(const int32_t *p)
{
    const __m128i m = _mm_set1_epi32(0xff);
    __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)p), m);
    __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 4)), m);
    __m128i c = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 8)), m);
    __m128i d = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 12)), m);
    return _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
}

/* 8 planes: 16 elements at a time, 8 x 16 bytes transposed by unpacking
 * bytes, then pairs, then quads. */
DLA_LANES_AVX2_ATTR static void planes8_to_atoms_avx2(const int32_t *planes, size_t plane,
                                                      uint8_t *out)
{
    size_t j = 0;
    for (; j + 16 <= plane; j += 16) {
        __m128i b[8];
        for (unsigned l = 0; l < 8; l++) {
            b[l] = low_bytes16(planes + l * plane + j);
        }
        __m128i t[8], u[8];
        for (unsigned k = 0; k < 4; k++) {
            t[2 * k] = _mm_unpacklo_epi8(b[2 * k], b[2 * k + 1]);     /* elements 0..7 */
            t[2 * k + 1] = _mm_unpackhi_epi8(b[2 * k], b[2 * k + 1]); /* elements 8..15 */
        }
        for (unsigned k = 0; k < 2; k++) {
            /* planes 4k..4k+3 of elements 0..3, 4..7, 8..11, 12..15 */
            u[4 * k] = _mm_unpacklo_epi16(t[4 * k], t[4 * k + 2]);
            u[4 * k + 1] = _mm_unpackhi_epi16(t[4 * k], t[4 * k + 2]);
            u[4 * k + 2] = _mm_unpacklo_epi16(t[4 * k + 1], t[4 * k + 3]);
            u[4 * k + 3] = _mm_unpackhi_epi16(t[4 * k + 1], t[4 * k + 3]);
        }
        uint8_t *o = out + j * 8;
        for (unsigned q = 0; q < 4; q++) {
            /* elements 4q..4q+3, all 8 planes */
            __m128i lo = _mm_unpacklo_epi32(u[q], u[4 + q]);
            __m128i hi = _mm_unpackhi_epi32(u[q], u[4 + q]);
            _mm_storeu_si128((__m128i *)(void *)(o + 32 * q), lo);
            _mm_storeu_si128((__m128i *)(void *)(o + 32 * q + 16), hi);
        }
    }
    for (; j < plane; j++) {
        for (unsigned l = 0; l < 8; l++) {
            out[j * 8 + l] = (uint8_t)((uint32_t)planes[l * plane + j] & 0xffu);
        }
    }
}
#endif

void dla_atoms_from_planes(enum dla_lanes_isa isa, const int32_t *planes, size_t plane,
                           unsigned m, uint8_t *out)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa) && m == 8) {
        planes8_to_atoms_avx2(planes, plane, out);
        return;
    }
#endif
    (void)isa;
    planes_to_atoms_generic(planes, plane, m, out);
}
