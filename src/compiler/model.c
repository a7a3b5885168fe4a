/*
 * The compiler's public API (include/dlasim/compiler.h): loading,
 * calibration, compilation, running on a device, reports.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"
#include "compiler/quant_io.h"
#include "plan/config.h"
#include "common/team.h"
#include "sim/core/host_team.h"
#include "sim/core/mem_tag.h"

/* A NULL pointer argument the header does not allow (include/dlasim/compiler.h). */
static int null_arg(char *err, size_t errlen, const char *fn, const char *arg)
{
    return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s: %s is NULL", fn, arg);
}

int dlasim_model_load_onnx(const void *buf, size_t len, struct dlasim_model **out, char *err,
                           size_t errlen)
{
    if (!out) {
        return null_arg(err, errlen, "dlasim_model_load_onnx", "out");
    }
    *out = NULL;
    if (!buf && len) {
        return null_arg(err, errlen, "dlasim_model_load_onnx", "buf");
    }
    struct dlasim_model *m = calloc(1, sizeof *m);
    if (!m) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
    }
    int rc = dlc_onnx_read(buf, len, &m->g, err, errlen);
    if (rc) {
        free(m);
        return rc;
    }
    rc = dlc_graph_prepare(&m->g, err, errlen);
    if (rc) {
        dlc_graph_free(&m->g);
        free(m);
        return rc;
    }
    m->fvals = calloc((size_t)m->g.n_t, sizeof *m->fvals);
    if (!m->fvals || dlc_float_prepare(&m->g)) {
        free(m->fvals);
        dlc_graph_free(&m->g);
        free(m);
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
    }
    m->min_sqnr_db = 20.0;
    *out = m;
    return 0;
}

void dlasim_model_free(struct dlasim_model *m)
{
    if (!m) {
        return;
    }
    dlc_vals_free(&m->g, m->fvals);
    free(m->fvals);
    free(m->stage);
    dlc_lower_free(m);
    dlc_graph_free(&m->g);
    free(m->no_place);
    free(m->ring_restart);
    free(m);
}

size_t dlasim_model_input_size(const struct dlasim_model *m)
{
    if (!m) {
        return 0;
    }
    return (size_t)m->g.t[m->g.input].n;
}

size_t dlasim_model_output_size(const struct dlasim_model *m)
{
    if (!m) {
        return 0;
    }
    return (size_t)m->g.t[m->g.output].n;
}

int dlasim_model_input_shape(const struct dlasim_model *m, int64_t dims[6])
{
    if (!m || !dims) {
        return DLASIM_ERR_INVAL;
    }
    const struct dlc_tensor *t = &m->g.t[m->g.input];
    for (int i = 0; i < t->rank; i++) {
        dims[i] = t->dims[i];
    }
    return t->rank;
}

int dlasim_model_run_float(const struct dlasim_model *m, const float *input, float *output,
                           char *err, size_t errlen)
{
    if (!m || !input || !output) {
        return null_arg(err, errlen, "dlasim_model_run_float",
                        !m ? "m" : !input ? "input" : "output");
    }
    float **vals = calloc((size_t)m->g.n_t, sizeof *vals);
    if (!vals) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
    }
    int rc = dlc_float_stream(&m->g, input, vals, NULL, NULL, NULL, err, errlen);
    if (!rc) {
        memcpy(output, vals[m->g.output], (size_t)m->g.t[m->g.output].n * sizeof(float));
    }
    dlc_vals_free(&m->g, vals);
    free(vals);
    return rc;
}

/* ---- compile ---------------------------------------------------------------------------- */

/* The facts of the named NVDLA configuration the lowering needs, from the
 * planning layer's configuration table (src/plan/config.c, spec 004); no
 * device is created. */
static int hw_of_config(struct dlasim_model *m, const char *name, const char *const *overrides,
                        size_t n_overrides, char *err, size_t errlen)
{
    struct dla_config c;
    char cerr[256] = "";
    int rc = dla_config_init(&c, name, cerr, sizeof cerr);
    /* PARAM=VALUE overrides as dlasim_create applies them: the layers are
     * planned for the device they will run on */
    for (size_t i = 0; !rc && i < n_overrides; i++) {
        rc = overrides[i] ? dla_config_set(&c, overrides[i], cerr, sizeof cerr) : DLASIM_ERR_INVAL;
        if (rc && !overrides[i]) {
            snprintf(cerr, sizeof cerr, "overrides[%zu] is NULL", i);
        }
    }
    if (!rc) {
        rc = dla_config_validate(&c, cerr, sizeof cerr);
    }
    if (rc) {
        return dla_errf(err, errlen, rc, "compile: %s", cerr);
    }
    m->hw.atom_m = c.memory_atomic_size;
    m->hw.atomic_c = c.mac_atomic_c_size;
    m->hw.atomic_k = c.mac_atomic_k_size;
    m->hw.banks = c.cbuf_bank_number;
    m->hw.bank_width = c.cbuf_bank_width;
    m->hw.bank_depth = c.cbuf_bank_depth;
    m->sdp_lut = c.sdp_lut_enable != 0;
    return 0;
}

int dlasim_model_compile(struct dlasim_model *m, const char *config, char *err, size_t errlen)
{
    return dlasim_model_compile_set(m, config, NULL, 0, err, errlen);
}

