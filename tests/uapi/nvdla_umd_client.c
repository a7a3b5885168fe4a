/*
 * A client of the NVDLA DRM UAPI that issues exactly the calls NVIDIA's
 * user-mode driver issues, in its order (nvdla/sw umd/port/linux/nvdla.c
 * and umd/core/src/runtime/Runtime.cpp, facts only), to run one loadable:
 *
 *   open("/dev/dri/renderD128", O_RDWR)                 at the first allocation
 *   per memory to allocate (non-bindable ALLOC memories, then the bound
 *   output buffers the test application allocates):
 *     GEM_CREATE(size), PRIME_HANDLE_TO_FD(handle, DRM_CLOEXEC),
 *     GEM_MMAP(handle), mmap(size, RW, MAP_SHARED, drm fd, offset),
 *     SET contents copied in through the mapping; outputs zero-filled
 *   per task of every submit: SUBMIT(one task: address list of
 *     {prime fd, offset})
 *   output tensor 0 dumped as .dimg from the mapping
 *   GEM_DESTROY per buffer (the application's output buffers first), close
 *
 * The sequence is checked against the one NVIDIA's nvdla_runtime made
 * through the shim (tests/uapi/CONV_D_L0_0_small.calls).
 *
 * Run it with LD_PRELOAD=libdlasim-nvdla.so: nothing here executes the
 * network; dlasim's loadable parser is used only to lay the buffers out.
 *   usage: nvdla_umd_client LOADABLE OUT.dimg      run, dump output 0
 *          nvdla_umd_client --interface LOADABLE   print the descriptors'
 *                                                  interface (0.10 .. 0.12)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlasim/runtime.h"
#include "loadable/layout.h"
#include "uapi/nvdla_drm.h"

#define MEM_ALLOC 1u
#define MEM_SET 2u
#define MEM_BOUND (4u | 8u)
#define MEM_OUTPUT 8u

struct buffer {
    uint32_t handle;
    int prime_fd;
    uint8_t *map;
    uint64_t size;
};

struct client {
    const struct dlasim_loadable *ld;
    struct nvrt_ld_counts n;
    int drm_fd;
    struct buffer *bufs; /* per memory_list entry; size 0 = none */
};

static int fail(const char *what, unsigned i)
{
    fprintf(stderr, "nvdla_umd_client: %s (%u): %s\n", what, i, strerror(errno));
    return 1;
}

/* NvDlaAllocMem: GEM_CREATE, PRIME_HANDLE_TO_FD, GEM_MMAP, mmap. */
static int alloc_mem(struct client *c, uint32_t i, uint64_t size)
{
    struct buffer *b = &c->bufs[i];
    if (c->drm_fd < 0) { /* NvDlaOpen, at the first allocation */
        c->drm_fd = open(NVDLA_UAPI_DEVICE_NODE, O_RDWR);
        if (c->drm_fd < 0) {
            return fail("open " NVDLA_UAPI_DEVICE_NODE, 0);
        }
    }
    struct nvdla_uapi_gem_create_args create = { 0, 0, size };
    if (ioctl(c->drm_fd, NVDLA_UAPI_IOCTL_GEM_CREATE, &create)) {
        return fail("GEM_CREATE of memory", i);
    }
    struct nvdla_uapi_prime_handle prime = { create.handle, O_CLOEXEC, -1 };
    if (ioctl(c->drm_fd, NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD, &prime)) {
        return fail("PRIME_HANDLE_TO_FD of memory", i);
    }
    struct nvdla_uapi_gem_map_offset_args map = { create.handle, 0, 0 };
    if (ioctl(c->drm_fd, NVDLA_UAPI_IOCTL_GEM_MMAP, &map)) {
        return fail("GEM_MMAP of memory", i);
    }
    void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, c->drm_fd,
                   (off_t)map.offset);
    if (p == MAP_FAILED) {
        return fail("mmap of memory", i);
    }
    *b = (struct buffer){ create.handle, prime.fd, p, size };
    return 0;
}

