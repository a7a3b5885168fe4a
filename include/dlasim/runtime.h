/*
 * dlasim runtime: a firmware-equivalent executor for NVDLA hardware layers
 * and a runner for NVDLA loadables (the .nvdla flatbuffers NVIDIA's compiler
 * writes).
 *
 * The executor takes a network in the form of NVDLA's firmware interface
 * (nvdla/sw kmd/firmware/include/dla_interface.h, interface 0.12 field
 * names): operation descriptors with their surface descriptors, a dependency
 * graph (consumers, fused parent, dependency counts), LUTs and an address
 * list, and programs the device as NVIDIA's firmware does: both register
 * groups filled ahead (ping-pong), consumer-before-producer enables, fused
 * CONV->SDP->PDP, LUT programming and sharing, completion by GLB interrupt
 * bits.  It reaches the device only through a port (src/driver/port.h);
 * the functions here use the simulator port, optionally wrapped by the
 * trace-recording port.
 */
#ifndef DLASIM_RUNTIME_H
#define DLASIM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

/* ---- the firmware interface, host form --------------------------------------- */

enum dlasim_rt_op_type {
    DLASIM_RT_OP_BDMA = 0,
    DLASIM_RT_OP_CONV = 1,
    DLASIM_RT_OP_SDP = 2,
    DLASIM_RT_OP_PDP = 3,
    DLASIM_RT_OP_CDP = 4,
    DLASIM_RT_OP_RUBIK = 5,
    DLASIM_RT_OP_NUM = 6
};

enum dlasim_rt_mem_type { DLASIM_RT_MEM_MC = 0, DLASIM_RT_MEM_CV = 1, DLASIM_RT_MEM_HW = 2 };

enum dlasim_rt_event {
    DLASIM_RT_EVENT_OP_COMPLETED = 1,
    DLASIM_RT_EVENT_OP_PROGRAMMED = 2,
    DLASIM_RT_EVENT_OP_ENABLED = 3,
    DLASIM_RT_EVENT_CDMA_WT_DONE = 4,
    DLASIM_RT_EVENT_CDMA_DT_DONE = 5
};

enum dlasim_rt_precision { DLASIM_RT_INT8 = 0, DLASIM_RT_INT16 = 1, DLASIM_RT_FP16 = 2 };

/* A data cube: address is an index into the address list (-1 = none). */
struct dlasim_rt_cube {
    uint16_t type;   /* enum dlasim_rt_mem_type */
    int16_t address; /* address list index */
    uint32_t offset; /* bytes added to the address (interface 0.12; 0 before) */
    uint32_t size;
    uint16_t width, height, channel;
    uint32_t line_stride, surf_stride, plane_stride;
};

struct dlasim_rt_cvt {
    int16_t scale;
    uint8_t truncate, enable;
    int32_t offset;
};

struct dlasim_rt_conv_op {
    uint8_t conv_mode, data_reuse, weight_reuse, skip_data_rls, skip_weight_rls;
    uint16_t entry_per_slice;
    uint8_t data_format, pixel_mapping;
    uint16_t fetch_grain;
    uint8_t batch, weight_format, data_bank, weight_bank;
    uint32_t batch_stride;
    uint8_t post_extension, pixel_override;
    uint16_t release;
    uint16_t input_width_csc, input_height_csc, input_channel_csc;
    uint16_t kernel_width_csc, kernel_height_csc, kernel_channel_csc;
    uint16_t input_width_cmac, input_height_cmac;
    uint32_t bytes_per_kernel;
    int16_t mean_ry, mean_gu, mean_bv, mean_ax;
    uint8_t mean_format, conv_stride_x, conv_stride_y;
    uint8_t pad_x_left, pad_x_right, pad_y_top, pad_y_bottom, dilation_x, dilation_y;
    uint8_t pra_truncate, in_precision, out_precision;
    int16_t pad_val;
    struct dlasim_rt_cvt in_cvt, out_cvt;
};
struct dlasim_rt_conv_surface {
    struct dlasim_rt_cube weight_data, wmb_data, wgs_data, src_data, dst_data;
    int64_t offset_u;
    uint32_t in_line_uv_stride;
};

