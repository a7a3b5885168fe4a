/*
 * The loadable writer (dlasim_loadable_write, dlasim_rt_encode) against the
 * reader and runner: a hand-built PDP network (max pooling 2x2 / 2 of a
 * random 8x8x32 int8 cube) is encoded in interface versions 0.10 (28-byte
 * data cubes) and 0.12 (32-byte), written as a loadable with its input as
 * SET content and a bindable output tensor, read back, run on nv_small, and
 * the .dimg output compared with a plain-C max pooling.  Hostile variants
 * (address index, memory id, blob name, truncation) give errors that name
 * the table, field and byte offset.  NVIDIA's schema, when available,
 * validates the writer's output through Debian's flatc (loadable.fbs from
 * LOADABLE_FBS or the nvdla/sw git mirror NVDLA_SW_GIT; skipped otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "common/rtop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"

#define W 8
#define H 8
#define C 32
#define ATOM 8 /* nv_small */
#define OW 4
#define OH 4
#define SURFS (C / ATOM)

static uint64_t rng;
static int8_t input[SURFS * H * W * ATOM];

struct built {
    struct dlasim_rt_op op;
    struct dlasim_rt_network net;
    uint64_t addrs[6];
    struct dlasim_rt_encoded enc;
    uint8_t *file;
    size_t len;
};

static struct dlasim_rt_cube cube(int16_t addr, uint32_t w, uint32_t h)
{
    struct dlasim_rt_cube c;
    memset(&c, 0, sizeof c);
    c.type = DLASIM_RT_MEM_MC;
    c.address = addr;
    c.width = (uint16_t)w, c.height = (uint16_t)h, c.channel = C;
    c.line_stride = w * ATOM;
    c.surf_stride = w * h * ATOM;
    c.size = c.surf_stride * SURFS;
    return c;
}

/* Network: one PDP op reading address 4, writing address 5; descriptor
 * lists at 1 (ops), 2 (surfaces), 3 (dependency graph). */
