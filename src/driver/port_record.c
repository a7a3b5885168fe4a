/*
 * The trace-recording port: forwards everything to an inner port and writes
 * what the run did as NVDLA trace cases (syntax: ../shared/conformance/
 * README.md) that NVIDIA's trace parser accepts and its Verilator testbench
 * replays.
 *
 * Why several cases: the testbench (nvdla/hw verif/verilator/nvdla.cpp)
 * issues every register write of a case back to back and only then polls
 * for interrupts, so a case cannot express "enable this layer once that one
 * completed".  The recorder therefore writes one case per interrupt the
 * runtime waited for: DIR/NAME_000/NAME_000.cfg, DIR/NAME_001/..., each
 * replayable on a fresh device on its own:
 *
 *   - memory: every allocated region and every surface an operation reads or
 *     writes, as it was before the layer ran (mem_init ALL_ZERO + mem_load
 *     of its non-zero bytes);
 *   - single registers written so far (GLB interrupt mask, LUT programming)
 *     in their original order;
 *   - for every unit whose register group executed in this interrupt's layer
 *     (its S_POINTER CONSUMER moved), the unit's whole register image of that
 *     group as the runtime left it, written into group 0 (a fresh device's
 *     consumer group), then the D_OP_ENABLE writes in their original order;
 *   - intr_notify for the done interrupt of each engine that ran (SDP, PDP,
 *     CDP, RUBIK: the CDMA/CACC bits are not waited for, as in NVIDIA's dc_*
 *     traces), and check_crc of every output surface the run has marked so
 *     far, with the CRC of the simulated result, after the last engine of the
 *     layer's pipeline.
 *
 * Limits (refused or documented): BDMA transfers are not recorded (queued
 * single registers); a convolution that reuses CBUF content of a previous
 * layer (DATA_REUSE/WEIGHT_REUSE) is not replayable as its own case; one
 * hardware layer per interrupt (true of the simulator port).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "dlasim/dlasim.h"
#include "regs/regdb.h"
#include "driver/port.h"

struct region {
    uint64_t addr, size;
};

struct regw {
    uint32_t addr, val;
};

struct nvrt_record_port {
    struct nvrt_port port;
    const struct nvrt_port *inner;
    char *dir, *name;
    struct region *regions, *outs, *ins;
    size_t n_regions, n_outs, n_ins;
    struct regw *singles;
    size_t n_singles, cap_singles;
    uint32_t *shadow;     /* [register index][group] */
    uint8_t *written;     /* [register index][group] */
    uint32_t *enable_seq; /* [register index][group]: order of D_OP_ENABLE writes */
    uint32_t seq;
    uint8_t producer[NVDLA_UNIT_COUNT];
    unsigned case_no;
    int rc;
    char err[512];
};

static int rec_fail(struct nvrt_record_port *rp, int status, const char *fmt, ...)
{
    if (!rp->rc) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rp->err, sizeof rp->err, fmt, ap);
        va_end(ap);
        rp->rc = status;
    }
    return status;
}

static int push(void **arr, size_t *n, size_t *cap, size_t elem, const void *v)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        void *na = realloc(*arr, nc * elem);
        if (!na) {
            return DLASIM_ERR_NOMEM;
        }
        *arr = na;
        *cap = nc;
    }
    memcpy((char *)*arr + *n * elem, v, elem);
    (*n)++;
    return 0;
}

/* ---- forwarding callbacks ---------------------------------------------------- */

static int rec_reg_read(void *ctx, uint32_t addr, uint32_t *val)
{
    struct nvrt_record_port *rp = ctx;
    return rp->inner->reg_read(rp->inner->ctx, addr, val);
}

