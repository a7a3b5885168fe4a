/*
 * NVDLA loadables: the flatbuffer NVIDIA's compiler writes (schema: nvdla/sw
 * umd/core/src/common/loadable.fbs, namespace nvdla.loadable), read with
 * the bounds-checked reader of flatbuf.c, validated, and run the way
 * NVIDIA's runtime does (ref: umd/core/src/runtime/Runtime.cpp, facts only):
 *
 *   - every memory-list entry is allocated in device memory; entries with
 *     SET get their content blobs copied in at their offsets; the others are
 *     zero-filled (the test application zero-fills its output buffer);
 *   - bindable tensors: a memory with INPUT (OUTPUT) and bind_id i is input
 *     (output) tensor i, described by tensor_desc_list[tensor_desc_id];
 *   - a task's address_list maps the firmware's address indexes to
 *     address-list entries (memory + offset); submits run in order, their
 *     tasks in order; a DLA task is handed to the firmware-equivalent
 *     executor, which reads its network descriptor from address index 0;
 *   - output tensor i is dumped as nvdla_runtime's .dimg (ref: umd/apps/
 *     runtime DlaImage.cpp, TestUtils.cpp Tensor2DIMG): INT8 FEATURE tensors
 *     in the 32-channels-per-atom layout, FEATURE_X8 in 8.
 *
 *   - EMU tasks (softmax, power) run on the CPU (emu.c) on device memory.
 *
 * Refused with a message naming what asks for it: SRAM memories on a device
 * without a secondary port, ROIs, descriptor versions other than 0.10-0.12.
 * The reloc_list (stride rewrites when tensors are bound with other
 * strides) is not applied: tensors are bound at the loadable's strides.  Every index and size read from the file is checked
 * before use; an error names the table, field and byte offset.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/runtime.h"
#include "driver/nvdla/desc.h"
#include "loadable/flatbuf.h"
#include "loadable/layout.h"
#include "driver/nvdla/fw.h"
#include "driver/nvdla/image.h"
#include "driver/port.h"
#include "common/status.h"

#define MEM_FLAG_ALLOC 1u
#define MEM_FLAG_SET 2u
#define MEM_FLAG_INPUT 4u
#define MEM_FLAG_OUTPUT 8u
#define IFACE_DLA1 1u
#define IFACE_EMU1 2u
#define MAX_MEMORY (1ull << 30) /* one loadable's device memory in total */
#define MAX_ENTRIES 65535u

struct ld_blob {
    const char *name;
    uint32_t name_len;
    uint8_t version[3];
    uint32_t sub_interface;
    uint32_t data_pos, data_len;
};

struct ld_mem {
    uint16_t id, flags, bind_id, tensor_desc_id;
    uint8_t domain;
    uint64_t size;
    uint32_t n_contents;
    uint32_t *content_blob; /* blob index per content */
    uint64_t *content_off;
    uint64_t addr; /* device address once allocated */
};

struct ld_addr {
    uint16_t mem_id;
    uint64_t offset, size;
};

struct ld_task {
    uint32_t interface;
    uint32_t n_addrs;
    uint16_t *addrs;
};

struct ld_submit {
    uint32_t n_tasks;
    uint16_t *tasks;
};

struct ld_tensor {
    uint16_t mem_id;
    uint64_t size, offset;
    uint8_t data_type, pixel_format;
    int32_t c, h, w;
    uint32_t stride[8];
};

struct dlasim_loadable {
    uint8_t *buf;
    size_t len;
    uint32_t n_blobs, n_mems, n_addrs, n_tasks, n_submits, n_tensors;
    struct ld_blob *blobs;
    struct ld_mem *mems;
    struct ld_addr *addrs;
    struct ld_task *tasks;
    struct ld_submit *submits;
    struct ld_tensor *tensors;
    uint8_t **dimg;
    size_t *dimg_len;
    unsigned n_outputs, n_inputs;
    struct dlasim_rt_prepared **prep; /* per task: its programming, kept by the first run */
};

/* ---- parsing ------------------------------------------------------------------- */

static int vec_u16(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *f,
                   uint16_t **out, uint32_t *n)
{
    struct fb_vec v;
    int rc = fb_vector(r, t, idx, f, 2, &v);
    if (rc) {
        return rc;
    }
    *n = v.count;
    *out = calloc(v.count ? v.count : 1, sizeof **out);
    if (!*out) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count; i++) {
        (*out)[i] = fb_rd16(r, v.pos + 2 * i);
    }
    return 0;
}

