/*
 * The NVDLA DRM UAPI decoder (src/uapi/nvdla_drm.c) called directly, as
 * libdlasim-nvdla.so calls it for a client:
 *   - a hand-built PDP network (max pooling 2x2 / 2 of an 8x8x32 INT8 cube),
 *     its descriptors encoded in firmware interface 0.10, 0.11 and 0.12 and
 *     written into GEM buffers through their mappings, SUBMITted with an
 *     address list of PRIME fds, the output compared with a plain-C max
 *     pooling; with the interface given and detected;
 *   - every refusal: errno for bad handles, sizes, flags, offsets, fds, task
 *     counts and address lists, and a device that still runs afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/rng.h"
#include "common/rtop.h"
#include "dlasim/runtime.h"
#include "uapi/nvdla_drm.h"

#define W 8
#define H 8
#define C 32
#define ATOM 8 /* nv_small */
#define OW 4
#define OH 4
#define SURFS (C / ATOM)
#define N_ADDR 5 /* network, ops, surfaces, dependency graph, input; output at 5 */

struct gem {
    uint32_t handle;
    int fd;
    uint8_t *map;
    uint64_t size;
};

struct fixture {
    struct nvdla_drm *drm;
    void *file;
    struct gem g[N_ADDR + 1];
    int8_t input[SURFS * H * W * ATOM];
};

static int xioctl(void *file, unsigned long req, void *arg)
{
    int rc = nvdla_drm_ioctl(file, req, arg);
    return rc < 0 ? -rc : 0; /* errno or 0 */
}

static void gem_new(void *file, uint64_t size, struct gem *g)
{
    struct nvdla_uapi_gem_create_args c = { 0, 0, size };
    assert_int_equal(xioctl(file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c), 0);
    struct nvdla_uapi_prime_handle p = { c.handle, O_CLOEXEC, -1 };
    assert_int_equal(xioctl(file, NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD, &p), 0);
    struct nvdla_uapi_gem_map_offset_args m = { c.handle, 0, 0 };
    assert_int_equal(xioctl(file, NVDLA_UAPI_IOCTL_GEM_MMAP, &m), 0);
    int memfd;
    off_t off;
    assert_int_equal(nvdla_drm_mmap_lookup(file, m.offset, (size + 4095) & ~(uint64_t)4095,
                                           &memfd, &off), 0);
    void *map = mmap(NULL, (size_t)((size + 4095) & ~(uint64_t)4095), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, off);
    assert_true(map != MAP_FAILED);
    *g = (struct gem){ c.handle, p.fd, map, (size + 4095) & ~(uint64_t)4095 }; /* GEM pages */
}

static struct dlasim_rt_cube cube(int16_t addr, uint32_t w, uint32_t h)
{
    struct dlasim_rt_cube c;
    memset(&c, 0, sizeof c);
    c.type = DLASIM_RT_MEM_MC;
    c.address = addr;
    c.width = (uint16_t)w, c.height = (uint16_t)h, c.channel = C;
    c.line_stride = w * ATOM;
    c.surf_stride = w * h * ATOM;
    c.size = c.surf_stride * SURFS;
    return c;
}

/* The PDP network, encoded in interface 0.minor, written into buffers 0-3. */
static void place_network(struct fixture *f, unsigned minor)
{
    struct dlasim_rt_op op;
    const struct dlasim_rt_cube src = cube(4, W, H), dst = cube(5, OW, OH);
    rtop_maxpool2x2(&op, &src, &dst);
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    net.ops = &op;
    net.num_ops = 1;
    const int16_t heads[DLASIM_RT_OP_NUM] = { -1, -1, -1, 0, -1, -1 };
    memcpy(net.op_head, heads, sizeof heads);
    net.num_addresses = N_ADDR + 1;
    const int16_t lists[4] = { 1, 2, 3, -1 };
    struct dlasim_rt_encoded enc;
    char err[256];
    assert_int_equal(dlasim_rt_encode(&net, minor, lists, &enc, err, sizeof err), 0);
    const void *blob[4] = { enc.network, enc.ops, enc.surfaces, enc.deps };
    const size_t len[4] = { enc.network_size, enc.ops_size, enc.surfaces_size, enc.deps_size };
    for (int i = 0; i < 4; i++) {
        assert_true(len[i] <= f->g[i].size);
        memset(f->g[i].map, 0, (size_t)f->g[i].size);
        memcpy(f->g[i].map, blob[i], len[i]);
    }
    dlasim_rt_encoded_free(&enc);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct nvdla_drm_options o;
    memset(&o, 0, sizeof o);
    char err[256];
    assert_int_equal(nvdla_drm_create(&o, &f->drm, err, sizeof err), 0);
    assert_int_equal(nvdla_drm_open(f->drm, &f->file), 0);
    static const uint64_t sizes[N_ADDR + 1] = { 40, 116, 644, 36, SURFS * H * W * ATOM,
                                                SURFS * OH * OW * ATOM };
    for (int i = 0; i <= N_ADDR; i++) {
        gem_new(f->file, sizes[i], &f->g[i]);
    }
    uint64_t rng = 16;
    splitmix64_fill(&rng, f->input, sizeof f->input);
    memcpy(f->g[4].map, f->input, sizeof f->input);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i <= N_ADDR; i++) {
        munmap(f->g[i].map, (size_t)f->g[i].size);
        close(f->g[i].fd);
    }
    nvdla_drm_close(f->file);
    nvdla_drm_destroy(f->drm);
    free(f);
    return 0;
}

