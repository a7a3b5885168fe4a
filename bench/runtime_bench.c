/*
 * `make bench`, runtime part: the two numbers issue 8 asks for.
 *
 *  1. Overhead of the runtime over the device: 100 small SDP layers (8x8x32
 *     int8, X1 adds a per-layer value, ReLU, memory to memory) run through
 *     the firmware-equivalent executor (dlasim_rt_execute: ping-pong groups,
 *     pointer reads, interrupt handling, dependency bookkeeping) against the
 *     same layers programmed directly through the CSB (the registers of each
 *     layer, enable, run, acknowledge).  Both outputs must be identical.
 *     Target: runtime < 2x direct.
 *  2. `dlasim loadable` on each regression loadable, whole process (fork,
 *     exec, parse, run, dump): target < 50 ms.
 *
 * usage: runtime_bench DLASIM_CLI LOADABLES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"
#include "dlasim/regs/nvdla_regs.h" /* installed with the public headers */

#define LAYERS 100
#define W 8
#define H 8
#define C 32
#define ATOM 8
#define IN_ADDR 0x80000000ull
#define OUT_ADDR 0x81000000ull
#define OUT_STEP 0x1000ull
#define REPS 7

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static struct dlasim_dev *device(void)
{
    struct dlasim_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    struct dlasim_dev *dev;
    char err[256];
    if (dlasim_create(&o, &dev, err, sizeof err)) {
        fprintf(stderr, "runtime_bench: %s\n", err);
        exit(1);
    }
    static int8_t in[W * H * C];
    for (size_t i = 0; i < sizeof in; i++) {
        in[i] = (int8_t)(i * 37u + 11u);
    }
    dlasim_mem_write(dev, DLASIM_PORT_DBB, IN_ADDR, in, sizeof in);
    return dev;
}

/* ---- the runtime path --------------------------------------------------------- */

static struct dlasim_rt_cube cube(int16_t addr)
{
    struct dlasim_rt_cube c;
    memset(&c, 0, sizeof c);
    c.address = addr;
    c.width = W, c.height = H, c.channel = C;
    c.line_stride = W * ATOM;
    c.surf_stride = W * H * ATOM;
    c.size = c.surf_stride * (C / ATOM);
    return c;
}

static void build_network(struct dlasim_rt_op *ops, uint64_t *addrs, struct dlasim_rt_network *net)
{
    for (int i = 0; i < LAYERS; i++) {
        struct dlasim_rt_op *op = &ops[i];
        memset(op, 0, sizeof *op);
        for (int k = 0; k < DLASIM_RT_OP_NUM; k++) {
            op->consumers[k].index = -1;
        }
        op->fused_parent.index = -1;
        op->consumers[DLASIM_RT_OP_SDP].index = (int16_t)(i + 1 < LAYERS ? i + 1 : -1);
        op->consumers[DLASIM_RT_OP_SDP].event = DLASIM_RT_EVENT_OP_COMPLETED;
        op->op_type = DLASIM_RT_OP_SDP;
        op->dependency_count = i > 0; /* each layer waits for the previous one */
        struct dlasim_rt_sdp_op *s = &op->op.sdp;
        s->lut_index = -1;
        s->batch_num = 1;
        s->out_cvt.scale = 1;
        s->x1_op.enable = 1;
        s->x1_op.type = DLASIM_RT_SDP_ADD;
        s->x1_op.mode = DLASIM_RT_SDP_PER_LAYER;
        s->x1_op.act = DLASIM_RT_ACT_RELU;
        s->x1_op.alu_operand = i;
        op->surface.sdp.src_data = cube(0);
        op->surface.sdp.dst_data = cube((int16_t)(1 + i));
        op->surface.sdp.x1_data.address = op->surface.sdp.x2_data.address = -1;
        op->surface.sdp.y_data.address = -1;
        addrs[1 + i] = OUT_ADDR + (uint64_t)i * OUT_STEP;
    }
    addrs[0] = IN_ADDR;
    memset(net, 0, sizeof *net);
    net->ops = ops;
    net->num_ops = LAYERS;
    for (int k = 0; k < DLASIM_RT_OP_NUM; k++) {
        net->op_head[k] = k == DLASIM_RT_OP_SDP ? 0 : -1;
    }
    net->addresses = addrs;
    net->num_addresses = LAYERS + 1;
}