int dlasim_model_compile_set(struct dlasim_model *m, const char *config,
                             const char *const *overrides, size_t n_overrides, char *err,
                             size_t errlen)
{
    if (!m) {
        return null_arg(err, errlen, "dlasim_model_compile", "m");
    }
    if (n_overrides && !overrides) {
        return null_arg(err, errlen, "dlasim_model_compile_set", "overrides");
    }
    if (!m->calibrated) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                     "compile: the model is not calibrated (dlasim_model_calibrate first)");
    }
    const char *name = config ? config : "nv_small";
    int rc = hw_of_config(m, name, overrides, n_overrides, err, errlen);
    if (rc) {
        return rc;
    }
    snprintf(m->config, sizeof m->config, "%s", name);
    rc = dlc_lower(m, err, errlen);
    if (rc) {
        dlc_lower_free(m);
        return rc;
    }
    m->compiled = 1;
    return 0;
}

float dlasim_model_output_scale(const struct dlasim_model *m)
{
    if (!m) {
        return 0.0f;
    }
    for (int i = 0; i < m->n_layers; i++) {
        if (m->layers[i].out_tensor == m->g.output && m->layers[i].engine == DLC_ENG_CPU) {
            return 0.0f;
        }
    }
    return m->g.t[m->store[m->g.output]].scale;
}

uint64_t dlasim_model_macs(const struct dlasim_model *m)
{
    if (!m) {
        return 0;
    }
    uint64_t s = 0;
    for (int i = 0; i < m->n_layers; i++) {
        s += m->layers[i].macs;
    }
    return s;
}

/* ---- running ---------------------------------------------------------------------------- */

/* ---- the input and output cubes: quantized and packed in chunks ------------------------ */

/*
 * write_tensor and read_tensor move a tensor between float NCHW and the device's
 * packed int8 cube (feature data in surfaces of atom_m channels, lines of w
 * atoms; dlasim_conv_pack_cube's layout).  The bytes reaching device memory are
 * the same as packing the whole cube and writing b->size bytes (padding and gaps
 * zero).  read_tensor goes through a chunk on the stack; write_tensor packs the
 * whole cube into the model's staging buffer, its rows shared out to the
 * device's team, the floats read once (the quantization tells a value that
 * is not finite), then writes it in one call: nothing reaches the device
 * when a value is not finite.
 */
#define IO_CHUNK 32768u /* bytes moved per dlasim_mem_read */
#define IO_SEG 256u     /* pixels quantized at a time per channel */
/* Inputs narrower than this are quantized as one run (write_tensor_whole):
 * pack_run quantizes a channel's run of pixels at a time, a call per value for a
 * 1x1 input (a 1x1x1280 input: 1,280 calls, 12.5 us; a fully connected
 * model's run 70 -> 50 us once quantized as one run). */
#define IO_NARROW_W 16u
/* Values from which an input is packed on the device's team: a 224x224x3
 * image (150,528 values, 602 KB of floats, most of them read from DRAM)
 * took 153 us on the calling thread alone while the device's worker waited
 * (MobileNetV2, 2 threads: 3 % of an image). */
#define IO_TEAM_MIN_VALUES 32768u
/* Values an item at least, and items a thread (dla_team_run's home shares:
 * each thread first packs the rows of its own share). */
#define IO_ITEM_MIN_VALUES 8192u
#define IO_ITEMS_PER_THREAD 4u

/* How tensor t's floats become codes: 1 / scale and the code of 0 (a
 * pre-quantized model's affine activations, ir.h; 0 otherwise). */
struct io_quant {
    float inv;
    int zero;
};

static struct io_quant io_quant_of(const struct dlasim_model *m, int t)
{
    struct io_quant qz = { 1.0f / m->g.t[t].scale, m->g.t[t].zero };
    return qz;
}

/* Pixels [px, px + npix) of surface c0's channels [c0, c0 + n) (pixel p of
 * channel c at x[c * plane + p]) packed into row: npix atoms of m bytes,
 * then zeros up to `bytes` (>= npix * m); *bad is set at a NaN or infinite
 * value.  A line (npix = w), or a surface's consecutive lines where they
 * lie back to back (write_tensor). */
static void pack_run(const struct dlc_buf *b, uint32_t m, const float *x, uint32_t c0,
                     uint32_t n, size_t px, size_t npix, const struct io_quant *qz, size_t bytes,
                     uint8_t *row, int *bad)
{
    const size_t plane = (size_t)b->w * b->h;
    /* atoms of 8 bytes are written whole below (their absent channels as
     * zeros): only the bytes past them need zeroing (a 224x224x3 image's
     * 401 KB memset was ~0.4 M instructions an inference) */
    const size_t written = m == 8 ? npix * m : 0;
    memset(row + written, 0, bytes - written);
    int8_t q[8][IO_SEG];
    for (size_t x0 = 0; x0 < npix; x0 += IO_SEG) {
        size_t seg = npix - x0 < IO_SEG ? npix - x0 : IO_SEG;
        uint8_t *at = row + x0 * m;
        for (uint32_t i0 = 0; i0 < n; i0 += 8) { /* eight channels of an atom at a time */
            const unsigned k = n - i0 < 8 ? n - i0 : 8;
            for (unsigned i = 0; i < k; i++) {
                const float *src = x + (size_t)(c0 + i0 + i) * plane + px + x0;
                *bad |= dlc_quantize_s8(src, q[i], seg, qz->inv, qz->zero);
            }
            dlc_rows_to_atoms(&q[0][0], IO_SEG, k, seg, m, at + i0);
        }
    }
}

