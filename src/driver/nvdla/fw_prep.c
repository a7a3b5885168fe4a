/*
 * Prepared programming (issue 18): an operation's register programming is
 * recorded the first time the firmware-equivalent executor programs it and
 * replayed on later runs of the same network, instead of decoding the
 * descriptors, checking their fields and packing every register again.
 *
 * What is recorded, in order, per operation: register writes (address,
 * value), status reads (address, value seen), interrupt unmasks (a
 * read-modify-write of GLB S_INTR_MASK, kept as one step because its write
 * depends on what it reads) and the surfaces marked for the port (trace
 * recording).  What the programming depended on is kept beside it: the
 * operation's descriptor byte for byte, the address-list entries it asked
 * for and the values they had, the LUT it loaded, the register group and
 * read-DMA group it was given, the LUT the group held before, the device's
 * atom size and data types (descriptors and LUT are not kept when the
 * caller fixes them: DLASIM_RT_PREPARED_FIXED).  A replay happens only when
 * all of these are unchanged, so it issues exactly the accesses a rebuild would: the engine
 * program() functions (fw_*.c) are deterministic functions of these inputs
 * and of the status they read.
 *
 * Status reads: a recording whose reads all come before its first write
 * (CONV's idle check, BDMA's free-slot poll for one transfer) is replayed
 * read by read; a read returning another value than at recording (the
 * rebuild could have branched) ends the replay before anything was written,
 * and the operation is programmed afresh.  A recording with a read after a
 * write is never replayed (BDMA with several transfers).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "driver/nvdla/fw.h"
#include "regs/regdb.h"

/* A step: bits 31..28 of `addr` its kind, the rest the register address;
 * `val` the value written or read, the unmask, or the index of a mark.  A
 * write's kind is 0: a run of writes is an array of register writes as
 * the port's reg_write_n takes them. */
enum prep_kind { STEP_WRITE = 0, STEP_READ = 1, STEP_UNMASK = 2, STEP_MARK_IN = 3,
                 STEP_MARK_OUT = 4 };
#define STEP_KIND_SHIFT 28
#define STEP_ADDR_MASK ((1u << STEP_KIND_SHIFT) - 1)

#define prep_step dlasim_reg_write

struct prep_mark { /* a surface marked for the port: [addr, addr + bytes) */
    uint64_t addr, bytes;
};

struct prep_dep { /* an address-list entry the programming used */
    int64_t index;
    uint64_t addr;
};

/* What the programming read from the network besides the address list,
 * kept unless the caller fixes the descriptors. */
struct prep_copy {
    struct dlasim_rt_op desc;
    struct dlasim_rt_lut lut;
};

/* One operation's recording in one block, in the order a replay reads it:
 * this header, deps[n_deps], steps[n_steps], marks[n_marks], then the
 * prep_copy when kept.  A replay walks it front to back (the engines'
 * data of an inference evicts it from the caches before the next one). */
struct prep_rec {
    uint64_t serial; /* unique in its prepared form (a freed one's is never reused) */
    uint8_t gid, rdma_id, rdma_needed, has_copy;
    uint8_t rdma_writes; /* it writes registers of its engine's RDMA (rdma_id's group) */
    int16_t lut_before, lut_after; /* the group's lut_index before / after programming */
    int16_t lut;                   /* LUT loaded, -1 = none */
    uint32_t n_deps, n_steps, n_marks;
};

static struct prep_dep *rec_deps(const struct prep_rec *r)
{
    return (struct prep_dep *)(void *)((char *)(uintptr_t)r + sizeof(struct prep_rec));
}

_Static_assert(STEP_WRITE == 0, "a write step is its register address");

static struct prep_step *rec_steps(const struct prep_rec *r)
{
    return (struct prep_step *)(void *)(rec_deps(r) + r->n_deps);
}

static struct prep_mark *rec_marks(const struct prep_rec *r)
{
    /* steps are 8 bytes: marks stay 8-byte aligned */
    return (struct prep_mark *)(void *)(rec_steps(r) + r->n_steps);
}

static struct prep_copy *rec_copy(const struct prep_rec *r)
{
    return r->has_copy ? (struct prep_copy *)(void *)(rec_marks(r) + r->n_marks) : NULL;
}

