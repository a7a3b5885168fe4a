/*
 * JPEG input of the runtime (src/driver/nvdla/image.c), converted as NVIDIA's
 * nvdla_runtime test application converts it: libjpeg decode (BGR for colour,
 * one channel for grayscale), then floor(p * 127 / 255 + 0.5) into the input
 * tensor's layout.  The reference here decodes the same bytes with libjpeg on
 * its own and places each value with the FEATURE_X8 / R8 address formulas of
 * the surface formats (8 channels per atom; pitch-linear R8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jpeglib.h>

#include "dlasim/dlasim.h"
#include "driver/nvdla/image.h"

#define W 13
#define H 7

/* An image with gradients in every channel, as a JPEG in memory. */
static unsigned char *encode(int gray, unsigned long *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *out = NULL;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, len);
    c.image_width = W;
    c.image_height = H;
    c.input_components = gray ? 1 : 3;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char row[W * 3];
    while (c.next_scanline < H) {
        unsigned y = c.next_scanline;
        for (unsigned x = 0; x < W; x++) {
            for (unsigned k = 0; k < 3; k++) {
                row[x * 3 + k] = (unsigned char)(x * 19 + y * 31 + k * 80);
            }
        }
        if (gray) {
            for (unsigned x = 0; x < W; x++) {
                row[x] = row[x * 3];
            }
        }
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return out;
}

