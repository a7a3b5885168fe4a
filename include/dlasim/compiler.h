/*
 * dlasim ONNX compiler: read an ONNX model, calibrate it for INT8 on a
 * calibration set, lower it to NVDLA hardware layers for a configuration
 * (CONV+SDP, PDP, ... through the firmware-equivalent executor of
 * dlasim/runtime.h; what the configuration cannot do runs on the host CPU),
 * and run it on a simulated device.  Batch 1, one input, one output.
 *
 * Typical use:
 *   dlasim_model_load_onnx(buf, len, &m, err, sizeof err);
 *   dlasim_model_calibrate(m, calib, n, &copt, err, sizeof err);
 *   dlasim_model_compile(m, "nv_small", err, sizeof err);
 *   dlasim_model_run(m, dev, input, output, NULL, err, sizeof err);
 * Nothing here prints: reports are returned as strings.
 *
 * Pointer arguments: `err` may be NULL (no message); every other pointer is
 * required unless a comment says otherwise.  A NULL where one is required is
 * refused with DLASIM_ERR_INVAL and "FUNCTION: ARG is NULL" in err; functions
 * without a status return 0 / NULL for a NULL model, and dlasim_model_free and
 * dlasim_model_stats_begin do nothing.  `opt` of calibrate and run may be NULL
 * (defaults).
 */
#ifndef DLASIM_COMPILER_H
#define DLASIM_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

struct dlasim_model;

/* Read and check an ONNX model (opsets 11-17); BatchNormalization after a
 * Conv is folded.  0 or a negative status with err naming the node/tensor. */
int dlasim_model_load_onnx(const void *buf, size_t len, struct dlasim_model **out, char *err,
                           size_t errlen);
void dlasim_model_free(struct dlasim_model *m);

/* Input / output element counts and the input's shape (NCHW). */
size_t dlasim_model_input_size(const struct dlasim_model *m);
size_t dlasim_model_output_size(const struct dlasim_model *m);
int dlasim_model_input_shape(const struct dlasim_model *m, int64_t dims[6]); /* returns rank */

/* The model in float32 (the reference). */
int dlasim_model_run_float(const struct dlasim_model *m, const float *input, float *output,
                           char *err, size_t errlen);

enum dlasim_calib_method {
    DLASIM_CALIB_MINMAX = 0,     /* largest |x| seen */
    DLASIM_CALIB_PERCENTILE = 1, /* the given percentile of |x| */
    DLASIM_CALIB_ENTROPY = 2     /* KL-divergence threshold over a 2048-bin histogram */
};
struct dlasim_calib_options {
    enum dlasim_calib_method method;
    double percentile; /* for PERCENTILE, e.g. 99.99 */
    /* Bounds (0: none).  max_host_mem: float tensors alive at once in one
     * calibration run (tensors are freed once read, so this is the live
     * set, not the sum); max_work: one node's float multiply-adds per input.
     * Beyond either, DLASIM_ERR_NOMEM / DLASIM_ERR_UNSUPPORTED naming the
     * node.  The CLI passes --max-mem and --max-work. */
    uint64_t max_host_mem;
    uint64_t max_work;
};

/* Post-training quantization: per-tensor activation ranges from `count`
 * inputs (each dlasim_model_input_size floats, consecutive).  A NaN or
 * infinite value in an input or in any tensor the model computes from it
 * is an error naming the input and the tensor (never an ignored range). */
int dlasim_model_calibrate(struct dlasim_model *m, const float *inputs, size_t count,
                           const struct dlasim_calib_options *opt, char *err, size_t errlen);

/* Lower the calibrated model to hardware layers of a configuration
 * ("nv_small", "nv_small_256", "nv_large"). */
int dlasim_model_compile(struct dlasim_model *m, const char *config, char *err, size_t errlen);
/* The same for a configuration with scalability-parameter overrides
 * ("NVDLA_CBUF_BANK_NUMBER=2", as dlasim_options.overrides): the layers are
 * planned for that device. */
int dlasim_model_compile_set(struct dlasim_model *m, const char *config,
                             const char *const *overrides, size_t n_overrides, char *err,
                             size_t errlen);

/* Compile report: one line per layer, engine or CPU and why. (malloc'ed) */
char *dlasim_model_compile_report(const struct dlasim_model *m);

/* Run one input on a device of the compiled configuration.  The weights
 * are written into the device's memory unless this model's previous run
 * on this device left them there and nothing has called dlasim_mem_write
 * on the device since (so models may take turns on one device, and a new
 * device at a destroyed one's address gets them; a write the hardware
 * itself makes outside the model's surfaces is not noticed).  output
 * receives dlasim_model_output_size floats (dequantized; in float when the
 * last layer runs on the host CPU). */
int dlasim_model_run(struct dlasim_model *m, struct dlasim_dev *dev, const float *input,
                     float *output, const struct dlasim_rt_options *opt, char *err,
                     size_t errlen);

/* Per-layer statistics: after dlasim_model_stats_begin, the next max_runs
 * (0 = all) dlasim_model_run calls also run the float model and accumulate, per layer,
 * saturated outputs and the SQNR of the dequantized INT8 output against
 * float.  The table (scales, shifts, saturation, SQNR) is returned
 * malloc'ed by dlasim_model_layer_report. */
void dlasim_model_stats_begin(struct dlasim_model *m, unsigned max_runs);
char *dlasim_model_layer_report(const struct dlasim_model *m);

/* Precision flags (also appended to the compile and layer reports): every
 * layer whose bias dominates its input step (a channel the inputs move by
 * less than one output step: its INT8 output is constant, set by the bias;
 * known at compile time), and, once statistics were gathered
 * (dlasim_model_stats_begin), every layer whose INT8 output is constant in
 * channels where the float output varies or whose SQNR against float is
 * below the threshold, each line naming the layer, its node, and the likely
 * cause.  malloc'ed; NULL when no layer is flagged. */
char *dlasim_model_precision_flags(const struct dlasim_model *m);
/* The SQNR threshold of the flags in dB (default 20; 0..200, else
 * DLASIM_ERR_INVAL). */
int dlasim_model_set_min_sqnr(struct dlasim_model *m, double db);

/* The compiled model as an NVDLA loadable (.nvdla, loadable.fbs): one DLA
 * task per hardware network; refused when a layer runs on the host CPU
 * (the loadable format carries only softmax as a CPU task).  *out is
 * malloc'ed. */
int dlasim_model_write_loadable(const struct dlasim_model *m, uint8_t **out, size_t *len,
                                char *err, size_t errlen);

/* Float value of one int8 step of the model's output (0 when the output is
 * computed on the host CPU in float). */
float dlasim_model_output_scale(const struct dlasim_model *m);

/* Multiply-accumulates of one inference on the hardware layers. */
uint64_t dlasim_model_macs(const struct dlasim_model *m);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