static void build_io(struct built *b, unsigned minor, uint16_t addr_index_bias, int drop_blob,
                     int bind_input)
{
    memset(b, 0, sizeof *b);
    struct dlasim_rt_op *op = &b->op;
    const struct dlasim_rt_cube src = cube(4, W, H), dst = cube(5, OW, OH);
    rtop_maxpool2x2(op, &src, &dst);
    b->net.ops = op;
    b->net.num_ops = 1;
    const int16_t heads[DLASIM_RT_OP_NUM] = { -1, -1, -1, 0, -1, -1 };
    memcpy(b->net.op_head, heads, sizeof heads);
    b->net.num_addresses = 6;
    const int16_t lists[4] = { 1, 2, 3, -1 };
    char err[256];
    assert_int_equal(dlasim_rt_encode(&b->net, minor, lists, &b->enc, err, sizeof err), 0);

    uint8_t ver[3] = { 0, (uint8_t)minor, 0 };
    struct dlasim_loadable_blob_desc blobs[5] = {
        { "net", b->enc.network, b->enc.network_size, 0, 1, { 0 } },
        { "ops", b->enc.ops, b->enc.ops_size, 0, 3, { 0 } },
        { "surfs", b->enc.surfaces, b->enc.surfaces_size, 0, 4, { 0 } },
        { "deps", b->enc.deps, b->enc.deps_size, 0, 2, { 0 } },
        { "input", input, sizeof input, 0, 0, { 0 } },
    };
    for (int i = 0; i < 5; i++) {
        memcpy(blobs[i].version, ver, 3);
    }
    static const char *const names[5] = { "net", "ops", "surfs", "deps", "input" };
    static const char *const missing = "nope";
    static const uint64_t zero = 0;
    struct dlasim_loadable_memory_desc mems[6];
    struct dlasim_loadable_address_desc addrs[6];
    for (int i = 0; i < 6; i++) {
        memset(&mems[i], 0, sizeof mems[i]);
        mems[i].id = (uint16_t)i;
        mems[i].flags = i < 5 ? 3 : 9; /* ALLOC|SET, or ALLOC|OUTPUT */
        mems[i].size = i < 5 ? blobs[i].size : (uint64_t)OW * OH * ATOM * SURFS;
        mems[i].contents = i < 5 ? &names[i] : NULL;
        mems[i].offsets = &zero;
        mems[i].n_contents = i < 5;
        addrs[i] = (struct dlasim_loadable_address_desc){ (uint16_t)i, (uint16_t)i, 0,
                                                           mems[i].size };
    }
    if (drop_blob) {
        mems[4].contents = &missing;
    }
    if (bind_input) { /* input tensor 0 is bound by the caller: ALLOC | INPUT */
        mems[4].flags = 5;
        mems[4].n_contents = 0;
        mems[4].tensor_desc_id = 1;
    }
    uint16_t alist[6];
    for (int i = 0; i < 6; i++) {
        alist[i] = (uint16_t)(i + (i == 5 ? addr_index_bias : 0));
    }
    static const uint16_t task_ids[1] = { 0 };
    struct dlasim_loadable_task_desc task = { 0, 1, 0, alist, 6, NULL, NULL, 0, 0 };
    struct dlasim_loadable_submit_desc sub = { 0, task_ids, 1 };
    struct dlasim_loadable_tensor_desc tens[2], t;
    memset(&t, 0, sizeof t);
    t.name = "out";
    t.mem_id = 5;
    t.size = mems[5].size;
    t.data_format = 1, t.data_type = 4, t.data_category = 2;
    t.pixel_format = 37; /* FEATURE_X8: the .dimg samples nv_small's 8-channel atoms */
    t.n = 1, t.c = C, t.h = OH, t.w = OW;
    t.stride[0] = 1, t.stride[1] = OW * ATOM, t.stride[2] = OW * OH * ATOM;
    tens[0] = t;
    tens[1] = t;
    tens[1].name = "in";
    tens[1].id = 1;
    tens[1].mem_id = 4;
    tens[1].size = sizeof input;
    tens[1].h = H, tens[1].w = W;
    tens[1].stride[1] = W * ATOM, tens[1].stride[2] = W * H * ATOM;
    struct dlasim_loadable_desc d;
    memset(&d, 0, sizeof d);
    d.version[1] = 7;
    d.tasks = &task, d.n_tasks = 1;
    d.memories = mems, d.n_memories = 6;
    d.addresses = addrs, d.n_addresses = 6;
    d.blobs = blobs, d.n_blobs = 5;
    d.tensors = tens, d.n_tensors = 2;
    d.submits = &sub, d.n_submits = 1;
    assert_int_equal(dlasim_loadable_write(&d, &b->file, &b->len, err, sizeof err), 0);
}

static void build(struct built *b, unsigned minor, uint16_t addr_index_bias, int drop_blob)
{
    build_io(b, minor, addr_index_bias, drop_blob, 0);
}

static void unbuild(struct built *b)
{
    dlasim_rt_encoded_free(&b->enc);
    free(b->file);
}

static int8_t in_at(uint32_t c, uint32_t y, uint32_t x)
{
    return input[(c / ATOM) * (W * H * ATOM) + y * (W * ATOM) + x * ATOM + c % ATOM];
}

static void run_and_check(const struct built *b)
{
    struct dlasim_loadable *ld;
    char err[512];
    if (dlasim_loadable_open(b->file, b->len, &ld, err, sizeof err)) {
        fail_msg("open: %s", err);
    }
    assert_int_equal(dlasim_loadable_num_outputs(ld), 1);
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    if (dlasim_loadable_run(dev, ld, NULL, 0, NULL, err, sizeof err)) {
        fail_msg("run: %s", err);
    }
    const uint8_t *d;
    size_t n;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 0, &d, &n), 0);
    assert_int_equal(n, 36 + (size_t)C * OH * OW);
    assert_memory_equal(d, "DIMG", 4);
    assert_int_equal(d[8], 41); /* D_F8_CxHWx_x8_I */
    const uint8_t *p = d + 36;
    for (uint32_t c = 0; c < C; c++) {
        for (uint32_t y = 0; y < OH; y++) {
            for (uint32_t x = 0; x < OW; x++) {
                int8_t m = -128;
                for (uint32_t j = 0; j < 4; j++) {
                    int8_t v = in_at(c, 2 * y + j / 2, 2 * x + j % 2);
                    m = v > m ? v : m;
                }
                if ((int8_t)*p != m) {
                    fail_msg("output c=%u y=%u x=%u: %d, reference %d", c, y, x, (int8_t)*p, m);
                }
                p++;
            }
        }
    }
    dlasim_destroy(dev);
    dlasim_loadable_close(ld);
}

