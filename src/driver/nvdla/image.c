/*
 * nvdla_runtime's image formats (ref: nvdla/sw umd/apps/runtime/DlaImage.cpp
 * getAddrOffset/packData/serialize, TestUtils.cpp Tensor2DIMG): a .dimg is
 * "DIMG", u32 version 0, then u32 surface format, width, height, channel,
 * line stride, surface stride, size (36 bytes, little-endian), then the
 * elements in c, y, x order, each read at the surface format's address:
 * (c / X) * surface_stride + y * line_stride + x * X * bpe + (c % X) * bpe
 * for the CxHWx formats.  For FEATURE tensors the application picks
 * X = 32 (INT8, format code 40) or 16 (INT16 41, FP16 42: the codes in
 * NVIDIA's golden dumps; nvdla/sw HEAD numbers them 42/43) whatever the
 * hardware's atom; FEATURE_X8 INT8 uses X = 8 (HEAD's code 41; the
 * goldens' application had no such format).  Elements at or beyond
 * the buffer's size are an error, as in the application.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "driver/nvdla/image.h"

#include <jpeglib.h> /* libjpeg-turbo (Debian libjpeg62-turbo-dev) */
#include "common/status.h"

#define DIMG_HEADER 36u
#define PF_FEATURE 36u
#define PF_FEATURE_X8 37u
#define DT_HALF 2u
#define DT_INT16 3u
#define DT_INT8 4u

struct dimg_format {
    uint32_t code, x, bpe;
};

static int format_of(const struct nvrt_tensor_layout *t, struct dimg_format *f, char *err,
                     size_t errlen)
{
    if (t->pixel_format == PF_FEATURE || t->pixel_format == PF_FEATURE_X8) {
        if (t->data_type == DT_INT8) {
            *f = t->pixel_format == PF_FEATURE ? (struct dimg_format){ 40, 32, 1 }
                                               : (struct dimg_format){ 41, 8, 1 };
            return 0;
        }
        if (t->data_type == DT_INT16 || t->data_type == DT_HALF) {
            /* the codes of the application that wrote NVIDIA's goldens (their
             * INT16 dumps say 41, FP16 42); nvdla/sw HEAD renumbered them to
             * 42/43 when it added the x8 format */
            *f = (struct dimg_format){ t->data_type == DT_HALF ? 42u : 41u, 16, 2 };
            return 0;
        }
    }
    return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                    "output tensor: pixel_format %u with data_type %u has no .dimg layout in "
                    "dlasim (FEATURE/FEATURE_X8 with INT8/INT16/HALF do)",
                    t->pixel_format, t->data_type);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t element_offset(const struct nvrt_tensor_layout *t, const struct dimg_format *f,
                               uint32_t x, uint32_t y, uint32_t c)
{
    return (uint64_t)(c / f->x) * t->surf_stride + (uint64_t)y * t->line_stride +
           (uint64_t)x * f->x * f->bpe + (uint64_t)(c % f->x) * f->bpe;
}

/* Dimensions an image can have: every element lies at its own offset inside
 * the tensor's bytes, so c * h * w elements of bpe bytes need at least that
 * many bytes (checked before the image is allocated). */
static int check_dims(const struct nvrt_tensor_layout *t, unsigned bpe, char *err, size_t errlen)
{
    if (t->c <= 0 || t->h <= 0 || t->w <= 0 ||
        (uint64_t)t->c * (uint64_t)t->h * (uint64_t)t->w > (1ull << 30) || t->size > 0xffffffffu ||
        (uint64_t)t->c * (uint64_t)t->h * (uint64_t)t->w * bpe > t->size) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "tensor: dimensions c=%d h=%d w=%d / size %llu are not a valid image",
                        t->c, t->h, t->w, (unsigned long long)t->size);
    }
    return 0;
}

