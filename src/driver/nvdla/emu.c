/*
 * EMU tasks: the operations NVIDIA's runtime runs on the CPU (softmax and
 * power), ref: nvdla/sw umd/core/src/runtime/Emulator.cpp and
 * umd/core/src/common/include/priv/emu/emu1/A/emu_interface.h (facts only).
 *
 * Descriptor layouts (little-endian, as the compiler writes them):
 *   network (address index 0): s16 operation_desc_index,
 *     s16 operation_buffer_desc_index, u16 num_operations;
 *   operation container, 24 bytes per operation: u8 op_type (0 power,
 *     1 softmax), f32 input_scale_factor @4, f32 output_scale_factor @8;
 *     softmax: u8 axis @12; power: f32 power @12, scale @16, shift @20;
 *   buffer container, 512 bytes per operation: source then destination
 *     buffer descriptor of 256 bytes each: s16 address index @0,
 *     u32 offset @2, u32 size @6, u16 format @10 (0 INT8, 1 INT8_8, 3 FP16),
 *     u16 width @12, height @14, channel @16, u32 line_stride @18,
 *     surf_stride @22.
 * Softmax runs over `channel` consecutive elements; INT8 goes through FP16
 * (x * input_scale rounded to half, exp, division, rounded to half, divided
 * by output_scale, clamped to int8 and truncated).  Power runs element-wise
 * over the cube (INT8 / INT8_8 / FP16 surface layouts).  Half rounding:
 * nearest, ties away from zero (the half_float library's default, which
 * NVIDIA's emulator uses).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "driver/nvdla/fw.h"
#include "driver/port.h"
#include "common/status.h"

#define EMU_OP_SIZE 24u
#define EMU_BUF_SIZE 256u
#define EMU_FMT_INT8 0u
#define EMU_FMT_INT8_8 1u
#define EMU_FMT_FF16 3u
#define EMU_MAX_ELEMS (1u << 24)

struct emu_buf {
    int16_t index;
    uint32_t offset, size;
    uint16_t format, width, height, channel;
    uint32_t line_stride, surf_stride;
};

static uint32_t le(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        v |= (uint32_t)p[i] << (8 * i);
    }
    return v;
}

static float lef(const uint8_t *p)
{
    uint32_t u = le(p, 4);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- IEEE half precision ---------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Round to nearest, ties away from zero. */
static uint16_t float_to_half(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (isnan(f)) {
        return 0x7e00;
    }
    if (a >= 65520.0f) { /* rounds past the largest half (65504) */
        return sign | 0x7c00;
    }
    if (a < ldexpf(1.0f, -25)) {
        return sign; /* below half of the smallest subnormal */
    }
    int e;
    frexpf(a, &e);                      /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1;                    /* a = 1.x * 2^exp */
    int q = exp < -14 ? -24 : exp - 10; /* quantum of the result */
    float units = ldexpf(a, -q);        /* exact: a has 24 significant bits */
    uint32_t n = (uint32_t)floorf(units);
    if (units - (float)n >= 0.5f) {
        n++;
    }
    /* n * 2^q with n < 2^11 (or carry into the next binade) */
    uint32_t bits;
    if (q == -24) {
        bits = n; /* subnormal (n may reach 0x400: the smallest normal) */
    } else {
        int ex = q + 10 + 15;
        if (n == 0x800) {
            n = 0x400;
            ex++;
        }
        if (ex >= 31) {
            return sign | 0x7c00;
        }
        bits = ((uint32_t)ex << 10) | (n & 0x3ff);
    }
    return (uint16_t)(sign | bits);
}

static float round_half(float f)
{
    return half_to_float(float_to_half(f));
}

static int8_t sat_trunc8(float v)
{
    v = v > 127.0f ? 127.0f : v;
    v = v < -128.0f ? -128.0f : v;
    return (int8_t)v; /* static_cast: toward zero */
}

/* ---- operations ------------------------------------------------------------------------ */