static int submit(struct fixture *f, const struct nvdla_uapi_mem_handle *list, uint32_t n)
{
    struct nvdla_uapi_submit_task t = { n, 0xffffffffu, (uintptr_t)list };
    struct nvdla_uapi_submit_args a = { (uintptr_t)&t, 1, 0, 0 };
    return xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a);
}

static void address_list(const struct fixture *f, struct nvdla_uapi_mem_handle *list)
{
    for (int i = 0; i <= N_ADDR; i++) {
        list[i] = (struct nvdla_uapi_mem_handle){ (uint32_t)f->g[i].fd, 0, 0 };
    }
}

static int8_t in_at(const struct fixture *f, int c, int y, int x)
{
    return f->input[(c / ATOM) * W * H * ATOM + y * W * ATOM + x * ATOM + c % ATOM];
}

static void check_pooled(const struct fixture *f)
{
    const int8_t *out = (const int8_t *)f->g[5].map;
    for (int c = 0; c < C; c++) {
        for (int y = 0; y < OH; y++) {
            for (int x = 0; x < OW; x++) {
                int8_t want = INT8_MIN;
                for (int ky = 0; ky < 2; ky++) {
                    for (int kx = 0; kx < 2; kx++) {
                        int8_t v = in_at(f, c, 2 * y + ky, 2 * x + kx);
                        want = v > want ? v : want;
                    }
                }
                int8_t got = out[(c / ATOM) * OW * OH * ATOM + y * OW * ATOM + x * ATOM + c % ATOM];
                if (got != want) {
                    fail_msg("c=%d y=%d x=%d: %d, max pooling gives %d", c, y, x, got, want);
                }
            }
        }
    }
}

/* Every interface layout, detected (the device was made with interface 0 = auto). */
static void test_submit_runs_pdp(void **state)
{
    struct fixture *f = *state;
    struct nvdla_uapi_mem_handle list[N_ADDR + 1];
    address_list(f, list);
    for (unsigned minor = 10; minor <= 12; minor++) {
        place_network(f, minor);
        memset(f->g[5].map, 0x55, (size_t)f->g[5].size);
        assert_int_equal(submit(f, list, N_ADDR + 1), 0);
        check_pooled(f);
    }
}

/* A dup'd PRIME fd and an offset into a buffer name the same memory. */
static void test_submit_dup_fd_and_offset(void **state)
{
    struct fixture *f = *state;
    struct nvdla_uapi_mem_handle list[N_ADDR + 1];
    address_list(f, list);
    place_network(f, 12);
    /* the input moved 4096 bytes into a larger buffer, reached by offset */
    struct gem big;
    gem_new(f->file, 4096 + sizeof f->input, &big);
    memcpy(big.map + 4096, f->input, sizeof f->input);
    int dupfd = dup(big.fd);
    list[4] = (struct nvdla_uapi_mem_handle){ (uint32_t)dupfd, 0, 4096 };
    memset(f->g[5].map, 0, (size_t)f->g[5].size);
    assert_int_equal(submit(f, list, N_ADDR + 1), 0);
    check_pooled(f);
    close(dupfd);
    struct nvdla_uapi_gem_destroy_args d = { big.handle };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d), 0);
    /* the exported fd of a destroyed buffer no longer names a device buffer */
    list[4].handle = (uint32_t)big.fd;
    assert_int_equal(submit(f, list, N_ADDR + 1), EINVAL);
    munmap(big.map, (size_t)big.size);
    close(big.fd);
}

static void test_buffer_refusals(void **state)
{
    struct fixture *f = *state;
    struct nvdla_uapi_gem_create_args c = { 0, 0, 0 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c), EINVAL);
    c.size = 1ull << 40;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c), ENOMEM);
    c.size = UINT64_MAX;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c), ENOMEM);
    struct nvdla_uapi_gem_map_offset_args m = { 9999, 0, 0 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_MMAP, &m), EINVAL);
    struct nvdla_uapi_gem_destroy_args d = { 0 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d), EINVAL);
    struct nvdla_uapi_prime_handle p = { 9999, O_CLOEXEC, -1 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD, &p), ENOENT);
    p = (struct nvdla_uapi_prime_handle){ f->g[0].handle, 0x4, -1 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD, &p), EINVAL);
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_CREATE, NULL), EFAULT);
    assert_int_equal(xioctl(f->file, _IOWR('d', 0x44, struct nvdla_uapi_gem_create_args), &c),
                     ENOTTY);
    /* mmap: a wrong offset, a length beyond the buffer, a buffer never GEM_MMAP'd */
    int memfd;
    off_t off;
    assert_int_equal(nvdla_drm_mmap_lookup(f->file, 12345, 4096, &memfd, &off), -EINVAL);
    m.handle = f->g[0].handle;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_MMAP, &m), 0);
    assert_int_equal(nvdla_drm_mmap_lookup(f->file, m.offset, 8192, &memfd, &off), -EINVAL);
    assert_int_equal(nvdla_drm_mmap_lookup(f->file, m.offset + 2048, 2048, &memfd, &off),
                     -EINVAL);
    c = (struct nvdla_uapi_gem_create_args){ 0, 0, 100 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_CREATE, &c), 0);
    assert_int_equal(nvdla_drm_mmap_lookup(f->file, m.offset + 6 * 4096, 4096, &memfd, &off),
                     -EINVAL);
    /* another file cannot use this file's handles */
    void *other;
    assert_int_equal(nvdla_drm_open(f->drm, &other), 0);
    d.handle = c.handle;
    assert_int_equal(xioctl(other, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d), EINVAL);
    nvdla_drm_close(other);
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d), 0);
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_GEM_DESTROY, &d), EINVAL);
}

