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
 * atom size and data types.  A replay happens only when all of these are
 * unchanged, so it issues exactly the accesses a rebuild would: the engine
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
#include <stdlib.h>
#include <string.h>

#include "driver/nvdla/fw.h"

enum prep_kind { STEP_WRITE, STEP_READ, STEP_UNMASK, STEP_MARK_IN, STEP_MARK_OUT };

struct prep_step {
    uint32_t kind; /* enum prep_kind */
    uint32_t reg;  /* WRITE, READ */
    uint64_t a;    /* WRITE: value; READ: value read; UNMASK: mask; MARK: address */
    uint64_t b;    /* MARK: bytes */
};

struct prep_dep { /* an address-list entry the programming used */
    int16_t index;
    uint64_t addr;
};

struct nvrt_prep_op {
    uint8_t ready;  /* steps may be replayed */
    uint8_t broken; /* recording: out of memory, or a read after a write */
    uint8_t wrote;  /* recording: a write or unmask seen */
    uint8_t gid, rdma_id, rdma_needed;
    int16_t lut_before, lut_after; /* the group's lut_index before / after programming */
    int16_t lut;                   /* LUT loaded, -1 = none */
    struct dlasim_rt_op desc;
    struct dlasim_rt_lut lut_copy;
    struct prep_step *steps;
    uint32_t n_steps, cap_steps;
    struct prep_dep *deps;
    uint32_t n_deps, cap_deps;
};

struct dlasim_rt_prepared {
    struct nvrt_prep_op *ops; /* operation i in group g: ops[2 * i + g] */
    uint32_t num_ops;
    uint32_t atom_size, data_types;
    uint64_t replayed, rebuilt;
};

struct dlasim_rt_prepared *dlasim_rt_prepared_new(void)
{
    return calloc(1, sizeof(struct dlasim_rt_prepared));
}

static void free_ops(struct dlasim_rt_prepared *p)
{
    for (uint32_t i = 0; p->ops && i < 2u * p->num_ops; i++) {
        free(p->ops[i].steps);
        free(p->ops[i].deps);
    }
    free(p->ops);
    p->ops = NULL;
    p->num_ops = 0;
}