/* The recording under way (fw->rec): growable, copied into a prep_rec. */
struct nvrt_prep_op {
    struct prep_rec head;
    uint8_t broken; /* out of memory, or a read after a write */
    uint8_t wrote;  /* a write or unmask seen */
    struct prep_dep *deps;
    struct prep_step *steps;
    struct prep_mark *marks;
    uint32_t cap_deps, cap_steps, cap_marks;
    struct prep_copy copy;
};

/*
 * A recording's steps less the writes its register group already holds
 * (issue 18).  Registers keep their values between layers (a layer's end
 * clears only OP_ENABLE and moves CONSUMER), so when a group was last
 * programmed by recording `prev` in this run, a dual configuration register
 * that `prev` left at the value this recording writes needs no write: the
 * group ends up holding exactly what the full replay leaves.  MobileNetV2's
 * depthwise blocks differ from the block before in their group only in
 * addresses: in the 960-block depthwise model an operation's replay takes
 * 11.5 steps on average instead of 53.5 (counted over 40,000 replays).
 */
struct prep_delta {
    uint64_t prev;    /* serial of the recording the group held */
    uint32_t n_steps;
    struct prep_step steps[];
};

struct held_reg { /* a register's value as a recording left it, valid when gen matches */
    uint32_t val, gen;
};

struct dlasim_rt_prepared {
    struct prep_rec **ops; /* operation i in group g: ops[2 * i + g], NULL = none */
    struct prep_delta **delta; /* ops[i]'s steps against the recording before it, or NULL */
    uint64_t next_serial;
    uint32_t num_ops;
    uint32_t atom_size, data_types;
    unsigned flags;
    uint64_t replayed, rebuilt;
    struct nvrt_prep_op scratch;
    struct held_reg *held; /* [register index]: make_delta's scratch */
    uint32_t held_gen;
    uint8_t *counts; /* nvrt_prep_counts */
    size_t counts_cap;
};

_Static_assert(sizeof(struct prep_rec) % 8 == 0 && sizeof(struct prep_dep) % 8 == 0 &&
                   sizeof(struct prep_step) == 8 && sizeof(struct prep_copy) % 8 == 0,
               "prep_rec parts stay 8-byte aligned");

struct dlasim_rt_prepared *dlasim_rt_prepared_new(unsigned flags)
{
    struct dlasim_rt_prepared *p = calloc(1, sizeof *p);
    if (p) {
        p->flags = flags;
    }
    return p;
}

static void free_ops(struct dlasim_rt_prepared *p)
{
    for (uint32_t i = 0; p->ops && i < 2u * p->num_ops; i++) {
        free(p->ops[i]);
        free(p->delta ? p->delta[i] : NULL);
    }
    free(p->ops);
    free(p->delta);
    p->ops = NULL;
    p->delta = NULL;
    p->num_ops = 0;
}

void dlasim_rt_prepared_free(struct dlasim_rt_prepared *p)
{
    if (p) {
        free_ops(p);
        free(p->scratch.deps);
        free(p->scratch.steps);
        free(p->scratch.marks);
        free(p->counts);
        free(p->held);
        free(p);
    }
}

uint8_t *nvrt_prep_counts(struct dlasim_rt_prepared *p, size_t n)
{
    if (2 * n > p->counts_cap) {
        uint8_t *b = realloc(p->counts, 2 * n);
        if (!b) {
            return NULL;
        }
        p->counts = b;
        p->counts_cap = 2 * n;
    }
    return p->counts;
}

void dlasim_rt_prepared_counts(const struct dlasim_rt_prepared *p, uint64_t *replayed,
                               uint64_t *rebuilt)
{
    if (replayed) {
        *replayed = p ? p->replayed : 0;
    }
    if (rebuilt) {
        *rebuilt = p ? p->rebuilt : 0;
    }
}

/* The form fits this network and device, or is emptied and sized for it;
 * 0 when out of host memory (then the run programs without it). */