static int read_buf(const uint8_t *p, struct emu_buf *b)
{
    b->index = (int16_t)le(p, 2);
    b->offset = le(p + 2, 4);
    b->size = le(p + 6, 4);
    b->format = (uint16_t)le(p + 10, 2);
    b->width = (uint16_t)le(p + 12, 2);
    b->height = (uint16_t)le(p + 14, 2);
    b->channel = (uint16_t)le(p + 16, 2);
    b->line_stride = le(p + 18, 4);
    b->surf_stride = le(p + 22, 4);
    return 0;
}

struct emu_ctx {
    const struct nvrt_port *port;
    const uint64_t *addrs;
    uint32_t n_addrs;
    char *err;
    size_t errlen;
};

static int buf_addr(struct emu_ctx *c, const struct emu_buf *b, const char *what, uint64_t *a)
{
    if (b->index < 0 || (uint32_t)b->index >= c->n_addrs) {
        return dla_errf(c->err, c->errlen, DLASIM_ERR_PARSE,
                        "EMU task: %s buffer address index %d is outside the task's address "
                        "list (%u entries)",
                        what, b->index, c->n_addrs);
    }
    *a = c->addrs[b->index] + b->offset;
    return 0;
}

static int softmax(struct emu_ctx *c, const uint8_t *op, const struct emu_buf *src,
                   const struct emu_buf *dst)
{
    float in_scale = lef(op + 4), out_scale = lef(op + 8);
    uint64_t sa, da;
    int rc = buf_addr(c, src, "softmax source", &sa);
    rc = rc ? rc : buf_addr(c, dst, "softmax destination", &da);
    if (rc) {
        return rc;
    }
    if (src->format != dst->format || src->channel != dst->channel ||
        (src->format != EMU_FMT_FF16 && src->format != EMU_FMT_INT8 &&
         src->format != EMU_FMT_INT8_8)) {
        return dla_errf(c->err, c->errlen, DLASIM_ERR_UNSUPPORTED,
                        "EMU softmax: formats %u -> %u, channels %u -> %u (same INT8 or FP16 "
                        "format and channel count required)",
                        src->format, dst->format, src->channel, dst->channel);
    }
    unsigned n = src->channel, bpe = src->format == EMU_FMT_FF16 ? 2 : 1;
    uint8_t *in = malloc((size_t)n * bpe + 1), *out = malloc((size_t)n * bpe + 1);
    float *x = malloc(((size_t)n + 1) * sizeof *x);
    if (!in || !out || !x) {
        free(in), free(out), free(x);
        return dla_errf(c->err, c->errlen, DLASIM_ERR_NOMEM, "EMU softmax: out of host memory");
    }
    rc = c->port->mem_read(c->port->ctx, sa, in, (size_t)n * bpe);
    for (unsigned i = 0; !rc && i < n; i++) {
        x[i] = bpe == 2 ? half_to_float((uint16_t)le(in + 2 * i, 2))
                        : round_half((float)(int8_t)in[i] * in_scale);
    }
    float maxval = -INFINITY, sum = 0.0f;
    for (unsigned i = 0; !rc && i < n; i++) {
        maxval = x[i] > maxval ? x[i] : maxval;
    }
    for (unsigned i = 0; !rc && i < n; i++) {
        sum += expf(x[i] - maxval);
    }
    for (unsigned i = 0; !rc && i < n; i++) {
        float y = expf(x[i] - maxval) / sum;
        if (bpe == 2) {
            uint16_t h = float_to_half(y);
            out[2 * i] = (uint8_t)h;
            out[2 * i + 1] = (uint8_t)(h >> 8);
        } else {
            out[i] = (uint8_t)sat_trunc8(round_half(y) / out_scale);
        }
    }
    if (!rc) {
        rc = c->port->mem_write(c->port->ctx, da, out, (size_t)n * bpe);
    }
    free(in), free(out), free(x);
    return rc ? dla_errf(c->err, c->errlen, rc, "EMU softmax: device memory access failed") : 0;
}