static int parse_blobs(struct fb_reader *r, const struct fb_table *root, struct dlasim_loadable *ld)
{
    struct fb_vec v;
    int rc = fb_vector(r, root, 5, "blobs", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_blobs = v.count;
    ld->blobs = calloc(v.count ? v.count : 1, sizeof *ld->blobs);
    if (!ld->blobs) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        struct fb_table t;
        struct ld_blob *b = &ld->blobs[i];
        struct fb_vec data;
        uint32_t vpos;
        rc = fb_vec_table(r, &v, i, "Blob", &t);
        rc = rc ? rc : fb_string(r, &t, 0, "name", &b->name, &b->name_len);
        rc = rc ? rc : fb_u32(r, &t, 3, "sub_interface", 0, &b->sub_interface);
        rc = rc ? rc : fb_field(r, &t, 4, "version", 3, &vpos);
        rc = rc ? rc : fb_vector(r, &t, 5, "data", 1, &data);
        if (!rc && vpos) {
            memcpy(b->version, r->buf + vpos, 3);
        }
        b->data_pos = data.pos;
        b->data_len = data.count;
    }
    return rc;
}

static int find_blob(const struct dlasim_loadable *ld, const char *name, uint32_t len,
                     uint32_t *idx)
{
    for (uint32_t i = 0; i < ld->n_blobs; i++) {
        if (ld->blobs[i].name_len == len && memcmp(ld->blobs[i].name, name, len) == 0) {
            *idx = i;
            return 1;
        }
    }
    return 0;
}

static int parse_memory(struct fb_reader *r, struct dlasim_loadable *ld, const struct fb_vec *v,
                        uint32_t i, uint64_t *total)
{
    struct fb_table t;
    struct ld_mem *m = &ld->mems[i];
    struct fb_vec contents, offsets;
    int rc = fb_vec_table(r, v, i, "MemoryListEntry", &t);
    rc = rc ? rc : fb_u16(r, &t, 0, "id", 0, &m->id);
    rc = rc ? rc : fb_u8(r, &t, 1, "domain", 0, &m->domain);
    rc = rc ? rc : fb_u16(r, &t, 2, "flags", 0, &m->flags);
    rc = rc ? rc : fb_u64(r, &t, 3, "size", 0, &m->size);
    rc = rc ? rc : fb_vector(r, &t, 5, "contents", 4, &contents);
    rc = rc ? rc : fb_vector(r, &t, 6, "offsets", 8, &offsets);
    rc = rc ? rc : fb_u16(r, &t, 7, "bind_id", 0, &m->bind_id);
    rc = rc ? rc : fb_u16(r, &t, 8, "tensor_desc_id", 0, &m->tensor_desc_id);
    if (rc) {
        return rc;
    }
    if (m->size > MAX_MEMORY || *total + m->size > MAX_MEMORY) {
        return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                       "loadable: memory_list[%u].size=%llu (table at byte 0x%x): the "
                       "loadable's memories exceed %llu bytes",
                       i, (unsigned long long)m->size, t.pos, (unsigned long long)MAX_MEMORY);
    }
    *total += m->size;
    m->content_blob = calloc(contents.count ? contents.count : 1, sizeof *m->content_blob);
    m->content_off = calloc(contents.count ? contents.count : 1, sizeof *m->content_off);
    if (!m->content_blob || !m->content_off) {
        return DLASIM_ERR_NOMEM;
    }
    if (!(m->flags & MEM_FLAG_SET)) {
        return 0;
    }
    if (offsets.count < contents.count) {
        return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                       "loadable: memory_list[%u] (table at byte 0x%x): %u contents but %u "
                       "offsets",
                       i, t.pos, contents.count, offsets.count);
    }
    for (uint32_t k = 0; k < contents.count; k++) {
        const char *name;
        uint32_t len, b;
        rc = fb_vec_string(r, &contents, k, "memory_list.contents", &name, &len);
        if (rc) {
            return rc;
        }
        if (len == 0) {
            continue; /* an empty name: no content */
        }
        if (!find_blob(ld, name, len, &b)) {
            return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                           "loadable: memory_list[%u].contents[%u]=\"%s\" (byte 0x%x) names no "
                           "blob",
                           i, k, name, contents.pos + 4 * k);
        }
        uint64_t off = fb_rd64(r, offsets.pos + 8 * k);
        if (off > m->size || ld->blobs[b].data_len > m->size - off) {
            return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                           "loadable: memory_list[%u].offsets[%u]=%llu (byte 0x%x): blob \"%s\" "
                           "(%u bytes) does not fit the memory's %llu bytes",
                           i, k, (unsigned long long)off, offsets.pos + 8 * k, name,
                           ld->blobs[b].data_len, (unsigned long long)m->size);
        }
        m->content_blob[m->n_contents] = b;
        m->content_off[m->n_contents++] = off;
    }
    return 0;
}

