/*
 * Loadable writer: the flatbuffer of nvdla/sw umd/core/src/common/
 * loadable.fbs (namespace nvdla.loadable, no file identifier, as NVIDIA's
 * compiler writes), built front to back: a table is written with
 * placeholder offsets, its strings, vectors and sub-tables after it, and the
 * placeholders patched (FlatBuffers offsets point forward).  Every vtable
 * sits just before its table; scalars are aligned to their size, 8-byte
 * fields and vector elements to 8.  Plus the encoder of a network's
 * descriptor blobs (desc.c layouts).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/runtime.h"
#include "driver/nvdla/desc.h"

struct fbb {
    uint8_t *buf;
    size_t len, cap;
    int err;
};

static size_t fbb_reserve(struct fbb *b, size_t n)
{
    if (b->err) {
        return 0;
    }
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : 1024;
        while (nc < b->len + n) {
            nc *= 2;
        }
        uint8_t *nb = realloc(b->buf, nc);
        if (!nb || nc > 0x7fffffffu) {
            free(nb != b->buf ? nb : NULL);
            b->err = 1;
            return 0;
        }
        b->buf = nb;
        b->cap = nc;
    }
    size_t at = b->len;
    memset(b->buf + at, 0, n);
    b->len += n;
    return at;
}

static void fbb_align(struct fbb *b, size_t a, size_t phase)
{
    while (!b->err && b->len % a != phase) {
        fbb_reserve(b, 1);
    }
}

static void wr_le(struct fbb *b, size_t at, uint64_t v, unsigned n)
{
    if (!b->err) {
        for (unsigned i = 0; i < n; i++) {
            b->buf[at + i] = (uint8_t)(v >> (8 * i));
        }
    }
}

/* Point the uoffset at `slot` to `target` (target > slot). */
static void patch(struct fbb *b, size_t slot, size_t target)
{
    wr_le(b, slot, (uint64_t)(target - slot), 4);
}

/* ---- tables -------------------------------------------------------------------- */

enum fkind { F_NONE = 0, F_SCALAR, F_OFFSET };

struct field {
    enum fkind kind;
    unsigned size; /* scalar bytes (1, 2, 4, 8; 3 for the Version struct) */
    uint64_t value;
    const uint8_t *bytes; /* the Version struct */
    size_t pos;           /* where it was written */
};

#define MAX_FIELDS 24

/* Write a table of n fields (index = field id); returns its position. */
static size_t table(struct fbb *b, struct field *f, unsigned n)
{
    int has8 = 0;
    for (unsigned i = 0; i < n; i++) {
        has8 |= f[i].kind == F_SCALAR && f[i].size == 8;
    }
    /* layout: soffset, then fields by decreasing alignment */
    uint16_t off[MAX_FIELDS] = { 0 };
    unsigned pos = 4;
    static const unsigned order[] = { 8, 4, 3, 2, 1 };
    for (unsigned o = 0; o < sizeof order / sizeof order[0]; o++) {
        for (unsigned i = 0; i < n; i++) {
            unsigned sz = f[i].kind == F_OFFSET ? 4 : f[i].size;
            if (f[i].kind == F_NONE || sz != order[o]) {
                continue;
            }
            unsigned al = sz == 3 ? 1 : sz;
            pos = (pos + al - 1) / al * al;
            off[i] = (uint16_t)pos;
            pos += sz;
        }
    }
    unsigned tsize = (pos + 3) / 4 * 4;
    unsigned vsize = 4 + 2 * n;
    /* the table must start at 4 mod 8 when it holds 8-byte fields (they
     * then sit at 8-aligned absolute positions) */
    fbb_align(b, 2, 0);
    size_t want = has8 ? 4 : 0, m = has8 ? 8 : 4;
    while (!b->err && (b->len + vsize) % m != want) {
        fbb_reserve(b, 2);
    }
    size_t vt = fbb_reserve(b, vsize);
    size_t t = fbb_reserve(b, tsize);
    if (b->err) {
        return 0;
    }
    wr_le(b, vt, vsize, 2);
    wr_le(b, vt + 2, tsize, 2);
    for (unsigned i = 0; i < n; i++) {
        wr_le(b, vt + 4 + 2 * i, off[i], 2);
    }
    wr_le(b, t, (uint64_t)(t - vt), 4);
    for (unsigned i = 0; i < n; i++) {
        f[i].pos = t + off[i];
        if (f[i].kind == F_SCALAR && f[i].bytes) {
            memcpy(b->buf + f[i].pos, f[i].bytes, f[i].size);
        } else if (f[i].kind == F_SCALAR) {
            wr_le(b, f[i].pos, f[i].value, f[i].size);
        }
    }
    return t;
}