static int elem_offset(const struct emu_buf *b, uint32_t x, uint32_t y, uint32_t ch,
                       uint64_t *off)
{
    unsigned bpe = b->format == EMU_FMT_FF16 ? 2 : 1;
    unsigned per = (b->format == EMU_FMT_INT8_8 ? 8 : 32) / bpe;
    *off = (uint64_t)(ch / per) * b->surf_stride + (uint64_t)y * b->line_stride +
           (uint64_t)x * per * bpe + (uint64_t)(ch % per) * bpe;
    return 0;
}

/* Bytes from a buffer's first element to the end of its last (the span one
 * burst reads or writes). */
static uint64_t span_of(const struct emu_buf *b)
{
    unsigned bpe = b->format == EMU_FMT_FF16 ? 2 : 1;
    uint64_t end = 0;
    if (!b->channel || !b->height || !b->width) {
        return 0;
    }
    /* the largest offset is at the last channel of a surface or the last
     * channel overall, last line, last column */
    unsigned per = (b->format == EMU_FMT_INT8_8 ? 8 : 32) / bpe;
    uint32_t chans[2] = { b->channel - 1u,
                          b->channel > per ? (b->channel - 1u) / per * per - 1u : b->channel - 1u };
    for (int i = 0; i < 2; i++) {
        uint64_t o;
        elem_offset(b, b->width - 1u, b->height - 1u, chans[i], &o);
        end = o + bpe > end ? o + bpe : end;
    }
    return end;
}

static int power(struct emu_ctx *c, const uint8_t *op, const struct emu_buf *src,
                 const struct emu_buf *dst)
{
    float in_scale = lef(op + 4), out_scale = lef(op + 8);
    float pw = lef(op + 12), scale = lef(op + 16), shift = lef(op + 20);
    uint64_t sa, da;
    int rc = buf_addr(c, src, "power source", &sa);
    rc = rc ? rc : buf_addr(c, dst, "power destination", &da);
    if (rc) {
        return rc;
    }
    if (src->format != dst->format ||
        (src->format != EMU_FMT_FF16 && src->format != EMU_FMT_INT8 &&
         src->format != EMU_FMT_INT8_8)) {
        return dla_errf(c->err, c->errlen, DLASIM_ERR_UNSUPPORTED,
                        "EMU power: formats %u -> %u (same INT8, INT8_8 or FP16 required)",
                        src->format, dst->format);
    }
    /* the destination is addressed with the source's dimensions, as the
     * emulator does; both spans are moved in one burst each */
    struct emu_buf dd = *dst;
    dd.width = src->width, dd.height = src->height, dd.channel = src->channel;
    uint64_t ss = span_of(src), ds = span_of(&dd);
    if ((uint64_t)src->channel * src->height * src->width > EMU_MAX_ELEMS ||
        ss > 4ull * EMU_MAX_ELEMS || ds > 4ull * EMU_MAX_ELEMS) {
        return dla_errf(c->err, c->errlen, DLASIM_ERR_UNSUPPORTED,
                        "EMU power: %ux%ux%u elements over %llu/%llu bytes exceed dlasim's "
                        "limit",
                        src->width, src->height, src->channel, (unsigned long long)ss,
                        (unsigned long long)ds);
    }
    uint8_t *in = malloc(ss + 2), *out = malloc(ds + 2);
    if (!in || !out) {
        free(in), free(out);
        return dla_errf(c->err, c->errlen, DLASIM_ERR_NOMEM, "EMU power: out of host memory");
    }
    rc = ss ? c->port->mem_read(c->port->ctx, sa, in, (size_t)ss) : 0;
    rc = rc ? rc : (ds ? c->port->mem_read(c->port->ctx, da, out, (size_t)ds) : 0);
    unsigned bpe = src->format == EMU_FMT_FF16 ? 2 : 1;
    for (uint32_t ch = 0; ch < src->channel && !rc; ch++) {
        for (uint32_t y = 0; y < src->height; y++) {
            for (uint32_t x = 0; x < src->width; x++) {
                uint64_t so, dof;
                elem_offset(src, x, y, ch, &so);
                elem_offset(&dd, x, y, ch, &dof);
                if (bpe == 2) {
                    float r = powf(shift + scale * half_to_float((uint16_t)le(in + so, 2)), pw);
                    uint16_t h = float_to_half(r);
                    out[dof] = (uint8_t)h, out[dof + 1] = (uint8_t)(h >> 8);
                } else {
                    float r = powf(shift + scale * ((float)(int8_t)in[so] * in_scale), pw);
                    out[dof] = (uint8_t)sat_trunc8(r / out_scale);
                }
            }
        }
    }
    if (!rc && ds) {
        rc = c->port->mem_write(c->port->ctx, da, out, (size_t)ds);
    }
    free(in), free(out);
    return rc ? dla_errf(c->err, c->errlen, rc, "EMU power: device memory access failed") : 0;
}