static int parse_memories(struct fb_reader *r, const struct fb_table *root,
                          struct dlasim_loadable *ld)
{
    struct fb_vec v;
    uint64_t total = 0;
    int rc = fb_vector(r, root, 2, "memory_list", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_mems = v.count;
    ld->mems = calloc(v.count ? v.count : 1, sizeof *ld->mems);
    if (!ld->mems) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        rc = parse_memory(r, ld, &v, i, &total);
    }
    return rc;
}

/* Memory ids are positions in memory_list in NVIDIA's files; check that. */
static int check_mem_ref(struct fb_reader *r, const struct dlasim_loadable *ld, const char *what,
                         uint32_t i, uint32_t pos, uint16_t mem_id, uint64_t off, uint64_t size)
{
    if (mem_id >= ld->n_mems) {
        return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                       "loadable: %s[%u].mem_id=%u (table at byte 0x%x) is outside memory_list "
                       "(%u entries)",
                       what, i, mem_id, pos, ld->n_mems);
    }
    uint64_t msz = ld->mems[mem_id].size;
    if (off > msz || size > msz - off) {
        return dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                       "loadable: %s[%u] (table at byte 0x%x): offset %llu + size %llu exceed "
                       "memory %u's %llu bytes",
                       what, i, pos, (unsigned long long)off, (unsigned long long)size, mem_id,
                       (unsigned long long)msz);
    }
    return 0;
}

static int parse_addresses(struct fb_reader *r, const struct fb_table *root,
                           struct dlasim_loadable *ld)
{
    struct fb_vec v;
    int rc = fb_vector(r, root, 3, "address_list", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_addrs = v.count;
    ld->addrs = calloc(v.count ? v.count : 1, sizeof *ld->addrs);
    if (!ld->addrs) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        struct fb_table t;
        struct ld_addr *a = &ld->addrs[i];
        rc = fb_vec_table(r, &v, i, "AddressListEntry", &t);
        rc = rc ? rc : fb_u16(r, &t, 1, "mem_id", 0, &a->mem_id);
        rc = rc ? rc : fb_u64(r, &t, 2, "offset", 0, &a->offset);
        rc = rc ? rc : fb_u64(r, &t, 3, "size", 0, &a->size);
        rc = rc ? rc : check_mem_ref(r, ld, "address_list", i, t.pos, a->mem_id, a->offset, a->size);
    }
    return rc;
}

static int parse_tasks(struct fb_reader *r, const struct fb_table *root, struct dlasim_loadable *ld)
{
    struct fb_vec v;
    int rc = fb_vector(r, root, 1, "task_list", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_tasks = v.count;
    ld->tasks = calloc(v.count ? v.count : 1, sizeof *ld->tasks);
    if (!ld->tasks) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        struct fb_table t;
        struct ld_task *k = &ld->tasks[i];
        rc = fb_vec_table(r, &v, i, "TaskListEntry", &t);
        rc = rc ? rc : fb_u32(r, &t, 1, "interface", 0, &k->interface);
        rc = rc ? rc : vec_u16(r, &t, 3, "address_list", &k->addrs, &k->n_addrs);
        for (uint32_t j = 0; !rc && j < k->n_addrs; j++) {
            if (k->addrs[j] >= ld->n_addrs) {
                rc = dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                             "loadable: task_list[%u].address_list[%u]=%u (table at byte 0x%x) "
                             "is outside address_list (%u entries)",
                             i, j, k->addrs[j], t.pos, ld->n_addrs);
            }
        }
    }
    return rc;
}

static int parse_submits(struct fb_reader *r, const struct fb_table *root,
                         struct dlasim_loadable *ld)
{
    struct fb_vec v;
    int rc = fb_vector(r, root, 8, "submit_list", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_submits = v.count;
    ld->submits = calloc(v.count ? v.count : 1, sizeof *ld->submits);
    if (!ld->submits) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        struct fb_table t;
        struct ld_submit *s = &ld->submits[i];
        rc = fb_vec_table(r, &v, i, "SubmitListEntry", &t);
        rc = rc ? rc : vec_u16(r, &t, 1, "task_id", &s->tasks, &s->n_tasks);
        for (uint32_t j = 0; !rc && j < s->n_tasks; j++) {
            if (s->tasks[j] >= ld->n_tasks) {
                rc = dla_errf(r->err, r->errlen, DLASIM_ERR_PARSE,
                             "loadable: submit_list[%u].task_id[%u]=%u (table at byte 0x%x) is "
                             "outside task_list (%u entries)",
                             i, j, s->tasks[j], t.pos, ld->n_tasks);
            }
        }
    }
    return rc;
}

