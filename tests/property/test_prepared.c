/*
 * Prepared programming (issue 18, src/driver/nvdla/fw_prep.c): a network
 * whose programming is replayed from its prepared form makes the device
 * accesses of one whose programming is rebuilt, but for writes of a value
 * its register group already holds (a dual configuration register the
 * recording before it in that group left at that value), which a replay
 * leaves out.  The logs compare what the hardware sees: every read, mark
 * and write except those to dual configuration registers, and at every
 * OP_ENABLE write the whole programming of that unit's group as read back
 * from the device; and a replayed run writes fewer registers.
 *
 *   - compiled networks (the Fashion-MNIST demo CNN and test models with
 *     LUTs, element-wise, pooling and concatenation layers): each hardware
 *     network is run three times on identical fresh devices through a
 *     logging port (every register write, status read and surface mark in
 *     order): without a prepared form (rebuilt), with a new one (rebuilt
 *     while recording) and with the same one again (every operation
 *     replayed); the three logs are equal and the counts say what was
 *     replayed.  Then one address-list entry moves: the operations using it
 *     are programmed afresh, the rest replayed, and the log equals a rebuilt
 *     run's with the moved entry;
 *   - the entry points with NULL arguments;
 *   - NVIDIA's regression loadables (each DLA task keeps a prepared form in
 *     its loadable): run twice on identical fresh devices, the second run
 *     replaying, the logs equal and the output equal to the golden's first
 *     run's output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "common/testmodel.h"
#include "compiler/compiler_int.h"
#include "dlasim/dlasim.h"
#include "dlasim/compiler.h"
#include "dlasim/port.h"
#include "dlasim/runtime.h"
#include "regs/regdb.h"

#define LOADABLES "../shared/conformance/nvdla-loadables/flatbufs/kmd/"

static uint64_t rng;

/* ---- a port that logs every access, on a device of the public API ------------- */

enum { LOG_WR = 1, LOG_RD, LOG_MARK_IN, LOG_MARK_OUT, LOG_HELD };

struct logport {
    struct nvrt_port port;
    struct dlasim_dev *dev;
    uint64_t next_addr;
    uint64_t *log; /* triples: kind, address, value */
    size_t n, cap;
    size_t writes; /* register writes made, logged or not */
};

static void put(struct logport *lp, uint64_t kind, uint64_t addr, uint64_t v)
{
    if (lp->n + 3 > lp->cap) {
        lp->cap = lp->cap ? 2 * lp->cap : 3 << 12;
        lp->log = realloc(lp->log, lp->cap * sizeof *lp->log);
        assert_non_null(lp->log);
    }
    lp->log[lp->n++] = kind;
    lp->log[lp->n++] = addr;
    lp->log[lp->n++] = v;
}

static int lp_read(void *ctx, uint32_t addr, uint32_t *val)
{
    struct logport *lp = ctx;
    int rc = dlasim_csb_read(lp->dev, addr, val);
    put(lp, LOG_RD, addr, *val);
    return rc;
}

/* A dual configuration register (what a replay may leave unwritten). */
static int held_register(const struct nvdla_reg_desc *r)
{
    return r && r->group == NVDLA_REG_DUAL && r->kind == NVDLA_KIND_PLAIN && r->write_mask &&
           !r->w1c_mask && !r->w1s_mask;
}

/* An OP_ENABLE write: then the unit's dual configuration registers of the
 * group it enables, as the device holds them. */
static void log_group(struct logport *lp, const struct nvdla_reg_desc *en)
{
    const struct nvdla_unit_desc *u = &nvdla_db.units[en->unit];
    for (unsigned i = 0; i < u->n_regs; i++) {
        const struct nvdla_reg_desc *r = &nvdla_db.regs[u->first_reg + i];
        uint32_t v = 0;
        if (held_register(r)) {
            assert_int_equal(dlasim_csb_read(lp->dev, r->addr, &v), 0);
            put(lp, LOG_HELD, r->addr, v);
        }
    }
}