static struct field sc(unsigned size, uint64_t v)
{
    struct field f = { F_SCALAR, size, v, NULL, 0 };
    return f;
}

static struct field ref(void)
{
    struct field f = { F_OFFSET, 4, 0, NULL, 0 };
    return f;
}

static void string_at(struct fbb *b, size_t slot, const char *s)
{
    size_t n = strlen(s);
    fbb_align(b, 4, 0);
    size_t at = fbb_reserve(b, 4 + n + 1);
    if (!b->err) {
        wr_le(b, at, n, 4);
        memcpy(b->buf + at + 4, s, n);
        patch(b, slot, at);
    }
}

/* A vector of n scalars of `size` bytes from `get(i)`; returns element 0's position. */
static size_t vector_at(struct fbb *b, size_t slot, size_t n, unsigned size, const void *arr)
{
    fbb_align(b, size < 4 ? 4 : size, size == 8 ? 4 : 0);
    size_t at = fbb_reserve(b, 4 + n * size);
    if (b->err) {
        return 0;
    }
    wr_le(b, at, n, 4);
    for (size_t i = 0; i < n && arr; i++) {
        uint64_t v = size == 1 ? ((const uint8_t *)arr)[i]
                   : size == 2 ? ((const uint16_t *)arr)[i]
                   : size == 4 ? ((const uint32_t *)arr)[i]
                               : ((const uint64_t *)arr)[i];
        wr_le(b, at + 4 + i * size, v, size);
    }
    patch(b, slot, at);
    return at + 4;
}

/* A vector of n offsets (to tables or strings) at slot; returns element 0's position. */
static size_t offsets_at(struct fbb *b, size_t slot, size_t n)
{
    return vector_at(b, slot, n, 4, NULL);
}

/* ---- the schema's tables --------------------------------------------------------- */

static void blob(struct fbb *b, size_t slot, const struct dlasim_loadable_blob_desc *d)
{
    struct field f[6] = { ref(), sc(8, d->size), sc(4, d->interface), sc(4, d->sub_interface),
                          sc(3, 0), ref() };
    f[4].bytes = d->version;
    size_t t = table(b, f, 6);
    patch(b, slot, t);
    string_at(b, f[0].pos, d->name);
    vector_at(b, f[5].pos, d->size, 1, d->data);
}

static void memory(struct fbb *b, size_t slot, const struct dlasim_loadable_memory_desc *d)
{
    struct field f[9] = { sc(2, d->id), sc(1, d->domain), sc(2, d->flags), sc(8, d->size),
                          sc(4, d->alignment), ref(), ref(), sc(2, d->bind_id),
                          sc(2, d->tensor_desc_id) };
    size_t t = table(b, f, 9);
    patch(b, slot, t);
    size_t v = offsets_at(b, f[5].pos, d->n_contents);
    for (size_t i = 0; i < d->n_contents; i++) {
        string_at(b, v + 4 * i, d->contents[i] ? d->contents[i] : "");
    }
    vector_at(b, f[6].pos, d->n_contents, 8, d->offsets);
}

static void address(struct fbb *b, size_t slot, const struct dlasim_loadable_address_desc *d)
{
    struct field f[4] = { sc(2, d->id), sc(2, d->mem_id), sc(8, d->offset), sc(8, d->size) };
    patch(b, slot, table(b, f, 4));
}