int nvrt_run_emu(const struct nvrt_port *port, const uint64_t *addrs, const uint64_t *sizes,
                 uint32_t n_addrs, char *err, size_t errlen)
{
    struct emu_ctx c = { port, addrs, n_addrs, err, errlen };
    uint8_t nd[6];
    if (n_addrs == 0 || sizes[0] < sizeof nd) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "EMU task: no network descriptor at address index 0");
    }
    int rc = port->mem_read(port->ctx, addrs[0], nd, sizeof nd);
    if (rc) {
        return dla_errf(err, errlen, rc, "EMU task: reading the network descriptor failed");
    }
    int16_t op_index = (int16_t)le(nd, 2), buf_index = (int16_t)le(nd + 2, 2);
    uint16_t n_ops = (uint16_t)le(nd + 4, 2);
    if (op_index < 0 || (uint32_t)op_index >= n_addrs || buf_index < 0 ||
        (uint32_t)buf_index >= n_addrs) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "EMU task: network descriptor operation_desc_index=%d / "
                        "operation_buffer_desc_index=%d outside the address list (%u entries)",
                        op_index, buf_index, n_addrs);
    }
    /* NVIDIA's 2018 regression loadables (NN_L0_0) carry an older EMU layout
     * under the same version number (0.0.1): 16-byte operations without the
     * scale factors, buffers without the address offset.  Refuse it rather
     * than guess. */
    if (n_ops && (uint64_t)n_ops * EMU_OP_SIZE > sizes[op_index] &&
        (uint64_t)n_ops * 16 <= sizes[op_index]) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                        "EMU task: %u operations in %llu bytes: the older EMU descriptor layout "
                        "(16-byte operations, no scale factors or buffer offsets) is not "
                        "supported",
                        n_ops, (unsigned long long)sizes[op_index]);
    }
    if ((uint64_t)n_ops * EMU_OP_SIZE > sizes[op_index] ||
        (uint64_t)n_ops * 2 * EMU_BUF_SIZE > sizes[buf_index]) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "EMU task: %u operations do not fit their descriptor lists (%llu and "
                        "%llu bytes)",
                        n_ops, (unsigned long long)sizes[op_index],
                        (unsigned long long)sizes[buf_index]);
    }
    for (uint16_t i = 0; i < n_ops && !rc; i++) {
        uint8_t op[EMU_OP_SIZE], bufs[2 * EMU_BUF_SIZE];
        struct emu_buf src, dst;
        rc = port->mem_read(port->ctx, addrs[op_index] + (uint64_t)i * EMU_OP_SIZE, op, sizeof op);
        rc = rc ? rc
                : port->mem_read(port->ctx, addrs[buf_index] + (uint64_t)i * sizeof bufs, bufs,
                                 sizeof bufs);
        if (rc) {
            return dla_errf(err, errlen, rc, "EMU task: reading operation %u failed", i);
        }
        read_buf(bufs, &src);
        read_buf(bufs + EMU_BUF_SIZE, &dst);
        if (op[0] == 1) {
            rc = softmax(&c, op, &src, &dst);
        } else if (op[0] == 0) {
            rc = power(&c, op, &src, &dst);
        } else {
            rc = dla_errf(err, errlen, DLASIM_ERR_PARSE, "EMU task: operation %u has op_type %u "
                                                         "(0 power, 1 softmax)",
                          i, op[0]);
        }
    }
    return rc;
}