static int lp_write(void *ctx, uint32_t addr, uint32_t val)
{
    struct logport *lp = ctx;
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    lp->writes++;
    if (!held_register(r)) {
        put(lp, LOG_WR, addr, val);
    }
    int rc = dlasim_csb_write(lp->dev, addr, val);
    if (r && r->kind == NVDLA_KIND_OP_ENABLE && (val & 1u)) {
        log_group(lp, r);
    }
    return rc;
}

static int lp_wait_irq(void *ctx)
{
    struct logport *lp = ctx;
    while (!dlasim_irq_level(lp->dev)) {
        int rc = dlasim_step(lp->dev);
        if (rc < 0) {
            return rc;
        }
        if (rc == 0 && !dlasim_irq_level(lp->dev)) {
            return DLASIM_ERR_TIMEOUT;
        }
    }
    return 0;
}

static int lp_alloc(void *ctx, enum nvrt_domain domain, uint64_t size, uint64_t align,
                    uint64_t *addr)
{
    struct logport *lp = ctx;
    (void)domain;
    align = align < 4096 ? 4096 : align;
    *addr = (lp->next_addr + align - 1) & ~(align - 1);
    lp->next_addr = *addr + (size ? size : 1);
    return 0;
}

static int lp_mem_write(void *ctx, uint64_t addr, const void *src, size_t len)
{
    struct logport *lp = ctx;
    return dlasim_mem_write(lp->dev, DLASIM_PORT_DBB, addr, src, len);
}

static int lp_mem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
    struct logport *lp = ctx;
    return dlasim_mem_read(lp->dev, DLASIM_PORT_DBB, addr, dst, len);
}

static const char *lp_last_error(void *ctx)
{
    struct logport *lp = ctx;
    return dlasim_last_error(lp->dev);
}

static void lp_mark_in(void *ctx, uint64_t addr, uint64_t size)
{
    put(ctx, LOG_MARK_IN, addr, size);
}

static void lp_mark_out(void *ctx, uint64_t addr, uint64_t size)
{
    put(ctx, LOG_MARK_OUT, addr, size);
}

static int lp_param(void *ctx, const char *name, uint64_t *value)
{
    struct logport *lp = ctx;
    return dlasim_param(lp->dev, name, value);
}

static void logport_init(struct logport *lp, struct dlasim_dev *dev)
{
    memset(lp, 0, sizeof *lp);
    lp->dev = dev;
    lp->next_addr = 0x80000000ull;
    lp->port = (struct nvrt_port){
        .ctx = lp,
        .reg_read = lp_read,
        .reg_write = lp_write,
        .wait_irq = lp_wait_irq,
        .mem_alloc = lp_alloc,
        .mem_write = lp_mem_write,
        .mem_read = lp_mem_read,
        .last_error = lp_last_error,
        .mark_output = lp_mark_out,
        .mark_input = lp_mark_in,
        .alloc_zeroed = 1,
        .param = lp_param,
    };
}

static void assert_same_log(const struct logport *a, const struct logport *b, const char *what)
{
    if (a->n != b->n) {
        fail_msg("%s: %zu accesses against %zu", what, a->n / 3, b->n / 3);
    }
    for (size_t i = 0; i < a->n; i += 3) {
        if (memcmp(a->log + i, b->log + i, 3 * sizeof *a->log)) {
            fail_msg("%s: access %zu differs: kind %llu 0x%llx = 0x%llx against kind %llu "
                     "0x%llx = 0x%llx",
                     what, i / 3, (unsigned long long)a->log[i],
                     (unsigned long long)a->log[i + 1], (unsigned long long)a->log[i + 2],
                     (unsigned long long)b->log[i], (unsigned long long)b->log[i + 1],
                     (unsigned long long)b->log[i + 2]);
        }
    }
}

/* ---- compiled networks ------------------------------------------------------------- */

