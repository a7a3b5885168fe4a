/*
 * Decoding NVDLA firmware descriptors (the byte layout of nvdla/sw
 * kmd/firmware/include/dla_interface.h, packed little-endian) into the host
 * form of include/dlasim/runtime.h.
 *
 * Interface versions: 0.10 and 0.11 (the blobs NVIDIA's regression
 * loadables carry) have a 28-byte struct dla_data_cube; 0.12 added a 4-byte
 * `offset` after `address` (nvdla/sw commit 16befcb, "Re-design of address
 * list usage"), making it 32 bytes.  No other descriptor changed.  The
 * containers keep their sizes: surface container 644 bytes (BDMA's is the
 * largest), operation container 116 (SDP's), dependency entry 36, LUT 700,
 * network 40.
 */
#include <string.h>

#include "runtime/desc.h"

struct cur {
    const uint8_t *p;
    size_t len, pos;
};

static uint32_t get(struct cur *c, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        v |= (uint32_t)(c->pos + i < c->len ? c->p[c->pos + i] : 0) << (8 * i);
    }
    c->pos += n;
    return v;
}
static uint8_t u8(struct cur *c) { return (uint8_t)get(c, 1); }
static uint16_t u16(struct cur *c) { return (uint16_t)get(c, 2); }
static int16_t s16(struct cur *c) { return (int16_t)get(c, 2); }
static uint32_t u32(struct cur *c) { return get(c, 4); }
static int32_t s32(struct cur *c) { return (int32_t)get(c, 4); }
static uint64_t u64(struct cur *c)
{
    uint64_t lo = get(c, 4);
    return lo | (uint64_t)get(c, 4) << 32;
}
static void skip(struct cur *c, size_t n) { c->pos += n; }

static void cube(struct cur *c, int v12, struct dlasim_rt_cube *d)
{
    d->type = u16(c);
    d->address = s16(c);
    d->offset = v12 ? u32(c) : 0;
    d->size = u32(c);
    d->width = u16(c);
    d->height = u16(c);
    d->channel = u16(c);
    skip(c, 2);
    d->line_stride = u32(c);
    d->surf_stride = u32(c);
    d->plane_stride = u32(c);
}

static void cvt(struct cur *c, struct dlasim_rt_cvt *d)
{
    d->scale = s16(c);
    d->truncate = u8(c);
    d->enable = u8(c);
    d->offset = s32(c);
}

void nvrt_decode_network(const uint8_t *p, struct nvrt_network_desc *n)
{
    struct cur c = { p, NVRT_NETWORK_DESC_SIZE, 0 };
    n->operation_desc_index = s16(&c);
    n->surface_desc_index = s16(&c);
    n->dependency_graph_index = s16(&c);
    n->lut_data_index = s16(&c);
    n->roi_array_index = s16(&c);
    n->surface_index = s16(&c);
    n->stat_list_index = s16(&c);
    skip(&c, 2);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        n->op_head[i] = s16(&c);
    }
    n->num_rois = u16(&c);
    n->num_operations = u16(&c);
    n->num_luts = u16(&c);
    n->num_addresses = u16(&c);
    n->input_layer = s16(&c);
    n->dynamic_roi = u8(&c);
}

void nvrt_decode_dep(const uint8_t *p, struct dlasim_rt_op *op)
{
    struct cur c = { p, NVRT_DEP_SIZE, 0 };
    skip(&c, 3); /* index (set by the firmware), roi_index */
    op->op_type = u8(&c);
    op->dependency_count = u8(&c);
    skip(&c, 3);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        op->consumers[i].index = s16(&c);
        op->consumers[i].event = u8(&c);
        skip(&c, 1);
    }
    op->fused_parent.index = s16(&c);
    op->fused_parent.event = u8(&c);
}

