/*
 * libFuzzer target: arbitrary register programming.  The input is one byte
 * choosing the configuration (nv_small, nv_small_256, nv_large), then a list
 * of 6-byte records {register index (2 bytes, little-endian, into the
 * register database), value (4 bytes)} written through the CSB; index 0xffff
 * runs the device instead, and so does every 8th record.  Whatever is
 * programmed, the device must never crash, hang, read or write outside its
 * memory, leak, or take more host memory than its budgets allow (work per
 * layer, host memory for device memory); refused layers must still complete.
 * Seeds converted from NVDLA's conformance traces (tools/fuzz/trace2csb.py)
 * start it from valid programming of every engine.
 * Built by `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/regdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RUN_RECORD 0xffffu

static void run_some(struct dlasim_dev *dev)
{
    for (int k = 0; k < 4 && dlasim_step(dev) != 0; k++) {
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const configs[] = {"nv_small", "nv_small_256", "nv_large"};
    struct dlasim_options o = {0};
    struct dlasim_dev *dev;
    char err[256];
    static uint8_t page[4096];
    if (size < 1) {
        return 0;
    }
    o.config = configs[data[0] % 3];
    /* enough for the small conformance layers, small enough to stay fast
     * and far below the 1 GB RSS limit */
    o.max_layer_work = 1u << 22;
    o.max_host_mem = 64u << 20;
    o.threads = 1;
    o.timing = (data[0] / 3) & 1; /* the cycle model on every other input */
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        return 0;
    }
    /* some non-zero memory where layers are likely to point */
    for (size_t i = 0; i < sizeof(page); i++) {
        page[i] = (uint8_t)(i * 131u + 7u);
    }
    dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x0, page, sizeof(page));
    dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x80000000u, page, sizeof(page));
    size_t n = 0;
    for (size_t i = 1; i + 6 <= size; i += 6, n++) {
        unsigned raw = (unsigned)(data[i] | (data[i + 1] << 8));
        uint32_t v;
        memcpy(&v, data + i + 2, 4);
        if (raw == RUN_RECORD) {
            run_some(dev);
            continue;
        }
        dlasim_csb_write(dev, nvdla_regs[raw % nvdla_reg_count].addr, v);
        if (n % 8 == 7) {
            run_some(dev);
        }
    }
    run_some(dev);
    dlasim_destroy(dev);
    return 0;
}