/* Strides of buffer b in the packed layout (0 in the buffer: dense). */
static void buf_strides(const struct dlasim_model *m, const struct dlc_buf *b, uint32_t *line,
                        uint32_t *surf)
{
    *line = b->line ? b->line : b->w * m->hw.atom_m;
    *surf = b->surf ? b->surf : *line * b->h;
}

/* The chunked path takes b: lines and surfaces apart, a line fits a chunk,
 * the buffer holds the whole cube (what the compiler lays out). */
static int chunked_layout(const struct dlasim_model *m, const struct dlc_buf *b)
{
    uint32_t line, surf;
    buf_strides(m, b, &line, &surf);
    uint32_t am = m->hw.atom_m;
    return am && b->c && b->h && b->w && line >= (uint64_t)b->w * am && line <= IO_CHUNK &&
           surf >= (uint64_t)line * b->h &&
           b->size >= dlasim_conv_cube_bytes(&m->hw, b->w, b->h, b->c, b->line, b->surf);
}

/* write_tensor for any other layout: the whole cube packed in memory. */
static int write_tensor_whole(struct dlasim_model *m, struct dlasim_dev *dev, int t,
                              const float *x, int64_t *bad)
{
    const struct dlc_buf *b = &m->buf[t];
    size_t n = (size_t)b->c * b->h * b->w;
    int8_t *q = malloc(n ? n : 1);
    uint8_t *packed = calloc(b->size ? b->size : 1, 1);
    int rc = DLASIM_ERR_NOMEM;
    const struct io_quant qz = io_quant_of(m, t);
    if (q && packed) {
        if (dlc_quantize_s8(x, q, n, qz.inv, qz.zero)) {
            *bad = dlc_first_nonfinite(x, n);
            rc = DLASIM_ERR_INVAL;
        } else {
            dlasim_conv_pack_cube(&m->hw, b->w, b->h, b->c, b->line, b->surf, q, packed);
            rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, m->addrs[b->addr_index] + b->offset,
                                  packed, b->size);
        }
    }
    free(q);
    free(packed);
    return rc;
}

/* One write_tensor job: the cube's rows in items of `rows` rows (every
 * surface's), each packed into its place in `stage`. */
struct pack_job {
    const struct dlc_buf *b;
    const float *x;
    struct io_quant qz;
    uint8_t *stage;
    uint32_t am, line, surf, rows;
    atomic_int nonfinite; /* a value not finite was met */
};

/* Item i: rows [i * rows, ...) of every surface, each line's bytes up to
 * its stride (the cube's last line only up to b->size). */
static void pack_rows_item(void *ctx, size_t i)
{
    struct pack_job *j = ctx;
    const struct dlc_buf *b = j->b;
    const uint32_t y0 = (uint32_t)i * j->rows;
    const uint32_t y1 = b->h - y0 < j->rows ? b->h : y0 + j->rows;
    const int dense = j->line == (uint64_t)b->w * j->am; /* lines back to back */
    int bad = 0;
    for (uint32_t c0 = 0; c0 < b->c; c0 += j->am) {
        const uint32_t n = b->c - c0 < j->am ? b->c - c0 : j->am;
        const size_t base = (size_t)(c0 / j->am) * j->surf;
        if (dense) {
            pack_run(b, j->am, j->x, c0, n, (size_t)y0 * b->w, (size_t)(y1 - y0) * b->w,
                     &j->qz, (size_t)(y1 - y0) * j->line, j->stage + base + (size_t)y0 * j->line,
                     &bad);
            continue;
        }
        for (uint32_t y = y0; y < y1; y++) {
            const size_t off = base + (size_t)y * j->line;
            const size_t bytes = b->size - off < j->line ? b->size - off : j->line;
            pack_run(b, j->am, j->x, c0, n, (size_t)y * b->w, b->w, &j->qz, bytes,
                     j->stage + off, &bad);
        }
    }
    if (bad) {
        atomic_store_explicit(&j->nonfinite, 1, memory_order_relaxed);
    }
}

/* The bytes of b's staging copy no line covers: between surfaces and past
 * the last one. */
static void zero_surface_gaps(const struct dlc_buf *b, uint32_t am, uint32_t line, uint32_t surf,
                              uint8_t *stage)
{
    const uint32_t nsurf = (b->c + am - 1) / am;
    for (uint32_t s = 0; s < nsurf; s++) {
        const size_t from = (size_t)s * surf + (size_t)line * b->h;
        size_t to = s + 1 < nsurf ? (size_t)(s + 1) * surf : b->size;
        to = to < b->size ? to : b->size;
        if (from < to) {
            memset(stage + from, 0, to - from);
        }
    }
}

/* The model's staging buffer, at least `bytes` long. */
static uint8_t *io_stage(struct dlasim_model *m, size_t bytes)
{
    if (bytes > m->stage_cap) {
        uint8_t *p = malloc(bytes);
        if (!p) {
            return NULL;
        }
        free(m->stage);
        m->stage = p;
        m->stage_cap = bytes;
    }
    return m->stage;
}