static void test_round_trip_v12_and_v10(void **state)
{
    (void)state;
    unsigned minors[2] = { 12, 10 };
    for (int i = 0; i < 2; i++) {
        struct built b;
        build(&b, minors[i], 0, 0);
        run_and_check(&b);
        unbuild(&b);
    }
}

static void expect_open_error(const uint8_t *buf, size_t len, const char *needle)
{
    struct dlasim_loadable *ld = NULL;
    char err[512] = "";
    int rc = dlasim_loadable_open(buf, len, &ld, err, sizeof err);
    if (rc == 0) {
        dlasim_loadable_close(ld);
        fail_msg("opened a bad loadable (wanted '%s')", needle);
    }
    assert_int_equal(rc, DLASIM_ERR_PARSE);
    if (!strstr(err, needle)) {
        fail_msg("error '%s' does not say '%s'", err, needle);
    }
}

static void test_hostile_loadables(void **state)
{
    (void)state;
    struct built b;
    build(&b, 12, 9, 0); /* task address list entry 14 */
    expect_open_error(b.file, b.len, "task_list[0].address_list[5]=14");
    unbuild(&b);
    build(&b, 12, 0, 1);
    expect_open_error(b.file, b.len, "memory_list[4].contents[0]=\"nope\"");
    unbuild(&b);
    build(&b, 12, 0, 0);
    for (size_t cut = 0; cut < b.len; cut += 97) { /* truncations: errors, never crashes */
        struct dlasim_loadable *ld = NULL;
        char err[256];
        if (dlasim_loadable_open(b.file, cut, &ld, err, sizeof err) == 0) {
            dlasim_loadable_close(ld);
        } else {
            assert_true(strstr(err, "byte") || strstr(err, "bytes"));
        }
    }
    uint8_t bad[16] = { 0xf0, 0xff, 0xff, 0x7f };
    expect_open_error(bad, sizeof bad, "outside the file");
    unbuild(&b);
}

static void test_flatc_accepts_output(void **state)
{
    (void)state;
    const char *fbs = getenv("LOADABLE_FBS");
    const char *git = getenv("NVDLA_SW_GIT");
    char dir[] = "/tmp/dlasim-fbs-XXXXXX", cmd[1024], path[256];
    if (!git) {
        git = "/work/.mirror/nvdla+sw/repo";
    }
    if (system("command -v flatc > /dev/null 2>&1") != 0) {
        skip(); /* flatc (Debian flatbuffers-compiler) is not installed */
    }
    assert_non_null(mkdtemp(dir));
    if (!fbs) {
        snprintf(path, sizeof path, "%s/loadable.fbs", dir);
        snprintf(cmd, sizeof cmd,
                 "git --git-dir='%s' show master:umd/core/src/common/loadable.fbs > '%s' 2>/dev/null",
                 git, path);
        if (system(cmd) != 0) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
            assert_int_equal(system(cmd), 0);
            printf("SKIP: no loadable.fbs (set LOADABLE_FBS or NVDLA_SW_GIT)\n");
            skip();
        }
        fbs = path;
    }
    struct built b;
    build(&b, 12, 0, 0);
    snprintf(cmd, sizeof cmd, "%s/out.nvdla", dir);
    FILE *f = fopen(cmd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.file, 1, b.len, f), b.len);
    assert_int_equal(fclose(f), 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && flatc --json --strict-json --raw-binary '%s' -- out.nvdla > flatc.log 2>&1 &&"
             " grep -q '\"submit_list\"' out.json && grep -q '\"name\": \"surfs\"' out.json &&"
             " grep -q '\"pixel_format\": \"FEATURE_X8\"' out.json",
             dir, fbs);
    int rc = system(cmd);
    unbuild(&b);
    char clean[300];
    snprintf(clean, sizeof clean, "rm -rf '%s'", dir);
    assert_int_equal(system(clean), 0);
    assert_int_equal(rc, 0);
}