static int fit(struct dlasim_rt_prepared *p, const struct nvrt_fw *fw)
{
    if (p->ops && p->num_ops == fw->net->num_ops && p->atom_size == fw->atom_size &&
        p->data_types == fw->data_types) {
        return 1;
    }
    free_ops(p);
    p->ops = calloc(fw->net->num_ops ? 2u * fw->net->num_ops : 1, sizeof *p->ops);
    p->delta = calloc(fw->net->num_ops ? 2u * fw->net->num_ops : 1, sizeof *p->delta);
    if (!p->ops || !p->delta) {
        free_ops(p);
        return 0;
    }
    p->num_ops = fw->net->num_ops;
    p->atom_size = fw->atom_size;
    p->data_types = fw->data_types;
    return 1;
}

static int grow(void **buf, uint32_t *cap, uint32_t n, size_t size)
{
    if (n < *cap) {
        return 1;
    }
    uint32_t c = *cap ? 2 * *cap : 64;
    void *b = realloc(*buf, (size_t)c * size);
    if (!b) {
        return 0;
    }
    *buf = b;
    *cap = c;
    return 1;
}

static void add_step(struct nvrt_fw *fw, uint32_t kind, uint32_t reg, uint32_t val)
{
    struct nvrt_prep_op *o = fw->rec;
    if ((reg & ~STEP_ADDR_MASK) ||
        !grow((void **)&o->steps, &o->cap_steps, o->head.n_steps, sizeof *o->steps)) {
        o->broken = 1;
        return;
    }
    o->steps[o->head.n_steps++] = (struct prep_step){ kind << STEP_KIND_SHIFT | reg, val };
}

void nvrt_prep_wrote(struct nvrt_fw *fw, uint32_t addr, uint32_t val)
{
    fw->rec->wrote = 1;
    add_step(fw, STEP_WRITE, addr, val);
}

void nvrt_prep_read(struct nvrt_fw *fw, uint32_t addr, uint32_t val)
{
    if (fw->rec->wrote) {
        fw->rec->broken = 1; /* a read between writes: what follows may depend on it */
        return;
    }
    add_step(fw, STEP_READ, addr, val);
}

void nvrt_prep_unmasked(struct nvrt_fw *fw, uint32_t mask)
{
    fw->rec->wrote = 1;
    add_step(fw, STEP_UNMASK, 0, mask);
}

void nvrt_prep_marked(struct nvrt_fw *fw, int output, uint64_t addr, uint64_t bytes)
{
    struct nvrt_prep_op *o = fw->rec;
    if (!grow((void **)&o->marks, &o->cap_marks, o->head.n_marks, sizeof *o->marks)) {
        o->broken = 1;
        return;
    }
    o->marks[o->head.n_marks] = (struct prep_mark){ addr, bytes };
    add_step(fw, output ? STEP_MARK_OUT : STEP_MARK_IN, 0, o->head.n_marks++);
}

void nvrt_prep_address(struct nvrt_fw *fw, int16_t index, uint64_t addr)
{
    struct nvrt_prep_op *o = fw->rec;
    if (!grow((void **)&o->deps, &o->cap_deps, o->head.n_deps, sizeof *o->deps)) {
        o->broken = 1;
        return;
    }
    o->deps[o->head.n_deps++] = (struct prep_dep){ index, addr };
}

void nvrt_prep_lut(struct nvrt_fw *fw, int16_t index)
{
    struct nvrt_prep_op *o = fw->rec;
    if (o->head.lut >= 0 && o->head.lut != index) {
        o->broken = 1; /* one LUT per operation is all the engines load */
        return;
    }
    o->head.lut = index;
    memcpy(&o->copy.lut, &fw->net->luts[index], sizeof o->copy.lut);
}

/* Everything the recorded programming depended on is as it was. */
static int applies(const struct nvrt_fw *fw, const struct nvrt_group *g,
                   const struct prep_rec *r)
{
    const struct dlasim_rt_network *net = fw->net;
    if (!r || r->gid != g->id || r->rdma_id != g->rdma_id ||
        r->rdma_needed != g->is_rdma_needed || r->lut_before != g->lut_index ||
        (r->lut >= 0 && r->lut >= net->num_luts)) {
        return 0;
    }
    const struct prep_dep *d = rec_deps(r);
    for (uint32_t i = 0; i < r->n_deps; i++) {
        if (d[i].index >= net->num_addresses || net->addresses[d[i].index] != d[i].addr) {
            return 0;
        }
    }
    const struct prep_copy *c = rec_copy(r);
    if (!c) {
        return 1; /* fixed descriptors (DLASIM_RT_PREPARED_FIXED) */
    }
    return !memcmp(&c->desc, &net->ops[g->op], sizeof c->desc) &&
           (r->lut < 0 || !memcmp(&c->lut, &net->luts[r->lut], sizeof c->lut));
}

