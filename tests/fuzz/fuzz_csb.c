/*
 * libFuzzer target: arbitrary register programming.  The input is a list of
 * 6-byte records {register index (2 bytes, into the register database),
 * value (4 bytes)} written through the CSB; every 8th record also runs the
 * device.  Whatever is programmed, the device must never crash, hang, read
 * or write outside its memory, or leak; refused layers must still complete.
 * Built by `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/regdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    o.max_layer_work = 1u << 16;
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
        unsigned idx = (unsigned)(data[i] | (data[i + 1] << 8)) % nvdla_reg_count;
        uint32_t v;
        memcpy(&v, data + i + 2, 4);
        dlasim_csb_write(dev, nvdla_regs[idx].addr, v);
        if (n % 8 == 7) {
            for (int k = 0; k < 4 && dlasim_step(dev) != 0; k++) {
            }
        }
    }
    for (int k = 0; k < 4 && dlasim_step(dev) != 0; k++) {
    }
    dlasim_destroy(dev);
    return 0;
}