enum dlasim_rt_sdp_op_type { DLASIM_RT_SDP_NONE = 0, DLASIM_RT_SDP_MUL, DLASIM_RT_SDP_ADD,
                             DLASIM_RT_SDP_BOTH };
enum dlasim_rt_sdp_mode { DLASIM_RT_SDP_PER_LAYER = 0, DLASIM_RT_SDP_PER_KERNEL,
                          DLASIM_RT_SDP_PER_POINT };
enum dlasim_rt_act { DLASIM_RT_ACT_NONE = 0, DLASIM_RT_ACT_RELU, DLASIM_RT_ACT_LUT,
                     DLASIM_RT_ACT_PRELU };
struct dlasim_rt_sdp_stage {
    uint8_t enable, alu_type, type, mode, act, shift_value, truncate, precision;
    int32_t alu_operand, mul_operand;
    struct dlasim_rt_cvt alu_cvt, mul_cvt;
};
struct dlasim_rt_sdp_op {
    uint8_t src_precision, dst_precision;
    int16_t lut_index;
    struct dlasim_rt_cvt out_cvt;
    uint8_t conv_mode, batch_num;
    uint32_t batch_stride;
    struct dlasim_rt_sdp_stage x1_op, x2_op, y_op;
};
struct dlasim_rt_sdp_surface {
    struct dlasim_rt_cube src_data, x1_data, x2_data, y_data, dst_data;
};

struct dlasim_rt_pdp_op {
    uint16_t partial_in_width_first, partial_in_width_mid, partial_in_width_last;
    uint16_t partial_width_first, partial_width_mid, partial_width_last;
    uint8_t split_num, pool_mode, pool_width, pool_height, stride_x, stride_y;
    uint8_t pad_left, pad_right, pad_top, pad_bottom, precision;
    int32_t padding_value[7];
};
struct dlasim_rt_cdp_op {
    uint8_t in_precision, out_precision;
    int16_t lut_index;
    struct dlasim_rt_cvt in_cvt, out_cvt;
    uint8_t local_size, bypass_sqsum, bypass_out_mul;
};
/* PDP, CDP and RUBIK surfaces */
struct dlasim_rt_io_surface {
    struct dlasim_rt_cube src_data, dst_data;
};

#define DLASIM_RT_BDMA_MAX_TRANSFERS 20
struct dlasim_rt_bdma_transfer {
    int16_t source_address, destination_address;
    uint32_t line_size, line_repeat, source_line, destination_line;
    uint32_t surface_repeat, source_surface, destination_surface;
};
struct dlasim_rt_bdma_surface {
    uint8_t source_type, destination_type;
    uint16_t num_transfers;
    struct dlasim_rt_bdma_transfer transfers[DLASIM_RT_BDMA_MAX_TRANSFERS];
};
struct dlasim_rt_rubik_op {
    uint8_t mode, precision, stride_x, stride_y;
};

struct dlasim_rt_lut {
    int16_t linear_exp_table[65];
    int16_t linear_only_table[257];
    int8_t linear_exp_offset;  /* exp_offset or frac_bits, by method */
    int8_t linear_only_offset; /* frac_bits */
    uint64_t linear_exp_start, linear_exp_end, linear_only_start, linear_only_end;
    /* slopes: scale (int16) and shifter (int8) */
    int16_t le_uflow_scale, le_oflow_scale, lo_uflow_scale, lo_oflow_scale;
    int8_t le_uflow_shift, le_oflow_shift, lo_uflow_shift, lo_oflow_shift;
    uint8_t hybrid_priority, underflow_priority, overflow_priority, method;
};

struct dlasim_rt_consumer {
    int16_t index; /* operation index, -1 = none */
    uint8_t event; /* enum dlasim_rt_event */
};

