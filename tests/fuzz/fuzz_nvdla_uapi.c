/*
 * libFuzzer target: the NVDLA DRM UAPI decoder (src/uapi/nvdla_drm.c) as a
 * hostile client drives it.  The input is a list of records, each starting
 * with a byte choosing the call (value % 9):
 *   0 GEM_CREATE  size (3 bytes)                 -> the next of 16 slots
 *   1 GEM_MMAP    slot; the client maps the buffer (mmap of the memfd the
 *                 decoder names for the returned offset)
 *   2 GEM_DESTROY slot (>= 16: a raw handle)
 *   3 PRIME_HANDLE_TO_FD slot, flags (bit 0 CLOEXEC, 1 RDWR, 7 a bad flag)
 *   4 write       slot, offset (2), length (1), bytes: into the client's
 *                 mapping (the descriptors a client places)
 *   5 SUBMIT      num_tasks (1), num_addresses (2), n (1), then n entries
 *                 {fd selector (1): < 16 a slot's PRIME fd, else a raw fd
 *                 number; offset (2)}, repeated over the whole address list
 *   6 raw ioctl   request (4), 16 argument bytes
 *   7 mmap lookup offset (5), length (2)
 *   8 canned      interface minor (1): six buffers holding a valid PDP
 *                 network (descriptors from dlasim_rt_encode) and its input,
 *                 mapped and exported, for later records to corrupt and
 *                 submit
 * Whatever the calls, the decoder must answer with errno, never crash, read
 * outside the client's buffers, leak or hang; a failed task leaves a device
 * that runs the next.  Built by `make fuzz` (clang -fsanitize=fuzzer); its
 * seeds (tests/fuzz/seeds/nvdla_uapi) replay in every test build.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlasim/runtime.h"
#include "../common/rtop.h"
#include "uapi/nvdla_drm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 16
#define PAGE 4096u

struct slot {
    uint32_t handle;
    uint64_t size; /* page-rounded; 0 = empty */
    uint8_t *map;
    int fd;        /* PRIME fd, -1 = none */
};

struct state {
    void *file;
    struct slot s[SLOTS];
    unsigned next;
    struct nvdla_uapi_mem_handle list[NVDLA_UAPI_MAX_BUFFERS_PER_TASK + 1];
};

struct in {
    const uint8_t *p;
    size_t n;
};

static unsigned take(struct in *in, unsigned bytes)
{
    unsigned v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--) {
        v |= (unsigned)*in->p << (8 * i);
    }
    return v;
}

static struct slot *slot_of(struct state *st, unsigned sel)
{
    return sel < SLOTS && st->s[sel].size ? &st->s[sel] : NULL;
}

static void do_create(struct state *st, uint64_t size)
{
    struct nvdla_uapi_gem_create_args c = { 0, 0, size };
    if (nvdla_drm_ioctl(st->file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c) == 0) {
        struct slot *s = &st->s[st->next++ % SLOTS];
        if (s->map) {
            munmap(s->map, (size_t)s->size);
        }
        if (s->fd >= 0) {
            close(s->fd);
        }
        *s = (struct slot){ c.handle, (size + PAGE - 1) / PAGE * PAGE, NULL, -1 };
    }
}

static void do_mmap(struct state *st, unsigned sel)
{
    struct slot *s = slot_of(st, sel);
    struct nvdla_uapi_gem_map_offset_args m = { s ? s->handle : sel, 0, 0 };
    int memfd;
    off_t off;
    if (nvdla_drm_ioctl(st->file, NVDLA_UAPI_IOCTL_GEM_MMAP, &m) == 0 && s && !s->map &&
        nvdla_drm_mmap_lookup(st->file, m.offset, (size_t)s->size, &memfd, &off) == 0) {
        void *p = mmap(NULL, (size_t)s->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, off);
        s->map = p == MAP_FAILED ? NULL : p;
    }
}

static void do_destroy(struct state *st, unsigned sel)
{
    struct slot *s = slot_of(st, sel);
    struct nvdla_uapi_gem_destroy_args d = { s ? s->handle : sel };
    nvdla_drm_ioctl(st->file, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d);
}

static void do_prime(struct state *st, unsigned sel, unsigned flags)
{
    struct slot *s = slot_of(st, sel);
    uint32_t f = ((flags & 1) ? O_CLOEXEC : 0) | ((flags & 2) ? O_RDWR : 0) | ((flags & 128) ? 4 : 0);
    struct nvdla_uapi_prime_handle p = { s ? s->handle : sel, f, -1 };
    if (nvdla_drm_ioctl(st->file, NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD, &p) == 0) {
        if (s && s->fd < 0) {
            s->fd = p.fd;
        } else {
            close(p.fd);
        }
    }
}

static void do_write(struct state *st, struct in *in)
{
    struct slot *s = slot_of(st, take(in, 1));
    unsigned off = take(in, 2), len = take(in, 1);
    len = len < in->n ? len : (unsigned)in->n;
    if (s && s->map && off + len <= s->size) {
        memcpy(s->map + off, in->p, len);
    }
    in->p += len;
    in->n -= len;
}

static uint32_t fd_of(const struct state *st, unsigned sel)
{
    if (sel < SLOTS) {
        return st->s[sel].size && st->s[sel].fd >= 0 ? (uint32_t)st->s[sel].fd : 0xffffffffu;
    }
    return sel * 37u; /* raw fd numbers: mostly closed, some the process's own */
}

