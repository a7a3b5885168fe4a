/*
 * imgcase: write one image-input convolution trace case.
 *
 *   imgcase DIR NAME SEED FORMAT_INDEX
 *
 * A random pixel-input layer in pixel format conv_fmts[FORMAT_INDEX] (the
 * formats the ConfigROM lists, tests/common/convlayer.c): random size,
 * kernel, strides, padding and pad values, x offset, input converter with or
 * without means, channel post-extension, CACC truncation and SDP bias, laid
 * out and programmed by the test library's layer code (tests/common/
 * convlayer.c: CDMA, CSC, CMAC, CACC, SDP) on a fresh nv_small device whose
 * CSB log becomes the trace (trace_out.c).  The expected CRC is dlasim's
 * until tools/rtlgrade/grade.sh grades it.  Exit 0 written, 1 error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/convlayer.h"
#include "common/rng.h"
#include "dlasim/dlasim.h"
#include "trace_out.h"

static uint32_t rnd(uint64_t *s, uint32_t lo, uint32_t hi)
{
    return splitmix64_range(s, lo, hi);
}

static int32_t rnd_s(uint64_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)splitmix64_below(s, (uint32_t)(hi - lo + 1));
}

static void fill(uint64_t *s, void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)splitmix64_next(s);
    }
}

/* Geometry of a random pixel layer that fits CBUF (0: draw again). */
static int geometry(struct tdev *t, struct conv *L, const struct tfmt *f, uint64_t *s,
                    int post_ext_only, int wide, int semitail)
{
    memset(L, 0, sizeof(*L));
    L->pixel = 1;
    L->fmt = f;
    L->c = conv_fmt_elems(f);
    L->w = wide ? rnd(s, 33, 72) : rnd(s, 1, 24); /* wide: several 16-column CSC stripes */
    L->h = wide ? rnd(s, 1, 4) : rnd(s, 1, 10);
    L->k = rnd(s, 1, 20);
    L->kw = rnd(s, 1, 4);
    L->kh = rnd(s, 1, 5);
    L->sx = post_ext_only ? rnd(s, 2, 4) : rnd(s, 1, 3);
    L->sy = rnd(s, 1, 3);
    L->dx = L->dy = 1;
    L->pl = rnd(s, 0, 3);
    L->pr = rnd(s, 0, 3);
    L->pt = rnd(s, 0, 2);
    L->pb = rnd(s, 0, 2);
    L->x_off = rnd(s, 0, t->m / conv_fmt_bpp0(f) - 1);
    if (semitail) {
        /* no right padding, padded line length = 3 mod M (the semi-planar
         * tail whose planar-1 atom CDMA does not fetch, src/sim/nvdla/cdma.c) */
        L->pr = 0;
        if ((L->pl + L->w) % t->m != 3) {
            return 0;
        }
    }
    if (L->pl + L->w + L->pr < L->kw || L->pt + L->h + L->pb < L->kh) {
        return 0;
    }
    L->ow = (L->pl + L->w + L->pr - L->kw) / L->sx + 1;
    L->oh = (L->pt + L->h + L->pb - L->kh) / L->sy + 1;
    uint32_t kc = L->kw * L->c;
    if (post_ext_only && kc > t->ac / 2) {
        return 0;
    }
    if (post_ext_only) {
        L->post_ext = kc <= t->ac / 4 && rnd(s, 0, 1) ? 2 : 1;
    } else if (kc <= t->ac / 4 && rnd(s, 0, 2) == 0) {
        L->post_ext = 2;
    } else if (kc <= t->ac / 2 && rnd(s, 0, 1)) {
        L->post_ext = 1;
    }
    return conv_plan_banks(t, L);
}