/* Runtime::loadMemory: non-bindable ALLOC memories, SET contents copied in. */
static int load_memories(struct client *c)
{
    for (uint32_t i = 0; i < c->n.memories; i++) {
        struct nvrt_ld_memory m;
        nvrt_ld_memory(c->ld, i, &m);
        if (!(m.flags & MEM_ALLOC) || (m.flags & MEM_BOUND)) {
            continue;
        }
        if (m.domain != 0) {
            fprintf(stderr, "nvdla_umd_client: memory %u is SRAM; this client allocates "
                            "system memory only\n", i);
            return 1;
        }
        if (alloc_mem(c, i, m.size)) {
            return 1;
        }
        for (uint32_t k = 0; (m.flags & MEM_SET) && k < m.n_contents; k++) {
            const uint8_t *data;
            uint32_t len;
            uint64_t off;
            nvrt_ld_memory_content(c->ld, i, k, &data, &len, &off);
            if (off > m.size || len > m.size - off) {
                fprintf(stderr, "nvdla_umd_client: memory %u content %u overflows it\n", i, k);
                return 1;
            }
            memcpy(c->bufs[i].map + off, data, len);
        }
    }
    return 0;
}

/* The test application's output buffers: the tensor's size, zero-filled. */
static int bind_outputs(struct client *c)
{
    for (uint32_t i = 0; i < c->n.memories; i++) {
        struct nvrt_ld_memory m;
        uint64_t size, offset;
        nvrt_ld_memory(c->ld, i, &m);
        if (!(m.flags & MEM_BOUND)) {
            continue;
        }
        if (!(m.flags & MEM_OUTPUT) || nvrt_ld_tensor(c->ld, m.tensor_desc_id, &size, &offset)) {
            fprintf(stderr, "nvdla_umd_client: memory %u: bound input or no tensor; the "
                            "regression loadables bind outputs only\n", i);
            return 1;
        }
        if (alloc_mem(c, i, size)) {
            return 1;
        }
        memset(c->bufs[i].map, 0, (size_t)size);
    }
    return 0;
}

/* Runtime::submitInternal + NvDlaSubmit: one SUBMIT per DLA task. */
static int submit_task(struct client *c, uint32_t t)
{
    uint32_t interface, n;
    const uint16_t *ids;
    uint8_t minor;
    nvrt_ld_task(c->ld, t, &interface, &ids, &n, &minor);
    if (interface != 1) {
        fprintf(stderr, "nvdla_umd_client: task %u is not a DLA task\n", t);
        return 1;
    }
    struct nvdla_uapi_mem_handle *list = calloc(n ? n : 1, sizeof *list);
    if (!list) {
        return 1;
    }
    for (uint32_t j = 0; j < n; j++) {
        uint16_t mem_id;
        uint64_t offset;
        nvrt_ld_address(c->ld, ids[j], &mem_id, &offset);
        list[j].handle = (uint32_t)c->bufs[mem_id].prime_fd;
        list[j].offset = offset;
    }
    struct nvdla_uapi_submit_task task = { n, 0xffffffffu, (uintptr_t)list };
    struct nvdla_uapi_submit_args args = { (uintptr_t)&task, 1, 0, 0 };
    int rc = ioctl(c->drm_fd, NVDLA_UAPI_IOCTL_SUBMIT, &args);
    free(list);
    return rc ? fail("SUBMIT of task", t) : 0;
}

static int submit_all(struct client *c)
{
    for (uint32_t s = 0; s < c->n.submits; s++) {
        const uint16_t *tasks;
        uint32_t n;
        nvrt_ld_submit(c->ld, s, &tasks, &n);
        for (uint32_t k = 0; k < n; k++) {
            if (submit_task(c, tasks[k])) {
                return 1;
            }
        }
    }
    return 0;
}