static int parse_tensors(struct fb_reader *r, const struct fb_table *root,
                         struct dlasim_loadable *ld)
{
    struct fb_vec v;
    int rc = fb_vector(r, root, 6, "tensor_desc_list", 4, &v);
    if (rc) {
        return rc;
    }
    ld->n_tensors = v.count;
    ld->tensors = calloc(v.count ? v.count : 1, sizeof *ld->tensors);
    if (!ld->tensors) {
        return DLASIM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v.count && !rc; i++) {
        struct fb_table t;
        struct ld_tensor *x = &ld->tensors[i];
        uint32_t c, h, w;
        rc = fb_vec_table(r, &v, i, "TensorDescListEntry", &t);
        rc = rc ? rc : fb_u16(r, &t, 2, "mem_id", 0, &x->mem_id);
        rc = rc ? rc : fb_u64(r, &t, 3, "size", 0, &x->size);
        rc = rc ? rc : fb_u64(r, &t, 4, "offset", 0, &x->offset);
        rc = rc ? rc : fb_u8(r, &t, 6, "data_type", 0, &x->data_type);
        rc = rc ? rc : fb_u8(r, &t, 8, "pixel_format", 0, &x->pixel_format);
        rc = rc ? rc : fb_u32(r, &t, 11, "c", 0, &c);
        rc = rc ? rc : fb_u32(r, &t, 12, "h", 0, &h);
        rc = rc ? rc : fb_u32(r, &t, 13, "w", 0, &w);
        for (unsigned k = 0; !rc && k < 8; k++) {
            rc = fb_u32(r, &t, 14 + k, "stride", 0, &x->stride[k]);
        }
        x->c = (int32_t)c, x->h = (int32_t)h, x->w = (int32_t)w;
        rc = rc ? rc : check_mem_ref(r, ld, "tensor_desc_list", i, t.pos, x->mem_id, x->offset, x->size);
    }
    return rc;
}

static int count_bindable(struct dlasim_loadable *ld, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < ld->n_mems; i++) {
        const struct ld_mem *m = &ld->mems[i];
        if (m->flags & (MEM_FLAG_INPUT | MEM_FLAG_OUTPUT)) {
            if (m->tensor_desc_id >= ld->n_tensors) {
                return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                               "loadable: memory_list[%u].tensor_desc_id=%u is outside "
                               "tensor_desc_list (%u entries)",
                               i, m->tensor_desc_id, ld->n_tensors);
            }
            unsigned *n = (m->flags & MEM_FLAG_INPUT) ? &ld->n_inputs : &ld->n_outputs;
            if ((unsigned)m->bind_id + 1 > *n) {
                *n = (unsigned)m->bind_id + 1;
            }
        }
    }
    ld->dimg = calloc(ld->n_outputs ? ld->n_outputs : 1, sizeof *ld->dimg);
    ld->dimg_len = calloc(ld->n_outputs ? ld->n_outputs : 1, sizeof *ld->dimg_len);
    return ld->dimg && ld->dimg_len ? 0 : DLASIM_ERR_NOMEM;
}

int dlasim_loadable_open(const void *buf, size_t len, struct dlasim_loadable **out, char *err,
                         size_t errlen)
{
    if (!out) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "dlasim_loadable_open: out is NULL");
    }
    *out = NULL;
    if (!buf || len < 8 || len > 0x7fffffffu) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                       "loadable: %zu bytes is not a loadable (at least 8, below 2 GiB)", len);
    }
    struct dlasim_loadable *ld = calloc(1, sizeof *ld);
    if (!ld || !(ld->buf = malloc(len))) {
        free(ld);
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "loadable: out of host memory");
    }
    memcpy(ld->buf, buf, len);
    ld->len = len;
    struct fb_reader r = { ld->buf, len, err, errlen };
    struct fb_table root;
    int rc = fb_root(&r, "Loadable", &root);
    rc = rc ? rc : parse_blobs(&r, &root, ld);
    rc = rc ? rc : parse_memories(&r, &root, ld);
    rc = rc ? rc : parse_addresses(&r, &root, ld);
    rc = rc ? rc : parse_tasks(&r, &root, ld);
    rc = rc ? rc : parse_submits(&r, &root, ld);
    rc = rc ? rc : parse_tensors(&r, &root, ld);
    rc = rc ? rc : count_bindable(ld, err, errlen);
    if (rc) {
        if (rc == DLASIM_ERR_NOMEM) {
            dla_errf(err, errlen, rc, "loadable: out of host memory");
        }
        dlasim_loadable_close(ld);
        return rc;
    }
    *out = ld;
    return 0;
}