int nvrt_tensor_to_dimg(const uint8_t *buf, const struct nvrt_tensor_layout *t, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen)
{
    struct dimg_format f;
    int rc = format_of(t, &f, err, errlen);
    rc = rc ? rc : check_dims(t, f.bpe, err, errlen);
    if (rc) {
        return rc;
    }
    size_t n = (size_t)t->c * (size_t)t->h * (size_t)t->w * f.bpe;
    uint8_t *d = malloc(DIMG_HEADER + n);
    if (!d) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "dimg: out of host memory");
    }
    memcpy(d, "DIMG", 4);
    const uint32_t meta[8] = { 0, f.code, (uint32_t)t->w, (uint32_t)t->h, (uint32_t)t->c,
                               t->line_stride, t->surf_stride, (uint32_t)t->size };
    for (int i = 0; i < 8; i++) {
        put32(d + 4 + 4 * i, meta[i]);
    }
    uint8_t *p = d + DIMG_HEADER;
    for (uint32_t c = 0; c < (uint32_t)t->c; c++) {
        for (uint32_t y = 0; y < (uint32_t)t->h; y++) {
            for (uint32_t x = 0; x < (uint32_t)t->w; x++) {
                uint64_t off = element_offset(t, &f, x, y, c);
                if (off + f.bpe > t->size) {
                    free(d);
                    return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                                    "dimg: element (c=%u, y=%u, x=%u) at offset %llu lies "
                                    "beyond the tensor's %llu bytes",
                                    c, y, x, (unsigned long long)off,
                                    (unsigned long long)t->size);
                }
                memcpy(p, buf + off, f.bpe);
                if (t->data_type == DT_HALF && p[0] == 0 && p[1] == 0x80) {
                    p[1] = 0; /* the application's stable hash: -0 -> +0 */
                }
                p += f.bpe;
            }
        }
    }
    *out = d;
    *out_len = DIMG_HEADER + n;
    return 0;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A .dimg input: its elements are placed at the tensor's addresses. */
static int dimg_in(const uint8_t *d, size_t len, const struct nvrt_tensor_layout *t,
                   const struct dimg_format *f, uint8_t *buf, char *err, size_t errlen)
{
    uint32_t w = get32(d + 12), h = get32(d + 16), c = get32(d + 20);
    uint32_t code = get32(d + 8);
    uint32_t bpe = code == 38 || code == 39 || code == 42 || code == 43 ||
                           (code == 41 && f->bpe == 2)
                       ? 2
                       : 1;
    if (w != (uint32_t)t->w || h != (uint32_t)t->h || c != (uint32_t)t->c || bpe != f->bpe ||
        (uint64_t)w * h * c * bpe > len - DIMG_HEADER) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "input .dimg: %ux%ux%u (%u-byte elements) does not match the input "
                        "tensor %dx%dx%d or its data is truncated",
                        w, h, c, bpe, t->w, t->h, t->c);
    }
    const uint8_t *p = d + DIMG_HEADER;
    for (uint32_t ci = 0; ci < c; ci++) {
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t x = 0; x < w; x++, p += bpe) {
                uint64_t off = element_offset(t, f, x, y, ci);
                if (off + bpe > t->size) {
                    return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                                    "input .dimg: element (c=%u, y=%u, x=%u) falls outside "
                                    "the tensor's %llu bytes",
                                    ci, y, x, (unsigned long long)t->size);
                }
                memcpy(buf + off, p, bpe);
            }
        }
    }
    return 0;
}

/* Where an 8-bit input image's pixel (x, y) channel z goes in an INT8 input
 * tensor -- R8 pitch-linear (pixel_format 0: one channel) or a FEATURE /
 * FEATURE_X8 layout -- and its value there: the application's createImageCopy
 * compresses [0, 255] to [0, 127] as floor(p * 127 / 255 + 0.5). */
static int store_pixel(const struct nvrt_tensor_layout *t, const struct dimg_format *f, int r8,
                       uint32_t x, uint32_t y, uint32_t z, unsigned p, uint8_t *buf,
                       const char *what, char *err, size_t errlen)
{
    uint64_t off = r8 ? (uint64_t)y * t->line_stride + x : element_offset(t, f, x, y, z);
    if ((r8 && z) || off >= t->size) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "input %s: pixel (%u, %u) channel %u falls outside the tensor's %llu bytes",
                        what, x, y, z, (unsigned long long)t->size);
    }
    buf[off] = (uint8_t)(int)floor(p * 127.0 / 255.0 + 0.5);
    return 0;
}

/* The layout of an INT8 tensor an 8-bit image is copied into (r8: R8). */
static int image_layout(const struct nvrt_tensor_layout *t, struct dimg_format *f, int *r8,
                        const char *what, char *err, size_t errlen)
{
    *r8 = t->pixel_format == 0;
    *f = (struct dimg_format){ 0, 1, 1 };
    if (!*r8) {
        int rc = format_of(t, f, err, errlen);
        if (rc) {
            return rc;
        }
    }
    if (t->data_type != DT_INT8 || f->bpe != 1) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                        "input %s: only INT8 input tensors are converted (data_type %u)", what,
                        t->data_type);
    }
    return 0;
}

/* PGM (P5, maxval < 256): one channel, written to channel 0 of an INT8
 * tensor (R8 pitch-linear, FEATURE or FEATURE_X8 layout) as the
 * application's createImageCopy does: floor(p * 127 / 255 + 0.5), the rest
 * of the buffer zero. */