static int dump_output0(const struct client *c, const char *path)
{
    for (uint32_t i = 0; i < c->n.memories; i++) {
        struct nvrt_ld_memory m;
        nvrt_ld_memory(c->ld, i, &m);
        if (!(m.flags & MEM_OUTPUT) || m.bind_id != 0) {
            continue;
        }
        uint8_t *dimg;
        size_t len;
        char err[256];
        /* the bound buffer is the tensor (the application's allocation) */
        if (nvrt_ld_dimg_of(c->ld, m.tensor_desc_id, c->bufs[i].map, &dimg, &len, err,
                            sizeof err)) {
            fprintf(stderr, "nvdla_umd_client: output 0: %s\n", err);
            return 1;
        }
        FILE *f = fopen(path, "wb");
        int rc = !f || fwrite(dimg, 1, len, f) != len;
        rc |= f && fclose(f) != 0;
        free(dimg);
        return rc ? fail("writing the output", 0) : 0;
    }
    fprintf(stderr, "nvdla_umd_client: no output tensor 0\n");
    return 1;
}

/* Runtime teardown: the application frees its bound buffers first, then the
 * runtime unloads the loadable's memories (NvDlaFreeMem: GEM_DESTROY; the
 * UMD neither unmaps nor closes the prime fd); then NvDlaClose. */
static int destroy(struct client *c, uint32_t i)
{
    struct nvdla_uapi_gem_destroy_args d = { c->bufs[i].handle };
    return ioctl(c->drm_fd, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d) ? fail("GEM_DESTROY of memory", i)
                                                              : 0;
}

static int release(struct client *c)
{
    int rc = 0;
    for (int bound = 1; bound >= 0; bound--) {
        for (uint32_t i = 0; i < c->n.memories; i++) {
            struct nvrt_ld_memory m;
            nvrt_ld_memory(c->ld, i, &m);
            if (c->bufs[i].size && ((m.flags & MEM_BOUND) != 0) == bound) {
                rc |= destroy(c, i);
            }
        }
    }
    if (c->drm_fd >= 0 && close(c->drm_fd)) {
        rc = fail("close", 0);
    }
    return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
    }
    if (f) {
        fclose(f);
    }
    *len = n > 0 ? (size_t)n : 0;
    return buf;
}

/* The interface minor of the first DLA task's descriptors. */
static int print_interface(const struct dlasim_loadable *ld, const struct nvrt_ld_counts *n)
{
    for (uint32_t t = 0; t < n->tasks; t++) {
        uint32_t interface, count;
        const uint16_t *ids;
        uint8_t minor;
        if (nvrt_ld_task(ld, t, &interface, &ids, &count, &minor) == 0 && interface == 1) {
            printf("0.%u\n", minor);
            return 0;
        }
    }
    fprintf(stderr, "nvdla_umd_client: no DLA task\n");
    return 1;
}

int main(int argc, char **argv)
{
    int info = argc == 3 && strcmp(argv[1], "--interface") == 0;
    if (argc != 3) {
        fprintf(stderr, "usage: nvdla_umd_client LOADABLE OUT.dimg | --interface LOADABLE\n");
        return 2;
    }
    size_t len;
    uint8_t *file = read_file(argv[info ? 2 : 1], &len);
    struct dlasim_loadable *ld = NULL;
    char err[512];
    if (!file || dlasim_loadable_open(file, len, &ld, err, sizeof err)) {
        fprintf(stderr, "nvdla_umd_client: %s: %s\n", argv[info ? 2 : 1],
                file ? err : "cannot read");
        free(file);
        return 1;
    }
    free(file);
    struct client c = { ld, { 0 }, -1, NULL };
    nvrt_ld_counts(ld, &c.n);
    int rc;
    if (info) {
        rc = print_interface(ld, &c.n);
    } else {
        c.bufs = calloc(c.n.memories ? c.n.memories : 1, sizeof *c.bufs);
        rc = !c.bufs || load_memories(&c) || bind_outputs(&c) || submit_all(&c) ||
             dump_output0(&c, argv[2]);
        rc |= release(&c);
        free(c.bufs);
    }
    dlasim_loadable_close(ld);
    return rc;
}