static double run_runtime(uint8_t *out)
{
    static struct dlasim_rt_op ops[LAYERS];
    static uint64_t addrs[LAYERS + 1];
    struct dlasim_rt_network net;
    build_network(ops, addrs, &net);
    struct dlasim_dev *dev = device();
    char err[512];
    double t0 = now();
    int rc = dlasim_rt_execute(dev, &net, NULL, err, sizeof err);
    double t = now() - t0;
    if (rc) {
        fprintf(stderr, "runtime_bench: runtime: %s\n", err);
        exit(1);
    }
    dlasim_mem_read(dev, DLASIM_PORT_DBB, OUT_ADDR, out, LAYERS * OUT_STEP);
    dlasim_destroy(dev);
    return t;
}

/* ---- the same layers, programmed directly --------------------------------------- */

static void wr(struct dlasim_dev *dev, uint32_t a, uint32_t v)
{
    if (dlasim_csb_write(dev, a, v)) {
        fprintf(stderr, "runtime_bench: CSB write 0x%x: %s\n", a, dlasim_last_error(dev));
        exit(1);
    }
}

static void direct_layer(struct dlasim_dev *dev, int i)
{
    uint32_t g = (uint32_t)(i & 1), line = W * ATOM, surf = W * H * ATOM;
    uint64_t dst = OUT_ADDR + (uint64_t)i * OUT_STEP;
    wr(dev, NVDLA_SDP_S_POINTER_0, NVDLA_SDP_S_POINTER_0_PRODUCER(g));
    wr(dev, NVDLA_SDP_RDMA_S_POINTER_0, NVDLA_SDP_RDMA_S_POINTER_0_PRODUCER(g));
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, W - 1);
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, H - 1);
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, C - 1);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_LOW_0, (uint32_t)IN_ADDR);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_LINE_STRIDE_0, line);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_SURFACE_STRIDE_0, surf);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0, NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE_MC);
    wr(dev, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DISABLE(1));
    wr(dev, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, NVDLA_SDP_RDMA_D_NRDMA_CFG_0_NRDMA_DISABLE(1));
    wr(dev, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, NVDLA_SDP_RDMA_D_ERDMA_CFG_0_ERDMA_DISABLE(1));
    wr(dev, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, 0);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, W - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, H - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, C - 1);
    wr(dev, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)dst);
    wr(dev, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_SDP_D_DST_LINE_STRIDE_0, line);
    wr(dev, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, surf);
    wr(dev, NVDLA_SDP_D_DP_BS_CFG_0, NVDLA_SDP_D_DP_BS_CFG_0_BS_MUL_BYPASS(1));
    wr(dev, NVDLA_SDP_D_DP_BS_ALU_CFG_0, NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC(
                                             NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC_REG));
    wr(dev, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE_0, (uint32_t)i);
    wr(dev, NVDLA_SDP_D_DP_BN_CFG_0, NVDLA_SDP_D_DP_BN_CFG_0_BN_BYPASS(1) |
                                         NVDLA_SDP_D_DP_BN_CFG_0_BN_ALU_BYPASS(1) |
                                         NVDLA_SDP_D_DP_BN_CFG_0_BN_MUL_BYPASS(1) |
                                         NVDLA_SDP_D_DP_BN_CFG_0_BN_RELU_BYPASS(1));
    wr(dev, NVDLA_SDP_D_DP_EW_CFG_0, NVDLA_SDP_D_DP_EW_CFG_0_EW_BYPASS(1) |
                                         NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_BYPASS(1) |
                                         NVDLA_SDP_D_DP_EW_CFG_0_EW_MUL_BYPASS(1) |
                                         NVDLA_SDP_D_DP_EW_CFG_0_EW_LUT_BYPASS(1));
    wr(dev, NVDLA_SDP_D_FEATURE_MODE_CFG_0, 0);
    wr(dev, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(dev, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    wr(dev, NVDLA_SDP_D_CVT_OFFSET_0, 0);
    wr(dev, NVDLA_SDP_D_CVT_SCALE_0, 1);
    wr(dev, NVDLA_SDP_D_CVT_SHIFT_0, 0);
    wr(dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_D_OP_ENABLE_0, 1);
    if (dlasim_run(dev)) {
        fprintf(stderr, "runtime_bench: direct layer %d: %s\n", i, dlasim_last_error(dev));
        exit(1);
    }
    uint32_t st = 0;
    dlasim_csb_read(dev, NVDLA_GLB_S_INTR_STATUS_0, &st);
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, st);
}