static int pgm_in(const uint8_t *d, size_t len, const struct nvrt_tensor_layout *t,
                  uint8_t *buf, char *err, size_t errlen)
{
    unsigned long v[3];
    size_t pos = 2;
    for (int i = 0; i < 3; i++) {
        while (pos < len && (d[pos] == ' ' || d[pos] == '\n' || d[pos] == '\r' || d[pos] == '\t' ||
                             d[pos] == '#')) {
            if (d[pos] == '#') {
                while (pos < len && d[pos] != '\n') {
                    pos++;
                }
            } else {
                pos++;
            }
        }
        v[i] = 0;
        size_t start = pos;
        while (pos < len && d[pos] >= '0' && d[pos] <= '9' && pos - start < 9) {
            v[i] = v[i] * 10 + (unsigned long)(d[pos++] - '0');
        }
        if (pos == start) {
            return dla_errf(err, errlen, DLASIM_ERR_PARSE, "input PGM: malformed header at byte %zu", pos);
        }
    }
    pos++; /* one whitespace byte ends the header */
    int r8;
    struct dimg_format f;
    int rc = image_layout(t, &f, &r8, "PGM", err, errlen);
    if (rc) {
        return rc;
    }
    if (v[2] == 0 || v[2] > 255 || v[0] != (unsigned long)t->w || v[1] != (unsigned long)t->h ||
        pos > len || v[0] * v[1] > len - pos) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "input PGM: %lux%lu maxval %lu does not match the %dx%d input tensor or "
                        "is truncated",
                        v[0], v[1], v[2], t->w, t->h);
    }
    for (uint32_t y = 0; y < (uint32_t)t->h; y++) {
        for (uint32_t x = 0; x < (uint32_t)t->w; x++) {
            uint8_t p = d[pos + (size_t)y * v[0] + x];
            if (p > v[2]) { /* netpbm: every gray value lies in [0, maxval] */
                return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                                "input PGM: pixel (%u, %u) is %u, above the maxval %lu", x, y, p,
                                v[2]);
            }
            rc = store_pixel(t, &f, r8, x, y, 0, p, buf, "PGM", err, errlen);
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

/* libjpeg reports errors through error_exit, which by default prints and
 * exits: here it keeps the message and jumps back (the library never exits
 * or prints). */
struct jpeg_guard {
    struct jpeg_error_mgr mgr;
    jmp_buf back;
    char msg[JMSG_LENGTH_MAX];
};

static void jpeg_error_back(j_common_ptr c)
{
    struct jpeg_guard *g = (struct jpeg_guard *)c->err;
    (*c->err->format_message)(c, g->msg);
    longjmp(g->back, 1);
}

static void jpeg_silent(j_common_ptr c)
{
    (void)c;
}

/* Decode a JPEG as the application's JPEG2DIMG does (ref: nvdla/sw
 * umd/apps/runtime/DlaImageUtils.cpp; facts only): libjpeg's accurate integer
 * IDCT (JDCT_ISLOW), grayscale as one channel, YCbCr and RGB as three in B, G,
 * R order (it extracts BGR for Caffe models), other colour spaces refused;
 * scanline y stored at y * stride_1 of the input tensor in a buffer of the
 * tensor's size.  0, or -1 with the reason in msg. */
static int jpeg_decode(const uint8_t *d, size_t len, const struct nvrt_tensor_layout *t,
                       uint8_t *raster, unsigned dims[3], char *msg, size_t msglen)
{
    struct jpeg_decompress_struct info;
    struct jpeg_guard g;
    info.err = jpeg_std_error(&g.mgr);
    g.mgr.error_exit = jpeg_error_back;
    g.mgr.output_message = jpeg_silent;
    g.msg[0] = 0;
    if (setjmp(g.back)) {
        jpeg_destroy_decompress(&info);
        snprintf(msg, msglen, "%s", g.msg);
        return -1;
    }
    jpeg_create_decompress(&info);
    /* a bound on libjpeg's own buffers (a progressive image keeps all its
     * coefficients): beyond it decoding fails instead of taking the host */
    info.mem->max_memory_to_use = 256L << 20;
    jpeg_mem_src(&info, d, (unsigned long)len);
    jpeg_read_header(&info, TRUE);
    if (info.image_width != (JDIMENSION)t->w || info.image_height != (JDIMENSION)t->h) {
        snprintf(msg, msglen, "%ux%u image for a %dx%d input tensor", info.image_width,
                 info.image_height, t->w, t->h);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    info.dct_method = JDCT_ISLOW;
    unsigned ch = 1;
    if (info.jpeg_color_space == JCS_YCbCr || info.jpeg_color_space == JCS_RGB) {
        info.out_color_space = JCS_EXT_BGR;
        ch = 3;
    } else if (info.jpeg_color_space != JCS_GRAYSCALE) {
        snprintf(msg, msglen, "colour space %d is not converted (grayscale, YCbCr and RGB are)",
                 (int)info.jpeg_color_space);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_start_decompress(&info);
    uint64_t row_bytes = (uint64_t)info.output_width * ch;
    while (info.output_scanline < info.output_height) {
        uint64_t off = (uint64_t)info.output_scanline * t->line_stride;
        if (off + row_bytes > t->size) {
            snprintf(msg, msglen, "line %u (%llu bytes at stride %u) ends beyond the input "
                     "tensor's %llu bytes", info.output_scanline, (unsigned long long)row_bytes,
                     t->line_stride, (unsigned long long)t->size);
            jpeg_destroy_decompress(&info);
            return -1;
        }
        JSAMPROW row = raster + off;
        jpeg_read_scanlines(&info, &row, 1);
    }
    dims[0] = info.output_width;
    dims[1] = info.output_height;
    dims[2] = ch;
    jpeg_finish_decompress(&info);
    /* libjpeg only warns about corrupt or truncated data (e.g. "Premature
     * end of JPEG file") and fills the rest with gray: here that image is
     * refused, not fed to the network as if it were the file's. */
    if (info.err->num_warnings) {
        (*info.err->format_message)((j_common_ptr)&info, g.msg);
        snprintf(msg, msglen, "corrupt or truncated data (libjpeg: %s)", g.msg);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_destroy_decompress(&info);
    return 0;
}

/* JPEG: decoded as above, then each pixel's channels copied into the tensor
 * as createImageCopy does (same scaling as PGM); the image must have the
 * tensor's width and height and at most its channels. */
static int jpeg_in(const uint8_t *d, size_t len, const struct nvrt_tensor_layout *t, uint8_t *buf,
                   char *err, size_t errlen)
{
    int r8;
    struct dimg_format f;
    int rc = image_layout(t, &f, &r8, "JPEG", err, errlen);
    if (rc || (rc = check_dims(t, 1, err, errlen))) {
        return rc;
    }
    uint8_t *raster = calloc(1, (size_t)t->size);
    if (!raster) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "input JPEG: out of memory");
    }
    unsigned dims[3];
    char msg[JMSG_LENGTH_MAX + 96];
    if (jpeg_decode(d, len, t, raster, dims, msg, sizeof msg)) {
        free(raster);
        return dla_errf(err, errlen, DLASIM_ERR_PARSE, "input JPEG: %s", msg);
    }
    if (dims[0] != (unsigned)t->w || dims[1] != (unsigned)t->h || dims[2] > (unsigned)t->c) {
        free(raster);
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "input JPEG: %ux%u with %u channels does not fit the %dx%dx%d input tensor",
                        dims[0], dims[1], dims[2], t->w, t->h, t->c);
    }
    for (uint32_t y = 0; y < dims[1] && !rc; y++) {
        for (uint32_t x = 0; x < dims[0] && !rc; x++) {
            for (uint32_t z = 0; z < dims[2] && !rc; z++) {
                unsigned p = raster[(uint64_t)y * t->line_stride + (uint64_t)x * dims[2] + z];
                rc = store_pixel(t, &f, r8, x, y, z, p, buf, "JPEG", err, errlen);
            }
        }
    }
    free(raster);
    return rc;
}

int nvrt_image_to_tensor(const void *data, size_t len, const struct nvrt_tensor_layout *t,
                         uint8_t *buf, char *err, size_t errlen)
{
    const uint8_t *d = data;
    struct dimg_format f;
    if (len >= DIMG_HEADER && memcmp(d, "DIMG", 4) == 0) {
        int rc = format_of(t, &f, err, errlen);
        return rc ? rc : dimg_in(d, len, t, &f, buf, err, errlen);
    }
    if (len >= 2 && d[0] == 'P' && d[1] == '5') {
        return pgm_in(d, len, t, buf, err, errlen);
    }
    if (len >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff) {
        return jpeg_in(d, len, t, buf, err, errlen);
    }
    if (len != t->size) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "raw input: %zu bytes, the input tensor has %llu", len,
                        (unsigned long long)t->size);
    }
    memcpy(buf, d, len);
    return 0;
}