static void layer(struct tdev *t, struct conv *L, const struct tfmt *f, uint64_t *s,
                  int post_ext_only, int wide, int semitail)
{
    while (!geometry(t, L, f, s, post_ext_only, wide, semitail)) {
    }
    L->fetch_h = L->h;
    L->pad_value = rnd(s, 0, 0xffff);
    L->cdma_pad = rnd(s, 0, 0xffff);
    L->cvt_en = (int)rnd(s, 0, 1);
    L->mean_en = (int)rnd(s, 0, 1);
    L->sign = (int)rnd(s, 0, 1);
    L->cvt_off = rnd_s(s, -300, 300);
    L->cvt_scale = rnd_s(s, -600, 600);
    L->cvt_trunc = rnd(s, 0, 10);
    for (int i = 0; i < 4; i++) {
        L->mean[i] = rnd_s(s, -300, 300);
    }
    unsigned bpp0 = conv_fmt_bpp0(f);
    L->line_stride = conv_round_up((L->x_off + L->w) * bpp0, t->m) + rnd(s, 0, 2) * t->m;
    L->img0 = malloc((size_t)L->line_stride * L->h);
    fill(s, L->img0, (size_t)L->line_stride * L->h);
    if (f->semi) {
        L->uv_stride = conv_round_up((L->x_off * 2) % t->m + L->w * 2, t->m) + rnd(s, 0, 2) * t->m;
        L->img1 = malloc((size_t)L->uv_stride * L->h);
        fill(s, L->img1, (size_t)L->uv_stride * L->h);
    }
    L->out_line = L->ow * t->m + rnd(s, 0, 2) * t->m;
    L->out_surf = L->out_line * L->oh + rnd(s, 0, 2) * t->m;
    if (L->ow == 1 && L->oh == 1) {
        L->out_line = L->out_surf = t->m;
    }
    L->rls = L->h;
    uint32_t terms = conv_bytes_per_kernel(L), bits = 0;
    while ((1u << bits) < terms) {
        bits++;
    }
    L->trunc = rnd(s, 4 + bits / 2, 9 + bits / 2);
    L->bias_en = (int)rnd(s, 0, 1);
    L->bias = rnd_s(s, -200, 200);
    L->wt = malloc((size_t)L->k * conv_bytes_per_kernel(L));
    fill(s, L->wt, (size_t)L->k * conv_bytes_per_kernel(L));
}

static int param(struct dlasim_dev *dev, const char *name, uint32_t *v)
{
    uint64_t x = 0;
    int rc = dlasim_param(dev, name, &x);
    *v = (uint32_t)x;
    return rc;
}

/* Copy n bytes of device memory at addr into DIR/NAME/NAME_tag.dat; the
 * trace lines that load it go to t. */