static void task(struct fbb *b, size_t slot, const struct dlasim_loadable_task_desc *d)
{
    struct field f[6] = { sc(2, d->id), sc(4, d->interface), sc(2, (uint16_t)d->instance),
                          ref(), ref(), ref() };
    patch(b, slot, table(b, f, 6));
    vector_at(b, f[3].pos, d->n_addresses, 2, d->address_list);
    vector_at(b, f[4].pos, d->n_pre_actions, 2, d->pre_actions);
    vector_at(b, f[5].pos, d->n_post_actions, 2, d->post_actions);
}

static void event(struct fbb *b, size_t slot, const struct dlasim_loadable_event_desc *d)
{
    struct field f[5] = { sc(2, d->id), sc(1, d->type), sc(2, d->target), sc(4, d->val),
                          sc(1, d->op) };
    patch(b, slot, table(b, f, 5));
}

static void submit(struct fbb *b, size_t slot, const struct dlasim_loadable_submit_desc *d)
{
    struct field f[2] = { sc(2, d->id), ref() };
    patch(b, slot, table(b, f, 2));
    vector_at(b, f[1].pos, d->n_tasks, 2, d->task_ids);
}

static void tensor(struct fbb *b, size_t slot, const struct dlasim_loadable_tensor_desc *d)
{
    struct field f[22] = {
        ref(),
        sc(2, d->id),
        sc(2, d->mem_id),
        sc(8, d->size),
        sc(8, d->offset),
        sc(1, d->data_format),
        sc(1, d->data_type),
        sc(1, d->data_category),
        sc(1, d->pixel_format),
        sc(1, d->pixel_mapping),
        sc(4, (uint32_t)d->n),
        sc(4, (uint32_t)d->c),
        sc(4, (uint32_t)d->h),
        sc(4, (uint32_t)d->w),
    };
    for (int i = 0; i < 8; i++) {
        f[14 + i] = sc(4, d->stride[i]);
    }
    patch(b, slot, table(b, f, 22));
    string_at(b, f[0].pos, d->name ? d->name : "");
}

int dlasim_loadable_write(const struct dlasim_loadable_desc *d, uint8_t **out, size_t *len,
                          char *err, size_t errlen)
{
    struct fbb b = { NULL, 0, 0, 0 };
    if (!d || !out || !len) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_loadable_write: NULL description, out or len");
        }
        return DLASIM_ERR_INVAL;
    }
    *out = NULL;
    *len = 0;
    size_t root_slot = fbb_reserve(&b, 4);
    /* Loadable: version, task_list, memory_list, address_list, event_list,
     * blobs, tensor_desc_list, reloc_list (empty), submit_list */
    struct field f[9] = { sc(3, 0), ref(), ref(), ref(), ref(), ref(), ref(), ref(), ref() };
    f[0].bytes = d->version;
    size_t root = table(&b, f, 9);
    patch(&b, root_slot, root);
    size_t v = offsets_at(&b, f[1].pos, d->n_tasks);
    for (size_t i = 0; i < d->n_tasks; i++) {
        task(&b, v + 4 * i, &d->tasks[i]);
    }
    v = offsets_at(&b, f[2].pos, d->n_memories);
    for (size_t i = 0; i < d->n_memories; i++) {
        memory(&b, v + 4 * i, &d->memories[i]);
    }
    v = offsets_at(&b, f[3].pos, d->n_addresses);
    for (size_t i = 0; i < d->n_addresses; i++) {
        address(&b, v + 4 * i, &d->addresses[i]);
    }
    v = offsets_at(&b, f[4].pos, d->n_events);
    for (size_t i = 0; i < d->n_events; i++) {
        event(&b, v + 4 * i, &d->events[i]);
    }
    v = offsets_at(&b, f[5].pos, d->n_blobs);
    for (size_t i = 0; i < d->n_blobs; i++) {
        blob(&b, v + 4 * i, &d->blobs[i]);
    }
    v = offsets_at(&b, f[6].pos, d->n_tensors);
    for (size_t i = 0; i < d->n_tensors; i++) {
        tensor(&b, v + 4 * i, &d->tensors[i]);
    }
    offsets_at(&b, f[7].pos, 0);
    v = offsets_at(&b, f[8].pos, d->n_submits);
    for (size_t i = 0; i < d->n_submits; i++) {
        submit(&b, v + 4 * i, &d->submits[i]);
    }
    fbb_align(&b, 8, 0);
    if (b.err) {
        free(b.buf);
        if (err && errlen) {
            snprintf(err, errlen, "loadable writer: out of host memory or over 2 GiB");
        }
        return DLASIM_ERR_NOMEM;
    }
    *out = b.buf;
    *len = b.len;
    return 0;
}