static int rec_reg_write(void *ctx, uint32_t addr, uint32_t val)
{
    struct nvrt_record_port *rp = ctx;
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (r && r->unit == NVDLA_UNIT_BDMA) {
        rec_fail(rp, DLASIM_ERR_UNSUPPORTED,
                 "--record-trace: BDMA transfers (register 0x%05x) are not recorded", addr);
    }
    if (r && !rp->rc) {
        unsigned i = nvdla_reg_index(r);
        if (r->kind == NVDLA_KIND_POINTER) {
            rp->producer[r->unit] = (uint8_t)(val & 1);
        } else if (r->group == NVDLA_REG_DUAL) {
            unsigned g = rp->producer[r->unit];
            rp->shadow[2 * i + g] = val;
            rp->written[2 * i + g] = 1;
            if (r->kind == NVDLA_KIND_OP_ENABLE) {
                rp->enable_seq[2 * i + g] = ++rp->seq;
            }
        } else if (r->kind != NVDLA_KIND_INTR_STATUS && r->kind != NVDLA_KIND_STATUS) {
            struct regw w = { addr, val };
            size_t n = rp->n_singles, cap = rp->cap_singles;
            void *a = rp->singles;
            if (push(&a, &n, &cap, sizeof w, &w)) {
                rec_fail(rp, DLASIM_ERR_NOMEM, "--record-trace: out of host memory");
            }
            rp->singles = a, rp->n_singles = n, rp->cap_singles = cap;
        }
    }
    return rp->inner->reg_write(rp->inner->ctx, addr, val);
}

static int rec_mem_alloc(void *ctx, enum nvrt_domain domain, uint64_t size, uint64_t align,
                         uint64_t *addr)
{
    struct nvrt_record_port *rp = ctx;
    int rc = rp->inner->mem_alloc(rp->inner->ctx, domain, size, align, addr);
    if (!rc && size) {
        struct region r = { *addr, size };
        size_t cap = rp->n_regions;
        void *a = rp->regions;
        if (push(&a, &rp->n_regions, &cap, sizeof r, &r)) {
            return rec_fail(rp, DLASIM_ERR_NOMEM, "--record-trace: out of host memory");
        }
        rp->regions = a;
    }
    return rc;
}

static int rec_mem_write(void *ctx, uint64_t addr, const void *src, size_t len)
{
    struct nvrt_record_port *rp = ctx;
    return rp->inner->mem_write(rp->inner->ctx, addr, src, len);
}

static int rec_mem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
    struct nvrt_record_port *rp = ctx;
    return rp->inner->mem_read(rp->inner->ctx, addr, dst, len);
}

static const char *rec_last_error(void *ctx)
{
    struct nvrt_record_port *rp = ctx;
    if (rp->rc) {
        return rp->err;
    }
    return rp->inner->last_error ? rp->inner->last_error(rp->inner->ctx) : "";
}

/* Add a region to a set unless it is there already. */
static void add_region(struct nvrt_record_port *rp, struct region **set, size_t *n,
                       uint64_t addr, uint64_t size)
{
    for (size_t i = 0; i < *n; i++) {
        if ((*set)[i].addr == addr && (*set)[i].size == size) {
            return;
        }
    }
    struct region r = { addr, size };
    size_t cap = *n;
    void *a = *set;
    if (size && push(&a, n, &cap, sizeof r, &r)) {
        rec_fail(rp, DLASIM_ERR_NOMEM, "--record-trace: out of host memory");
        return;
    }
    *set = a;
}

static void rec_mark_output(void *ctx, uint64_t addr, uint64_t size)
{
    struct nvrt_record_port *rp = ctx;
    add_region(rp, &rp->outs, &rp->n_outs, addr, size);
    if (rp->inner->mark_output) {
        rp->inner->mark_output(rp->inner->ctx, addr, size);
    }
}

static void rec_mark_input(void *ctx, uint64_t addr, uint64_t size)
{
    struct nvrt_record_port *rp = ctx;
    add_region(rp, &rp->ins, &rp->n_ins, addr, size);
    if (rp->inner->mark_input) {
        rp->inner->mark_input(rp->inner->ctx, addr, size);
    }
}

static int rec_param(void *ctx, const char *name, uint64_t *value)
{
    struct nvrt_record_port *rp = ctx;
    return rp->inner->param ? rp->inner->param(rp->inner->ctx, name, value) : DLASIM_ERR_INVAL;
}

/* ---- writing a case ------------------------------------------------------------- */

static void reg_line(FILE *f, uint32_t addr, uint32_t val)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    fprintf(f, "reg_write(NVDLA_%s.%s, 0x%x);\n", nvdla_units[r->unit].name, r->name, val);
}