static struct dlasim_model *compiled(const char *path, const char *config, float **x)
{
    struct dlasim_model *m = tmodel_load(path);
    char err[512];
    enum { CAL = 8 };
    size_t in_n = dlasim_model_input_size(m);
    float *cal = malloc(CAL * in_n * sizeof(float));
    assert_non_null(cal);
    for (size_t i = 0; i < CAL * in_n; i++) {
        cal[i] = (float)(splitmix64_next(&rng) >> 40) / (float)(1 << 24);
    }
    struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
    if (dlasim_model_calibrate(m, cal, CAL, &co, err, sizeof err) ||
        dlasim_model_compile(m, config, err, sizeof err)) {
        fail_msg("%s: %s", path, err);
    }
    *x = cal; /* the first calibration input is the run's input */
    return m;
}

/* A fresh device with the model's weights and input in, its networks run
 * once through the model (so every device starts from the same state). */
static struct dlasim_dev *loaded_device(struct dlasim_model *m, const char *config,
                                        const float *x)
{
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 1);
    float *y = malloc(dlasim_model_output_size(m) * sizeof(float));
    char err[512];
    assert_non_null(y);
    if (dlasim_model_run(m, dev, x, y, NULL, err, sizeof err)) {
        fail_msg("model run: %s", err);
    }
    free(y);
    return dev;
}

static struct dlasim_rt_network network_of(const struct dlasim_model *m, const struct dlc_step *s,
                                           const uint64_t *addrs)
{
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    net.ops = s->ops;
    net.num_ops = s->n_ops;
    memcpy(net.op_head, s->op_head, sizeof net.op_head);
    net.addresses = addrs;
    net.num_addresses = (uint16_t)m->n_addrs;
    net.luts = s->luts;
    net.num_luts = s->n_luts;
    return net;
}

/* Run step s of m on a fresh loaded device through a logging port. */
static void logged_run(struct dlasim_model *m, const char *config, const float *x,
                       const struct dlc_step *s, const uint64_t *addrs,
                       struct dlasim_rt_prepared *prep, struct logport *lp)
{
    struct dlasim_dev *dev = loaded_device(m, config, x);
    struct dlasim_rt_network net = network_of(m, s, addrs);
    char err[512];
    logport_init(lp, dev);
    if (dlasim_rt_execute_prepared_port(&lp->port, &net, prep, err, sizeof err)) {
        fail_msg("logged run: %s", err);
    }
    dlasim_destroy(dev);
}

/* The address-list entry the network's last operation writes its output to. */
static int16_t last_output_entry(const struct dlc_step *s)
{
    const struct dlasim_rt_op *op = &s->ops[s->n_ops - 1];
    switch (op->op_type) {
    case DLASIM_RT_OP_CONV:
        return op->surface.conv.dst_data.address;
    case DLASIM_RT_OP_SDP:
        return op->surface.sdp.dst_data.address;
    default:
        return op->surface.io.dst_data.address;
    }
}

/* Network s of m: rebuilt, recorded and replayed runs make the same
 * accesses; a moved address re-programs the operations that use it.
 * flags: descriptors kept and compared (0) or fixed by the caller. */