/* Items of write_tensor's job for h rows of n values on `threads` threads:
 * rows an item. */
static uint32_t pack_item_rows(uint32_t h, size_t n, unsigned threads)
{
    size_t items = (size_t)threads * IO_ITEMS_PER_THREAD;
    const size_t most = n / IO_ITEM_MIN_VALUES;
    items = items < most ? items : most;
    items = items < h ? items : h;
    return items > 1 ? (uint32_t)((h + items - 1) / items) : h;
}

/* Tensor t's float values quantized into device memory; a NaN or infinite
 * value is DLASIM_ERR_INVAL with *bad its index (else *bad = -1). */
static int write_tensor(struct dlasim_model *m, struct dlasim_dev *dev, int t, const float *x,
                        int64_t *bad)
{
    const struct dlc_buf *b = &m->buf[t];
    *bad = -1;
    if (!chunked_layout(m, b) || b->w < IO_NARROW_W) {
        return write_tensor_whole(m, dev, t, x, bad);
    }
    struct pack_job j;
    j.b = b;
    j.x = x;
    j.qz = io_quant_of(m, t);
    j.am = m->hw.atom_m;
    buf_strides(m, b, &j.line, &j.surf);
    j.stage = io_stage(m, b->size);
    if (!j.stage) {
        return DLASIM_ERR_NOMEM;
    }
    atomic_init(&j.nonfinite, 0);
    zero_surface_gaps(b, j.am, j.line, j.surf, j.stage);
    const size_t n_values = (size_t)b->c * b->h * b->w;
    struct dla_team *team = n_values >= IO_TEAM_MIN_VALUES ? dla_dev_idle_team(dev) : NULL;
    j.rows = pack_item_rows(b->h, n_values, dla_team_threads(team));
    dla_team_run(team, (b->h + j.rows - 1) / j.rows, pack_rows_item, &j);
    if (atomic_load_explicit(&j.nonfinite, memory_order_relaxed)) {
        *bad = dlc_first_nonfinite(x, n_values);
        return DLASIM_ERR_INVAL;
    }
    return dlasim_mem_write(dev, DLASIM_PORT_DBB, m->addrs[b->addr_index] + b->offset, j.stage,
                            b->size);
}

/* Dequantized values of stored tensor t (NCHW order) into y, for layouts
 * chunked_layout refuses: the whole cube read at once. */
static int read_tensor_whole(struct dlasim_model *m, struct dlasim_dev *dev, int t, float *y)
{
    const struct dlc_buf *b = &m->buf[t];
    size_t n = (size_t)b->c * b->h * b->w;
    int8_t *q = malloc(n ? n : 1);
    uint8_t *packed = malloc(b->size ? b->size : 1);
    int rc = DLASIM_ERR_NOMEM;
    if (q && packed) {
        rc = dlasim_mem_read(dev, DLASIM_PORT_DBB, m->addrs[b->addr_index] + b->offset, packed,
                             b->size);
        if (!rc) {
            dlasim_conv_unpack_cube(&m->hw, b->w, b->h, b->c, b->line, b->surf, packed, q);
            float s = m->g.t[t].scale;
            int zero = m->g.t[t].zero; /* the code of 0 (affine activations) */
            for (size_t i = 0; i < n; i++) {
                y[i] = (float)(q[i] - zero) * s;
            }
        }
    }
    free(q);
    free(packed);
    return rc;
}

/* Dequantized values of stored tensor t (NCHW order) into y: each surface
 * line read once into a chunk on the stack (a run of lines per read). */
static int read_tensor(struct dlasim_model *m, struct dlasim_dev *dev, int t, float *y)
{
    const struct dlc_buf *b = &m->buf[t];
    if (b->addr_index < 0 || b->addr_index >= m->n_addrs) {
        return DLASIM_ERR_UNSUPPORTED; /* never placed in device memory: see tensor_error */
    }
    if (!chunked_layout(m, b)) {
        return read_tensor_whole(m, dev, t, y);
    }
    const uint32_t am = m->hw.atom_m;
    uint32_t line, surf;
    buf_strides(m, b, &line, &surf);
    const float s = m->g.t[t].scale;
    const int zero = m->g.t[t].zero; /* the code of 0 (affine activations) */
    const size_t plane = (size_t)b->w * b->h, atoms = (size_t)b->w * am;
    const uint32_t per_read = IO_CHUNK / line; /* >= 1: chunked_layout */
    uint8_t buf[IO_CHUNK];
    uint64_t base = m->addrs[b->addr_index] + b->offset;
    for (uint32_t c0 = 0; c0 < b->c; c0 += am) {
        uint32_t n = b->c - c0 < am ? b->c - c0 : am;
        for (uint32_t y0 = 0; y0 < b->h; y0 += per_read) {
            uint32_t rows = b->h - y0 < per_read ? b->h - y0 : per_read;
            size_t bytes = (size_t)(rows - 1) * line + atoms; /* not past the cube's end */
            int rc = dlasim_mem_read(dev, DLASIM_PORT_DBB,
                                     base + (uint64_t)(c0 / am) * surf + (uint64_t)y0 * line, buf,
                                     bytes);
            if (rc) {
                return rc;
            }
            for (uint32_t r = 0; r < rows; r++) {
                const uint8_t *row = buf + (size_t)r * line;
                for (uint32_t i = 0; i < n; i++) {
                    float *out = y + (size_t)(c0 + i) * plane + (size_t)(y0 + r) * b->w;
                    for (uint32_t x = 0; x < b->w; x++) {
                        out[x] = (float)((int8_t)row[(size_t)x * am + i] - zero) * s;
                    }
                }
            }
        }
    }
    return 0;
}