/* Replay r's steps (s[0..n): all of them, or its delta); 1 = a status
 * read differed (nothing written yet). */
static int replay(struct nvrt_fw *fw, struct nvrt_group *g, const struct prep_rec *r,
                  const struct prep_step *s, uint32_t n_steps)
{
    const struct prep_mark *marks = rec_marks(r);
    for (uint32_t i = 0; i < n_steps && !fw->rc; i++) {
        uint32_t kind = s[i].addr >> STEP_KIND_SHIFT, reg = s[i].addr & STEP_ADDR_MASK;
        switch (kind) {
        case STEP_WRITE: { /* the run of writes from i, in one port call */
            uint32_t n = 1;
            while (i + n < n_steps && (s[i + n].addr >> STEP_KIND_SHIFT) == STEP_WRITE) {
                n++;
            }
            nvrt_wr_n(fw, &s[i], n);
            i += n - 1;
            break;
        }
        case STEP_READ:
            if (nvrt_rd(fw, reg) != s[i].val && !fw->rc) {
                return 1;
            }
            break;
        case STEP_UNMASK:
            nvrt_enable_intr(fw, s[i].val);
            break;
        default:
            nvrt_mark_range(fw, kind == STEP_MARK_OUT, marks[s[i].val].addr,
                            marks[s[i].val].bytes);
            break;
        }
    }
    g->lut_index = r->lut_after;
    return 0;
}

/* The finished recording as one block; NULL when out of memory. */
static struct prep_rec *seal(struct dlasim_rt_prepared *pp, const struct nvrt_prep_op *o,
                             int keep_copy)
{
    const struct prep_rec *h = &o->head;
    size_t size = sizeof *h + h->n_deps * sizeof *o->deps + h->n_steps * sizeof *o->steps +
                  h->n_marks * sizeof *o->marks + (keep_copy ? sizeof o->copy : 0);
    struct prep_rec *r = malloc(size);
    if (!r) {
        return NULL;
    }
    *r = *h;
    r->serial = ++pp->next_serial;
    r->has_copy = (uint8_t)(keep_copy != 0);
    if (h->n_deps) {
        memcpy(rec_deps(r), o->deps, h->n_deps * sizeof *o->deps);
    }
    if (h->n_steps) {
        memcpy(rec_steps(r), o->steps, h->n_steps * sizeof *o->steps);
    }
    if (h->n_marks) {
        memcpy(rec_marks(r), o->marks, h->n_marks * sizeof *o->marks);
    }
    if (keep_copy) {
        memcpy(rec_copy(r), &o->copy, sizeof o->copy);
    }
    return r;
}

/* Whether the recording o writes a register of the RDMA whose S_POINTER
 * is rdma_pointer (0: the engine has none) other than that pointer: a
 * convolution writes none, nor does a PDP or SDP operation that reads no
 * operand (its RDMA group then keeps what it held). */
static uint8_t writes_rdma(const struct nvrt_prep_op *o, uint32_t rdma_pointer)
{
    const struct nvdla_reg_desc *ptr = rdma_pointer ? nvdla_reg_by_addr(rdma_pointer) : NULL;
    for (uint32_t i = 0; ptr && i < o->head.n_steps; i++) {
        const uint32_t a = o->steps[i].addr;
        const struct nvdla_reg_desc *d =
            a >> STEP_KIND_SHIFT == STEP_WRITE ? nvdla_reg_by_addr(a) : NULL;
        if (d && d->unit == ptr->unit && a != rdma_pointer) {
            return 1;
        }
    }
    return 0;
}

/* Program g's operation through its engine while recording the accesses;
 * the recording replaces *slot (and its delta *dslot) when the programming
 * succeeded. */