static void conv_op(struct cur *c, struct dlasim_rt_conv_op *o)
{
    o->conv_mode = u8(c);
    o->data_reuse = u8(c);
    o->weight_reuse = u8(c);
    o->skip_data_rls = u8(c);
    o->skip_weight_rls = u8(c);
    skip(c, 1);
    o->entry_per_slice = u16(c);
    o->data_format = u8(c);
    o->pixel_mapping = u8(c);
    o->fetch_grain = u16(c);
    skip(c, 8);
    o->batch = u8(c);
    o->weight_format = u8(c);
    o->data_bank = u8(c);
    o->weight_bank = u8(c);
    o->batch_stride = u32(c);
    o->post_extension = u8(c);
    o->pixel_override = u8(c);
    o->release = u16(c);
    o->input_width_csc = u16(c);
    o->input_height_csc = u16(c);
    o->input_channel_csc = u16(c);
    o->kernel_width_csc = u16(c);
    o->kernel_height_csc = u16(c);
    o->kernel_channel_csc = u16(c);
    o->input_width_cmac = u16(c);
    o->input_height_cmac = u16(c);
    o->bytes_per_kernel = u32(c);
    o->mean_ry = s16(c);
    o->mean_gu = s16(c);
    o->mean_bv = s16(c);
    o->mean_ax = s16(c);
    o->mean_format = u8(c);
    o->conv_stride_x = u8(c);
    o->conv_stride_y = u8(c);
    o->pad_x_left = u8(c);
    o->pad_x_right = u8(c);
    o->pad_y_top = u8(c);
    o->pad_y_bottom = u8(c);
    o->dilation_x = u8(c);
    o->dilation_y = u8(c);
    skip(c, 2);
    o->pra_truncate = u8(c);
    o->in_precision = u8(c);
    o->out_precision = u8(c);
    o->pad_val = s16(c);
    cvt(c, &o->in_cvt);
    cvt(c, &o->out_cvt);
}

static void sdp_stage(struct cur *c, struct dlasim_rt_sdp_stage *s)
{
    s->enable = u8(c);
    s->alu_type = u8(c);
    s->type = u8(c);
    s->mode = u8(c);
    s->act = u8(c);
    s->shift_value = u8(c);
    s->truncate = u8(c);
    s->precision = u8(c);
    s->alu_operand = s32(c);
    s->mul_operand = s32(c);
    cvt(c, &s->alu_cvt);
    cvt(c, &s->mul_cvt);
}

static void sdp_op(struct cur *c, struct dlasim_rt_sdp_op *o)
{
    o->src_precision = u8(c);
    o->dst_precision = u8(c);
    o->lut_index = s16(c);
    cvt(c, &o->out_cvt);
    o->conv_mode = u8(c);
    o->batch_num = u8(c);
    skip(c, 2);
    o->batch_stride = u32(c);
    sdp_stage(c, &o->x1_op);
    sdp_stage(c, &o->x2_op);
    sdp_stage(c, &o->y_op);
}

static void pdp_op(struct cur *c, struct dlasim_rt_pdp_op *o)
{
    o->partial_in_width_first = u16(c);
    o->partial_in_width_mid = u16(c);
    o->partial_in_width_last = u16(c);
    o->partial_width_first = u16(c);
    o->partial_width_mid = u16(c);
    o->partial_width_last = u16(c);
    o->split_num = u8(c);
    o->pool_mode = u8(c);
    o->pool_width = u8(c);
    o->pool_height = u8(c);
    o->stride_x = u8(c);
    o->stride_y = u8(c);
    o->pad_left = u8(c);
    o->pad_right = u8(c);
    o->pad_top = u8(c);
    o->pad_bottom = u8(c);
    o->precision = u8(c);
    skip(c, 1);
    for (int i = 0; i < 7; i++) {
        o->padding_value[i] = s32(c);
    }
}

static void cdp_op(struct cur *c, struct dlasim_rt_cdp_op *o)
{
    o->in_precision = u8(c);
    o->out_precision = u8(c);
    o->lut_index = s16(c);
    cvt(c, &o->in_cvt);
    cvt(c, &o->out_cvt);
    o->local_size = u8(c);
    o->bypass_sqsum = u8(c);
    o->bypass_out_mul = u8(c);
}