/* Region r as mem_init + mem_load of its non-zero 32-byte chunks. */
static int write_region(struct nvrt_record_port *rp, FILE *cfg, const char *dir,
                        const char *cname, size_t k, const struct region *r)
{
    fprintf(cfg, "mem_init(pri_mem, 0x%llx, 0x%llx, ALL_ZERO);\n", (unsigned long long)r->addr,
            (unsigned long long)r->size);
    uint8_t buf[4096];
    FILE *dat = NULL;
    char path[4800];
    for (uint64_t o = 0; o < r->size; o += sizeof buf) {
        size_t n = (size_t)(r->size - o < sizeof buf ? r->size - o : sizeof buf);
        int rc = rp->inner->mem_read(rp->inner->ctx, r->addr + o, buf, n);
        if (rc) {
            if (dat) {
                fclose(dat);
            }
            return rec_fail(rp, rc, "--record-trace: reading device memory 0x%llx failed",
                            (unsigned long long)(r->addr + o));
        }
        for (size_t c = 0; c < n; c += 32) {
            size_t m = n - c < 32 ? n - c : 32, j;
            for (j = 0; j < m && !buf[c + j]; j++) {
            }
            if (j == m) {
                continue;
            }
            if (!dat) {
                snprintf(path, sizeof path, "%s/%s_m%zu.dat", dir, cname, k);
                dat = fopen(path, "w");
                if (!dat) {
                    return rec_fail(rp, DLASIM_ERR_IO, "--record-trace: %s: %s", path,
                                    strerror(errno));
                }
                fprintf(dat, "{\n");
            }
            fprintf(dat, "{offset:0x%llx, size:%zu, payload:", (unsigned long long)(o + c), m);
            for (j = 0; j < m; j++) {
                fprintf(dat, "%s0x%02x", j ? " " : "", buf[c + j]);
            }
            fprintf(dat, "} ,\n");
        }
    }
    if (dat) {
        fprintf(dat, "}\n");
        if (fclose(dat)) {
            return rec_fail(rp, DLASIM_ERR_IO, "--record-trace: writing %s failed", path);
        }
        fprintf(cfg, "mem_load(pri_mem, 0x%llx, \"%s_m%zu.dat\");\n", (unsigned long long)r->addr,
                cname, k);
    }
    return 0;
}

/* Units with an S_POINTER and the group each is about to execute. */
static void consumers(struct nvrt_record_port *rp, int8_t *cons)
{
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        cons[u] = -1;
        const struct nvdla_unit_desc *ud = &nvdla_units[u];
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            uint32_t v;
            if (r->kind == NVDLA_KIND_POINTER &&
                rp->inner->reg_read(rp->inner->ctx, r->addr, &v) == 0) {
                cons[u] = (int8_t)((v & NVDLA_PDP_S_POINTER_0_CONSUMER__MASK) >>
                                  NVDLA_PDP_S_POINTER_0_CONSUMER__SHIFT); /* same in every unit */
            }
        }
    }
}

struct enable_ref {
    uint32_t seq, addr, val;
};

static int by_seq(const void *a, const void *b)
{
    const struct enable_ref *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Register images of the executed groups, rewritten into group 0, then the
 * enables in their original order. */
static void write_layer_registers(struct nvrt_record_port *rp, FILE *cfg, const int8_t *ran)
{
    struct enable_ref en[NVDLA_UNIT_COUNT];
    size_t n_en = 0;
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        if (ran[u] < 0) {
            continue;
        }
        const struct nvdla_unit_desc *ud = &nvdla_units[u];
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            if (r->kind == NVDLA_KIND_POINTER) {
                reg_line(cfg, r->addr, 0); /* producer = group 0 */
            }
        }
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            unsigned s = 2 * nvdla_reg_index(r) + (unsigned)ran[u];
            if (r->group != NVDLA_REG_DUAL || !rp->written[s]) {
                continue;
            }
            if (r->kind == NVDLA_KIND_OP_ENABLE) {
                en[n_en++] = (struct enable_ref){ rp->enable_seq[s], r->addr, rp->shadow[s] };
            } else {
                reg_line(cfg, r->addr, rp->shadow[s]);
            }
        }
    }
    qsort(en, n_en, sizeof en[0], by_seq);
    if (ran[NVDLA_UNIT_CDMA] >= 0) {
        /* the firmware waits for the CBUF flush before enabling a convolution */
        const struct nvdla_reg_desc *r = nvdla_reg_by_addr(NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0);
        fprintf(cfg, "poll_reg_equal(NVDLA_%s.%s, 0x1);\n", nvdla_units[r->unit].name, r->name);
    }
    for (size_t i = 0; i < n_en; i++) {
        reg_line(cfg, en[i].addr, en[i].val);
    }
}

