/*
 * The rocket UAPI in user space (src/uapi/rocket.c), driven as Mesa's rocket
 * driver drives /dev/accel/accel0: VERSION, CREATE_BO, mmap of the BO's
 * memfd, SUBMIT of jobs of tasks, PREP_BO/FINI_BO, GEM_CLOSE; a convolution
 * laid out in BOs and submitted as one job of two tasks must equal integer
 * arithmetic; every malformed call must give the kernel's errno
 * (rocket_drv.c, rocket_gem.c, rocket_job.c, drm_ioctl.c), never a crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "uapi/rocket.h"

#define IOWR(nr, type) DLA_IOC(DLA_IOC_READ | DLA_IOC_WRITE, nr, sizeof(type))
#define IOW(nr, type) DLA_IOC(DLA_IOC_WRITE, nr, sizeof(type))
#define CREATE_BO IOWR(DLA_ROCKET_NR_CREATE_BO, struct dla_rocket_create_bo)
#define SUBMIT IOW(DLA_ROCKET_NR_SUBMIT, struct dla_rocket_submit)
#define PREP_BO IOW(DLA_ROCKET_NR_PREP_BO, struct dla_rocket_prep_bo)
#define FINI_BO IOW(DLA_ROCKET_NR_FINI_BO, struct dla_rocket_fini_bo)
#define GEM_CLOSE IOW(DLA_DRM_NR_GEM_CLOSE, struct dla_drm_gem_close)
#define VERSION IOWR(DLA_DRM_NR_VERSION, struct dla_drm_version)

/* The client's memory is this process's: addresses below 64 KiB fault. */
static int copy_from(void *opaque, void *dst, uint64_t uaddr, size_t len)
{
    (void)opaque;
    if (uaddr < 0x10000) {
        return -EFAULT;
    }
    memcpy(dst, (const void *)(uintptr_t)uaddr, len);
    return 0;
}

static int copy_to(void *opaque, uint64_t uaddr, const void *src, size_t len)
{
    (void)opaque;
    if (uaddr < 0x10000) {
        return -EFAULT;
    }
    memcpy((void *)(uintptr_t)uaddr, src, len);
    return 0;
}

static unsigned errors_logged;
static void count_errors(void *opaque, unsigned category, const char *msg)
{
    (void)opaque;
    (void)msg;
    errors_logged += category == DLA_ROCKET_LOG_ERROR;
}

static struct dla_rocket *open_dev(void)
{
    struct dla_rocket_options o;
    memset(&o, 0, sizeof(o));
    o.threads = 1;
    o.user = (struct dla_rocket_user){copy_from, copy_to, NULL};
    o.log_mask = DLA_ROCKET_LOG_ERROR;
    o.log_cb = count_errors;
    struct dla_rocket *r = NULL;
    char err[256];
    assert_int_equal(dla_rocket_open(&o, &r, err, sizeof(err)), 0);
    return r;
}

static int io(struct dla_rocket *r, unsigned long req, void *arg)
{
    return dla_rocket_ioctl(r, req, (uint64_t)(uintptr_t)arg);
}

struct bo {
    uint32_t handle, dma;
    uint8_t *map;
    size_t size;
};

static struct bo new_bo(struct dla_rocket *r, uint32_t size)
{
    struct dla_rocket_create_bo c = {size, 0, 0, 0};
    assert_int_equal(io(r, CREATE_BO, &c), 0);
    int memfd = -1;
    assert_int_equal(dla_rocket_mmap(r, c.offset, size, &memfd), 0);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    assert_true(p != MAP_FAILED);
    assert_int_equal(c.dma_address % 4096, 0);
    return (struct bo){c.handle, (uint32_t)c.dma_address, p, size};
}

static void test_version(void **state)
{
    (void)state;
    struct dla_rocket *r = open_dev();
    char name[3] = {0}, desc[64] = {0};
    struct dla_drm_version v;
    memset(&v, 0, sizeof(v));
    v.name_len = sizeof(name);
    v.name = (uint64_t)(uintptr_t)name;
    v.desc_len = sizeof(desc);
    v.desc = (uint64_t)(uintptr_t)desc;
    assert_int_equal(io(r, VERSION, &v), 0);
    assert_int_equal(v.name_len, 6); /* the whole length, as drm_copy_field says */
    assert_memory_equal(name, "roc", 3);
    assert_int_equal(v.date_len, 0);
    v.name_len = 8;
    v.name = 16; /* a faulting pointer */
    assert_int_equal(io(r, VERSION, &v), -EFAULT);
    dla_rocket_close(r);
}

/* A conv task (8x8x16 -> 8x8xK, 3x3, pad 1, int32 out) in BOs, as a job of two
 * tasks (the second writes a second output from the same data). */