/* One hardware operation: common descriptor (dependency graph) + op + surface. */
struct dlasim_rt_op {
    uint8_t op_type;          /* enum dlasim_rt_op_type */
    uint8_t dependency_count; /* events to wait for before enabling */
    struct dlasim_rt_consumer consumers[DLASIM_RT_OP_NUM]; /* next op of each type */
    struct dlasim_rt_consumer fused_parent;
    union {
        struct dlasim_rt_conv_op conv;
        struct dlasim_rt_sdp_op sdp;
        struct dlasim_rt_pdp_op pdp;
        struct dlasim_rt_cdp_op cdp;
        struct dlasim_rt_rubik_op rubik;
        uint16_t bdma_num_transfers;
    } op;
    union {
        struct dlasim_rt_conv_surface conv;
        struct dlasim_rt_sdp_surface sdp;
        struct dlasim_rt_io_surface io; /* pdp, cdp, rubik */
        struct dlasim_rt_bdma_surface bdma;
    } surface;
};

struct dlasim_rt_network {
    const struct dlasim_rt_op *ops;
    uint16_t num_ops;
    int16_t op_head[DLASIM_RT_OP_NUM]; /* first op of each type, -1 = none */
    const struct dlasim_rt_lut *luts;
    uint16_t num_luts;
    const uint64_t *addresses; /* device addresses (the task's address list) */
    uint16_t num_addresses;
};

struct dlasim_rt_options {
    /* non-NULL: record the run as a replayable NVDLA trace case in this folder
     * (see docs/library.md, "Recording traces"); the folder is created if needed */
    const char *record_trace_dir;
    const char *record_trace_name; /* case name (default: the folder's name) */
    /* non-NULL: the network's programming kept in a prepared form (below) and
     * replayed on later runs instead of being rebuilt; NULL: rebuilt each run */
    struct dlasim_rt_prepared *prepared;
};

/* The prepared form of a network's programming (issue 18, docs/library.md
 * "Prepared programming"): the first run of a network records, per
 * operation, the register writes (and status reads, interrupt unmasking,
 * surface marks) its programming made; a later run replays them in the same
 * order instead of decoding the descriptors again.  An operation is replayed
 * only when everything its programming depended on is unchanged: its
 * descriptor (byte for byte), the address-list entries and LUT it used, the
 * register group it was given, the device's atom size and data types, and
 * the status it read; otherwise it is programmed afresh and recorded again.
 * So a replayed run writes the same registers with the same values in the
 * same order as a rebuilt one.  One prepared form per network (a form given
 * another network re-records every operation); not shared between threads. */
struct dlasim_rt_prepared;
/* flags: 0, or DLASIM_RT_PREPARED_FIXED when the caller keeps the network's
 * operation descriptors and LUTs unchanged while the form is used (a
 * compiled model does): they are then not kept and compared, only the
 * address-list entries, groups and status reads are.  NULL when out of
 * host memory. */
#define DLASIM_RT_PREPARED_FIXED 1u
struct dlasim_rt_prepared *dlasim_rt_prepared_new(unsigned flags);
void dlasim_rt_prepared_free(struct dlasim_rt_prepared *p);
/* Operations programmed from the prepared form / afresh since it was made. */
void dlasim_rt_prepared_counts(const struct dlasim_rt_prepared *p, uint64_t *replayed,
                               uint64_t *rebuilt);

/* Pointer arguments of the functions below: `dev`, `net`, `ld`, `out`, `d`,
 * `data`, `len` and `list_index` are required (NULL: DLASIM_ERR_INVAL with a
 * message in err where there is one); `opt` and `err` may be NULL; `inputs`
 * may be NULL only when n_inputs is 0.  dlasim_loadable_close(NULL) and
 * dlasim_rt_encoded_free(NULL) do nothing; the counts of a NULL loadable are 0. */

/* Run one network on the device through the firmware-equivalent executor.
 * Returns 0 or a negative status; err says which operation/descriptor/field. */
int dlasim_rt_execute(struct dlasim_dev *dev, const struct dlasim_rt_network *net,
                      const struct dlasim_rt_options *opt, char *err, size_t errlen);

