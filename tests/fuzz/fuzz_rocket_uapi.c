/*
 * libFuzzer target: a hostile client of the rocket UAPI in user space
 * (src/uapi/rocket.c), as issue 21 lists it: bad handles, sizes, offsets,
 * task counts, regcmd addresses outside any BO, SUBMIT of freed BOs, jobs of
 * tasks whose regcmd lists are corrupted.  Whatever it passes, every call
 * must return 0 or a negative errno and the process must not crash, hang,
 * leak or touch memory it does not own.
 *
 * The input is a sequence of operations, one byte of opcode each followed by
 * its operands (missing bytes read as 0).  The client's "user memory" is a
 * 4 KiB arena the operations fill: user pointers are arena offsets (beyond
 * it the copy fails with EFAULT, as copy_from_user does), so job, task and
 * handle arrays are built from the input.  A small valid convolution
 * (dlasim_rk_emit_conv) can be laid into a BO and then corrupted, so the
 * fuzzer starts from programming that runs.  Bounded work: BO memory
 * 4 MiB, layer work 2^20, one thread.  Built by `make fuzz`.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "uapi/rocket.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ARENA 4096u
#define ARENA_BASE 0x10000000ull /* user address of arena[0] */
#define MAX_HANDLES 16

struct in {
    const uint8_t *p;
    size_t n;
};

static uint32_t take(struct in *in, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++) {
        v |= (uint32_t)(in->n ? (in->n--, *in->p++) : 0) << (8 * i);
    }
    return v;
}

struct client {
    uint8_t arena[ARENA];
    struct dla_rocket *r;
    uint32_t handles[MAX_HANDLES], dmas[MAX_HANDLES];
    uint64_t offsets[MAX_HANDLES];
    unsigned nh;
};

static int copy_from(void *opaque, void *dst, uint64_t uaddr, size_t len)
{
    struct client *c = opaque;
    if (uaddr < ARENA_BASE || uaddr - ARENA_BASE > ARENA || len > ARENA - (uaddr - ARENA_BASE)) {
        return -EFAULT;
    }
    memcpy(dst, c->arena + (uaddr - ARENA_BASE), len);
    return 0;
}

static int copy_to(void *opaque, uint64_t uaddr, const void *src, size_t len)
{
    struct client *c = opaque;
    if (uaddr < ARENA_BASE || uaddr - ARENA_BASE > ARENA || len > ARENA - (uaddr - ARENA_BASE)) {
        return -EFAULT;
    }
    memcpy(c->arena + (uaddr - ARENA_BASE), src, len);
    return 0;
}

static int call(struct client *c, unsigned nr, unsigned dir, size_t size, uint64_t arg)
{
    int rc = dla_rocket_ioctl(c->r, DLA_IOC(dir, nr, size), arg);
    if (rc > 0 || rc < -4095) {
        __builtin_trap(); /* not an errno */
    }
    return rc;
}

/* Arena offset -> user pointer; offsets past the arena stay hostile. */
static uint64_t uptr(uint32_t off)
{
    return ARENA_BASE + off;
}

static void op_create(struct client *c, struct in *in)
{
    struct dla_rocket_create_bo b = {take(in, 3), 0, 0, 0};
    memcpy(c->arena, &b, sizeof(b));
    if (call(c, DLA_ROCKET_NR_CREATE_BO, DLA_IOC_READ | DLA_IOC_WRITE, sizeof(b), uptr(0)) == 0) {
        memcpy(&b, c->arena, sizeof(b));
        unsigned i = c->nh < MAX_HANDLES ? c->nh++ : b.handle % MAX_HANDLES;
        c->handles[i] = b.handle;
        c->dmas[i] = (uint32_t)b.dma_address;
        c->offsets[i] = b.offset;
    }
}

/* A valid conv task into BO i (the BO's memory through its memfd), then up to
 * 8 corrupted entries. */
static void op_conv(struct client *c, struct in *in)
{
    unsigned i = take(in, 1) % (c->nh ? c->nh : 1);
    if (!c->nh) {
        return;
    }
    struct dlasim_rk_conv cv;
    memset(&cv, 0, sizeof(cv));
    cv.in_w = 1 + take(in, 1) % 8;
    cv.in_h = 1 + take(in, 1) % 8;
    cv.in_c = 1 + take(in, 1) % 40;
    cv.kernels = 1 + take(in, 1) % 40;
    cv.k_w = cv.k_h = 1;
    cv.stride_x = cv.stride_y = 1;
    cv.out_w = cv.in_w;
    cv.out_h = cv.in_h;
    cv.input = c->dmas[i] + 2048;
    cv.weights = c->dmas[i] + 4096;
    cv.output = c->dmas[i] + 8192;
    cv.out_int32 = 1;
    cv.to_memory = 1;
    struct dlasim_rk_regcmd l = {0};
    uint8_t buf[2048];
    size_t n = 0;
    if (dlasim_rk_emit_conv(&l, &cv, NULL) == 0 && (n = dlasim_rk_layout_size(&l)) <= sizeof(buf) &&
        dlasim_rk_layout(&l, c->dmas[i], buf, n) == 0) {
        for (unsigned k = take(in, 1) % 9; k > 0 && n >= 8; k--) {
            uint32_t at = take(in, 2) % (uint32_t)(n / 8);
            uint64_t e = (uint64_t)take(in, 4) | (uint64_t)take(in, 4) << 32;
            memcpy(buf + 8 * at, &e, 8);
        }
        int memfd;
        if (dla_rocket_mmap(c->r, c->offsets[i], n, &memfd) == 0) {
            void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
            if (m != MAP_FAILED) {
                memcpy(m, buf, n);
                munmap(m, n);
            }
        }
    }
    dlasim_rk_regcmd_free(&l);
}

