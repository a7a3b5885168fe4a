/*
 * libFuzzer target: arbitrary bytes as a trace.  Parsing must never crash,
 * hang or leak; a trace that parses is played on a fresh nv_small device with
 * a bounded wait, so the device and engines see arbitrary register
 * programming too.  Built by `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "dlasim/trace.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keep memory traffic of one input small so the fuzzer stays fast. */
static int small_enough(const struct dlasim_trace *t)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < t->n; i++) {
        bytes += t->cmds[i].mem_size;
    }
    return bytes <= (4u << 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dlasim_trace *t;
    char err[512];
    if (dlasim_trace_parse_text((const char *)data, size, "fuzz.cfg", "/nonexistent", &t, err,
                                sizeof(err))) {
        return 0;
    }
    struct dlasim_dev *dev;
    struct dlasim_options opt = {0};
    opt.max_layer_work = 1u << 20; /* keep every layer fast */
    opt.max_host_mem = 64u << 20; /* and far below the 1 GB RSS limit */
    opt.threads = 1;
    opt.timing = (int)(size & 1); /* the timed player on every other input */
    if (small_enough(t) && !dlasim_create(&opt, &dev, err, sizeof(err))) {
        struct dlasim_trace_play_options o = {0};
        o.max_layers_per_wait = 4;
        dlasim_trace_play(dev, t, &o, NULL, err, sizeof(err));
        dlasim_destroy(dev);
    }
    dlasim_trace_free(t);
    return 0;
}