/* ---- one task as NVIDIA's firmware receives it --------------------------------- */

/* A DLA task whose descriptors are already in device memory, as NVIDIA's
 * kernel driver hands it to the firmware (nvdla/sw kmd: dla_execute_task
 * with the task's address list).  addresses[i] is the device address of
 * address-list entry i (the KMD: the buffer's DMA address + offset); the
 * network descriptor is at entry 0 and names the entries holding the
 * operation, surface, dependency-graph and LUT lists.  sizes[i] bounds the
 * bytes readable from addresses[i] (descriptor reads beyond it are refused);
 * sizes may be NULL (then unbounded).  The descriptors are read in the
 * layout of firmware interface 0.interface_minor: 10 and 11 (28-byte data
 * cubes) or 12 (32-byte, nvdla/sw HEAD).  0 = auto: the 0.12 layout, or the
 * older one when the descriptors read as 0.12 do not validate (a data cube
 * type, index or size out of range) and read as 0.11 do. */
struct dlasim_rt_task {
    const uint64_t *addresses;
    const uint64_t *sizes;
    uint16_t num_addresses;
    uint8_t interface_minor;
};

/* Read the task's network from device memory, check it against the
 * configuration, run it to completion (blocking).  Returns 0 or a negative
 * status; err names the descriptor, operation or field. */
int dlasim_rt_run_task(struct dlasim_dev *dev, const struct dlasim_rt_task *task,
                       const struct dlasim_rt_options *opt, char *err, size_t errlen);

/* ---- the same on a device of the caller's (dlasim/port.h) ---------------------- */

struct nvrt_port;
struct dlasim_loadable;
struct dlasim_loadable_input;
/* As dlasim_rt_execute, dlasim_rt_run_task and dlasim_loadable_run, on a
 * port the caller implements (docs/runtime-port.md); `port` is required. */
int dlasim_rt_execute_port(const struct nvrt_port *port, const struct dlasim_rt_network *net,
                           char *err, size_t errlen);
/* dlasim_rt_execute_port with a prepared form (NULL: none) */
int dlasim_rt_execute_prepared_port(const struct nvrt_port *port,
                                    const struct dlasim_rt_network *net,
                                    struct dlasim_rt_prepared *prepared, char *err,
                                    size_t errlen);
int dlasim_rt_run_task_port(const struct nvrt_port *port, const struct dlasim_rt_task *task,
                            char *err, size_t errlen);
int dlasim_loadable_run_port(const struct nvrt_port *port, struct dlasim_loadable *ld,
                             const struct dlasim_loadable_input *inputs, unsigned n_inputs,
                             char *err, size_t errlen);

/* ---- NVDLA loadables -------------------------------------------------------- */

struct dlasim_loadable;

/* Parse and validate a loadable held in memory (the buffer is copied). */
int dlasim_loadable_open(const void *buf, size_t len, struct dlasim_loadable **out, char *err,
                         size_t errlen);
void dlasim_loadable_close(struct dlasim_loadable *ld);
/* Bindable tensors. */
unsigned dlasim_loadable_num_inputs(const struct dlasim_loadable *ld);
unsigned dlasim_loadable_num_outputs(const struct dlasim_loadable *ld);

/* An input for bindable input tensor `index`: a .dimg, a PGM/JPEG image or
 * raw bytes, recognised by content. */
struct dlasim_loadable_input {
    const void *data;
    size_t len;
};

/* Run every submit of the loadable on the device (one device per run:
 * memories are allocated in its memory).  Outputs are kept for
 * dlasim_loadable_output_dimg. */
int dlasim_loadable_run(struct dlasim_dev *dev, struct dlasim_loadable *ld,
                        const struct dlasim_loadable_input *inputs, unsigned n_inputs,
                        const struct dlasim_rt_options *opt, char *err, size_t errlen);
/* Output tensor `index` as nvdla_runtime's .dimg file bytes (owned by ld). */
int dlasim_loadable_output_dimg(const struct dlasim_loadable *ld, unsigned index,
                                const uint8_t **data, size_t *len);