/* The message for read_tensor's failure on tensor t. */
static int tensor_error(struct dlasim_model *m, struct dlasim_dev *dev, int rc, int t,
                        const char *what, char *err, size_t errlen)
{
    if (rc == DLASIM_ERR_UNSUPPORTED) {
        return dla_errf(err, errlen, rc, "%s: tensor '%s' was not placed in device memory "
                     "(a compiler limitation for this graph)", what, m->g.t[t].name);
    }
    return dla_errf(err, errlen, rc, "%s: %s", what, dlasim_last_error(dev));
}

static int load_weights(struct dlasim_model *m, struct dlasim_dev *dev)
{
    for (int i = 0; i < m->n_blobs; i++) {
        int rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, m->addrs[m->blobs[i].addr_index],
                                  m->blobs[i].data, m->blobs[i].len);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static float *fval(struct dlasim_model *m, int t)
{
    if (!m->fvals[t]) {
        m->fvals[t] = malloc((size_t)(m->g.t[t].n ? m->g.t[t].n : 1) * sizeof(float));
    }
    return m->fvals[t];
}

/* A host-CPU layer: dequantized inputs, float node, quantized output
 * (kept in float when it is the model's output). */
static int run_cpu_layer(struct dlasim_model *m, struct dlasim_dev *dev, const struct dlc_layer *L,
                         char *err, size_t errlen)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    for (int i = 0; i < nd->n_in; i++) {
        int t = nd->in[i];
        if (t < 0 || g->t[t].is_const) {
            continue;
        }
        float *y = fval(m, t);
        if (!y) {
            return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
        }
        int rc = read_tensor(m, dev, m->store[t], y);
        if (rc) {
            char what[160];
            snprintf(what, sizeof what, "node '%s': reading its input", nd->name);
            return tensor_error(m, dev, rc, t, what, err, errlen);
        }
    }
    for (int i = 0; i < g->n_t; i++) { /* constants are read in place */
        if (g->t[i].is_const && !m->fvals[i]) {
            m->fvals[i] = g->t[i].data;
        }
    }
    if (!fval(m, nd->out)) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
    }
    int rc = dlc_float_node(g, nd, m->fvals, err, errlen);
    if (rc) {
        return rc;
    }
    if (nd->out == g->output) {
        return 0;
    }
    int64_t bad;
    rc = write_tensor(m, dev, nd->out, m->fvals[nd->out], &bad);
    if (rc && bad >= 0) {
        return dla_errf(err, errlen, rc, "node '%s' (host CPU): output value %lld is NaN or "
                        "infinite", nd->name, (long long)bad);
    }
    return rc ? dla_errf(err, errlen, rc, "node '%s': writing its output", nd->name) : 0;
}

static int run_network(struct dlasim_model *m, struct dlasim_dev *dev, struct dlc_step *s,
                       int index, const struct dlasim_rt_options *opt, char *err, size_t errlen)
{
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    net.ops = s->ops;
    net.num_ops = s->n_ops;
    memcpy(net.op_head, s->op_head, sizeof net.op_head);
    net.addresses = m->addrs;
    net.num_addresses = (uint16_t)m->n_addrs;
    net.luts = s->luts;
    net.num_luts = s->n_luts;
    struct dlasim_rt_options o = { 0 };
    char dir[4096];
    if (opt) {
        o = *opt;
    }
    if (!s->prep) { /* the programming is kept from the first run on (issue 18) */
        s->prep = dlasim_rt_prepared_new(DLASIM_RT_PREPARED_FIXED); /* s->ops, s->luts: read-only once compiled */
    }
    o.prepared = s->prep; /* NULL when out of memory: every run rebuilds it */
    if (opt && opt->record_trace_dir) {
        int n_hw = 0;
        for (int i = 0; i < m->n_steps; i++) {
            n_hw += m->steps[i].cpu_layer < 0;
        }
        if (n_hw > 1) { /* one recorded case per hardware network */
            snprintf(dir, sizeof dir, "%s/net%d", opt->record_trace_dir, index);
            o.record_trace_dir = dir;
            o.record_trace_name = NULL;
        }
    }
    return dlasim_rt_execute(dev, &net, &o, err, errlen);
}

/* Per-channel ranges of the INT8 (dequantized) and float outputs: a channel
 * whose INT8 value never changes while its float value does has collapsed
 * (issue 17 item 9).  Channels are dims[1] of an NCHW (or 1 x C) tensor. */