static void check_network(struct dlasim_model *m, const char *config, const float *x,
                          const struct dlc_step *s, unsigned flags)
{
    struct dlasim_rt_prepared *prep = dlasim_rt_prepared_new(flags);
    assert_non_null(prep);
    struct logport rebuilt, first, replayed;
    logged_run(m, config, x, s, m->addrs, NULL, &rebuilt);
    logged_run(m, config, x, s, m->addrs, prep, &first);
    uint64_t rep = 0, reb = 0;
    dlasim_rt_prepared_counts(prep, &rep, &reb);
    assert_int_equal(rep, 0);
    assert_int_equal(reb, s->n_ops);
    logged_run(m, config, x, s, m->addrs, prep, &replayed);
    dlasim_rt_prepared_counts(prep, &rep, &reb);
    assert_int_equal(rep, s->n_ops); /* every operation replayed */
    assert_int_equal(reb, s->n_ops);
    assert_same_log(&rebuilt, &first, "rebuilt / recorded");
    assert_same_log(&rebuilt, &replayed, "rebuilt / replayed");
    assert_int_equal(first.writes, rebuilt.writes);
    assert_true(replayed.writes <= rebuilt.writes);
    unsigned per_type[DLASIM_RT_OP_NUM] = {0}, most = 0;
    for (int i = 0; i < s->n_ops; i++) {
        unsigned t = s->ops[i].op_type;
        if (t < DLASIM_RT_OP_NUM && ++per_type[t] > most) {
            most = per_type[t];
        }
    }
    if (most >= 3) { /* a group programmed twice in a run: its second replay writes less */
        assert_true(replayed.writes < rebuilt.writes);
    }

    /* the last operation's output moves by a page: programmed afresh */
    uint64_t *moved = malloc(m->n_addrs * sizeof *moved);
    assert_non_null(moved);
    memcpy(moved, m->addrs, m->n_addrs * sizeof *moved);
    int16_t e = last_output_entry(s);
    assert_true(e >= 0 && e < m->n_addrs);
    moved[e] += 0x100000;
    struct logport moved_rebuilt, moved_prep;
    logged_run(m, config, x, s, moved, NULL, &moved_rebuilt);
    logged_run(m, config, x, s, moved, prep, &moved_prep);
    uint64_t rep2 = 0, reb2 = 0;
    dlasim_rt_prepared_counts(prep, &rep2, &reb2);
    assert_true(reb2 > reb);                     /* the users of entry e */
    assert_int_equal(rep2 + reb2, rep + reb + s->n_ops);
    assert_true(rep2 > rep || s->n_ops == 1);    /* the others replayed */
    assert_same_log(&moved_rebuilt, &moved_prep, "moved address: rebuilt / prepared");
    free(moved);
    if (!flags && s->ops[0].op_type == DLASIM_RT_OP_CONV) {
        /* a descriptor changed in place (its padding value): programmed afresh */
        struct dlc_step changed = *s;
        changed.ops = malloc(s->n_ops * sizeof *changed.ops);
        assert_non_null(changed.ops);
        memcpy(changed.ops, s->ops, s->n_ops * sizeof *changed.ops);
        changed.ops[0].op.conv.pad_val++;
        struct logport changed_rebuilt, changed_prep;
        logged_run(m, config, x, s, m->addrs, prep, &changed_prep); /* the addresses back */
        free(changed_prep.log);
        logged_run(m, config, x, &changed, m->addrs, NULL, &changed_rebuilt);
        dlasim_rt_prepared_counts(prep, &rep, &reb);
        logged_run(m, config, x, &changed, m->addrs, prep, &changed_prep);
        dlasim_rt_prepared_counts(prep, &rep2, &reb2);
        assert_int_equal(reb2, reb + 1);
        assert_int_equal(rep2, rep + s->n_ops - 1);
        assert_same_log(&changed_rebuilt, &changed_prep, "changed descriptor: rebuilt / prepared");
        free(changed_rebuilt.log), free(changed_prep.log);
        free(changed.ops);
    }
    free(rebuilt.log), free(first.log), free(replayed.log);
    free(moved_rebuilt.log), free(moved_prep.log);
    dlasim_rt_prepared_free(prep);
}

/* One prepared form for every network of m in turn, last to first (their
 * operation counts differ: its buffers are reused, grown and left larger
 * than a network needs): each run makes the accesses of a run without one. */
static void check_shared_prepared(struct dlasim_model *m, const char *config, const float *x)
{
    struct dlasim_rt_prepared *prep = dlasim_rt_prepared_new(0);
    assert_non_null(prep);
    for (int i = m->n_steps - 1; i >= 0; i--) {
        const struct dlc_step *s = &m->steps[i];
        if (s->cpu_layer >= 0 || !s->n_ops) {
            continue;
        }
        struct logport alone, shared;
        logged_run(m, config, x, s, m->addrs, NULL, &alone);
        logged_run(m, config, x, s, m->addrs, prep, &shared);
        assert_same_log(&alone, &shared, "one prepared form for every network");
        free(alone.log), free(shared.log);
    }
    dlasim_rt_prepared_free(prep);
}

