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
static void build(struct built *b, unsigned minor, uint16_t addr_index_bias, int drop_blob)
{
    memset(b, 0, sizeof *b);
    struct dlasim_rt_op *op = &b->op;
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        op->consumers[i].index = -1;
    }
    op->fused_parent.index = -1;
    op->op_type = DLASIM_RT_OP_PDP;
    op->op.pdp.split_num = 1;
    op->op.pdp.partial_in_width_first = W;
    op->op.pdp.partial_width_first = OW;
    op->op.pdp.pool_mode = 1;
    op->op.pdp.pool_width = op->op.pdp.pool_height = 1;
    op->op.pdp.stride_x = op->op.pdp.stride_y = 2;
    op->surface.io.src_data = cube(4, W, H);
    op->surface.io.dst_data = cube(5, OW, OH);
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
    uint16_t alist[6];
    for (int i = 0; i < 6; i++) {
        alist[i] = (uint16_t)(i + (i == 5 ? addr_index_bias : 0));
    }
    static const uint16_t task_ids[1] = { 0 };
    struct dlasim_loadable_task_desc task = { 0, 1, 0, alist, 6, NULL, NULL, 0, 0 };
    struct dlasim_loadable_submit_desc sub = { 0, task_ids, 1 };
    struct dlasim_loadable_tensor_desc t;
    memset(&t, 0, sizeof t);
    t.name = "out";
    t.mem_id = 5;
    t.size = mems[5].size;
    t.data_format = 1, t.data_type = 4, t.data_category = 2;
    t.pixel_format = 37; /* FEATURE_X8: the .dimg samples nv_small's 8-channel atoms */
    t.n = 1, t.c = C, t.h = OH, t.w = OW;
    t.stride[0] = 1, t.stride[1] = OW * ATOM, t.stride[2] = OW * OH * ATOM;
    struct dlasim_loadable_desc d;
    memset(&d, 0, sizeof d);
    d.version[1] = 7;
    d.tasks = &task, d.n_tasks = 1;
    d.memories = mems, d.n_memories = 6;
    d.addresses = addrs, d.n_addresses = 6;
    d.blobs = blobs, d.n_blobs = 5;
    d.tensors = &t, d.n_tensors = 1;
    d.submits = &sub, d.n_submits = 1;
    assert_int_equal(dlasim_loadable_write(&d, &b->file, &b->len, err, sizeof err), 0);
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

int main(void)
{
    rng = 0x10adab1eu;
    splitmix64_fill(&rng, input, sizeof input);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_v12_and_v10),
        cmocka_unit_test(test_hostile_loadables),
        cmocka_unit_test(test_flatc_accepts_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
