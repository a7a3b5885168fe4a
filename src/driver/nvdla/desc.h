/*
 * NVDLA firmware descriptors: sizes and decoders (desc.c).  Decoders read
 * exactly the given container size; callers check the bytes are there.
 */
#ifndef NVRT_DESC_H
#define NVRT_DESC_H

#include <stdint.h>

#include "dlasim/runtime.h"

#define NVRT_NETWORK_DESC_SIZE 40u /* struct dla_network_desc */
#define NVRT_DEP_SIZE 36u          /* struct dla_common_op_desc */
#define NVRT_OP_DESC_SIZE 116u     /* union dla_operation_container */
#define NVRT_SURFACE_DESC_SIZE 644u /* union dla_surface_container */
#define NVRT_LUT_SIZE 700u         /* struct dla_lut_param, the largest */
_Static_assert(NVRT_LUT_SIZE >= NVRT_SURFACE_DESC_SIZE, "LUT is the largest descriptor");

struct nvrt_network_desc {
    int16_t operation_desc_index, surface_desc_index, dependency_graph_index, lut_data_index;
    int16_t roi_array_index, surface_index, stat_list_index;
    int16_t op_head[DLASIM_RT_OP_NUM];
    uint16_t num_rois, num_operations, num_luts, num_addresses;
    int16_t input_layer;
    uint8_t dynamic_roi;
};

void nvrt_decode_network(const uint8_t *p, struct nvrt_network_desc *n);
void nvrt_decode_dep(const uint8_t *p, struct dlasim_rt_op *op);
void nvrt_decode_op(const uint8_t *p, struct dlasim_rt_op *op);       /* needs op_type */
void nvrt_decode_surface(const uint8_t *p, int v12, struct dlasim_rt_op *op); /* needs op_type */
void nvrt_decode_lut(const uint8_t *p, struct dlasim_rt_lut *l);

/* Encoders (the same layouts; buffers zeroed by the caller; v12 selects the
 * 32-byte data cube of interface 0.12). */
void nvrt_encode_network(uint8_t *p, const struct nvrt_network_desc *n);
void nvrt_encode_dep(uint8_t *p, uint16_t index, const struct dlasim_rt_op *op);
void nvrt_encode_op(uint8_t *p, const struct dlasim_rt_op *op);
void nvrt_encode_surface(uint8_t *p, int v12, const struct dlasim_rt_op *op);
void nvrt_encode_lut(uint8_t *p, const struct dlasim_rt_lut *l);

#endif