static int record(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g,
                  struct prep_rec **slot, struct prep_delta **dslot)
{
    struct nvrt_prep_op *o = &fw->prep->scratch;
    o->broken = o->wrote = 0;
    memset(&o->head, 0, sizeof o->head);
    o->head.gid = g->id;
    o->head.rdma_id = g->rdma_id;
    o->head.rdma_needed = g->is_rdma_needed;
    o->head.lut_before = g->lut_index;
    o->head.lut = -1;
    int keep_copy = !(fw->prep->flags & DLASIM_RT_PREPARED_FIXED);
    if (keep_copy) {
        memcpy(&o->copy.desc, &fw->net->ops[g->op], sizeof o->copy.desc);
    }
    fw->rec = o;
    int rc = p->eng->program(fw, g);
    fw->rec = NULL;
    o->head.lut_after = g->lut_index;
    o->head.rdma_writes = writes_rdma(o, p->eng->rdma_pointer_reg);
    free(*slot);
    free(*dslot);
    *dslot = NULL;
    *slot = !rc && !fw->rc && !o->broken ? seal(fw->prep, o, keep_copy) : NULL;
    fw->prep->rebuilt++;
    return rc;
}

/* Lines of a recording fetched ahead of its replay: the header, the
 * dependencies and the first ~60 steps (a MobileNetV2 operation's replay
 * stalled on the recording's lines: the engines' data evicts them between
 * inferences, and a recording is one malloc block of its own). */
#define PREP_PREFETCH_LINES 8
/* A delta's lines fetched ahead: its header and ~20 steps (MobileNetV2's
 * depthwise blocks replay 11.5 on average, make_delta). */
#define PREP_DELTA_PREFETCH_LINES 3

void nvrt_prep_prefetch_rec(const struct nvrt_fw *fw, int16_t op)
{
    const struct dlasim_rt_prepared *pp = fw->prep;
    if (!pp || !pp->ops || op < 0 || (uint32_t)op >= pp->num_ops) {
        return;
    }
    for (int g = 0; g < 2; g++) { /* the group it gets is not known yet */
        const char *r = (const char *)pp->ops[2 * op + g];
        for (int i = 0; r && i < PREP_PREFETCH_LINES; i++) {
            __builtin_prefetch(r + 64 * i);
        }
        /* and the delta, which is what a depthwise block replays instead */
        const char *dl = (const char *)pp->delta[2 * op + g];
        for (int i = 0; dl && i < PREP_DELTA_PREFETCH_LINES; i++) {
            __builtin_prefetch(dl + 64 * i);
        }
    }
}

void nvrt_prep_prefetch(const struct nvrt_fw *fw, int16_t op)
{
    const struct dlasim_rt_prepared *pp = fw->prep;
    if (pp && pp->ops && op >= 0 && (uint32_t)op < pp->num_ops) {
        __builtin_prefetch(&pp->ops[2 * op]); /* both groups' slots: one line */
    }
}

/* The register index of addr when a write to it may be left out while the
 * group holds its value, else -1: a dual configuration register (regdb kind
 * PLAIN, writable, no write-1 to clear or set bits), which only CSB writes
 * change. */
static int held_index(uint32_t addr)
{
    const struct nvdla_reg_desc *d = nvdla_reg_by_addr(addr);
    return d && d->group == NVDLA_REG_DUAL && d->kind == NVDLA_KIND_PLAIN && d->write_mask &&
                   !d->w1c_mask && !d->w1s_mask
               ? (int)nvdla_reg_index(d)
               : -1;
}

/* make_delta's table of what a group holds, by register index, marked
 * valid for one delta by a generation number (no clearing, no sort); NULL
 * when out of memory. */
static struct held_reg *held_table(struct dlasim_rt_prepared *pp)
{
    if (!pp->held && !(pp->held = calloc(nvdla_reg_count, sizeof *pp->held))) {
        return NULL;
    }
    if (++pp->held_gen == 0) { /* wrapped: every entry's mark could match again */
        memset(pp->held, 0, nvdla_reg_count * sizeof *pp->held);
        pp->held_gen = 1;
    }
    return pp->held;
}

/* r's steps less its writes of values the group holds after prev's (the
 * last write of each dual configuration register prev made); NULL when out
 * of memory (the full replay then runs). */