void dlasim_rt_prepared_free(struct dlasim_rt_prepared *p)
{
    if (p) {
        free_ops(p);
        free(p);
    }
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
    if (!p->ops) {
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

static void add_step(struct nvrt_fw *fw, uint32_t kind, uint32_t reg, uint64_t a, uint64_t b)
{
    struct nvrt_prep_op *o = fw->rec;
    if (!grow((void **)&o->steps, &o->cap_steps, o->n_steps, sizeof *o->steps)) {
        o->broken = 1;
        return;
    }
    o->steps[o->n_steps++] = (struct prep_step){ kind, reg, a, b };
}

void nvrt_prep_wrote(struct nvrt_fw *fw, uint32_t addr, uint32_t val)
{
    fw->rec->wrote = 1;
    add_step(fw, STEP_WRITE, addr, val, 0);
}

void nvrt_prep_read(struct nvrt_fw *fw, uint32_t addr, uint32_t val)
{
    if (fw->rec->wrote) {
        fw->rec->broken = 1; /* a read between writes: what follows may depend on it */
        return;
    }
    add_step(fw, STEP_READ, addr, val, 0);
}

void nvrt_prep_unmasked(struct nvrt_fw *fw, uint32_t mask)
{
    fw->rec->wrote = 1;
    add_step(fw, STEP_UNMASK, 0, mask, 0);
}

void nvrt_prep_marked(struct nvrt_fw *fw, int output, uint64_t addr, uint64_t bytes)
{
    add_step(fw, output ? STEP_MARK_OUT : STEP_MARK_IN, 0, addr, bytes);
}

void nvrt_prep_address(struct nvrt_fw *fw, int16_t index, uint64_t addr)
{
    struct nvrt_prep_op *o = fw->rec;
    if (!grow((void **)&o->deps, &o->cap_deps, o->n_deps, sizeof *o->deps)) {
        o->broken = 1;
        return;
    }
    o->deps[o->n_deps++] = (struct prep_dep){ index, addr };
}

void nvrt_prep_lut(struct nvrt_fw *fw, int16_t index)
{
    struct nvrt_prep_op *o = fw->rec;
    if (o->lut >= 0 && o->lut != index) {
        o->broken = 1; /* one LUT per operation is all the engines load */
        return;
    }
    o->lut = index;
    memcpy(&o->lut_copy, &fw->net->luts[index], sizeof o->lut_copy);
}

/* Everything the recorded programming depended on is as it was. */
static int applies(const struct nvrt_fw *fw, const struct nvrt_group *g,
                   const struct nvrt_prep_op *o)
{
    const struct dlasim_rt_network *net = fw->net;
    if (!o->ready || o->gid != g->id || o->rdma_id != g->rdma_id ||
        o->rdma_needed != g->is_rdma_needed || o->lut_before != g->lut_index ||
        memcmp(&o->desc, &net->ops[g->op], sizeof o->desc)) {
        return 0;
    }
    for (uint32_t i = 0; i < o->n_deps; i++) {
        const struct prep_dep *d = &o->deps[i];
        if (d->index < 0 || d->index >= net->num_addresses ||
            net->addresses[d->index] != d->addr) {
            return 0;
        }
    }
    return o->lut < 0 || (o->lut < net->num_luts &&
                          !memcmp(&o->lut_copy, &net->luts[o->lut], sizeof o->lut_copy));
}

/* Replay o's steps; 1 = a status read differed (nothing written yet). */
static int replay(struct nvrt_fw *fw, struct nvrt_group *g, const struct nvrt_prep_op *o)
{
    for (uint32_t i = 0; i < o->n_steps && !fw->rc; i++) {
        const struct prep_step *s = &o->steps[i];
        switch (s->kind) {
        case STEP_WRITE:
            nvrt_wr(fw, s->reg, (uint32_t)s->a);
            break;
        case STEP_READ:
            if (nvrt_rd(fw, s->reg) != (uint32_t)s->a && !fw->rc) {
                return 1;
            }
            break;
        case STEP_UNMASK:
            nvrt_enable_intr(fw, (uint32_t)s->a);
            break;
        default:
            nvrt_mark_range(fw, s->kind == STEP_MARK_OUT, s->a, s->b);
            break;
        }
    }
    g->lut_index = o->lut_after;
    return 0;
}

/* Program g's operation through its engine while recording the accesses. */
static int record(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g,
                  struct nvrt_prep_op *o)
{
    o->ready = o->broken = o->wrote = 0;
    o->n_steps = o->n_deps = 0;
    o->gid = g->id;
    o->rdma_id = g->rdma_id;
    o->rdma_needed = g->is_rdma_needed;
    o->lut_before = g->lut_index;
    o->lut = -1;
    memcpy(&o->desc, &fw->net->ops[g->op], sizeof o->desc);
    fw->rec = o;
    int rc = p->eng->program(fw, g);
    fw->rec = NULL;
    o->lut_after = g->lut_index;
    o->ready = !rc && !fw->rc && !o->broken;
    fw->prep->rebuilt++;
    return rc;
}

int nvrt_prep_program(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g)
{
    struct dlasim_rt_prepared *pp = fw->prep;
    if (!fit(pp, fw)) {
        return p->eng->program(fw, g);
    }
    /* one recording per register group: a network whose engine runs an odd
     * number of operations starts the next run in the other group */
    struct nvrt_prep_op *o = &pp->ops[2 * g->op + (g->id & 1)];
    if (applies(fw, g, o)) {
        if (replay(fw, g, o) == 0) {
            pp->replayed++;
            return fw->rc;
        }
    }
    return record(fw, p, g, o);
}