/* A bound input from a PGM image: the application's conversion
 * floor(p * 127 / 255 + 0.5) into channel 0, the other channels zero. */
static void test_pgm_input(void **state)
{
    (void)state;
    struct built b;
    build_io(&b, 12, 0, 0, 1);
    uint8_t pgm[64 + W * H];
    int hl = snprintf((char *)pgm, 64, "P5\n# test\n%d %d\n255\n", W, H);
    uint8_t px[W * H];
    splitmix64_fill(&rng, px, sizeof px);
    memcpy(pgm + hl, px, sizeof px);
    struct dlasim_loadable *ld;
    char err[512];
    if (dlasim_loadable_open(b.file, b.len, &ld, err, sizeof err)) {
        fail_msg("open: %s", err);
    }
    assert_int_equal(dlasim_loadable_num_inputs(ld), 1);
    struct dlasim_loadable_input in = { pgm, (size_t)hl + sizeof px };
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    if (dlasim_loadable_run(dev, ld, &in, 1, NULL, err, sizeof err)) {
        fail_msg("run: %s", err);
    }
    const uint8_t *d;
    size_t n;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 0, &d, &n), 0);
    for (uint32_t c = 0; c < C; c++) {
        for (uint32_t y = 0; y < OH; y++) {
            for (uint32_t x = 0; x < OW; x++) {
                int m = 0;
                for (uint32_t j = 0; c == 0 && j < 4; j++) {
                    int v = (int)floor(px[(2 * y + j / 2) * W + 2 * x + j % 2] * 127.0 / 255.0 + 0.5);
                    m = v > m ? v : m;
                }
                assert_int_equal((int8_t)d[36 + (c * OH + y) * OW + x], m);
            }
        }
    }
    /* a wrong size is refused */
    in.len = 10;
    assert_int_equal(dlasim_loadable_run(dev, ld, &in, 1, NULL, err, sizeof err), DLASIM_ERR_PARSE);
    dlasim_destroy(dev);
    dlasim_loadable_close(ld);
    unbuild(&b);
}

/* ---- an EMU softmax after a DLA task ------------------------------------------- */

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff), put16(p + 2, v >> 16); }
static void putf(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u);
}

/* EMU buffer descriptor: index, offset, size, format, w, h, c, line, surf */
static void emu_buf(uint8_t *p, uint16_t index, uint32_t size, uint16_t format, uint16_t c)
{
    put16(p, index);
    put32(p + 2, 0);
    put32(p + 6, size);
    put16(p + 10, format);
    put16(p + 12, 1), put16(p + 14, 1), put16(p + 16, c);
    put32(p + 18, size), put32(p + 22, size);
}

/* Round to FP16 precision, nearest with ties away from zero (what the
 * half_float library NVIDIA's emulator uses does), by scaling in double. */
static double ref_half(double x)
{
    if (x == 0) {
        return 0;
    }
    int e;
    frexp(fabs(x), &e);
    int q = e - 11 < -24 ? -24 : e - 11;
    return ldexp(round(ldexp(x, -q)), q);
}