static int dump(struct dlasim_dev *dev, const char *dir, const char *name, const char *tag,
                uint64_t addr, size_t n, struct tracebuf *lines)
{
    uint8_t *b = malloc(n ? n : 1);
    char path[4096], line[256];
    uint32_t crc;
    if (!b || dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, b, n)) {
        free(b);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s/%s_%s.dat", dir, name, name, tag);
    int rc = trace_write_dat(path, b, n, &crc);
    free(b);
    snprintf(line, sizeof line, "mem_init(pri_mem, 0x%llx, 0x%zx, ALL_ZERO);",
             (unsigned long long)addr, n);
    trace_put(lines, line);
    snprintf(line, sizeof line, "mem_load(pri_mem, 0x%llx, \"%s_%s.dat\");",
             (unsigned long long)addr, name, tag);
    trace_put(lines, line);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5 &&
        !(argc == 6 && (!strcmp(argv[5], "postext") || !strcmp(argv[5], "postextwide") ||
                        !strcmp(argv[5], "semitail")))) {
        fprintf(stderr, "usage: imgcase DIR NAME SEED FORMAT_INDEX [postext|postextwide|semitail]\n"
                        "  postext: channel post-extension with a horizontal stride of 2..4\n"
                        "  postextwide: the same on 33..72-pixel lines\n"
                        "  semitail: postextwide with no right padding and a padded line\n"
                        "            length of 3 mod NVDLA_MEMORY_ATOMIC_SIZE\n");
        return 1;
    }
    const int post_ext_only = argc == 6;
    const int semitail = argc == 6 && !strcmp(argv[5], "semitail");
    const int wide = argc == 6 && (!strcmp(argv[5], "postextwide") || semitail);
    const char *dir = argv[1], *name = argv[2];
    uint64_t seed = strtoull(argv[3], NULL, 0);
    unsigned fi = (unsigned)strtoul(argv[4], NULL, 0);
    if (fi >= conv_n_fmts) {
        fprintf(stderr, "imgcase: format index %u out of range (%zu)\n", fi, conv_n_fmts);
        return 1;
    }
    struct tracebuf tb = { 0 };
    struct dlasim_options o = { 0 };
    o.log_mask = DLASIM_LOG_REG | DLASIM_LOG_EXEC;
    o.log_cb = trace_on_log;
    o.log_opaque = &tb;
    o.threads = 1;
    struct tdev t;
    char err[256];
    memset(&t, 0, sizeof t);
    if (dlasim_create(&o, &t.dev, err, sizeof err)) {
        fprintf(stderr, "imgcase: %s\n", err);
        return 1;
    }
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    t.rng = &s;
    if (param(t.dev, "NVDLA_MEMORY_ATOMIC_SIZE", &t.m) || param(t.dev, "NVDLA_MAC_ATOMIC_C_SIZE", &t.ac) ||
        param(t.dev, "NVDLA_MAC_ATOMIC_K_SIZE", &t.ak) || param(t.dev, "NVDLA_CBUF_BANK_WIDTH", &t.bw) ||
        param(t.dev, "NVDLA_CBUF_BANK_DEPTH", &t.depth) ||
        param(t.dev, "NVDLA_CBUF_BANK_NUMBER", &t.banks)) {
        fprintf(stderr, "imgcase: configuration parameters unreadable\n");
        return 1;
    }
    struct conv L;
    const struct tfmt *f = &conv_fmts[fi];
    layer(&t, &L, f, &s, post_ext_only, wide, semitail);
    size_t out_bytes = (size_t)conv_div_up(L.k, t.m) * L.out_surf;
    uint8_t *zero = calloc(out_bytes, 1);
    dlasim_mem_write(t.dev, DLASIM_PORT_DBB, CONV_OUT_ADDR, zero, out_bytes);
    free(zero);
    conv_write(&t, &L);
    /* the memory the RTL reads: pixel planes and the weight stream */
    struct tracebuf head = { 0 };
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (mkdir(path, 0777) && errno != EEXIST) {
        return 1;
    }
    int bad = dump(t.dev, dir, name, "in", CONV_IN_ADDR, (size_t)L.line_stride * L.h, &head);
    if (f->semi) {
        bad |= dump(t.dev, dir, name, "uv", CONV_IN1_ADDR, (size_t)L.uv_stride * L.h, &head);
    }
    bad |= dump(t.dev, dir, name, "wt", CONV_WT_ADDR, L.wt_bytes, &head);
    dlasim_csb_write(t.dev, 0x1004 /* NVDLA_GLB.S_INTR_MASK_0 */, 0x3f03fc);
    dlasim_csb_write(t.dev, 0x100c /* NVDLA_GLB.S_INTR_STATUS_0 */, 0);
    conv_pointers(t.dev, 0);
    conv_program_cacc(&t, &L);
    conv_program_sdp(&t, &L);
    conv_program_csc(&t, &L);
    conv_program_cdma(&t, &L);
    conv_enable(t.dev);
    int rc = dlasim_run(t.dev);
    if (rc || bad || tb.oom || head.oom) {
        fprintf(stderr, "imgcase: %s: %s\n", name, rc ? dlasim_last_error(t.dev) : "write error");
        return 1;
    }
    uint8_t *out = malloc(out_bytes);
    if (!out || dlasim_mem_read(t.dev, DLASIM_PORT_DBB, CONV_OUT_ADDR, out, out_bytes)) {
        return 1;
    }
    uint32_t crc = (uint32_t)crc32(0, out, (uInt)out_bytes);
    free(out);
    snprintf(path, sizeof path, "%s/%s/%s.cfg", dir, name, name);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        return 1;
    }
    fprintf(fp, "// %s: image input, programmed by the tests' layer code (tests/common/convlayer.c), "
                "random data (seed %llu, format %s)\n",
            name, (unsigned long long)seed, f->components);
    fprintf(fp, "// pixels %ux%u x_off %u line %u uv %u, kernel %ux%ux%u stride %ux%u pad l%u r%u t%u b%u "
                "post_ext %u cvt %d mean %d sign %d, out %ux%u truncate %u bias %d\n",
            L.w, L.h, L.x_off, L.line_stride, L.uv_stride, L.kw, L.kh, L.k, L.sx, L.sy, L.pl, L.pr,
            L.pt, L.pb, L.post_ext, L.cvt_en, L.mean_en, L.sign, L.ow, L.oh, L.trunc, L.bias_en);
    fprintf(fp, "// check_crc: dlasim's CRC until graded on the RTL\n");
    fputs(head.text, fp);
    fprintf(fp, "mem_init(pri_mem, 0x%llx, 0x%zx, ALL_ZERO);\n", (unsigned long long)CONV_OUT_ADDR,
            out_bytes);
    fputs(tb.text, fp);
    fprintf(fp, "check_crc(sync_id_0, 1, 0x%llx, 0x%zx, 0x%08x);\n",
            (unsigned long long)CONV_OUT_ADDR, out_bytes, crc);
    fclose(fp);
    printf("%s %s\n", name, f->components);
    conv_free(&L);
    free(tb.text);
    free(head.text);
    dlasim_destroy(t.dev);
    return 0;
}