static void check_model(const char *path, const char *config)
{
    float *x;
    struct dlasim_model *m = compiled(path, config, &x);
    int networks = 0;
    for (int i = 0; i < m->n_steps; i++) {
        struct dlc_step *s = &m->steps[i];
        if (s->cpu_layer >= 0 || !s->n_ops) {
            continue;
        }
        networks++;
        check_network(m, config, x, s, 0);
        check_network(m, config, x, s, DLASIM_RT_PREPARED_FIXED);
    }
    assert_true(networks > 0);
    check_shared_prepared(m, config, x);
    free(x);
    dlasim_model_free(m);
}

/* The model's own runs recorded as NVDLA trace cases (what NVIDIA's
 * testbench replays): the run that builds the programming and the run that
 * replays it, each on a fresh device, record the same files. */
static void recorded_run(struct dlasim_model *m, struct dlasim_dev *dev, const float *x,
                         const char *dir)
{
    float *y = malloc(dlasim_model_output_size(m) * sizeof(float));
    assert_non_null(y);
    struct dlasim_rt_options opt = { .record_trace_dir = dir, .record_trace_name = "fm" };
    char err[512];
    if (dlasim_model_run(m, dev, x, y, &opt, err, sizeof err)) {
        fail_msg("recorded model run: %s", err);
    }
    free(y);
}

static void test_fashion_mnist(void **state)
{
    (void)state;
    check_model("models/fashion_mnist.onnx", "nv_small");
    float *x;
    struct dlasim_model *m = compiled("models/fashion_mnist.onnx", "nv_small", &x);
    char a[] = "/tmp/dlasim-prep-a-XXXXXX", b[] = "/tmp/dlasim-prep-b-XXXXXX";
    assert_non_null(mkdtemp(a));
    assert_non_null(mkdtemp(b));
    /* both devices alive: the model keeps its weights on the device it last
     * loaded, known by its address */
    struct dlasim_dev *da = tdev_new("nv_small", NULL, 0, 1), *db = tdev_new("nv_small", NULL, 0, 1);
    recorded_run(m, da, x, a); /* the first run: programming built */
    uint64_t rep = 0, reb = 0, ops = 0;
    for (int i = 0; i < m->n_steps; i++) {
        dlasim_rt_prepared_counts(m->steps[i].prep, &rep, NULL);
        assert_int_equal(rep, 0);
    }
    recorded_run(m, db, x, b); /* the second: replayed */
    for (int i = 0; i < m->n_steps; i++) {
        dlasim_rt_prepared_counts(m->steps[i].prep, &rep, &reb);
        assert_int_equal(rep, reb);
        ops += rep;
    }
    assert_true(ops > 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "diff -r %s %s > /dev/null && [ -n \"$(ls %s)\" ]", a, b, a);
    assert_int_equal(system(cmd), 0);
    dlasim_destroy(da);
    dlasim_destroy(db);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", a, b);
    assert_int_equal(system(cmd), 0);
    free(x);
    dlasim_model_free(m);
}

static void test_lut_models(void **state)
{
    (void)state;
    check_model("tests/models/op_lrn.onnx", "nv_small");          /* CDP with its LUT */
    check_model("tests/models/op_sigmoid.onnx", "nv_large");      /* SDP with its LUT */
}

static void test_layer_models(void **state)
{
    (void)state;
    check_model("tests/models/op_add_standalone.onnx", "nv_small"); /* SDP element-wise */
    check_model("tests/models/op_add_tensor.onnx", "nv_small");   /* a residual fused */
    check_model("tests/models/op_avgpool.onnx", "nv_small");
    check_model("tests/models/op_concat.onnx", "nv_small");
    check_model("tests/models/op_conv_depthwise.onnx", "nv_small");
}

