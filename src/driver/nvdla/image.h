/*
 * Tensor <-> image conversions of nvdla_runtime's test application
 * (ref: nvdla/sw umd/apps/runtime DlaImage.cpp, TestUtils.cpp; facts only).
 */
#ifndef NVRT_IMAGE_H
#define NVRT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Loadable tensor description (loadable.fbs TensorDescListEntry). */
struct nvrt_tensor_layout {
    uint8_t data_type;    /* 1 FLOAT, 2 HALF, 3 INT16, 4 INT8 */
    uint8_t pixel_format; /* 36 FEATURE, 37 FEATURE_X8, else a pixel format */
    int32_t c, h, w;
    uint32_t line_stride, surf_stride; /* stride_1, stride_2 */
    uint64_t size;
};

/* The .dimg file of a tensor's buffer (malloc'd into *out). */
int nvrt_tensor_to_dimg(const uint8_t *buf, const struct nvrt_tensor_layout *t, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen);
/* Fill a tensor buffer (t->size bytes, zeroed) from a .dimg, a PGM (P5) or raw bytes. */
int nvrt_image_to_tensor(const void *data, size_t len, const struct nvrt_tensor_layout *t,
                         uint8_t *buf, char *err, size_t errlen);

#endif
