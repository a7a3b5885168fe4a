/*
 * libFuzzer target: the ONNX reader and the compiler behind it.  The input
 * is an ONNX model (seeds in tests/fuzz/seeds/onnx: small models of
 * tests/models).  It is decoded (protobuf-c), shaped and, when it loads and
 * stays small (so one input cannot take seconds in the float executor),
 * calibrated on one constant input, compiled for nv_small and run once on a
 * device with a small work budget.  Malformed, truncated or hostile models
 * (bad shapes, dangling inputs, huge dimensions, unknown ops) must give an
 * error, never a crash, hang, sanitizer report or leak.  Built by
 * `make fuzz` (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "compiler/compiler_int.h"
#include "dlasim/compiler.h"
#include "dlasim/dlasim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Elements over all tensors and the largest convolution's MACs (bounds the
 * float executor's time). */
static int small_enough(const struct dlc_graph *g)
{
    int64_t total = 0;
    for (int i = 0; i < g->n_t; i++) {
        total += g->t[i].n;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct dlc_node *nd = &g->nodes[i];
        if (!nd->dead && (nd->op == DLC_OP_CONV || nd->op == DLC_OP_GEMM || nd->op == DLC_OP_MATMUL) &&
            nd->n_in > 1 && nd->in[1] >= 0 && g->t[nd->out].n * (g->t[nd->in[1]].n + 1) > (1 << 22)) {
            return 0;
        }
    }
    return total < (1 << 18);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dlasim_model *m = NULL;
    char err[512];
    if (dlasim_model_load_onnx(data, size, &m, err, sizeof err)) {
        return 0;
    }
    size_t in_n = dlasim_model_input_size(m), out_n = dlasim_model_output_size(m);
    float *x = small_enough(&m->g) ? calloc(in_n, sizeof(float)) : NULL;
    float *y = x ? calloc(out_n ? out_n : 1, sizeof(float)) : NULL;
    if (x && y) {
        for (size_t i = 0; i < in_n; i++) {
            x[i] = (float)(i % 7) * 0.25f - 0.5f;
        }
        if (!dlasim_model_calibrate(m, x, 1, NULL, err, sizeof err) &&
            !dlasim_model_compile(m, "nv_small", err, sizeof err)) {
            struct dlasim_options o = { 0 };
            struct dlasim_dev *dev;
            o.config = "nv_small";
            o.max_layer_work = 1u << 20;
            o.threads = 1;
            if (dlasim_create(&o, &dev, err, sizeof err) == 0) {
                dlasim_model_run(m, dev, x, y, NULL, err, sizeof err);
                dlasim_destroy(dev);
            }
        }
    }
    free(x);
    free(y);
    dlasim_model_free(m);
    return 0;
}