/* ---- NVIDIA's loadables ------------------------------------------------------------- */

static void logged_loadable(struct dlasim_loadable *ld, const char *config, struct logport *lp,
                            uint8_t **out, size_t *out_len)
{
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 1);
    char err[512];
    logport_init(lp, dev);
    if (dlasim_loadable_run_port(&lp->port, ld, NULL, 0, err, sizeof err)) {
        fail_msg("loadable run: %s", err);
    }
    const uint8_t *d = NULL;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 0, &d, out_len), 0);
    *out = malloc(*out_len);
    assert_non_null(*out);
    memcpy(*out, d, *out_len);
    dlasim_destroy(dev);
}

static void check_loadable(const char *name, const char *config)
{
    char path[512];
    snprintf(path, sizeof path, LOADABLES "%s_fbuf", name);
    size_t len;
    uint8_t *b = tmodel_read(path, &len);
    if (!b) {
        skip(); /* the conformance data is not there */
    }
    struct dlasim_loadable *ld;
    char err[512];
    if (dlasim_loadable_open(b, len, &ld, err, sizeof err)) {
        fail_msg("%s: %s", name, err);
    }
    struct logport first, again;
    uint8_t *o1, *o2;
    size_t n1, n2;
    logged_loadable(ld, config, &first, &o1, &n1);
    logged_loadable(ld, config, &again, &o2, &n2);
    assert_same_log(&first, &again, name);
    assert_int_equal(n1, n2);
    assert_memory_equal(o1, o2, n1);
    free(first.log), free(again.log), free(o1), free(o2);
    dlasim_loadable_close(ld);
    free(b);
}

static void test_loadables(void **state)
{
    (void)state;
    check_loadable("CONV/CONV_D_L0_0_small", "nv_small");
    check_loadable("SDP/SDP_X1_L0_0_small", "nv_small");
    check_loadable("PDP/PDP_L0_0_small", "nv_small");
    check_loadable("CDP/CDP_L0_0_small", "nv_small");
    check_loadable("BDMA/BDMA_L0_0", "nv_large");
    check_loadable("CONV/CONV_D_L0_0_large", "nv_large");
}

/* The entry points with NULL arguments: refused or nothing done, never a crash. */
/* A cube's bytes from its offset, counted in whole lines: surfaces of
 * `per` channels (the test's own count, wider than the compiler's last
 * line). */
static uint64_t cube_span(const struct dlasim_rt_cube *c, unsigned per)
{
    if (!c->surf_stride || !c->line_stride) {
        return c->size;
    }
    uint64_t surfaces = ((uint64_t)c->channel + per - 1) / per;
    return surfaces ? (surfaces - 1) * c->surf_stride + (uint64_t)c->height * c->line_stride : 0;
}

struct span {
    int16_t a;
    uint64_t lo, hi;
    int write;
};

/* What a CONV + SDP pair (ops k, k + 1) reads and writes of memory. */
static int pair_touches(const struct dlasim_rt_op *op, struct span *sp)
{
    const struct dlasim_rt_conv_surface *cs = &op[0].surface.conv;
    const struct dlasim_rt_sdp_surface *ss = &op[1].surface.sdp;
    const struct { const struct dlasim_rt_cube *c; uint64_t len; int write; } t[] = {
        { &cs->src_data, cube_span(&cs->src_data, 8), 0 },
        { &cs->weight_data, cs->weight_data.size, 0 },
        { &ss->x1_data, ss->x1_data.size, 0 },
        { &ss->x2_data, ss->x2_data.size, 0 },
        { &ss->y_data, ss->y_data.size, 0 },
        { &ss->dst_data, cube_span(&ss->dst_data, 8), 1 },
    };
    int n = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (t[i].c->type != DLASIM_RT_MEM_HW && t[i].c->address >= 0) {
            sp[n++] = (struct span){ t[i].c->address, t[i].c->offset, t[i].c->offset + t[i].len,
                                     t[i].write };
        }
    }
    return n;
}