static void test_submit_refusals(void **state)
{
    struct fixture *f = *state;
    struct nvdla_uapi_mem_handle list[N_ADDR + 1];
    address_list(f, list);
    place_network(f, 12);
    struct nvdla_uapi_submit_task t = { N_ADDR + 1, 0, (uintptr_t)list };
    struct nvdla_uapi_submit_args a = { 0, 1, 0, 0 };
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EINVAL); /* tasks NULL */
    a.tasks = (uintptr_t)&t;
    a.num_tasks = 0;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EINVAL);
    a.num_tasks = 2;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EINVAL);
    a.num_tasks = 1;
    t.num_addresses = 0;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EINVAL);
    t.num_addresses = NVDLA_UAPI_MAX_BUFFERS_PER_TASK + 1;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EINVAL);
    t.num_addresses = N_ADDR + 1;
    t.address_list = 0;
    assert_int_equal(xioctl(f->file, NVDLA_UAPI_IOCTL_SUBMIT, &a), EFAULT);
    t.address_list = (uintptr_t)list;
    list[2].handle = 100000; /* not an open fd */
    assert_int_equal(submit(f, list, N_ADDR + 1), EBADF);
    list[2].handle = 0xffffffffu;
    assert_int_equal(submit(f, list, N_ADDR + 1), EBADF);
    int devnull = open("/dev/null", O_RDONLY);
    list[2].handle = (uint32_t)devnull; /* open, but not a buffer */
    assert_int_equal(submit(f, list, N_ADDR + 1), EINVAL);
    close(devnull);
    address_list(f, list);
    list[3].offset = f->g[3].size; /* one past the buffer */
    assert_int_equal(submit(f, list, N_ADDR + 1), EINVAL);
    list[3].offset = f->g[3].size - 8; /* inside, but the dependency entry is cut */
    assert_int_equal(submit(f, list, N_ADDR + 1), EINVAL);
    address_list(f, list);
    /* fewer addresses than the network names: its lists are out of range */
    assert_int_equal(submit(f, list, 3), EINVAL);
    /* a network descriptor of garbage */
    memset(f->g[0].map, 0x7f, 40);
    assert_int_equal(submit(f, list, N_ADDR + 1), EINVAL);
    /* the output cube beyond its buffer: the device's DMA is refused */
    place_network(f, 12);
    list[5].offset = f->g[5].size - 64;
    assert_int_equal(submit(f, list, N_ADDR + 1), EFAULT);
    /* and the device still runs a good task afterwards */
    address_list(f, list);
    memset(f->g[5].map, 0, (size_t)f->g[5].size);
    assert_int_equal(submit(f, list, N_ADDR + 1), 0);
    check_pooled(f);
}

static void test_options_from_env(void **state)
{
    (void)state;
    struct nvdla_drm_options o;
    char err[256];
    setenv("DLASIM_NVDLA_INTERFACE", "0.11", 1);
    assert_int_equal(nvdla_drm_options_from_env(&o, err, sizeof err), 0);
    assert_int_equal(o.interface_minor, 11);
    setenv("DLASIM_NVDLA_INTERFACE", "12", 1);
    assert_int_equal(nvdla_drm_options_from_env(&o, err, sizeof err), 0);
    assert_int_equal(o.interface_minor, 12);
    setenv("DLASIM_NVDLA_INTERFACE", "0.9", 1);
    assert_int_equal(nvdla_drm_options_from_env(&o, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "DLASIM_NVDLA_INTERFACE=0.9"));
    unsetenv("DLASIM_NVDLA_INTERFACE");
    struct nvdla_drm *d;
    o.config = "nv_nonesuch";
    assert_int_equal(nvdla_drm_create(&o, &d, err, sizeof err), -EINVAL);
    assert_null(d);
}

int main(void)
{
    if (!getenv("DLASIM_LOG")) {
        setenv("DLASIM_LOG", "0", 1); /* the refusals are expected */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_submit_runs_pdp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_dup_fd_and_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_refusals, setup, teardown),
        cmocka_unit_test(test_options_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