/* Independent decode: the pixels in B, G, R (or gray) order. */
static void decode(const unsigned char *jpg, unsigned long len, int gray, unsigned char *px)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr e;
    d.err = jpeg_std_error(&e);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, jpg, len);
    jpeg_read_header(&d, TRUE);
    d.dct_method = JDCT_ISLOW;
    if (!gray) {
        d.out_color_space = JCS_EXT_BGR;
    }
    jpeg_start_decompress(&d);
    while (d.output_scanline < d.output_height) {
        JSAMPROW r = px + (size_t)d.output_scanline * W * (gray ? 1 : 3);
        jpeg_read_scanlines(&d, &r, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
}

static uint8_t scaled(unsigned p)
{
    return (uint8_t)((p * 127u * 2u + 255u) / (2u * 255u)); /* floor(p * 127 / 255 + 0.5) */
}

/* A colour JPEG into a 3-channel INT8 FEATURE_X8 tensor (8 channels per atom). */
static void test_colour_to_feature_x8(void **state)
{
    (void)state;
    unsigned long len;
    unsigned char *jpg = encode(0, &len);
    unsigned char px[W * H * 3];
    decode(jpg, len, 0, px);
    struct nvrt_tensor_layout t = { 4, 37, 3, H, W, W * 8, W * H * 8, W * H * 8 };
    uint8_t *buf = calloc(1, t.size), *want = calloc(1, t.size);
    char err[256] = "";
    assert_int_equal(nvrt_image_to_tensor(jpg, len, &t, buf, err, sizeof err), 0);
    for (unsigned y = 0; y < H; y++) {
        for (unsigned x = 0; x < W; x++) {
            for (unsigned c = 0; c < 3; c++) {
                want[y * t.line_stride + x * 8 + c] = scaled(px[(y * W + x) * 3 + c]);
            }
        }
    }
    assert_memory_equal(buf, want, t.size);
    free(buf);
    free(want);
    free(jpg);
}

/* A grayscale JPEG into an R8 tensor with a padded line stride. */
static void test_gray_to_r8(void **state)
{
    (void)state;
    unsigned long len;
    unsigned char *jpg = encode(1, &len);
    unsigned char px[W * H];
    decode(jpg, len, 1, px);
    struct nvrt_tensor_layout t = { 4, 0, 1, H, W, 32, 0, 32 * H };
    uint8_t buf[32 * H] = {0}, want[32 * H] = {0};
    char err[256] = "";
    assert_int_equal(nvrt_image_to_tensor(jpg, len, &t, buf, err, sizeof err), 0);
    for (unsigned y = 0; y < H; y++) {
        for (unsigned x = 0; x < W; x++) {
            want[y * 32 + x] = scaled(px[y * W + x]);
        }
    }
    assert_memory_equal(buf, want, sizeof buf);
    free(jpg);
}

/* Refusals: a truncated stream, the wrong size, more channels than the
 * tensor has -- each a message, no crash, nothing printed. */
static void test_refusals(void **state)
{
    (void)state;
    unsigned long len;
    unsigned char *jpg = encode(0, &len);
    struct nvrt_tensor_layout t = { 4, 37, 3, H, W, W * 8, W * H * 8, W * H * 8 };
    uint8_t *buf = calloc(1, t.size);
    char err[256] = "";
    assert_int_equal(nvrt_image_to_tensor(jpg, len / 3, &t, buf, err, sizeof err),
                     DLASIM_ERR_PARSE);
    assert_non_null(strstr(err, "input JPEG"));
    struct nvrt_tensor_layout wide = t;
    wide.w = W + 1;
    wide.line_stride = (W + 1) * 8;
    assert_int_equal(nvrt_image_to_tensor(jpg, len, &wide, buf, err, sizeof err),
                     DLASIM_ERR_PARSE);
    assert_non_null(strstr(err, "13x7 image for a 14x7 input tensor"));
    struct nvrt_tensor_layout one = t;
    one.c = 1;
    assert_int_equal(nvrt_image_to_tensor(jpg, len, &one, buf, err, sizeof err),
                     DLASIM_ERR_PARSE);
    assert_non_null(strstr(err, "3 channels does not fit"));
    free(buf);
    free(jpg);
}

/* Issue 22: a JPEG cut inside its scan data (header intact) is refused;
 * libjpeg would only warn and fill the rest of the image with gray. */
static void test_truncated_scan(void **state)
{
    (void)state;
    unsigned long len;
    unsigned char *jpg = encode(1, &len);
    struct nvrt_tensor_layout t = { 4, 0, 1, H, W, 32, 0, 32 * H };
    uint8_t buf[32 * H] = {0};
    char err[256] = "";
    assert_int_equal(nvrt_image_to_tensor(jpg, len, &t, buf, err, sizeof err), 0);
    for (unsigned long cut = 2; cut <= 12; cut += 5) { /* EOI and the last scan bytes gone */
        assert_int_equal(nvrt_image_to_tensor(jpg, len - cut, &t, buf, err, sizeof err),
                         DLASIM_ERR_PARSE);
        assert_non_null(strstr(err, "corrupt or truncated"));
    }
    free(jpg);
}

/* Issue 22: a PGM pixel above its maxval is refused (netpbm: 0..maxval),
 * not scaled past 255. */
static void test_pgm_above_maxval(void **state)
{
    (void)state;
    uint8_t pgm[64];
    int hl = snprintf((char *)pgm, sizeof pgm, "P5\n%d %d\n100\n", W, H);
    uint8_t *img = calloc(1, (size_t)hl + W * H);
    memcpy(img, pgm, (size_t)hl);
    memset(img + hl, 100, W * H);
    struct nvrt_tensor_layout t = { 4, 0, 1, H, W, 32, 0, 32 * H };
    uint8_t buf[32 * H] = {0};
    char err[256] = "";
    assert_int_equal(nvrt_image_to_tensor(img, (size_t)hl + W * H, &t, buf, err, sizeof err), 0);
    img[hl + W + 2] = 255;
    assert_int_equal(nvrt_image_to_tensor(img, (size_t)hl + W * H, &t, buf, err, sizeof err),
                     DLASIM_ERR_PARSE);
    assert_non_null(strstr(err, "pixel (2, 1) is 255, above the maxval 100"));
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colour_to_feature_x8),
        cmocka_unit_test(test_gray_to_r8),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_truncated_scan),
        cmocka_unit_test(test_pgm_above_maxval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
