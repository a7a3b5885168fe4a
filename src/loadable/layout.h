/*
 * A parsed loadable's lists, read-only (loadable.c): for programs that lay
 * the loadable out in memory themselves, as NVIDIA's runtime does (the UAPI
 * client test, tests/uapi/nvdla_umd_client.c).  Indexes are checked by the
 * parser; the accessors return DLASIM_ERR_INVAL for an index out of range.
 */
#ifndef NVRT_LOADABLE_LAYOUT_H
#define NVRT_LOADABLE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/runtime.h"

struct nvrt_ld_memory {
    uint16_t flags; /* 1 ALLOC, 2 SET, 4 INPUT, 8 OUTPUT */
    uint8_t domain; /* 0 SYSTEM, 1 SRAM */
    uint64_t size;
    uint32_t n_contents;
    uint16_t bind_id, tensor_desc_id;
};

struct nvrt_ld_counts {
    uint32_t memories, addresses, tasks, submits, tensors;
};
void nvrt_ld_counts(const struct dlasim_loadable *ld, struct nvrt_ld_counts *c);
int nvrt_ld_memory(const struct dlasim_loadable *ld, uint32_t i, struct nvrt_ld_memory *m);
/* Content k of memory i: the blob's bytes and where they land in the memory. */
int nvrt_ld_memory_content(const struct dlasim_loadable *ld, uint32_t i, uint32_t k,
                           const uint8_t **data, uint32_t *len, uint64_t *offset);
int nvrt_ld_address(const struct dlasim_loadable *ld, uint32_t i, uint16_t *mem_id,
                    uint64_t *offset);
/* Task t: interface (1 DLA1, 2 EMU1), its address list (address_list ids),
 * and the firmware interface minor its network descriptor's blob carries. */
int nvrt_ld_task(const struct dlasim_loadable *ld, uint32_t t, uint32_t *interface,
                 const uint16_t **addr_ids, uint32_t *n, uint8_t *minor);
int nvrt_ld_submit(const struct dlasim_loadable *ld, uint32_t s, const uint16_t **task_ids,
                   uint32_t *n);
/* Size and offset of tensor_desc i; the .dimg of tensor_desc i read from
 * its bytes (tensor: size bytes, the tensor's first byte first). */
int nvrt_ld_tensor(const struct dlasim_loadable *ld, uint32_t i, uint64_t *size,
                   uint64_t *offset);
int nvrt_ld_dimg_of(const struct dlasim_loadable *ld, uint32_t tensor_desc, const uint8_t *tensor,
                    uint8_t **dimg, size_t *len, char *err, size_t errlen);

#endif
