/*
 * Memory atoms <-> planar rows (see atoms.h).
 */
#include "arith/atoms.h"

#include <string.h>

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

/* ---- byte transpose --------------------------------------------------------------- */

static void transpose_generic(const uint8_t *src, size_t src_stride, size_t rows, size_t cols,
                              uint8_t *dst, size_t dst_stride)
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
 * Written out so that everything stays in registers. */
DLA_LANES_AVX2_ATTR static inline void tile8(const uint8_t *src, size_t ss, uint8_t *dst,
                                             size_t ds)
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
    store8(dst + 7 * ds, _mm_unpackhi_epi64(c3, c3));
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

void dla_transpose_bytes(enum dla_lanes_isa isa, const uint8_t *src, size_t src_stride,
                         size_t rows, size_t cols, uint8_t *dst, size_t dst_stride)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX2) {
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
    if (isa == DLA_LANES_AVX2 && m == 8) {
        planes8_to_atoms_avx2(planes, plane, out);
        return;
    }
#endif
    (void)isa;
    planes_to_atoms_generic(planes, plane, m, out);
}