/* Channel blocks of a depthwise convolution are linked to each other by
 * OP_PROGRAMMED (compiler/lower.c link_network: the firmware enables the
 * next in the other register group while one runs), dependent layers by
 * OP_COMPLETED; every OP_PROGRAMMED link joins two CONV + SDP pairs
 * neither of which writes memory the other touches (counted here in whole
 * lines), and the model still runs (firmware.c takes the relaxed graph). */
static void test_pipelined_links(void **state)
{
    (void)state;
    float *x;
    struct dlasim_model *m = compiled("tests/models/tv_mobilenet_v3_small.onnx", "nv_small", &x);
    unsigned programmed = 0, completed = 0;
    for (unsigned si = 0; si < (unsigned)m->n_steps; si++) {
        const struct dlc_step *s = &m->steps[si];
        for (unsigned k = 0; s->cpu_layer < 0 && k < s->n_ops; k++) {
            const struct dlasim_rt_op *op = &s->ops[k];
            const struct dlasim_rt_consumer *next = &op->consumers[DLASIM_RT_OP_CONV];
            if (op->op_type != DLASIM_RT_OP_CONV || next->index < 0) {
                continue;
            }
            if (next->event != DLASIM_RT_EVENT_OP_PROGRAMMED) {
                completed++;
                continue;
            }
            programmed++;
            assert_int_equal(s->ops[k + 1].op_type, DLASIM_RT_OP_SDP);
            assert_int_equal(s->ops[next->index + 1].op_type, DLASIM_RT_OP_SDP);
            /* the SDP chain is relaxed with it */
            assert_int_equal(s->ops[k + 1].consumers[DLASIM_RT_OP_SDP].index, next->index + 1);
            assert_int_equal(s->ops[k + 1].consumers[DLASIM_RT_OP_SDP].event,
                             DLASIM_RT_EVENT_OP_PROGRAMMED);
            struct span a[6], b[6];
            int na = pair_touches(op, a), nb = pair_touches(&s->ops[next->index], b);
            for (int i = 0; i < na; i++) {
                for (int j = 0; j < nb; j++) {
                    if ((a[i].write || b[j].write) && a[i].a == b[j].a && a[i].lo < b[j].hi &&
                        b[j].lo < a[i].hi) {
                        fail_msg("operations %u and %d: linked by OP_PROGRAMMED but entry %d "
                                 "[0x%llx, 0x%llx) meets [0x%llx, 0x%llx)", k, next->index,
                                 a[i].a, (unsigned long long)a[i].lo, (unsigned long long)a[i].hi,
                                 (unsigned long long)b[j].lo, (unsigned long long)b[j].hi);
                    }
                }
            }
        }
    }
    if (programmed == 0 || completed == 0) {
        fail_msg("%u links by OP_PROGRAMMED, %u by OP_COMPLETED", programmed, completed);
    }
    dlasim_destroy(loaded_device(m, "nv_small", x)); /* runs it */
    dlasim_model_free(m);
    free(x);
}

static void test_null_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    assert_int_equal(dlasim_rt_execute_prepared_port(NULL, &net, NULL, err, sizeof err),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "NULL port"));
    uint64_t rep = 7, reb = 7;
    dlasim_rt_prepared_counts(NULL, &rep, &reb);
    assert_int_equal(rep, 0);
    assert_int_equal(reb, 0);
    dlasim_rt_prepared_counts(NULL, NULL, NULL);
    dlasim_rt_prepared_free(NULL);
}

int main(void)
{
    rng = 18;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fashion_mnist),
        cmocka_unit_test(test_lut_models),
        cmocka_unit_test(test_layer_models),
        cmocka_unit_test(test_loadables),
        cmocka_unit_test(test_pipelined_links),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