/* ---- descriptor blobs of a network ----------------------------------------------- */

int dlasim_rt_encode(const struct dlasim_rt_network *net, unsigned minor,
                     const int16_t list_index[4], struct dlasim_rt_encoded *out, char *err,
                     size_t errlen)
{
    if (!net || !out || !list_index || (net->num_ops && !net->ops)) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_rt_encode: NULL network, list_index or out");
        }
        return DLASIM_ERR_INVAL;
    }
    memset(out, 0, sizeof *out);
    if (minor < 10 || minor > 12) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_rt_encode: interface version 0.%u (0.10-0.12 exist)",
                     minor);
        }
        return DLASIM_ERR_INVAL;
    }
    size_t n = net->num_ops;
    out->network_size = NVRT_NETWORK_DESC_SIZE;
    out->ops_size = n * NVRT_OP_DESC_SIZE;
    out->surfaces_size = n * NVRT_SURFACE_DESC_SIZE;
    out->deps_size = n * NVRT_DEP_SIZE;
    out->luts_size = (size_t)net->num_luts * NVRT_LUT_SIZE;
    out->network = calloc(1, out->network_size);
    out->ops = calloc(1, out->ops_size + 1);
    out->surfaces = calloc(1, out->surfaces_size + 1);
    out->deps = calloc(1, out->deps_size + 1);
    out->luts = calloc(1, out->luts_size + 1);
    if (!out->network || !out->ops || !out->surfaces || !out->deps || !out->luts) {
        dlasim_rt_encoded_free(out);
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_rt_encode: out of host memory");
        }
        return DLASIM_ERR_NOMEM;
    }
    struct nvrt_network_desc nd;
    memset(&nd, 0, sizeof nd);
    nd.operation_desc_index = list_index[0];
    nd.surface_desc_index = list_index[1];
    nd.dependency_graph_index = list_index[2];
    nd.lut_data_index = net->num_luts ? list_index[3] : -1;
    nd.roi_array_index = nd.surface_index = nd.stat_list_index = -1;
    memcpy(nd.op_head, net->op_head, sizeof nd.op_head);
    nd.num_rois = 1;
    nd.num_operations = net->num_ops;
    nd.num_luts = net->num_luts;
    nd.num_addresses = net->num_addresses;
    nd.input_layer = 0;
    nvrt_encode_network(out->network, &nd);
    for (size_t i = 0; i < n; i++) {
        nvrt_encode_dep(out->deps + i * NVRT_DEP_SIZE, (uint16_t)i, &net->ops[i]);
        nvrt_encode_op(out->ops + i * NVRT_OP_DESC_SIZE, &net->ops[i]);
        nvrt_encode_surface(out->surfaces + i * NVRT_SURFACE_DESC_SIZE, minor >= 12,
                            &net->ops[i]);
    }
    for (uint16_t i = 0; i < net->num_luts; i++) {
        nvrt_encode_lut(out->luts + (size_t)i * NVRT_LUT_SIZE, &net->luts[i]);
    }
    return 0;
}

void dlasim_rt_encoded_free(struct dlasim_rt_encoded *e)
{
    if (!e) {
        return;
    }
    free(e->network);
    free(e->ops);
    free(e->surfaces);
    free(e->deps);
    free(e->luts);
    memset(e, 0, sizeof *e);
}
