/*
 * libFuzzer target: the loadable reader and runner.  The input is a loadable
 * (seeds: two written by dlasim_loadable_write, interface 0.12 and 0.10, in
 * tests/fuzz/seeds/loadable, and NVIDIA's PDP/SDP/CDP regression loadables
 * from the conformance data, which tests/all.sh passes when present).  It is
 * parsed and, when it parses, run on a fresh nv_small device with a small
 * work budget.  Malformed, truncated or hostile loadables (offsets out of the
 * file, cycles in the dependency graph, indexes out of range, sizes that
 * overflow) must give an error, never a crash, hang, sanitizer report or
 * leak.  Built by `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dlasim_loadable *ld;
    char err[512];
    if (dlasim_loadable_open(data, size, &ld, err, sizeof err)) {
        return 0;
    }
    struct dlasim_options o = { 0 };
    struct dlasim_dev *dev;
    o.config = "nv_small";
    o.max_layer_work = 1u << 16;
    o.max_host_mem = 64u << 20; /* far below the 1 GB RSS limit */
    o.threads = 1;
    if (dlasim_create(&o, &dev, err, sizeof err) == 0) {
        dlasim_loadable_run(dev, ld, NULL, 0, NULL, err, sizeof err);
        dlasim_destroy(dev);
    }
    dlasim_loadable_close(ld);
    return 0;
}