/* Arena bytes from the input at an arena offset (arrays, structs). */
static void op_fill(struct client *c, struct in *in)
{
    uint32_t off = take(in, 2) % ARENA, len = take(in, 1);
    for (uint32_t k = 0; k < len && off + k < ARENA; k++) {
        c->arena[off + k] = (uint8_t)take(in, 1);
    }
}

/* A SUBMIT whose arrays the input describes: handles are picked from the
 * created ones (or raw), regcmd addresses relative to a BO (or raw). */
static void op_submit(struct client *c, struct in *in)
{
    struct dla_rocket_task t[4];
    uint32_t h[4];
    unsigned ntasks = take(in, 1) % 5, nh = take(in, 1) % 5;
    for (unsigned k = 0; k < 4; k++) {
        uint32_t sel = take(in, 1), raw = take(in, 4);
        unsigned bi = sel % (c->nh ? c->nh : 1);
        t[k].regcmd = (sel & 0x80) || !c->nh ? raw : c->dmas[bi] + (raw & 0x3f) * 64;
        t[k].regcmd_count = (sel & 0x40) ? raw >> 16 : 1 + (raw >> 24) % 160;
        h[k] = (sel & 0x20) || !c->nh ? raw : c->handles[bi];
    }
    struct dla_rocket_job j = {uptr(1024), uptr(1536), uptr(1600), ntasks, sizeof(t[0]), nh, nh ? 1 : 0};
    uint32_t flags = take(in, 1);
    if (flags & 1) {
        j.task_struct_size = take(in, 1);
    }
    if (flags & 2) {
        j.tasks = uptr(take(in, 2));
    }
    struct dla_rocket_submit s = {uptr(512), 1 + (flags >> 6), sizeof(j), (flags & 4) ? 1 : 0};
    if (flags & 8) {
        s.job_struct_size = take(in, 1);
    }
    memcpy(c->arena + 1024, t, sizeof(t));
    memcpy(c->arena + 1536, h, sizeof(h));
    memcpy(c->arena + 1600, h, sizeof(h));
    for (unsigned k = 0; k < 4; k++) {
        memcpy(c->arena + 512 + k * sizeof(j), &j, sizeof(j));
    }
    memcpy(c->arena + 256, &s, sizeof(s));
    call(c, DLA_ROCKET_NR_SUBMIT, DLA_IOC_WRITE, sizeof(s), uptr(256));
}

static void op_handle_call(struct client *c, struct in *in, unsigned nr)
{
    uint32_t sel = take(in, 1);
    struct dla_rocket_prep_bo p = {(sel & 0x80) || !c->nh ? take(in, 4) : c->handles[sel % c->nh],
                                   (sel & 0x40) ? 1u : 0u, (int64_t)take(in, 4)};
    memcpy(c->arena + 128, &p, sizeof(p));
    size_t size = nr == DLA_ROCKET_NR_PREP_BO ? sizeof(p) : 8;
    call(c, nr, DLA_IOC_WRITE, size, uptr(128));
}

static void op_raw(struct client *c, struct in *in)
{
    unsigned nr = take(in, 1), dir = take(in, 1) & 3, sz = take(in, 2) & 0x3fff;
    call(c, nr, dir, sz, uptr(take(in, 2)));
}

static void op_mmap(struct client *c, struct in *in)
{
    uint32_t sel = take(in, 1), len = take(in, 3);
    uint64_t off = (sel & 0x80) || !c->nh ? (uint64_t)take(in, 4) << 8 : c->offsets[sel % c->nh];
    int fd = -1;
    int rc = dla_rocket_mmap(c->r, off, len, &fd);
    if (rc > 0 || (rc == 0 && fd < 0)) {
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct client c;
    memset(&c, 0, sizeof(c));
    struct dla_rocket_options o;
    memset(&o, 0, sizeof(o));
    o.threads = 1;
    o.max_layer_work = 1u << 20;
    o.max_bo_bytes = 4u << 20;
    o.user = (struct dla_rocket_user){copy_from, copy_to, &c};
    if (dla_rocket_open(&o, &c.r, NULL, 0) != 0) {
        return 0;
    }
    struct in in = {data, size};
    for (unsigned ops = 0; in.n && ops < 64; ops++) {
        switch (take(&in, 1) % 10) {
        case 0: op_create(&c, &in); break;
        case 1: op_conv(&c, &in); break;
        case 2: op_fill(&c, &in); break;
        case 3: op_submit(&c, &in); break;
        case 4: op_handle_call(&c, &in, DLA_ROCKET_NR_PREP_BO); break;
        case 5: op_handle_call(&c, &in, DLA_ROCKET_NR_FINI_BO); break;
        case 6: op_handle_call(&c, &in, DLA_DRM_NR_GEM_CLOSE); break;
        case 7: op_raw(&c, &in); break;
        case 8: op_mmap(&c, &in); break;
        default: {
            uint64_t v[8] = {0, take(&in, 1), uptr(3000), take(&in, 1), uptr(3100), 0, 0, 0};
            memcpy(c.arena + 2048, v, sizeof(v));
            call(&c, DLA_DRM_NR_VERSION, DLA_IOC_READ | DLA_IOC_WRITE, 64, uptr(2048 - 4));
        }
        }
    }
    dla_rocket_close(c.r);
    return 0;
}