void dlasim_loadable_close(struct dlasim_loadable *ld)
{
    if (!ld) {
        return;
    }
    for (uint32_t i = 0; ld->mems && i < ld->n_mems; i++) {
        free(ld->mems[i].content_blob);
        free(ld->mems[i].content_off);
    }
    for (uint32_t i = 0; ld->tasks && i < ld->n_tasks; i++) {
        free(ld->tasks[i].addrs);
        dlasim_rt_prepared_free(ld->prep ? ld->prep[i] : NULL);
    }
    free(ld->prep);
    for (uint32_t i = 0; ld->submits && i < ld->n_submits; i++) {
        free(ld->submits[i].tasks);
    }
    for (unsigned i = 0; ld->dimg && i < ld->n_outputs; i++) {
        free(ld->dimg[i]);
    }
    free(ld->dimg);
    free(ld->dimg_len);
    free(ld->blobs);
    free(ld->mems);
    free(ld->addrs);
    free(ld->tasks);
    free(ld->submits);
    free(ld->tensors);
    free(ld->buf);
    free(ld);
}

unsigned dlasim_loadable_num_inputs(const struct dlasim_loadable *ld)
{
    return ld ? ld->n_inputs : 0;
}

unsigned dlasim_loadable_num_outputs(const struct dlasim_loadable *ld)
{
    return ld ? ld->n_outputs : 0;
}

int dlasim_loadable_output_dimg(const struct dlasim_loadable *ld, unsigned index,
                                const uint8_t **data, size_t *len)
{
    if (!ld || !data || !len || index >= ld->n_outputs || !ld->dimg[index]) {
        return DLASIM_ERR_INVAL;
    }
    *data = ld->dimg[index];
    *len = ld->dimg_len[index];
    return 0;
}

/* ---- running -------------------------------------------------------------------- */

static int alloc_memories(const struct nvrt_port *port, struct dlasim_loadable *ld, char *err,
                          size_t errlen)
{
    static const uint8_t zeros[4096];
    for (uint32_t i = 0; i < ld->n_mems; i++) {
        struct ld_mem *m = &ld->mems[i];
        int rc = port->mem_alloc(port->ctx, m->domain ? NVRT_DOMAIN_SRAM : NVRT_DOMAIN_SYSTEM,
                                 m->size, 4096, &m->addr);
        if (rc) {
            return dla_errf(err, errlen, rc,
                           "loadable: memory_list[%u] (%llu bytes, domain %s) cannot be "
                           "allocated: %s",
                           i, (unsigned long long)m->size, m->domain ? "SRAM" : "SYSTEM",
                           rc == DLASIM_ERR_UNSUPPORTED ? "this device has no SRAM port"
                                                        : dlasim_status_name(rc));
        }
        for (uint64_t o = 0; !port->alloc_zeroed && !(m->flags & MEM_FLAG_SET) && o < m->size;
             o += sizeof zeros) {
            size_t n = (size_t)(m->size - o < sizeof zeros ? m->size - o : sizeof zeros);
            rc = port->mem_write(port->ctx, m->addr + o, zeros, n);
            if (rc) {
                return dla_errf(err, errlen, rc, "loadable: memory_list[%u]: device write failed", i);
            }
        }
        for (uint32_t k = 0; k < m->n_contents; k++) {
            const struct ld_blob *b = &ld->blobs[m->content_blob[k]];
            rc = port->mem_write(port->ctx, m->addr + m->content_off[k], ld->buf + b->data_pos,
                                 b->data_len);
            if (rc) {
                return dla_errf(err, errlen, rc, "loadable: memory_list[%u]: device write failed", i);
            }
        }
    }
    return 0;
}

static uint64_t address_of(const struct dlasim_loadable *ld, uint16_t a)
{
    return ld->mems[ld->addrs[a].mem_id].addr + ld->addrs[a].offset;
}

/* The interface version of the blob loaded at a task address (for the cube size). */
static int desc_version(const struct dlasim_loadable *ld, const struct ld_task *task,
                        uint8_t *minor, char *err, size_t errlen)
{
    const struct ld_mem *m = &ld->mems[ld->addrs[task->addrs[0]].mem_id];
    *minor = 10;
    if (m->n_contents) {
        const struct ld_blob *b = &ld->blobs[m->content_blob[0]];
        if (b->version[0] != 0 || b->version[1] < 10 || b->version[1] > 12) {
            return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                           "loadable: blob \"%.*s\" has DLA interface version %u.%u.%u; dlasim "
                           "reads 0.10, 0.11 and 0.12",
                           (int)b->name_len, b->name, b->version[0], b->version[1],
                           b->version[2]);
        }
        *minor = b->version[1];
    }
    return 0;
}

/* The device address and the bytes from it to the end of its memory of
 * every entry of a task's address list (what the firmware may read). */
struct task_addrs {
    uint64_t *addrs, *sizes;
};