/* Done interrupts waited for, last engine of the pipeline last. */
static const struct {
    unsigned unit;
    const char *intr;
} notified[] = {
    { NVDLA_UNIT_SDP, "SDP" },
    { NVDLA_UNIT_PDP, "PDP" },
    { NVDLA_UNIT_CDP, "CDP" },
    { NVDLA_UNIT_RUBIK, "RUBIK" },
};

static int write_case(struct nvrt_record_port *rp, const int8_t *ran, const char *memdir,
                      FILE *cfg, const char *cname)
{
    const char *last = NULL;
    for (size_t i = 0; i < sizeof notified / sizeof notified[0]; i++) {
        if (ran[notified[i].unit] >= 0) {
            fprintf(cfg, "intr_notify(%s_0, %s_%s_0);\n", notified[i].intr, cname,
                    notified[i].intr);
            last = notified[i].intr;
        }
    }
    /* every event needs an action in the testbench: nothing for all but the last */
    for (size_t i = 0; i < sizeof notified / sizeof notified[0]; i++) {
        if (ran[notified[i].unit] >= 0 && notified[i].intr != last) {
            fprintf(cfg, "check_nothing(%s_%s_0);\n", cname, notified[i].intr);
        }
    }
    if (!last) {
        return rec_fail(rp, DLASIM_ERR_UNSUPPORTED,
                        "--record-trace: case %s: no SDP/PDP/CDP/RUBIK layer completed at this "
                        "interrupt (nothing the testbench can wait for)",
                        cname);
    }
    (void)memdir;
    for (size_t i = 0; i < rp->n_outs; i++) {
        const struct region *o = &rp->outs[i];
        uLong crc = crc32(0L, Z_NULL, 0);
        uint8_t buf[4096];
        for (uint64_t off = 0; off < o->size; off += sizeof buf) {
            size_t n = (size_t)(o->size - off < sizeof buf ? o->size - off : sizeof buf);
            int rc = rp->inner->mem_read(rp->inner->ctx, o->addr + off, buf, n);
            if (rc) {
                return rec_fail(rp, rc, "--record-trace: reading output 0x%llx failed",
                                (unsigned long long)o->addr);
            }
            crc = crc32(crc, buf, (uInt)n);
        }
        fprintf(cfg, "check_crc(%s_%s_0, 1, 0x%llx, 0x%llx, 0x%08lx);\n", cname, last,
                (unsigned long long)o->addr, (unsigned long long)o->size, (unsigned long)crc);
    }
    return 0;
}

static int rec_wait_irq(void *ctx)
{
    struct nvrt_record_port *rp = ctx;
    char cname[300], cdir[4400], path[4800];
    if (rp->rc) {
        return rp->rc;
    }
    snprintf(cname, sizeof cname, "%s_%03u", rp->name, rp->case_no++);
    snprintf(cdir, sizeof cdir, "%s/%s", rp->dir, cname);
    snprintf(path, sizeof path, "%s/%s.cfg", cdir, cname);
    if (mkdir(cdir, 0777) && errno != EEXIST) {
        return rec_fail(rp, DLASIM_ERR_IO, "--record-trace: %s: %s", cdir, strerror(errno));
    }
    FILE *cfg = fopen(path, "w");
    if (!cfg) {
        return rec_fail(rp, DLASIM_ERR_IO, "--record-trace: %s: %s", path, strerror(errno));
    }
    fprintf(cfg, "// recorded by dlasim (--record-trace): one hardware layer, replayable on a "
                 "fresh device\n");
    /* allocated memory, then every surface operations read or write (a
     * caller of dlasim_rt_execute may have placed them without the port) */
    size_t k = 0;
    for (size_t i = 0; i < rp->n_regions && !rp->rc; i++) {
        write_region(rp, cfg, cdir, cname, k++, &rp->regions[i]);
    }
    for (size_t i = 0; i < rp->n_ins && !rp->rc; i++) {
        write_region(rp, cfg, cdir, cname, k++, &rp->ins[i]);
    }
    for (size_t i = 0; i < rp->n_outs && !rp->rc; i++) {
        write_region(rp, cfg, cdir, cname, k++, &rp->outs[i]);
    }
    for (size_t i = 0; i < rp->n_singles; i++) {
        reg_line(cfg, rp->singles[i].addr, rp->singles[i].val);
    }
    int8_t before[NVDLA_UNIT_COUNT], after[NVDLA_UNIT_COUNT], ran[NVDLA_UNIT_COUNT];
    consumers(rp, before);
    int rc = rp->inner->wait_irq(rp->inner->ctx);
    consumers(rp, after);
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        ran[u] = before[u] >= 0 && before[u] != after[u] ? before[u] : -1;
    }
    if (!rc && !rp->rc) {
        write_layer_registers(rp, cfg, ran);
        write_case(rp, ran, cdir, cfg, cname);
    }
    if (fclose(cfg) && !rp->rc) {
        rec_fail(rp, DLASIM_ERR_IO, "--record-trace: writing %s failed", path);
    }
    return rc ? rc : rp->rc;
}