void nvrt_decode_op(const uint8_t *p, struct dlasim_rt_op *op)
{
    struct cur c = { p, NVRT_OP_DESC_SIZE, 0 };
    memset(&op->op, 0, sizeof op->op);
    switch (op->op_type) {
    case DLASIM_RT_OP_CONV:
        conv_op(&c, &op->op.conv);
        break;
    case DLASIM_RT_OP_SDP:
        sdp_op(&c, &op->op.sdp);
        break;
    case DLASIM_RT_OP_PDP:
        pdp_op(&c, &op->op.pdp);
        break;
    case DLASIM_RT_OP_CDP:
        cdp_op(&c, &op->op.cdp);
        break;
    case DLASIM_RT_OP_RUBIK:
        op->op.rubik.mode = u8(&c);
        op->op.rubik.precision = u8(&c);
        op->op.rubik.stride_x = u8(&c);
        op->op.rubik.stride_y = u8(&c);
        break;
    default:
        op->op.bdma_num_transfers = u16(&c);
        break;
    }
}

void nvrt_decode_surface(const uint8_t *p, int v12, struct dlasim_rt_op *op)
{
    struct cur c = { p, NVRT_SURFACE_DESC_SIZE, 0 };
    memset(&op->surface, 0, sizeof op->surface);
    switch (op->op_type) {
    case DLASIM_RT_OP_CONV: {
        struct dlasim_rt_conv_surface *s = &op->surface.conv;
        cube(&c, v12, &s->weight_data);
        cube(&c, v12, &s->wmb_data);
        cube(&c, v12, &s->wgs_data);
        cube(&c, v12, &s->src_data);
        cube(&c, v12, &s->dst_data);
        s->offset_u = (int64_t)u64(&c);
        s->in_line_uv_stride = u32(&c);
        break;
    }
    case DLASIM_RT_OP_SDP: {
        struct dlasim_rt_sdp_surface *s = &op->surface.sdp;
        cube(&c, v12, &s->src_data);
        cube(&c, v12, &s->x1_data);
        cube(&c, v12, &s->x2_data);
        cube(&c, v12, &s->y_data);
        cube(&c, v12, &s->dst_data);
        break;
    }
    case DLASIM_RT_OP_BDMA: {
        struct dlasim_rt_bdma_surface *s = &op->surface.bdma;
        s->source_type = u8(&c);
        s->destination_type = u8(&c);
        s->num_transfers = u16(&c);
        for (int i = 0; i < DLASIM_RT_BDMA_MAX_TRANSFERS; i++) {
            struct dlasim_rt_bdma_transfer *t = &s->transfers[i];
            t->source_address = s16(&c);
            t->destination_address = s16(&c);
            t->line_size = u32(&c);
            t->line_repeat = u32(&c);
            t->source_line = u32(&c);
            t->destination_line = u32(&c);
            t->surface_repeat = u32(&c);
            t->source_surface = u32(&c);
            t->destination_surface = u32(&c);
        }
        break;
    }
    default: /* PDP, CDP, RUBIK */
        cube(&c, v12, &op->surface.io.src_data);
        cube(&c, v12, &op->surface.io.dst_data);
        break;
    }
}

void nvrt_decode_lut(const uint8_t *p, struct dlasim_rt_lut *l)
{
    struct cur c = { p, NVRT_LUT_SIZE, 0 };
    for (int i = 0; i < 65; i++) {
        l->linear_exp_table[i] = s16(&c);
    }
    for (int i = 0; i < 257; i++) {
        l->linear_only_table[i] = s16(&c);
    }
    l->linear_exp_offset = (int8_t)u8(&c);
    skip(&c, 1);
    l->linear_only_offset = (int8_t)u8(&c);
    skip(&c, 1);
    l->linear_exp_start = u64(&c);
    l->linear_exp_end = u64(&c);
    l->linear_only_start = u64(&c);
    l->linear_only_end = u64(&c);
    int16_t *scales[4] = { &l->le_uflow_scale, &l->le_oflow_scale, &l->lo_uflow_scale,
                           &l->lo_oflow_scale };
    int8_t *shifts[4] = { &l->le_uflow_shift, &l->le_oflow_shift, &l->lo_uflow_shift,
                          &l->lo_oflow_shift };
    for (int i = 0; i < 4; i++) {
        *scales[i] = s16(&c);
        *shifts[i] = (int8_t)u8(&c);
        skip(&c, 1);
    }
    l->hybrid_priority = u8(&c);
    l->underflow_priority = u8(&c);
    l->overflow_priority = u8(&c);
    l->method = u8(&c);
}
