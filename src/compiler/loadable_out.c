/*
 * The compiled model as an NVDLA loadable, through the runtime's writer
 * (dlasim_loadable_write, dlasim_rt_encode; nvdla/sw loadable.fbs).
 *
 * Layout: one memory and one address entry per buffer of the compiled
 * model (weights and SDP operands: ALLOC|SET with their blob; the model's
 * input: ALLOC|INPUT, bindable; its output: ALLOC|OUTPUT, bindable; every
 * other activation: ALLOC); per hardware network one DLA task whose
 * address list starts with its network, operation, surface and
 * dependency-graph descriptors (entries 0..3, as the firmware expects the
 * network descriptor at 0) followed by the shared buffers, in the model's
 * own address-list order, so the operations' address indexes need no
 * rewriting.  Tasks run in order in one submit.  A model with host-CPU
 * layers is refused: the loadable format carries CPU work only as EMU
 * softmax tasks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler_int.h"

#define FEATURE_X8 37 /* pixel_format FEATURE_X8: the layout of 8-channel atoms */
#define FEATURE 36

static int wfail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen) {
        snprintf(err, errlen, "%s", msg);
    }
    return DLASIM_ERR_UNSUPPORTED;
}

static void tensor_desc(const struct dlasim_model *m, int t, uint16_t mem_id, const char *name,
                        struct dlasim_loadable_tensor_desc *d)
{
    const struct dlc_buf *b = &m->buf[t];
    memset(d, 0, sizeof *d);
    d->name = name;
    d->mem_id = mem_id;
    d->size = b->size;
    d->offset = b->offset;
    d->data_format = 1;   /* NCHW-like feature layout as NVIDIA's compiler marks it */
    d->data_type = 4;     /* INT8 */
    d->data_category = 2; /* feature */
    d->pixel_format = m->hw.atom_m == 8 ? FEATURE_X8 : FEATURE;
    d->n = 1;
    d->c = (int32_t)b->c, d->h = (int32_t)b->h, d->w = (int32_t)b->w;
    d->stride[0] = 1;
    d->stride[1] = b->line;
    d->stride[2] = b->surf;
}