static void accumulate_ranges(struct dlc_layer *L, const struct dlc_tensor *t, const float *y,
                              const float *f)
{
    int64_t c = t->rank >= 2 ? t->dims[1] : 1, n = t->n;
    if (c < 1 || n % c) {
        c = 1;
    }
    if (!L->ch_range) {
        L->ch_range = malloc((size_t)c * 4 * sizeof(float));
        if (!L->ch_range) {
            return;
        }
        L->stat_c = (int)c;
        for (int64_t k = 0; k < c; k++) {
            float *r = L->ch_range + 4 * k;
            r[0] = r[2] = INFINITY;
            r[1] = r[3] = -INFINITY;
        }
    }
    int64_t inner = n / c; /* batch 1: channel k holds elements [k * inner, (k + 1) * inner) */
    for (int64_t k = 0; k < c; k++) {
        float *r = L->ch_range + 4 * k;
        for (int64_t i = k * inner; i < (k + 1) * inner; i++) {
            r[0] = y[i] < r[0] ? y[i] : r[0];
            r[1] = y[i] > r[1] ? y[i] : r[1];
            r[2] = f[i] < r[2] ? f[i] : r[2];
            r[3] = f[i] > r[3] ? f[i] : r[3];
        }
    }
}

/* The model input's own quantization (the input as written to the device). */
static void accumulate_input_stats(struct dlasim_model *m, struct dlasim_dev *dev, const float *x)
{
    int t = m->g.input;
    int64_t n = m->g.t[t].n;
    float *y = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (y && m->store[t] == t && !read_tensor(m, dev, t, y)) {
        for (int64_t k = 0; k < n; k++) {
            double e = (double)y[k] - x[k];
            m->in_sig += (double)x[k] * x[k];
            m->in_noise += e * e;
        }
        m->in_stat_n += (uint64_t)n;
    }
    free(y);
}

/* One layer's statistics: its INT8 output read back from the device (or, for
 * a host-CPU output layer, its float output) against the float reference f. */
static void accumulate_layer(struct dlasim_model *m, struct dlasim_dev *dev, struct dlc_layer *L,
                             const float *f)
{
    struct dlc_graph *g = &m->g;
    int t = L->out_tensor;
    int64_t n = g->t[t].n;
    float *y = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!y) {
        return;
    }
    int from_float = t == g->output && L->engine == DLC_ENG_CPU;
    if (from_float ? (memcpy(y, m->fvals[t], (size_t)n * sizeof(float)), 0)
                   : read_tensor(m, dev, t, y)) {
        free(y);
        return;
    }
    /* the int8 range in value space: +-127.5 steps, or codes -128..127 minus
     * the code of 0 (affine activations) */
    int z = g->t[t].zero;
    float lo = (z ? -128.5f - (float)z : -127.5f) * g->t[t].scale;
    float hi = (127.5f - (float)z) * g->t[t].scale;
    for (int64_t k = 0; k < n; k++) {
        double e = (double)y[k] - f[k];
        L->stat_sig += (double)f[k] * f[k];
        L->stat_noise += e * e;
        L->stat_sat += !from_float && (f[k] > hi || f[k] < lo);
    }
    if (!from_float) {
        accumulate_ranges(L, &g->t[t], y, f);
    }
    L->stat_n += (uint64_t)n;
    L->stat_runs++;
    free(y);
}

struct stats_ctx {
    struct dlasim_model *m;
    struct dlasim_dev *dev;
};

/* dlc_float_stream's observer: each float tensor is compared as soon as it
 * is computed, so the statistics hold the float run's live set only (as
 * calibration does), not every tensor of the model. */
static void observe_stats(void *ctx, int t, const float *v, int64_t n)
{
    struct stats_ctx *c = ctx;
    struct dlasim_model *m = c->m;
    (void)n;
    for (int i = 0; i < m->n_layers; i++) {
        struct dlc_layer *L = &m->layers[i];
        if (L->out_tensor == t && L->engine != DLC_ENG_VIEW && L->engine != DLC_ENG_PLACED &&
            m->buf[t].addr_index >= 0) {
            accumulate_layer(m, c->dev, L, v);
        }
    }
}

int dlasim_model_run(struct dlasim_model *m, struct dlasim_dev *dev, const float *input,
                     float *output, const struct dlasim_rt_options *opt, char *err,
                     size_t errlen)
{
    if (!m || !dev || !input || !output) {
        return null_arg(err, errlen, "dlasim_model_run",
                        !m ? "m" : !dev ? "dev" : !input ? "input" : "output");
    }
    struct dlc_graph *g = &m->g;
    if (!m->compiled) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "run: the model is not compiled");
    }
    int rc = 0;
    if (m->reset_each_run) {
        dlasim_reset(dev);
    }
    if (dla_mem_tag(dev) != m->mem_tag && (rc = load_weights(m, dev))) {
        return dla_errf(err, errlen, rc, "run: writing the weights: %s", dlasim_last_error(dev));
    }
    int64_t bad;
    if ((rc = write_tensor(m, dev, g->input, input, &bad))) {
        if (bad >= 0) {
            return dla_errf(err, errlen, rc, "run: input value %lld (tensor '%s') is NaN or "
                            "infinite", (long long)bad, g->t[g->input].name);
        }
        return dla_errf(err, errlen, rc, "run: writing the input: %s", dlasim_last_error(dev));
    }
    for (int i = 0; i < m->n_steps && !rc; i++) {
        struct dlc_step *s = &m->steps[i];
        rc = s->cpu_layer >= 0 ? run_cpu_layer(m, dev, &m->layers[s->cpu_layer], err, errlen)
                               : run_network(m, dev, s, i, opt, err, errlen);
    }
    if (rc) {
        return rc;
    }
    int out = g->output;
    int cpu_out = 0;
    for (int i = 0; i < m->n_layers; i++) {
        if (m->layers[i].out_tensor == out) {
            cpu_out = m->layers[i].engine == DLC_ENG_CPU;
        }
    }
    if (cpu_out) {
        memcpy(output, m->fvals[out], (size_t)g->t[out].n * sizeof(float));
    } else if ((rc = read_tensor(m, dev, m->store[out], output))) {
        return tensor_error(m, dev, rc, out, "run: reading the output", err, errlen);
    }
    if (m->stats) {
        if (m->stats_left == 1) {
            m->stats = 0;
        }
        m->stats_left -= m->stats_left > 0;
        float **ref = calloc((size_t)g->n_t, sizeof *ref);
        struct stats_ctx ctx = { m, dev };
        if (ref) {
            accumulate_input_stats(m, dev, input);
            (void)dlc_float_stream(g, input, ref, NULL, observe_stats, &ctx, NULL, 0);
        }
        if (ref) {
            dlc_vals_free(g, ref);
        }
        free(ref);
    }
    dla_set_mem_tag(dev, m->mem_tag); /* the weights are intact until someone writes memory */
    return 0;
}