/* ---- writing loadables -------------------------------------------------------- */

/* Host form of the loadable.fbs tables (nvdla/sw umd/core/src/common/
 * loadable.fbs); field meanings as in the schema. */
struct dlasim_loadable_blob_desc {
    const char *name;
    const void *data;
    uint64_t size;
    uint32_t interface;     /* 0 NONE, 1 DLA1, 2 EMU1 */
    uint32_t sub_interface; /* descriptor kind (NVIDIA's compiler: 1 network, 2 dependency
                             * graph, 3 operations, 4 surfaces, 5 LUTs, 0 data) */
    uint8_t version[3];     /* interface version, e.g. {0, 12, 0} */
};
struct dlasim_loadable_memory_desc {
    uint16_t id;
    uint8_t domain;         /* 0 SYSTEM, 1 SRAM */
    uint16_t flags;         /* 1 ALLOC, 2 SET, 4 INPUT, 8 OUTPUT */
    uint64_t size;
    uint32_t alignment;
    const char *const *contents; /* blob names (SET) */
    const uint64_t *offsets;     /* where each lands in the memory */
    size_t n_contents;
    uint16_t bind_id, tensor_desc_id;
};
struct dlasim_loadable_address_desc {
    uint16_t id, mem_id;
    uint64_t offset, size;
};
struct dlasim_loadable_task_desc {
    uint16_t id;
    uint32_t interface; /* 1 DLA1, 2 EMU1 */
    int16_t instance;
    const uint16_t *address_list;
    size_t n_addresses;
    const uint16_t *pre_actions, *post_actions;
    size_t n_pre_actions, n_post_actions;
};
struct dlasim_loadable_event_desc {
    uint16_t id;
    uint8_t type;
    uint16_t target;
    uint32_t val;
    uint8_t op;
};
struct dlasim_loadable_submit_desc {
    uint16_t id;
    const uint16_t *task_ids;
    size_t n_tasks;
};
struct dlasim_loadable_tensor_desc {
    const char *name;
    uint16_t id, mem_id;
    uint64_t size, offset;
    uint8_t data_format, data_type, data_category, pixel_format, pixel_mapping;
    int32_t n, c, h, w;
    uint32_t stride[8];
};
struct dlasim_loadable_desc {
    uint8_t version[3]; /* loadable format version; NVIDIA's schema says 0.7.0 */
    const struct dlasim_loadable_task_desc *tasks;
    size_t n_tasks;
    const struct dlasim_loadable_memory_desc *memories;
    size_t n_memories;
    const struct dlasim_loadable_address_desc *addresses;
    size_t n_addresses;
    const struct dlasim_loadable_event_desc *events;
    size_t n_events;
    const struct dlasim_loadable_blob_desc *blobs;
    size_t n_blobs;
    const struct dlasim_loadable_tensor_desc *tensors;
    size_t n_tensors;
    const struct dlasim_loadable_submit_desc *submits;
    size_t n_submits;
};

/* Serialise a loadable (malloc'd *out, the caller frees). */
int dlasim_loadable_write(const struct dlasim_loadable_desc *d, uint8_t **out, size_t *len,
                          char *err, size_t errlen);

/* The firmware descriptor blobs of a network, in interface version 0.minor
 * (10, 11: 28-byte data cubes; 12: 32-byte).  list_index: the address-list
 * indexes where the operation, surface, dependency-graph and LUT lists will
 * be (the network descriptor itself must be at index 0). */
struct dlasim_rt_encoded {
    uint8_t *network, *ops, *surfaces, *deps, *luts;
    size_t network_size, ops_size, surfaces_size, deps_size, luts_size;
};
int dlasim_rt_encode(const struct dlasim_rt_network *net, unsigned minor,
                     const int16_t list_index[4], struct dlasim_rt_encoded *out, char *err,
                     size_t errlen);
void dlasim_rt_encoded_free(struct dlasim_rt_encoded *e);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