int dlasim_model_write_loadable(const struct dlasim_model *m, uint8_t **out, size_t *len,
                                char *err, size_t errlen)
{
    if (!m || !out || !len) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_model_write_loadable: %s is NULL",
                     !m ? "m" : !out ? "out" : "len");
        }
        return DLASIM_ERR_INVAL;
    }
    *out = NULL;
    *len = 0;
    if (!m->compiled) {
        return wfail(err, errlen, "the model is not compiled");
    }
    for (int i = 0; i < m->n_steps; i++) {
        if (m->steps[i].cpu_layer >= 0) {
            char msg[640];
            const struct dlc_layer *L = &m->layers[m->steps[i].cpu_layer];
            snprintf(msg, sizeof msg,
                     "node '%s' (%s) runs on the host CPU (%s); a loadable carries CPU work only "
                     "as EMU softmax tasks, so this model cannot be written as .nvdla",
                     m->g.nodes[L->node].name, dlc_op_names[m->g.nodes[L->node].op], L->why);
            return wfail(err, errlen, msg);
        }
    }
    int n_net = m->n_steps, n_shared = m->n_addrs;
    int in_t = m->g.input, out_t = m->store[m->g.output];
    /* A loadable's input is converted by the runtime, not by this model:
     * nvdla_runtime turns an image pixel p into round(p * 127 / 255)
     * (driver/nvdla/image.c), i.e. int8 steps of 1/127 for inputs p / 255 in
     * [0, 1].  A model whose input was calibrated to another range would be
     * fed at the wrong scale and answer silently wrong: refused. */
    const struct dlc_tensor *it = &m->g.t[in_t];
    if (fabsf(it->scale * 127.0f - 1.0f) > 1e-6f || it->zero) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "input tensor '%s' is quantized at %.9g per int8 step (calibrated |x| <= %.9g%s), "
                 "but a loadable's input is converted by the runtime as round(p * 127 / 255), "
                 "1/127 per step for inputs in [0, 1]: calibrate on data whose largest magnitude "
                 "is 1 (images with a 255 pixel at the default --scale/--mean), or run the .onnx "
                 "model", it->name, (double)it->scale, (double)it->amax,
                 it->zero ? "; the model's own zero point, not the middle of its type" : "");
        return wfail(err, errlen, msg);
    }
    int n_mem = n_shared + 5 * n_net;
    int n_blobs_max = m->n_blobs + 5 * n_net;
    struct dlasim_loadable_memory_desc *mems = calloc((size_t)n_mem, sizeof *mems);
    struct dlasim_loadable_address_desc *addrs = calloc((size_t)n_mem, sizeof *addrs);
    struct dlasim_loadable_blob_desc *blobs = calloc((size_t)n_blobs_max, sizeof *blobs);
    struct dlasim_loadable_task_desc *tasks = calloc((size_t)n_net, sizeof *tasks);
    uint16_t *alists = calloc((size_t)n_net * (size_t)n_shared, sizeof *alists);
    uint16_t *task_ids = calloc((size_t)n_net, sizeof *task_ids);
    char (*names)[24] = calloc((size_t)n_blobs_max, sizeof *names);
    const char **content = calloc((size_t)n_blobs_max, sizeof *content);
    struct dlasim_rt_encoded *enc = calloc((size_t)n_net, sizeof *enc);
    static const uint64_t zero = 0;
    int rc = 0;
    if (!mems || !addrs || !blobs || !tasks || !alists || !task_ids || !names || !content || !enc) {
        rc = DLASIM_ERR_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int nb = 0;
    for (int i = 0; i < n_shared; i++) { /* the model's buffers */
        struct dlasim_loadable_memory_desc *md = &mems[i];
        md->id = (uint16_t)i;
        md->flags = 1; /* ALLOC */
        md->alignment = 256;
        md->size = 256;
        for (int t = 0; t < m->g.n_t; t++) {
            if (m->buf[t].addr_index == i) {
                uint64_t end = (uint64_t)m->buf[t].offset + m->buf[t].size;
                md->size = md->size > end ? md->size : end;
                if (t == in_t) {
                    md->flags |= 4, md->bind_id = 0, md->tensor_desc_id = 0;
                }
                if (t == out_t) {
                    md->flags |= 8, md->bind_id = 0, md->tensor_desc_id = 1;
                }
            }
        }
        for (int b = 0; b < m->n_blobs; b++) {
            if (m->blobs[b].addr_index == i) {
                snprintf(names[nb], sizeof names[nb], "data%d", b);
                blobs[nb] = (struct dlasim_loadable_blob_desc){ names[nb], m->blobs[b].data,
                                                                m->blobs[b].len, 0, 0, { 0, 12, 0 } };
                content[nb] = names[nb];
                md->flags |= 2; /* SET */
                md->size = m->blobs[b].len;
                md->contents = &content[nb];
                md->offsets = &zero;
                md->n_contents = 1;
                nb++;
            }
        }
        addrs[i] = (struct dlasim_loadable_address_desc){ (uint16_t)i, (uint16_t)i, 0, md->size };
    }
    for (int s = 0; s < n_net && !rc; s++) { /* descriptors of each network */
        const struct dlc_step *st = &m->steps[s];
        struct dlasim_rt_network net;
        memset(&net, 0, sizeof net);
        net.ops = st->ops;
        net.num_ops = st->n_ops;
        memcpy(net.op_head, st->op_head, sizeof net.op_head);
        net.num_addresses = (uint16_t)n_shared;
        net.luts = st->luts;
        net.num_luts = st->n_luts;
        const int16_t lists[4] = { 1, 2, 3, (int16_t)(st->n_luts ? 4 : -1) };
        rc = dlasim_rt_encode(&net, 12, lists, &enc[s], err, errlen);
        if (rc) {
            break;
        }
        const void *data[5] = { enc[s].network, enc[s].ops, enc[s].surfaces, enc[s].deps,
                                enc[s].luts };
        size_t size[5] = { enc[s].network_size, enc[s].ops_size, enc[s].surfaces_size,
                           enc[s].deps_size, enc[s].luts_size };
        static const uint32_t sub[5] = { 1, 3, 4, 2, 5 };
        uint16_t *al = alists + (size_t)s * (size_t)n_shared;
        al[4] = 4; /* no LUT list: the (unused) reserved entry */
        for (int k = 0; k < (st->n_luts ? 5 : 4); k++) {
            int id = n_shared + 5 * s + k;
            snprintf(names[nb], sizeof names[nb], "net%d.%d", s, k);
            blobs[nb] = (struct dlasim_loadable_blob_desc){ names[nb], data[k], size[k], 0, sub[k],
                                                            { 0, 12, 0 } };
            content[nb] = names[nb];
            mems[id] = (struct dlasim_loadable_memory_desc){ (uint16_t)id, 0, 3, size[k], 256,
                                                             &content[nb], &zero, 1, 0, 0 };
            addrs[id] = (struct dlasim_loadable_address_desc){ (uint16_t)id, (uint16_t)id, 0, size[k] };
            al[k] = (uint16_t)id;
            nb++;
        }
        for (int i = DLC_RESERVED_ADDRS; i < n_shared; i++) {
            al[i] = (uint16_t)i;
        }
        tasks[s] = (struct dlasim_loadable_task_desc){ (uint16_t)s, 1, 0, al, (size_t)n_shared,
                                                       NULL, NULL, 0, 0 };
        task_ids[s] = (uint16_t)s;
    }
    if (!rc) {
        /* reserved shared entries 0..3 are not referenced by any task: give
         * them a minimal memory so the tables stay dense */
        struct dlasim_loadable_tensor_desc tens[2];
        tensor_desc(m, in_t, (uint16_t)m->buf[in_t].addr_index, "input", &tens[0]);
        tensor_desc(m, out_t, (uint16_t)m->buf[out_t].addr_index, "output", &tens[1]);
        tens[0].id = 0, tens[1].id = 1;
        struct dlasim_loadable_submit_desc sub = { 0, task_ids, (size_t)n_net };
        struct dlasim_loadable_desc d;
        memset(&d, 0, sizeof d);
        d.version[1] = 7;
        d.tasks = tasks, d.n_tasks = (size_t)n_net;
        d.memories = mems, d.n_memories = (size_t)n_mem;
        d.addresses = addrs, d.n_addresses = (size_t)n_mem;
        d.blobs = blobs, d.n_blobs = (size_t)nb;
        d.tensors = tens, d.n_tensors = 2;
        d.submits = &sub, d.n_submits = 1;
        rc = dlasim_loadable_write(&d, out, len, err, errlen);
    }
done:
    for (int s = 0; enc && s < n_net; s++) {
        dlasim_rt_encoded_free(&enc[s]);
    }
    free(enc);
    free(mems);
    free(addrs);
    free(blobs);
    free(tasks);
    free(alists);
    free(task_ids);
    free(names);
    free(content);
    return rc;
}