static void test_emu_softmax_after_dla(void **state)
{
    (void)state;
    /* DLA: max pooling 2x2 of a 2x2x8 cube -> 1x1x8 at address 3 */
    struct dlasim_rt_op op;
    struct dlasim_rt_cube src = { DLASIM_RT_MEM_MC, 4, 0, 32, 2, 2, 8, 16, 32, 0 };
    struct dlasim_rt_cube dst = { DLASIM_RT_MEM_MC, 5, 0, 8, 1, 1, 8, 8, 8, 0 };
    rtop_maxpool2x2(&op, &src, &dst);
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    net.ops = &op;
    net.num_ops = 1;
    const int16_t heads[DLASIM_RT_OP_NUM] = { -1, -1, -1, 0, -1, -1 };
    memcpy(net.op_head, heads, sizeof heads);
    net.num_addresses = 6;
    const int16_t lists[4] = { 1, 2, 3, -1 };
    struct dlasim_rt_encoded enc;
    char err[512];
    assert_int_equal(dlasim_rt_encode(&net, 12, lists, &enc, err, sizeof err), 0);
    int8_t cube_in[32];
    splitmix64_fill(&rng, cube_in, sizeof cube_in);
    /* EMU: softmax over the 8 pooled values, INT8_8, scales 1/16 and 1/127 */
    static uint8_t emu_net[256], emu_ops[48], emu_bufs[1024];
    put16(emu_net, 1), put16(emu_net + 2, 2), put16(emu_net + 4, 2);
    emu_ops[0] = 1; /* softmax */
    putf(emu_ops + 4, 1.0f / 16), putf(emu_ops + 8, 1.0f / 127);
    emu_buf(emu_bufs, 3, 8, 1, 8);
    emu_buf(emu_bufs + 256, 4, 8, 1, 8);
    /* and power: ((1 + 0.5 * x / 8) ^ 2) * 4 of the pooled values */
    emu_ops[24] = 0;
    putf(emu_ops + 28, 1.0f / 8), putf(emu_ops + 32, 1.0f / 4);
    putf(emu_ops + 36, 2.0f), putf(emu_ops + 40, 0.5f), putf(emu_ops + 44, 1.0f);
    emu_buf(emu_bufs + 512, 3, 8, 1, 8);
    emu_buf(emu_bufs + 768, 5, 8, 1, 8);
    /* memories: 0-3 DLA descriptors, 4 input, 5 pooled, 6-8 EMU descriptors, 9 output */
    static const char *const names[9] = { "net", "ops", "surfs", "deps", "in", "", "emu_net",
                                          "emu_ops", "emu_bufs" };
    const void *datas[9] = { enc.network, enc.ops, enc.surfaces, enc.deps, cube_in, NULL,
                             emu_net, emu_ops, emu_bufs };
    size_t sizes[11] = { enc.network_size, enc.ops_size, enc.surfaces_size, enc.deps_size,
                         sizeof cube_in, 8, sizeof emu_net, sizeof emu_ops, sizeof emu_bufs, 8, 8 };
    struct dlasim_loadable_blob_desc blobs[8];
    struct dlasim_loadable_memory_desc mems[11];
    struct dlasim_loadable_address_desc addrs[11];
    static const uint64_t zero = 0;
    size_t nb = 0;
    for (int i = 0; i < 11; i++) {
        memset(&mems[i], 0, sizeof mems[i]);
        mems[i].id = (uint16_t)i;
        mems[i].size = sizes[i];
        mems[i].flags = 1;
        if (i < 9 && datas[i]) {
            uint8_t v[3] = { 0, (uint8_t)(i >= 6 ? 0 : 12), (uint8_t)(i >= 6 ? 1 : 0) };
            blobs[nb] = (struct dlasim_loadable_blob_desc){ names[i], datas[i], sizes[i],
                                                            i >= 6 ? 2u : 1u, 0, { 0 } };
            memcpy(blobs[nb++].version, v, 3);
            mems[i].flags = 3;
            mems[i].contents = &names[i];
            mems[i].offsets = &zero;
            mems[i].n_contents = 1;
        }
        addrs[i] = (struct dlasim_loadable_address_desc){ (uint16_t)i, (uint16_t)i, 0, sizes[i] };
    }
    mems[9].flags = 9; /* ALLOC | OUTPUT, bind 0, tensor 0 */
    mems[10].flags = 9; /* bind 1, tensor 1 */
    mems[10].bind_id = 1, mems[10].tensor_desc_id = 1;
    static const uint16_t dla_list[6] = { 0, 1, 2, 3, 4, 5 };
    static const uint16_t emu_list[6] = { 6, 7, 8, 5, 9, 10 };
    static const uint16_t t0[1] = { 0 }, t1[1] = { 1 };
    struct dlasim_loadable_task_desc tasks[2] = {
        { 0, 1, 0, dla_list, 6, NULL, NULL, 0, 0 },
        { 1, 2, 0, emu_list, 6, NULL, NULL, 0, 0 },
    };
    struct dlasim_loadable_submit_desc subs[2] = { { 0, t0, 1 }, { 1, t1, 1 } };
    struct dlasim_loadable_tensor_desc tt[2];
    for (int i = 0; i < 2; i++) {
        struct dlasim_loadable_tensor_desc *t = &tt[i];
        memset(t, 0, sizeof *t);
        t->name = i ? "pow" : "prob";
        t->id = (uint16_t)i;
        t->mem_id = (uint16_t)(9 + i);
        t->size = 8;
        t->data_type = 4, t->data_category = 2, t->pixel_format = 37;
        t->n = 1, t->c = 8, t->h = 1, t->w = 1;
        t->stride[1] = 8, t->stride[2] = 8;
    }
    struct dlasim_loadable_desc d;
    memset(&d, 0, sizeof d);
    d.tasks = tasks, d.n_tasks = 2;
    d.memories = mems, d.n_memories = 11;
    d.addresses = addrs, d.n_addresses = 11;
    d.blobs = blobs, d.n_blobs = nb;
    d.tensors = tt, d.n_tensors = 2;
    d.submits = subs, d.n_submits = 2;
    uint8_t *file;
    size_t len;
    assert_int_equal(dlasim_loadable_write(&d, &file, &len, err, sizeof err), 0);
    struct dlasim_loadable *ld;
    if (dlasim_loadable_open(file, len, &ld, err, sizeof err)) {
        fail_msg("open: %s", err);
    }
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    if (dlasim_loadable_run(dev, ld, NULL, 0, NULL, err, sizeof err)) {
        fail_msg("run: %s", err);
    }
    const uint8_t *out;
    size_t n;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 0, &out, &n), 0);
    assert_int_equal(n, 36 + 8);
    /* reference: pooled values, softmax in FP16 steps, int8 */
    double x[8], mx = -1e30, sum = 0;
    const uint8_t *pw;
    size_t npw;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 1, &pw, &npw), 0);
    assert_int_equal(npw, 36 + 8);
    for (int c = 0; c < 8; c++) {
        int m = -128;
        for (int j = 0; j < 4; j++) {
            int v = cube_in[(j / 2) * 16 + (j % 2) * 8 + c];
            m = v > m ? v : m;
        }
        double p = pow(1.0 + 0.5 * (m / 8.0), 2.0) * 4.0;
        int pwant = p > 127 ? 127 : p < -128 ? -128 : (int)p;
        if ((int8_t)pw[36 + c] != pwant && fabs(p - round(p)) > 1e-3) {
            fail_msg("power c=%d: %d, reference %d (%.6f)", c, (int8_t)pw[36 + c], pwant, p);
        }
        x[c] = ref_half(m / 16.0);
        mx = x[c] > mx ? x[c] : mx;
    }
    for (int c = 0; c < 8; c++) {
        sum += (double)expf((float)(x[c] - mx));
    }
    for (int c = 0; c < 8; c++) {
        double y = ref_half((double)(expf((float)(x[c] - mx)) / (float)sum)) * 127.0;
        int want = y > 127 ? 127 : (int)y; /* truncation toward zero */
        int got = (int8_t)out[36 + c];
        if (got != want && !(abs(got - want) == 1 && fabs(y - round(y)) < 1e-3)) {
            fail_msg("softmax c=%d: %d, reference %d (%.6f)", c, got, want, y);
        }
    }
    dlasim_destroy(dev);
    dlasim_loadable_close(ld);
    free(file);
    dlasim_rt_encoded_free(&enc);
}

int main(void)
{
    rng = 0x10adab1eu;
    splitmix64_fill(&rng, input, sizeof input);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_v12_and_v10),
        cmocka_unit_test(test_hostile_loadables),
        cmocka_unit_test(test_flatc_accepts_output),
        cmocka_unit_test(test_emu_softmax_after_dla),
        cmocka_unit_test(test_pgm_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