static void test_conv_job(void **state)
{
    (void)state;
    struct dla_rocket *r = open_dev();
    const uint32_t w = 8, h = 8, c = 16, k = 20, kk = 3;
    struct bo in = new_bo(r, (uint32_t)dlasim_rk_feature_bytes(w, h, c, 1));
    struct bo wt = new_bo(r, (uint32_t)dlasim_rk_weight_bytes(k, c, kk, kk, 0));
    struct bo out0 = new_bo(r, (uint32_t)dlasim_rk_feature_bytes(w, h, 32, 4));
    struct bo out1 = new_bo(r, (uint32_t)dlasim_rk_feature_bytes(w, h, 32, 4));
    int8_t x[16][8][8], f[20][16][3][3];
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof(x); i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ((int8_t *)x)[i] = (int8_t)(s >> 56);
    }
    for (size_t i = 0; i < sizeof(f); i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ((int8_t *)f)[i] = (int8_t)(s >> 56);
    }
    for (uint32_t ch = 0; ch < c; ch++) {
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t xx = 0; xx < w; xx++) {
                in.map[dlasim_rk_feature_offset(w, h, ch, y, xx, 1)] = (uint8_t)x[ch][y][xx];
            }
        }
    }
    for (uint32_t o = 0; o < k; o++) {
        for (uint32_t ch = 0; ch < c; ch++) {
            for (uint32_t ky = 0; ky < kk; ky++) {
                for (uint32_t kx = 0; kx < kk; kx++) {
                    wt.map[dlasim_rk_weight_offset(o, ch, ky, kx, k, c, kk, kk, 0)] = (uint8_t)f[o][ch][ky][kx];
                }
            }
        }
    }
    struct dlasim_rk_conv cv;
    memset(&cv, 0, sizeof(cv));
    cv.in_w = w;
    cv.in_h = h;
    cv.in_c = c;
    cv.kernels = k;
    cv.k_w = cv.k_h = kk;
    cv.stride_x = cv.stride_y = 1;
    cv.pad_left = cv.pad_top = 1;
    cv.out_w = w;
    cv.out_h = h;
    cv.input = in.dma;
    cv.weights = wt.dma;
    cv.output = out0.dma;
    cv.out_int32 = 1;
    cv.to_memory = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    cv.output = out1.dma;
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    size_t n = dlasim_rk_layout_size(&l);
    struct bo cmd = new_bo(r, (uint32_t)n);
    assert_int_equal(dlasim_rk_layout(&l, cmd.dma, cmd.map, n), 0);
    struct dla_rocket_task tasks[2];
    for (uint32_t i = 0; i < 2; i++) {
        tasks[i].regcmd = dlasim_rk_task_addr(&l, cmd.dma, i);
        tasks[i].regcmd_count = (uint32_t)dlasim_rk_task_entries(&l, i);
    }
    uint32_t ins[3] = {in.handle, wt.handle, cmd.handle}, outs[2] = {out0.handle, out1.handle};
    struct dla_rocket_job job = {(uint64_t)(uintptr_t)tasks, (uint64_t)(uintptr_t)ins,
                                 (uint64_t)(uintptr_t)outs, 2, sizeof(tasks[0]), 3, 2};
    struct dla_rocket_submit sub = {(uint64_t)(uintptr_t)&job, 1, sizeof(job), 0};
    errors_logged = 0;
    assert_int_equal(io(r, SUBMIT, &sub), 0);
    assert_int_equal(errors_logged, 0);
    struct dla_rocket_prep_bo prep = {out1.handle, 0, 1000000000};
    assert_int_equal(io(r, PREP_BO, &prep), 0);
    for (uint32_t o = 0; o < k; o++) {
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t xx = 0; xx < w; xx++) {
                int32_t want = 0;
                for (uint32_t ch = 0; ch < c; ch++) {
                    for (uint32_t ky = 0; ky < kk; ky++) {
                        for (uint32_t kx = 0; kx < kk; kx++) {
                            int iy = (int)(y + ky) - 1, ix = (int)(xx + kx) - 1;
                            if (iy >= 0 && ix >= 0 && iy < (int)h && ix < (int)w) {
                                want += x[ch][iy][ix] * f[o][ch][ky][kx];
                            }
                        }
                    }
                }
                int32_t got0, got1;
                memcpy(&got0, out0.map + dlasim_rk_feature_offset(w, h, o, y, xx, 4), 4);
                memcpy(&got1, out1.map + dlasim_rk_feature_offset(w, h, o, y, xx, 4), 4);
                if (got0 != want || got1 != want) {
                    fail_msg("out[%u][%u][%u] = %d / %d, integer math %d", o, y, xx, got0, got1, want);
                }
            }
        }
    }
    struct dla_rocket_stats st;
    dla_rocket_get_stats(r, &st);
    assert_int_equal(st.jobs, 1);
    assert_int_equal(st.tasks, 2);
    assert_int_equal(st.failed_tasks, 0);
    dlasim_rk_regcmd_free(&l);
    dla_rocket_close(r);
}