/* ---- reports ------------------------------------------------------------------------------ */

void dlc_sb_printf(struct dlc_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        int k = b->s ? vsnprintf(b->s + b->n, room, fmt, ap) : -1;
        va_end(ap);
        if (k >= 0 && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (k >= 0 && cap < b->n + (size_t)k + 1) {
            cap *= 2;
        }
        char *s = realloc(b->s, cap);
        if (!s) {
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static const char *engine_name(const struct dlc_layer *L)
{
    switch (L->engine) {
    case DLC_ENG_CONV: return "CONV+SDP";
    case DLC_ENG_PDP: return "PDP";
    case DLC_ENG_SDP: return "SDP";
    case DLC_ENG_CDP: return "CDP";
    case DLC_ENG_CPU: return "CPU";
    case DLC_ENG_PLACED: return "placed";
    default: return "view";
    }
}

static void layer_ops(const struct dlasim_model *m, const struct dlc_layer *L, char *s, size_t n)
{
    const struct dlc_graph *g = &m->g;
    int k = snprintf(s, n, "%s", dlc_op_names[g->nodes[L->node].op]);
    for (int f = 0; f < L->n_fused && k > 0 && (size_t)k < n; f++) {
        k += snprintf(s + k, n - (size_t)k, "+%s", dlc_op_names[g->nodes[L->fused[f]].op]);
    }
}

/* Pre-quantized models (qdq.c): what came from the model, and the rounding
 * the hardware adds to each requantization (docs/compiler.md). */
static void report_prequantized(const struct dlasim_model *m, struct dlc_sbuf *b)
{
    const struct dlc_graph *g = &m->g;
    int acts = 0, affine = 0, convs = 0, codes = 0, biased = 0, two = 0;
    double err = 0;
    const char *worst = "";
    for (int t = 0; t < g->n_t; t++) {
        int q = g->t[t].qscale > 0 && !g->t[t].qdomain; /* the float tensors a Q quantizes */
        acts += q;
        affine += q && g->t[t].zero;
    }
    for (int i = 0; i < m->n_layers; i++) {
        const struct dlc_layer *L = &m->layers[i];
        if (L->engine != DLC_ENG_CONV) {
            continue;
        }
        convs++;
        codes += L->wcodes;
        two += L->req2;
        biased += L->alu_shift > 0 && !L->req2;
        if (L->req_err > err) {
            err = L->req_err;
            worst = g->nodes[L->node].name;
        }
    }
    if (!acts) {
        return;
    }
    dlc_sb_printf(b, "pre-quantized model: %d activations at the model's scales and zero points "
              "(instead of calibrated ones), %d of them affine (a zero point other than the middle "
              "of its type: int8 code of 0 folded into the convolution biases, CSC's pad value and "
              "SDP's output offset, the Add's operand offsets), %d of %d "
              "convolution layers with the model's int8 weight codes; requantization on SDP, %d "
              "layers as two int16 multipliers in series (X1 then X2, each >> shift with rounding), "
              "the others one: largest relative multiplier error %.1e (%s), %d layers with the bias "
              "rounded to 2^ALU shift; average pools as depthwise convolutions (exact sums); an "
              "output may round to the other side of a half step than ONNX Runtime (float32 "
              "products, round half to even; SDP rounds half away from zero), 1 int8 step apart\n",
              acts, affine, codes, convs, two, err, worst, biased);
}

char *dlasim_model_compile_report(const struct dlasim_model *m)
{
    if (!m) {
        return NULL;
    }
    struct dlc_sbuf b = { NULL, 0, 0 };
    const struct dlc_graph *g = &m->g;
    int n_cpu = 0, n_hw = 0, n_restart = 0;
    dlc_sb_printf(&b, "compiled for %s: %d layers\n", m->config, m->n_layers);
    for (int i = 0; i < m->n_layers; i++) {
        const struct dlc_layer *L = &m->layers[i];
        char ops[96];
        layer_ops(m, L, ops, sizeof ops);
        const struct dlc_tensor *o = &g->t[L->out_tensor];
        char shape[64] = "";
        int k = 0;
        for (int d = 0; d < o->rank && k < 50; d++) {
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", d ? "x" : "", (long long)o->dims[d]);
        }
        dlc_sb_printf(&b, "  %-3d %-8s %-28s %-16s", i, engine_name(L), ops, shape);
        if (L->engine == DLC_ENG_CPU) {
            dlc_sb_printf(&b, " host CPU: %s", L->why);
            n_cpu++;
        } else if (L->engine == DLC_ENG_PLACED) {
            dlc_sb_printf(&b, " inputs written in place by their producers");
        } else if (L->engine != DLC_ENG_VIEW) {
            if (L->ring_restart) {
                dlc_sb_printf(&b, " %d hw ops (%d of them CBUF weight-ring restarts)", L->n_hw_ops,
                          2 * L->ring_restart);
            } else {
                dlc_sb_printf(&b, " %d hw ops", L->n_hw_ops);
            }
            if (L->blocks > 1) {
                dlc_sb_printf(&b, " in %d channel blocks", L->blocks);
            }
            if (L->pool) {
                dlc_sb_printf(&b, " (%s on the fly: SDP -> PDP)",
                              dlc_op_names[g->nodes[L->fused[L->pool - 1]].op]);
            }
            if (L->streamed_groups) {
                dlc_sb_printf(&b, ", weights %.0f KB split along the output channels: %d kernel "
                              "groups streamed through CBUF (%s)", (double)L->streamed_bytes / 1024,
                              L->streamed_groups,
                              dlasim_conv_weight_mode_name((enum dlasim_conv_weight_mode)L->weight_mode));
            }
            n_hw++;
            n_restart += L->ring_restart;
        }
        dlc_sb_printf(&b, "  [%s]\n", g->nodes[L->node].name);
    }
    dlc_sb_printf(&b, "%d hardware layers, %d host-CPU layers, %d networks, %.1f MMAC per inference\n",
              n_hw, n_cpu, m->n_steps - n_cpu, (double)dlasim_model_macs(m) / 1e6);
    if (n_restart) {
        dlc_sb_printf(&b, "%d CBUF weight-ring restart convolutions (1x1 on a scratch cube, one data and "
                  "one weight bank) before convolutions with the same banks as the one before them "
                  "and no bank to spare\n", n_restart);
    }
    if (m->reset_each_run) {
        dlc_sb_printf(&b, "the device is reset before each inference (CBUF's weight ring restarts)\n");
    }
    char *flags = dlasim_model_precision_flags(m);
    if (flags) {
        dlc_sb_printf(&b, "%s", flags);
        free(flags);
    }
    report_prequantized(m, &b);
    return b.s;
}

void dlasim_model_stats_begin(struct dlasim_model *m, unsigned max_runs)
{
    if (!m) {
        return;
    }
    m->stats = 1;
    m->stats_left = max_runs;
    m->in_sig = m->in_noise = 0;
    m->in_stat_n = 0;
    for (int i = 0; i < m->n_layers; i++) {
        m->layers[i].stat_n = m->layers[i].stat_sat = m->layers[i].stat_runs = 0;
        free(m->layers[i].ch_range);
        m->layers[i].ch_range = NULL;
        m->layers[i].stat_c = 0;
        m->layers[i].stat_sig = m->layers[i].stat_noise = 0;
    }
}

char *dlasim_model_layer_report(const struct dlasim_model *m)
{
    if (!m) {
        return NULL;
    }
    struct dlc_sbuf b = { NULL, 0, 0 };
    dlc_sb_printf(&b, "%-3s %-8s %-24s %10s %10s %5s %5s %5s %10s %8s\n", "#", "engine", "layer",
              "in scale", "out scale", "mulsh", "alush", "trunc", "saturated", "SQNR dB");
    for (int i = 0; i < m->n_layers; i++) {
        const struct dlc_layer *L = &m->layers[i];
        if (L->engine == DLC_ENG_VIEW || L->engine == DLC_ENG_PLACED) {
            continue;
        }
        char ops[96];
        layer_ops(m, L, ops, sizeof ops);
        dlc_sb_printf(&b, "%-3d %-8s %-24.24s %10.3g %10.3g", i, engine_name(L), ops, L->in_scale,
                  L->out_scale);
        if (L->engine == DLC_ENG_CONV || L->engine == DLC_ENG_SDP || L->engine == DLC_ENG_CDP) {
            dlc_sb_printf(&b, " %5u %5u %5u", L->mul_shift, L->alu_shift, L->cacc_trunc);
        } else {
            dlc_sb_printf(&b, " %5s %5s %5s", "-", "-", "-");
        }
        if (L->stat_n) {
            dlc_sb_printf(&b, " %10llu %8.1f\n", (unsigned long long)L->stat_sat, dlc_layer_sqnr(L));
        } else {
            dlc_sb_printf(&b, " %10s %8s\n", "-", "-");
        }
    }
    char *flags = dlasim_model_precision_flags(m);
    if (flags) {
        dlc_sb_printf(&b, "%s", flags);
        free(flags);
    }
    return b.s;
}