static int task_addresses(const struct dlasim_loadable *ld, const struct ld_task *t,
                          struct task_addrs *ta, char *err, size_t errlen)
{
    ta->addrs = calloc(t->n_addrs + 1, sizeof *ta->addrs);
    ta->sizes = calloc(t->n_addrs + 1, sizeof *ta->sizes);
    if (!ta->addrs || !ta->sizes) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "loadable: out of host memory");
    }
    for (uint32_t i = 0; i < t->n_addrs; i++) {
        const struct ld_addr *a = &ld->addrs[t->addrs[i]];
        ta->addrs[i] = address_of(ld, t->addrs[i]);
        ta->sizes[i] = ld->mems[a->mem_id].size - a->offset;
    }
    return 0;
}

static void task_addrs_free(struct task_addrs *ta)
{
    free(ta->addrs);
    free(ta->sizes);
}

/* A DLA task's network, read from the device memory the loadable's SET
 * content filled through the runtime's task reader (the one NVIDIA's KMD
 * path uses, runtime.c), in the interface version of its blob.  Free *ta
 * and *tn whatever the outcome. */
static int read_dla_task(const struct nvrt_port *port, const struct dlasim_loadable *ld,
                         uint32_t task_id, struct task_addrs *ta, struct nvrt_task_network *tn,
                         char *err, size_t errlen)
{
    const struct ld_task *t = &ld->tasks[task_id];
    memset(ta, 0, sizeof *ta);
    memset(tn, 0, sizeof *tn);
    if (t->n_addrs == 0) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE, "loadable: DLA task with an empty address list");
    }
    if (t->n_addrs > UINT16_MAX) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "loadable: task %u has %u address list entries; a DLA task has at "
                        "most %u", task_id, t->n_addrs, (unsigned)UINT16_MAX);
    }
    uint8_t minor;
    int rc = desc_version(ld, t, &minor, err, errlen);
    rc = rc ? rc : task_addresses(ld, t, ta, err, errlen);
    if (!rc) {
        struct dlasim_rt_task rt = {ta->addrs, ta->sizes, (uint16_t)t->n_addrs, minor};
        rc = nvrt_read_task_network(port, &rt, minor, "loadable", tn, err, errlen);
    }
    return rc;
}

/* The task's prepared programming (issue 18), made at its first run; NULL
 * when out of host memory (the task is then programmed afresh each run). */
static struct dlasim_rt_prepared *task_prepared(struct dlasim_loadable *ld, uint32_t task_id)
{
    if (!ld->prep) {
        ld->prep = calloc(ld->n_tasks ? ld->n_tasks : 1, sizeof *ld->prep);
    }
    if (ld->prep && !ld->prep[task_id]) {
        ld->prep[task_id] = dlasim_rt_prepared_new(0); /* re-read each run: compared */
    }
    return ld->prep ? ld->prep[task_id] : NULL;
}

/* Read a DLA task's network, then check it (validate) or run it. */
static int dla_task(const struct nvrt_port *port, struct dlasim_loadable *ld,
                    uint32_t task_id, int validate, char *err, size_t errlen)
{
    struct task_addrs ta;
    struct nvrt_task_network tn;
    int rc = read_dla_task(port, ld, task_id, &ta, &tn, err, errlen);
    if (!rc) {
        char msg[512];
        rc = validate ? nvrt_validate(port, &tn.net, msg, sizeof msg)
                      : nvrt_execute_prepared(port, &tn.net, task_prepared(ld, task_id), msg,
                                              sizeof msg);
        if (rc) {
            dla_errf(err, errlen, rc, "task %u: %s", task_id, msg);
        }
    }
    nvrt_task_network_free(&tn);
    task_addrs_free(&ta);
    return rc;
}

static int run_emu_task(const struct nvrt_port *port, const struct dlasim_loadable *ld,
                        uint32_t task_id, char *err, size_t errlen)
{
    const struct ld_task *t = &ld->tasks[task_id];
    struct task_addrs ta = {NULL, NULL};
    int rc = task_addresses(ld, t, &ta, err, errlen);
    if (!rc) {
        char msg[512];
        rc = nvrt_run_emu(port, ta.addrs, ta.sizes, t->n_addrs, msg, sizeof msg);
        if (rc) {
            dla_errf(err, errlen, rc, "task %u: %s", task_id, msg);
        }
    }
    task_addrs_free(&ta);
    return rc;
}

static const struct ld_mem *bound_memory(const struct dlasim_loadable *ld, uint16_t flag,
                                         unsigned index)
{
    for (uint32_t i = 0; i < ld->n_mems; i++) {
        if ((ld->mems[i].flags & flag) && ld->mems[i].bind_id == index) {
            return &ld->mems[i];
        }
    }
    return NULL;
}