/* Every malformed call: the kernel's errno, and dropped jobs leave the
 * device usable. */
static void test_errors(void **state)
{
    (void)state;
    struct dla_rocket *r = open_dev();
    struct dla_rocket_create_bo c = {0, 0, 0, 0};
    assert_int_equal(io(r, CREATE_BO, &c), -EINVAL); /* size 0 */
    c.size = 0xffffffffu;
    assert_int_equal(io(r, CREATE_BO, &c), -ENOMEM); /* beyond the emulation's 1 GiB */
    assert_int_equal(io(r, CREATE_BO, NULL), -EFAULT);
    struct bo b = new_bo(r, 100);
    assert_int_equal(b.dma, 0x100000u);
    struct bo b2 = new_bo(r, 5000);
    assert_int_equal(b2.dma, 0x101000u); /* the next page: BOs are page-rounded */
    int fd;
    assert_int_equal(dla_rocket_mmap(r, 0x1234, 10, &fd), -EINVAL);
    assert_int_equal(dla_rocket_mmap(r, 0x100000000ull + b.dma, 8192, &fd), -EINVAL); /* beyond */
    struct dla_rocket_prep_bo p = {999, 0, 0};
    assert_int_equal(io(r, PREP_BO, &p), -ENOENT);
    p.handle = b.handle;
    p.reserved = 1;
    assert_int_equal(io(r, PREP_BO, &p), -EINVAL);
    struct dla_rocket_fini_bo fi = {b.handle, 0};
    assert_int_equal(io(r, FINI_BO, &fi), 0);
    fi.handle = 77;
    assert_int_equal(io(r, FINI_BO, &fi), -ENOENT);
    assert_int_equal(dla_rocket_ioctl(r, DLA_IOC(DLA_IOC_WRITE, 0x4f, 8), (uint64_t)(uintptr_t)&fi), -EINVAL);
    assert_int_equal(dla_rocket_ioctl(r, 0x5401 /* TCGETS */, 0), -EINVAL);

    struct dla_rocket_task t = {b.dma, 4};
    uint32_t handle = b.handle, bad = 4242;
    struct dla_rocket_job j = {(uint64_t)(uintptr_t)&t, (uint64_t)(uintptr_t)&handle, 0, 1, sizeof(t), 1, 0};
    struct dla_rocket_submit s = {(uint64_t)(uintptr_t)&j, 1, sizeof(j), 1};
    assert_int_equal(io(r, SUBMIT, &s), -EINVAL); /* reserved */
    s.reserved = 0;
    s.job_struct_size = 8;
    assert_int_equal(io(r, SUBMIT, &s), -EINVAL); /* job struct too small */
    s.job_struct_size = sizeof(j);
    s.jobs = 8;
    assert_int_equal(io(r, SUBMIT, &s), -EFAULT);
    s.jobs = (uint64_t)(uintptr_t)&j;
    s.job_count = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0); /* nothing to do */
    s.job_count = 1;
    /* jobs the kernel drops (SUBMIT still returns 0) */
    struct dla_rocket_stats st0, st1;
    dla_rocket_get_stats(r, &st0);
    j.in_bo_handles = (uint64_t)(uintptr_t)&bad;
    errors_logged = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    assert_true(errors_logged > 0);
    j.in_bo_handles = (uint64_t)(uintptr_t)&handle;
    t.regcmd_count = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    t.regcmd_count = 4;
    j.task_count = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    j.task_count = 1;
    j.task_struct_size = 4;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    dla_rocket_get_stats(r, &st1);
    assert_int_equal(st1.tasks, st0.tasks); /* none of them ran */
    /* a task whose regcmd lies outside every BO, and one of zeros: the job
     * stops without its DPU interrupt (the kernel's timeout), no crash */
    j.task_struct_size = sizeof(t);
    t.regcmd = 0x7000000;
    errors_logged = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    assert_true(errors_logged > 0);
    t.regcmd = b.dma;
    assert_int_equal(io(r, SUBMIT, &s), 0);
    dla_rocket_get_stats(r, &st1);
    assert_int_equal(st1.failed_tasks, st0.failed_tasks + 2);
    /* GEM_CLOSE, then the handle is gone; the freed range is reused */
    struct dla_drm_gem_close gc = {b.handle, 0};
    assert_int_equal(io(r, GEM_CLOSE, &gc), 0);
    assert_int_equal(io(r, GEM_CLOSE, &gc), -EINVAL);
    errors_logged = 0;
    assert_int_equal(io(r, SUBMIT, &s), 0); /* SUBMIT of a freed BO: dropped */
    assert_true(errors_logged > 0);
    struct bo b3 = new_bo(r, 4096);
    assert_int_equal(b3.dma, 0x100000u);
    dla_rocket_close(r);
    assert_int_equal(dla_rocket_ioctl(NULL, CREATE_BO, 0), -EBADF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_conv_job),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