static void do_submit(struct state *st, struct in *in)
{
    unsigned num_tasks = take(in, 1), num = take(in, 2), n = take(in, 1);
    struct nvdla_uapi_mem_handle entries[256];
    for (unsigned i = 0; i < n; i++) {
        unsigned sel = take(in, 1);
        entries[i] = (struct nvdla_uapi_mem_handle){ fd_of(st, sel), 0, take(in, 2) };
    }
    num = num % (NVDLA_UAPI_MAX_BUFFERS_PER_TASK + 2);
    for (unsigned i = 0; i < num; i++) { /* default: slot i's buffer at offset 0 */
        st->list[i] = n ? entries[i % n]
                        : (struct nvdla_uapi_mem_handle){ fd_of(st, i % SLOTS), 0, 0 };
    }
    struct nvdla_uapi_submit_task tasks[4];
    for (int i = 0; i < 4; i++) {
        tasks[i] = (struct nvdla_uapi_submit_task){ num, 0xffffffffu,
                                                    num_tasks & 0x80 ? 0 : (uintptr_t)st->list };
    }
    struct nvdla_uapi_submit_args a = { num_tasks & 0x40 ? 0 : (uintptr_t)tasks,
                                        (uint16_t)(num_tasks & 3), 0, 0 };
    nvdla_drm_ioctl(st->file, NVDLA_UAPI_IOCTL_SUBMIT, &a);
}

/* A valid PDP max pooling network (the unit test's) in slots 0-5. */
static void do_canned(struct state *st, unsigned minor)
{
    struct dlasim_rt_op op;
    const struct dlasim_rt_cube src = { 0, 4, 0, 2048, 8, 8, 32, 64, 512, 0 };
    const struct dlasim_rt_cube dst = { 0, 5, 0, 512, 4, 4, 32, 32, 128, 0 };
    rtop_maxpool2x2(&op, &src, &dst);
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    net.ops = &op;
    net.num_ops = 1;
    const int16_t heads[DLASIM_RT_OP_NUM] = { -1, -1, -1, 0, -1, -1 };
    memcpy(net.op_head, heads, sizeof heads);
    net.num_addresses = 6;
    const int16_t lists[4] = { 1, 2, 3, -1 };
    struct dlasim_rt_encoded enc;
    if (dlasim_rt_encode(&net, 10 + minor % 3, lists, &enc, NULL, 0)) {
        return;
    }
    const void *blob[4] = { enc.network, enc.ops, enc.surfaces, enc.deps };
    const size_t len[4] = { enc.network_size, enc.ops_size, enc.surfaces_size, enc.deps_size };
    st->next = 0;
    for (unsigned i = 0; i < 6; i++) {
        do_create(st, PAGE);
        do_mmap(st, i);
        do_prime(st, i, 1);
        if (i < 4 && st->s[i].map && len[i] <= PAGE) {
            memcpy(st->s[i].map, blob[i], len[i]);
        } else if (st->s[i].map) {
            memset(st->s[i].map, (int)(i * 29u + 3u), PAGE);
        }
    }
    dlasim_rt_encoded_free(&enc);
}

static void do_raw_ioctl(struct state *st, struct in *in)
{
    unsigned long req = take(in, 4);
    uint8_t arg[64] = { 0 };
    for (int i = 0; i < 16; i++) {
        arg[i] = (uint8_t)take(in, 1);
    }
    /* a known request reads its own struct from arg (at most 16 bytes);
     * SUBMIT's tasks pointer is zeroed: a random one is not a client's */
    if (req == NVDLA_UAPI_IOCTL_SUBMIT) {
        memset(arg, 0, 8);
    }
    int rc = nvdla_drm_ioctl(st->file, req, arg);
    if (rc == 0 && req == NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD) {
        close(((struct nvdla_uapi_prime_handle *)(void *)arg)->fd);
    }
}

static void do_lookup(struct state *st, struct in *in)
{
    uint64_t off = take(in, 4) | ((uint64_t)take(in, 1) << 32);
    unsigned len = take(in, 2);
    int memfd;
    off_t o;
    nvdla_drm_mmap_lookup(st->file, off, len, &memfd, &o);
}

static void run_records(struct state *st, struct in *in)
{
    while (in->n) {
        switch (take(in, 1) % 9) {
        case 0: do_create(st, take(in, 3)); break;
        case 1: do_mmap(st, take(in, 1)); break;
        case 2: do_destroy(st, take(in, 1)); break;
        case 3: { unsigned sel = take(in, 1); do_prime(st, sel, take(in, 1)); break; }
        case 4: do_write(st, in); break;
        case 5: do_submit(st, in); break;
        case 6: do_raw_ioctl(st, in); break;
        case 7: do_lookup(st, in); break;
        default: do_canned(st, take(in, 1)); break;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct state st;
    struct nvdla_drm_options o;
    struct nvdla_drm *drm;
    memset(&o, 0, sizeof o);
    o.max_bo_bytes = 16u << 20;  /* far below the 1 GB RSS limit */
    o.max_layer_work = 1u << 22; /* the conformance layers' size */
    o.threads = 1;
    setenv("DLASIM_LOG", "0", 0); /* refusals are the point (DLASIM_LOG=1 shows them) */
    if (nvdla_drm_create(&o, &drm, NULL, 0) || nvdla_drm_open(drm, &st.file)) {
        abort();
    }
    memset(st.s, 0, sizeof st.s);
    for (int i = 0; i < SLOTS; i++) {
        st.s[i].fd = -1;
    }
    st.next = 0;
    struct in in = { data, size };
    run_records(&st, &in);
    for (int i = 0; i < SLOTS; i++) {
        if (st.s[i].map) {
            munmap(st.s[i].map, (size_t)st.s[i].size);
        }
        if (st.s[i].fd >= 0) {
            close(st.s[i].fd);
        }
    }
    nvdla_drm_close(st.file);
    nvdla_drm_destroy(drm);
    return 0;
}