static double run_direct(uint8_t *out)
{
    struct dlasim_dev *dev = device();
    double t0 = now();
    for (int i = 0; i < LAYERS; i++) {
        direct_layer(dev, i);
    }
    double t = now() - t0;
    dlasim_mem_read(dev, DLASIM_PORT_DBB, OUT_ADDR, out, LAYERS * OUT_STEP);
    dlasim_destroy(dev);
    return t;
}

/* ---- whole-process dlasim loadable ------------------------------------------------ */

static double run_process(const char *cli, const char *config, const char *file)
{
    fflush(stdout); /* the child must not flush our buffered output */
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) {
            _exit(126);
        }
        execl(cli, cli, "loadable", "--config", config, file, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    double t = now() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "runtime_bench: %s loadable %s failed\n", cli, file);
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: runtime_bench DLASIM_CLI LOADABLES_DIR\n");
        return 2;
    }
    static uint8_t a[LAYERS * OUT_STEP], b[LAYERS * OUT_STEP];
    double tr[REPS], td[REPS];
    for (int r = 0; r < REPS; r++) {
        tr[r] = run_runtime(a);
        td[r] = run_direct(b);
    }
    if (memcmp(a, b, sizeof a)) {
        fprintf(stderr, "runtime_bench: runtime and direct outputs differ\n");
        return 1;
    }
    qsort(tr, REPS, sizeof tr[0], cmp_double);
    qsort(td, REPS, sizeof td[0], cmp_double);
    double ratio = tr[REPS / 2] / td[REPS / 2];
    int ok = ratio < 2.0;
    printf("runtime overhead: %d SDP layers (8x8x32): runtime %.2f ms, direct CSB %.2f ms "
           "(medians of %d), ratio %.2f  [%s: target < 2x]\n",
           LAYERS, tr[REPS / 2] * 1e3, td[REPS / 2] * 1e3, REPS, ratio, ok ? "ok" : "OVER");
    static const char *const names[4] = { "CONV/CONV_D_L0_0", "SDP/SDP_X1_L0_0", "PDP/PDP_L0_0",
                                          "CDP/CDP_L0_0" };
    static const char *const sizes[2] = { "small", "large" };
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 4; k++) {
            char file[1024], config[16];
            snprintf(file, sizeof file, "%s/flatbufs/kmd/%s_%s_fbuf", argv[2], names[k], sizes[s]);
            snprintf(config, sizeof config, "nv_%s", sizes[s]);
            double t[REPS];
            for (int r = 0; r < REPS; r++) {
                t[r] = run_process(argv[1], config, file);
            }
            qsort(t, REPS, sizeof t[0], cmp_double);
            int fast = t[REPS / 2] < 0.050;
            ok &= fast;
            printf("dlasim loadable %-24s on %-8s: %6.1f ms whole process (median of %d)  "
                   "[%s: target < 50 ms]\n",
                   strrchr(names[k], '/') + 1, config, t[REPS / 2] * 1e3, REPS,
                   fast ? "ok" : "OVER");
        }
    }
    return ok ? 0 : 1;
}