static struct prep_delta *make_delta(struct dlasim_rt_prepared *pp, const struct prep_rec *r,
                                     const struct prep_rec *prev)
{
    struct held_reg *h = held_table(pp);
    struct prep_delta *dl = malloc(sizeof *dl + (r->n_steps ? r->n_steps : 1) * sizeof *dl->steps);
    if (!h || !dl) {
        free(dl);
        return NULL;
    }
    const uint32_t gen = pp->held_gen;
    const struct prep_step *s = rec_steps(prev);
    for (uint32_t i = 0; i < prev->n_steps; i++) {
        int k = s[i].addr >> STEP_KIND_SHIFT == STEP_WRITE ? held_index(s[i].addr) : -1;
        if (k >= 0) {
            h[k] = (struct held_reg){ s[i].val, gen };
        }
    }
    s = rec_steps(r);
    dl->prev = prev->serial;
    dl->n_steps = 0;
    for (uint32_t i = 0; i < r->n_steps; i++) {
        int k = s[i].addr >> STEP_KIND_SHIFT == STEP_WRITE ? held_index(s[i].addr) : -1;
        if (k >= 0 && h[k].gen == gen) {
            if (h[k].val == s[i].val) {
                continue; /* the group holds it */
            }
            h[k].val = s[i].val; /* what the group holds from here on */
        }
        dl->steps[dl->n_steps++] = s[i];
    }
    return dl;
}

/* The delta of slot i's recording against what processor t's group holds,
 * made when it is not the one kept; NULL: replay every step. */
static const struct prep_delta *delta_for(struct nvrt_fw *fw, unsigned t,
                                          const struct nvrt_group *g, uint32_t i)
{
    struct dlasim_rt_prepared *pp = fw->prep;
    const struct prep_rec *r = pp->ops[i], *prev = fw->held_rec[t][g->id & 1];
    /* both groups it writes (its engine's and, where it writes its RDMA's,
     * that one) last written by prev, into the same groups */
    if (!prev || prev->gid != r->gid || prev->rdma_id != r->rdma_id ||
        (r->rdma_writes && fw->rdma_held[t][r->rdma_id & 1] != prev->serial)) {
        return NULL;
    }
    if (pp->delta[i] && pp->delta[i]->prev == prev->serial) {
        return pp->delta[i];
    }
    free(pp->delta[i]);
    pp->delta[i] = make_delta(pp, r, prev);
    return pp->delta[i];
}

/* Processor t's group g (and its RDMA group) now hold r's programming
 * (NULL: something not known). */
static void hold(struct nvrt_fw *fw, unsigned t, const struct nvrt_group *g,
                 const struct prep_rec *r)
{
    fw->held_rec[t][g->id & 1] = r;
    if (!r || r->rdma_writes) { /* else its RDMA group holds what it held */
        fw->rdma_held[t][g->rdma_id & 1] = r ? r->serial : 0;
    }
}

int nvrt_prep_program(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g)
{
    struct dlasim_rt_prepared *pp = fw->prep;
    const unsigned t = (unsigned)(p - fw->proc);
    if (!fit(pp, fw)) {
        hold(fw, t, g, NULL);
        return p->eng->program(fw, g);
    }
    /* one recording per register group: a network whose engine runs an odd
     * number of operations starts the next run in the other group */
    const uint32_t i = 2u * (uint32_t)g->op + (g->id & 1u);
    struct prep_rec **slot = &pp->ops[i];
    if (applies(fw, g, *slot)) {
        const struct prep_rec *r = *slot;
        const struct prep_delta *dl = delta_for(fw, t, g, i);
        if (replay(fw, g, r, dl ? dl->steps : rec_steps(r), dl ? dl->n_steps : r->n_steps) == 0) {
            pp->replayed++;
            hold(fw, t, g, r);
            return fw->rc;
        }
    }
    int rc = record(fw, p, g, slot, &pp->delta[i]);
    if (!rc && !fw->rc && *slot) {
        /* its delta against what the group holds now, made while recording:
         * the next run, whose operation before is the same recording,
         * replays it without making it first */
        (void)delta_for(fw, t, g, i);
    }
    hold(fw, t, g, rc || fw->rc ? NULL : *slot);
    return rc;
}