/* ---- life cycle ----------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) {
        memcpy(d, s, n);
    }
    return d;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i < n; i++) {
        if (p[i] == '/') {
            p[i] = 0;
            if (mkdir(p, 0777) && errno != EEXIST) {
                return -1;
            }
            p[i] = '/';
        }
    }
    return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

int nvrt_record_port_open(const struct nvrt_port *inner, const char *dir, const char *name,
                          struct nvrt_record_port **out, char *err, size_t errlen)
{
    *out = NULL;
    if (make_dirs(dir)) {
        if (err && errlen) {
            snprintf(err, errlen, "--record-trace %s: %s", dir, strerror(errno));
        }
        return DLASIM_ERR_IO;
    }
    if (!name || !*name) {
        const char *s = strrchr(dir, '/');
        name = s && s[1] ? s + 1 : (s ? "trace" : dir);
    }
    for (const char *c = name; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_')) {
            name = "trace"; /* the trace parser takes \w+ names only */
            break;
        }
    }
    struct nvrt_record_port *rp = calloc(1, sizeof *rp);
    if (rp) {
        rp->dir = dup_str(dir);
        rp->name = dup_str(name);
        rp->shadow = calloc(2 * (size_t)nvdla_reg_count, sizeof *rp->shadow);
        rp->written = calloc(2 * (size_t)nvdla_reg_count, 1);
        rp->enable_seq = calloc(2 * (size_t)nvdla_reg_count, sizeof *rp->enable_seq);
    }
    if (!rp || !rp->dir || !rp->name || !rp->shadow || !rp->written || !rp->enable_seq) {
        nvrt_record_port_free(rp);
        if (err && errlen) {
            snprintf(err, errlen, "--record-trace: out of host memory");
        }
        return DLASIM_ERR_NOMEM;
    }
    rp->inner = inner;
    rp->port = (struct nvrt_port){
        .ctx = rp,
        .reg_read = rec_reg_read,
        .reg_write = rec_reg_write,
        .wait_irq = rec_wait_irq,
        .mem_alloc = rec_mem_alloc,
        .mem_write = rec_mem_write,
        .mem_read = rec_mem_read,
        .last_error = rec_last_error,
        .mark_output = rec_mark_output,
        .mark_input = rec_mark_input,
        .alloc_zeroed = inner->alloc_zeroed,
        .param = rec_param,
    };
    *out = rp;
    return 0;
}

struct nvrt_port *nvrt_record_port_of(struct nvrt_record_port *rp)
{
    return &rp->port;
}

int nvrt_record_port_close(struct nvrt_record_port *rp, char *err, size_t errlen)
{
    if (rp->rc && err && errlen) {
        snprintf(err, errlen, "%s", rp->err);
    }
    return rp->rc;
}

void nvrt_record_port_free(struct nvrt_record_port *rp)
{
    if (!rp) {
        return;
    }
    free(rp->dir);
    free(rp->name);
    free(rp->regions);
    free(rp->outs);
    free(rp->ins);
    free(rp->singles);
    free(rp->shadow);
    free(rp->written);
    free(rp->enable_seq);
    free(rp);
}