/* Largest bound input/output tensor the runtime copies through host memory:
 * far above any NVDLA network's (ResNet-50's largest feature map is 6 MiB),
 * low enough that a hostile loadable cannot make the host allocate
 * gigabytes (found by fuzz_loadable: a 1 GiB output image). */
#define NVRT_MAX_TENSOR_BYTES ((uint64_t)128 << 20)

static int check_tensor_bytes(const struct ld_tensor *t, const char *what, unsigned i, char *err,
                              size_t errlen)
{
    if (t->size > NVRT_MAX_TENSOR_BYTES) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                       "loadable: %s %u: tensor of %llu bytes exceeds the runtime's %llu", what, i,
                       (unsigned long long)t->size, (unsigned long long)NVRT_MAX_TENSOR_BYTES);
    }
    return 0;
}

static int bind_inputs(const struct nvrt_port *port, const struct dlasim_loadable *ld,
                       const struct dlasim_loadable_input *in, unsigned n, char *err,
                       size_t errlen)
{
    if (n > ld->n_inputs) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                       "loadable: %u inputs given, the loadable binds %u", n, ld->n_inputs);
    }
    for (unsigned i = 0; i < n; i++) {
        const struct ld_mem *m = bound_memory(ld, MEM_FLAG_INPUT, i);
        if (!m) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL, "loadable: no memory binds input %u", i);
        }
        const struct ld_tensor *t = &ld->tensors[m->tensor_desc_id];
        struct nvrt_tensor_layout lay = { t->data_type, t->pixel_format, t->c, t->h, t->w,
                                          t->stride[1], t->stride[2], t->size };
        if (check_tensor_bytes(t, "input", i, err, errlen)) {
            return DLASIM_ERR_UNSUPPORTED;
        }
        uint8_t *buf = calloc(t->size ? t->size : 1, 1);
        if (!buf) {
            return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "loadable: out of host memory");
        }
        int rc = nvrt_image_to_tensor(in[i].data, in[i].len, &lay, buf, err, errlen);
        if (!rc) {
            rc = port->mem_write(port->ctx, m->addr + t->offset, buf, (size_t)t->size);
        }
        free(buf);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static int dump_outputs(const struct nvrt_port *port, struct dlasim_loadable *ld, char *err,
                        size_t errlen)
{
    for (unsigned i = 0; i < ld->n_outputs; i++) {
        const struct ld_mem *m = bound_memory(ld, MEM_FLAG_OUTPUT, i);
        if (!m) {
            return dla_errf(err, errlen, DLASIM_ERR_PARSE, "loadable: no memory binds output %u", i);
        }
        const struct ld_tensor *t = &ld->tensors[m->tensor_desc_id];
        struct nvrt_tensor_layout lay = { t->data_type, t->pixel_format, t->c, t->h, t->w,
                                          t->stride[1], t->stride[2], t->size };
        int rc = check_tensor_bytes(t, "output", i, err, errlen);
        if (rc) {
            return rc;
        }
        uint8_t *buf = malloc(t->size ? t->size : 1);
        if (!buf) {
            return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "loadable: out of host memory");
        }
        rc = port->mem_read(port->ctx, m->addr + t->offset, buf, (size_t)t->size);
        if (!rc) {
            free(ld->dimg[i]);
            ld->dimg[i] = NULL;
            rc = nvrt_tensor_to_dimg(buf, &lay, &ld->dimg[i], &ld->dimg_len[i], err, errlen);
        }
        free(buf);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Every DLA task's network checked before anything runs, so a loadable the
 * configuration cannot run is refused naming its descriptor, not half run. */
static int validate_tasks(const struct nvrt_port *port, struct dlasim_loadable *ld,
                          char *err, size_t errlen)
{
    int rc = 0;
    for (uint32_t s = 0; !rc && s < ld->n_submits; s++) {
        for (uint32_t k = 0; !rc && k < ld->submits[s].n_tasks; k++) {
            uint32_t id = ld->submits[s].tasks[k];
            if (ld->tasks[id].interface != IFACE_DLA1) {
                continue;
            }
            rc = dla_task(port, ld, id, 1, err, errlen);
        }
    }
    return rc;
}

int nvrt_loadable_run_on(const struct nvrt_port *port, struct dlasim_loadable *ld,
                         const struct dlasim_loadable_input *inputs, unsigned n_inputs, char *err,
                         size_t errlen)
{
    int rc = alloc_memories(port, ld, err, errlen);
    rc = rc ? rc : validate_tasks(port, ld, err, errlen);
    rc = rc ? rc : bind_inputs(port, ld, inputs, n_inputs, err, errlen);
    for (uint32_t s = 0; !rc && s < ld->n_submits; s++) {
        const struct ld_submit *sub = &ld->submits[s];
        for (uint32_t k = 0; !rc && k < sub->n_tasks; k++) {
            uint32_t id = sub->tasks[k];
            if (ld->tasks[id].interface == IFACE_DLA1) {
                rc = dla_task(port, ld, id, 0, err, errlen);
            } else if (ld->tasks[id].interface == IFACE_EMU1) {
                rc = run_emu_task(port, ld, id, err, errlen);
            } else {
                rc = dla_errf(err, errlen, DLASIM_ERR_PARSE,
                             "loadable: task_list[%u].interface=%u is neither DLA1 nor EMU1", id,
                             ld->tasks[id].interface);
            }
        }
    }
    return rc ? rc : dump_outputs(port, ld, err, errlen);
}

/* ---- read-only layout (layout.h) ---------------------------------------------------- */

void nvrt_ld_counts(const struct dlasim_loadable *ld, struct nvrt_ld_counts *c)
{
    c->memories = ld->n_mems;
    c->addresses = ld->n_addrs;
    c->tasks = ld->n_tasks;
    c->submits = ld->n_submits;
    c->tensors = ld->n_tensors;
}

int nvrt_ld_memory(const struct dlasim_loadable *ld, uint32_t i, struct nvrt_ld_memory *m)
{
    if (i >= ld->n_mems) {
        return DLASIM_ERR_INVAL;
    }
    const struct ld_mem *s = &ld->mems[i];
    m->flags = s->flags;
    m->domain = s->domain;
    m->size = s->size;
    m->n_contents = s->n_contents;
    m->bind_id = s->bind_id;
    m->tensor_desc_id = s->tensor_desc_id;
    return 0;
}

int nvrt_ld_memory_content(const struct dlasim_loadable *ld, uint32_t i, uint32_t k,
                           const uint8_t **data, uint32_t *len, uint64_t *offset)
{
    if (i >= ld->n_mems || k >= ld->mems[i].n_contents) {
        return DLASIM_ERR_INVAL;
    }
    const struct ld_blob *b = &ld->blobs[ld->mems[i].content_blob[k]];
    *data = ld->buf + b->data_pos;
    *len = b->data_len;
    *offset = ld->mems[i].content_off[k];
    return 0;
}

int nvrt_ld_address(const struct dlasim_loadable *ld, uint32_t i, uint16_t *mem_id,
                    uint64_t *offset)
{
    if (i >= ld->n_addrs) {
        return DLASIM_ERR_INVAL;
    }
    *mem_id = ld->addrs[i].mem_id;
    *offset = ld->addrs[i].offset;
    return 0;
}

int nvrt_ld_task(const struct dlasim_loadable *ld, uint32_t t, uint32_t *interface,
                 const uint16_t **addr_ids, uint32_t *n, uint8_t *minor)
{
    if (t >= ld->n_tasks) {
        return DLASIM_ERR_INVAL;
    }
    const struct ld_task *task = &ld->tasks[t];
    *interface = task->interface;
    *addr_ids = task->addrs;
    *n = task->n_addrs;
    *minor = 12;
    return task->n_addrs && task->interface == IFACE_DLA1
               ? desc_version(ld, task, minor, NULL, 0)
               : 0;
}

int nvrt_ld_submit(const struct dlasim_loadable *ld, uint32_t s, const uint16_t **task_ids,
                   uint32_t *n)
{
    if (s >= ld->n_submits) {
        return DLASIM_ERR_INVAL;
    }
    *task_ids = ld->submits[s].tasks;
    *n = ld->submits[s].n_tasks;
    return 0;
}

int nvrt_ld_tensor(const struct dlasim_loadable *ld, uint32_t i, uint64_t *size,
                   uint64_t *offset)
{
    if (i >= ld->n_tensors) {
        return DLASIM_ERR_INVAL;
    }
    *size = ld->tensors[i].size;
    *offset = ld->tensors[i].offset;
    return 0;
}

int nvrt_ld_dimg_of(const struct dlasim_loadable *ld, uint32_t tensor_desc, const uint8_t *tensor,
                    uint8_t **dimg, size_t *len, char *err, size_t errlen)
{
    if (tensor_desc >= ld->n_tensors) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "loadable: no tensor_desc %u", tensor_desc);
    }
    const struct ld_tensor *t = &ld->tensors[tensor_desc];
    struct nvrt_tensor_layout lay = { t->data_type, t->pixel_format, t->c, t->h, t->w,
                                      t->stride[1], t->stride[2], t->size };
    int rc = check_tensor_bytes(t, "output", tensor_desc, err, errlen);
    return rc ? rc : nvrt_tensor_to_dimg(tensor, &lay, dimg, len, err, errlen);
}
