/*
 * libFuzzer target: random RK3588 regcmd lists through the PC.
 *
 * Input: a 4-byte header {core, task_number, REGISTER_AMOUNTS, flags} and
 * then 64-bit regcmd entries.  The entries are placed after one valid
 * convolution task built with the public regcmd API (so the fuzzer starts
 * from programming that runs), in a 16 KiB memory the test owns; the list is
 * kicked as linux rocket does and the device is stepped up to STEPS times
 * (each step runs one task and may fetch the next).  Whatever the list holds, the device must never crash, hang,
 * touch memory outside the 16 KiB (the callbacks refuse it, the model must
 * cope) or leak.  The memory is small on purpose: a REGISTER_AMOUNTS of up to
 * 65536 makes the PC fetch whatever lies after the list until memory ends,
 * for every task of a chain the list itself may lengthen, so the memory size
 * bounds the work of one input (with 1 MiB, and later 64 KiB, of patterned
 * memory the fetch loop took most of the fuzzer's time and the corpus drifted
 * to such inputs).  After the list the memory is zero (padding entries), as a
 * driver's buffer would be; the data area holds a pattern.  Built by `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_SIZE (16u << 10)
#define CMD_ADDR 0x400u
#define CMD_MAX (DATA_ADDR - CMD_ADDR)
#define DATA_ADDR 0x2000u
/* Steps per kick: chains of up to 16 tasks; more only repeated the fetch
 * loop (64 steps: about half the fuzzer's time in pc_fill). */
#define STEPS 16

static uint8_t mem[MEM_SIZE];

static int mem_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    (void)opaque;
    if (addr > MEM_SIZE || len > MEM_SIZE - addr) {
        return DLASIM_ERR_MEM;
    }
    memcpy(dst, mem + addr, len);
    return 0;
}

static int mem_write(void *opaque, uint64_t addr, const void *src, size_t len)
{
    (void)opaque;
    if (addr > MEM_SIZE || len > MEM_SIZE - addr) {
        return DLASIM_ERR_MEM;
    }
    memcpy(mem + addr, src, len);
    return 0;
}

/* One small valid conv task (input, weights and output from DATA_ADDR on). */
static size_t seed_task(uint8_t *cmd, size_t cap, uint8_t shape)
{
    struct dlasim_rk_regcmd l = {0};
    struct dlasim_rk_conv cv = {0};
    cv.in_w = 1u + (shape & 7u);
    cv.in_h = 1u + ((shape >> 3) & 3u);
    cv.in_c = 16;
    cv.kernels = 8;
    cv.k_w = cv.k_h = 1;
    cv.stride_x = cv.stride_y = 1;
    cv.out_w = cv.in_w;
    cv.out_h = cv.in_h;
    cv.depthwise = (shape >> 5) & 1u;
    cv.input = DATA_ADDR;
    cv.weights = DATA_ADDR + 0x400;
    cv.output = DATA_ADDR + 0x1000;
    cv.out_int32 = (shape >> 6) & 1u;
    cv.cvt_scale = 1;
    cv.to_memory = 1;
    size_t n = 0;
    if (!dlasim_rk_emit_conv(&l, &cv, NULL) && dlasim_rk_layout_size(&l) <= cap &&
        !dlasim_rk_layout(&l, CMD_ADDR, cmd, cap)) {
        n = dlasim_rk_layout_size(&l);
    }
    dlasim_rk_regcmd_free(&l);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct dlasim_mem_ops ops = {mem_read, mem_write};
    if (size < 4) {
        return 0;
    }
    memset(mem, 0, DATA_ADDR);
    for (size_t i = DATA_ADDR; i < MEM_SIZE; i++) {
        mem[i] = (uint8_t)(i * 131u + 7u);
    }
    size_t n = seed_task(mem + CMD_ADDR, CMD_MAX, data[3]);
    size_t extra = size - 4 < CMD_MAX - n ? size - 4 : CMD_MAX - n;
    memcpy(mem + CMD_ADDR + n, data + 4, extra);
    struct dlasim_options o = {0};
    struct dlasim_dev *dev;
    char err[256];
    o.config = "rk3588";
    o.dbb_ops = &ops;
    o.max_layer_work = 1u << 16;
    o.threads = 1;
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        return 0;
    }
    unsigned core = data[0] % DLASIM_RK_CORES;
    unsigned tasks = 1u + data[1] % STEPS;
    size_t count = (n + extra) / 8;
    if (data[2] & 1) {
        count = 2u * (1u + data[2]); /* a REGISTER_AMOUNTS that disagrees with the list */
    }
    dlasim_rk_kick(dev, core, CMD_ADDR, count ? count : 1, tasks, 0x1ffff);
    for (int k = 0; k < STEPS && dlasim_step(dev) != 0; k++) {
    }
    /* a second kick on another core, reusing whatever the list left */
    dlasim_rk_kick(dev, (core + 1) % DLASIM_RK_CORES, CMD_ADDR, 8, tasks, 0x300);
    for (int k = 0; k < STEPS && dlasim_step(dev) != 0; k++) {
    }
    dlasim_destroy(dev);
    return 0;
}
