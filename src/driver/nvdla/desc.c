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

#include "driver/nvdla/desc.h"

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

/* ---- encoding (the inverse, for the loadable writer) ------------------------ */

struct out {
    uint8_t *p;
    size_t len, pos;
};

static void put(struct out *c, unsigned n, uint64_t v)
{
    for (unsigned i = 0; i < n; i++) {
        if (c->pos + i < c->len) {
            c->p[c->pos + i] = (uint8_t)(v >> (8 * i));
        }
    }
    c->pos += n;
}
static void put_u8(struct out *c, uint64_t v) { put(c, 1, v); }
static void put_u16(struct out *c, uint64_t v) { put(c, 2, v); }
static void put_s16(struct out *c, uint64_t v) { put(c, 2, v); }
static void put_u32(struct out *c, uint64_t v) { put(c, 4, v); }
static void put_s32(struct out *c, uint64_t v) { put(c, 4, v); }
static void put_u64(struct out *c, uint64_t v) { put(c, 8, v); }
static void pad(struct out *c, size_t n)
{
    put(c, (unsigned)n, 0);
}

static void enc_cube(struct out *c, int v12, const struct dlasim_rt_cube *d)
{
    put_u16(c, (uint64_t)d->type);
    put_s16(c, (uint64_t)d->address);
    if (v12) {
        put_u32(c, d->offset);
    }
    put_u32(c, (uint64_t)d->size);
    put_u16(c, (uint64_t)d->width);
    put_u16(c, (uint64_t)d->height);
    put_u16(c, (uint64_t)d->channel);
    pad(c, 2);
    put_u32(c, (uint64_t)d->line_stride);
    put_u32(c, (uint64_t)d->surf_stride);
    put_u32(c, (uint64_t)d->plane_stride);
}

static void enc_cvt(struct out *c, const struct dlasim_rt_cvt *d)
{
    put_s16(c, (uint64_t)d->scale);
    put_u8(c, (uint64_t)d->truncate);
    put_u8(c, (uint64_t)d->enable);
    put_s32(c, (uint64_t)d->offset);
}

void nvrt_encode_network(uint8_t *p, const struct nvrt_network_desc *n)
{
    struct out c = { p, NVRT_NETWORK_DESC_SIZE, 0 };
    put_s16(&c, (uint64_t)n->operation_desc_index);
    put_s16(&c, (uint64_t)n->surface_desc_index);
    put_s16(&c, (uint64_t)n->dependency_graph_index);
    put_s16(&c, (uint64_t)n->lut_data_index);
    put_s16(&c, (uint64_t)n->roi_array_index);
    put_s16(&c, (uint64_t)n->surface_index);
    put_s16(&c, (uint64_t)n->stat_list_index);
    pad(&c, 2);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        put_s16(&c, (uint64_t)n->op_head[i]);
    }
    put_u16(&c, (uint64_t)n->num_rois);
    put_u16(&c, (uint64_t)n->num_operations);
    put_u16(&c, (uint64_t)n->num_luts);
    put_u16(&c, (uint64_t)n->num_addresses);
    put_s16(&c, (uint64_t)n->input_layer);
    put_u8(&c, (uint64_t)n->dynamic_roi);
}

void nvrt_encode_dep(uint8_t *p, uint16_t index, const struct dlasim_rt_op *op)
{
    struct out c = { p, NVRT_DEP_SIZE, 0 };
    put_u16(&c, index);
    put_u8(&c, 0); /* roi_index */
    put_u8(&c, (uint64_t)op->op_type);
    put_u8(&c, (uint64_t)op->dependency_count);
    pad(&c, 3);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        put_s16(&c, (uint64_t)op->consumers[i].index);
        put_u8(&c, (uint64_t)op->consumers[i].event);
        pad(&c, 1);
    }
    put_s16(&c, (uint64_t)op->fused_parent.index);
    put_u8(&c, (uint64_t)op->fused_parent.event);
}

static void enc_conv_op(struct out *c, const struct dlasim_rt_conv_op *o)
{
    put_u8(c, (uint64_t)o->conv_mode);
    put_u8(c, (uint64_t)o->data_reuse);
    put_u8(c, (uint64_t)o->weight_reuse);
    put_u8(c, (uint64_t)o->skip_data_rls);
    put_u8(c, (uint64_t)o->skip_weight_rls);
    pad(c, 1);
    put_u16(c, (uint64_t)o->entry_per_slice);
    put_u8(c, (uint64_t)o->data_format);
    put_u8(c, (uint64_t)o->pixel_mapping);
    put_u16(c, (uint64_t)o->fetch_grain);
    pad(c, 8);
    put_u8(c, (uint64_t)o->batch);
    put_u8(c, (uint64_t)o->weight_format);
    put_u8(c, (uint64_t)o->data_bank);
    put_u8(c, (uint64_t)o->weight_bank);
    put_u32(c, (uint64_t)o->batch_stride);
    put_u8(c, (uint64_t)o->post_extension);
    put_u8(c, (uint64_t)o->pixel_override);
    put_u16(c, (uint64_t)o->release);
    put_u16(c, (uint64_t)o->input_width_csc);
    put_u16(c, (uint64_t)o->input_height_csc);
    put_u16(c, (uint64_t)o->input_channel_csc);
    put_u16(c, (uint64_t)o->kernel_width_csc);
    put_u16(c, (uint64_t)o->kernel_height_csc);
    put_u16(c, (uint64_t)o->kernel_channel_csc);
    put_u16(c, (uint64_t)o->input_width_cmac);
    put_u16(c, (uint64_t)o->input_height_cmac);
    put_u32(c, (uint64_t)o->bytes_per_kernel);
    put_s16(c, (uint64_t)o->mean_ry);
    put_s16(c, (uint64_t)o->mean_gu);
    put_s16(c, (uint64_t)o->mean_bv);
    put_s16(c, (uint64_t)o->mean_ax);
    put_u8(c, (uint64_t)o->mean_format);
    put_u8(c, (uint64_t)o->conv_stride_x);
    put_u8(c, (uint64_t)o->conv_stride_y);
    put_u8(c, (uint64_t)o->pad_x_left);
    put_u8(c, (uint64_t)o->pad_x_right);
    put_u8(c, (uint64_t)o->pad_y_top);
    put_u8(c, (uint64_t)o->pad_y_bottom);
    put_u8(c, (uint64_t)o->dilation_x);
    put_u8(c, (uint64_t)o->dilation_y);
    pad(c, 2);
    put_u8(c, (uint64_t)o->pra_truncate);
    put_u8(c, (uint64_t)o->in_precision);
    put_u8(c, (uint64_t)o->out_precision);
    put_s16(c, (uint64_t)o->pad_val);
    enc_cvt(c, &o->in_cvt);
    enc_cvt(c, &o->out_cvt);
}

static void enc_sdp_stage(struct out *c, const struct dlasim_rt_sdp_stage *s)
{
    put_u8(c, (uint64_t)s->enable);
    put_u8(c, (uint64_t)s->alu_type);
    put_u8(c, (uint64_t)s->type);
    put_u8(c, (uint64_t)s->mode);
    put_u8(c, (uint64_t)s->act);
    put_u8(c, (uint64_t)s->shift_value);
    put_u8(c, (uint64_t)s->truncate);
    put_u8(c, (uint64_t)s->precision);
    put_s32(c, (uint64_t)s->alu_operand);
    put_s32(c, (uint64_t)s->mul_operand);
    enc_cvt(c, &s->alu_cvt);
    enc_cvt(c, &s->mul_cvt);
}

static void enc_sdp_op(struct out *c, const struct dlasim_rt_sdp_op *o)
{
    put_u8(c, (uint64_t)o->src_precision);
    put_u8(c, (uint64_t)o->dst_precision);
    put_s16(c, (uint64_t)o->lut_index);
    enc_cvt(c, &o->out_cvt);
    put_u8(c, (uint64_t)o->conv_mode);
    put_u8(c, (uint64_t)o->batch_num);
    pad(c, 2);
    put_u32(c, (uint64_t)o->batch_stride);
    enc_sdp_stage(c, &o->x1_op);
    enc_sdp_stage(c, &o->x2_op);
    enc_sdp_stage(c, &o->y_op);
}

static void enc_pdp_op(struct out *c, const struct dlasim_rt_pdp_op *o)
{
    put_u16(c, (uint64_t)o->partial_in_width_first);
    put_u16(c, (uint64_t)o->partial_in_width_mid);
    put_u16(c, (uint64_t)o->partial_in_width_last);
    put_u16(c, (uint64_t)o->partial_width_first);
    put_u16(c, (uint64_t)o->partial_width_mid);
    put_u16(c, (uint64_t)o->partial_width_last);
    put_u8(c, (uint64_t)o->split_num);
    put_u8(c, (uint64_t)o->pool_mode);
    put_u8(c, (uint64_t)o->pool_width);
    put_u8(c, (uint64_t)o->pool_height);
    put_u8(c, (uint64_t)o->stride_x);
    put_u8(c, (uint64_t)o->stride_y);
    put_u8(c, (uint64_t)o->pad_left);
    put_u8(c, (uint64_t)o->pad_right);
    put_u8(c, (uint64_t)o->pad_top);
    put_u8(c, (uint64_t)o->pad_bottom);
    put_u8(c, (uint64_t)o->precision);
    pad(c, 1);
    for (int i = 0; i < 7; i++) {
        put_s32(c, (uint64_t)o->padding_value[i]);
    }
}

static void enc_cdp_op(struct out *c, const struct dlasim_rt_cdp_op *o)
{
    put_u8(c, (uint64_t)o->in_precision);
    put_u8(c, (uint64_t)o->out_precision);
    put_s16(c, (uint64_t)o->lut_index);
    enc_cvt(c, &o->in_cvt);
    enc_cvt(c, &o->out_cvt);
    put_u8(c, (uint64_t)o->local_size);
    put_u8(c, (uint64_t)o->bypass_sqsum);
    put_u8(c, (uint64_t)o->bypass_out_mul);
}

void nvrt_encode_op(uint8_t *p, const struct dlasim_rt_op *op)
{
    struct out c = { p, NVRT_OP_DESC_SIZE, 0 };
    switch (op->op_type) {
    case DLASIM_RT_OP_CONV:
        enc_conv_op(&c, &op->op.conv);
        break;
    case DLASIM_RT_OP_SDP:
        enc_sdp_op(&c, &op->op.sdp);
        break;
    case DLASIM_RT_OP_PDP:
        enc_pdp_op(&c, &op->op.pdp);
        break;
    case DLASIM_RT_OP_CDP:
        enc_cdp_op(&c, &op->op.cdp);
        break;
    case DLASIM_RT_OP_RUBIK:
        put_u8(&c, (uint64_t)op->op.rubik.mode);
        put_u8(&c, (uint64_t)op->op.rubik.precision);
        put_u8(&c, (uint64_t)op->op.rubik.stride_x);
        put_u8(&c, (uint64_t)op->op.rubik.stride_y);
        break;
    default:
        put_u16(&c, (uint64_t)op->op.bdma_num_transfers);
        break;
    }
}

void nvrt_encode_surface(uint8_t *p, int v12, const struct dlasim_rt_op *op)
{
    struct out c = { p, NVRT_SURFACE_DESC_SIZE, 0 };
    switch (op->op_type) {
    case DLASIM_RT_OP_CONV: {
        const struct dlasim_rt_conv_surface *s = &op->surface.conv;
        enc_cube(&c, v12, &s->weight_data);
        enc_cube(&c, v12, &s->wmb_data);
        enc_cube(&c, v12, &s->wgs_data);
        enc_cube(&c, v12, &s->src_data);
        enc_cube(&c, v12, &s->dst_data);
        put_u64(&c, (uint64_t)s->offset_u);
        put_u32(&c, (uint64_t)s->in_line_uv_stride);
        break;
    }
    case DLASIM_RT_OP_SDP: {
        const struct dlasim_rt_sdp_surface *s = &op->surface.sdp;
        enc_cube(&c, v12, &s->src_data);
        enc_cube(&c, v12, &s->x1_data);
        enc_cube(&c, v12, &s->x2_data);
        enc_cube(&c, v12, &s->y_data);
        enc_cube(&c, v12, &s->dst_data);
        break;
    }
    case DLASIM_RT_OP_BDMA: {
        const struct dlasim_rt_bdma_surface *s = &op->surface.bdma;
        put_u8(&c, (uint64_t)s->source_type);
        put_u8(&c, (uint64_t)s->destination_type);
        put_u16(&c, (uint64_t)s->num_transfers);
        for (int i = 0; i < DLASIM_RT_BDMA_MAX_TRANSFERS; i++) {
            const struct dlasim_rt_bdma_transfer *t = &s->transfers[i];
            put_s16(&c, (uint64_t)t->source_address);
            put_s16(&c, (uint64_t)t->destination_address);
            put_u32(&c, (uint64_t)t->line_size);
            put_u32(&c, (uint64_t)t->line_repeat);
            put_u32(&c, (uint64_t)t->source_line);
            put_u32(&c, (uint64_t)t->destination_line);
            put_u32(&c, (uint64_t)t->surface_repeat);
            put_u32(&c, (uint64_t)t->source_surface);
            put_u32(&c, (uint64_t)t->destination_surface);
        }
        break;
    }
    default: /* PDP, CDP, RUBIK */
        enc_cube(&c, v12, &op->surface.io.src_data);
        enc_cube(&c, v12, &op->surface.io.dst_data);
        break;
    }
}

void nvrt_encode_lut(uint8_t *p, const struct dlasim_rt_lut *l)
{
    struct out c = { p, NVRT_LUT_SIZE, 0 };
    for (int i = 0; i < 65; i++) {
        put_s16(&c, (uint64_t)l->linear_exp_table[i]);
    }
    for (int i = 0; i < 257; i++) {
        put_s16(&c, (uint64_t)l->linear_only_table[i]);
    }
    put_u8(&c, (uint64_t)l->linear_exp_offset);
    pad(&c, 1);
    put_u8(&c, (uint64_t)l->linear_only_offset);
    pad(&c, 1);
    put_u64(&c, (uint64_t)l->linear_exp_start);
    put_u64(&c, (uint64_t)l->linear_exp_end);
    put_u64(&c, (uint64_t)l->linear_only_start);
    put_u64(&c, (uint64_t)l->linear_only_end);
    const int16_t *scales[4] = { &l->le_uflow_scale, &l->le_oflow_scale, &l->lo_uflow_scale,
                           &l->lo_oflow_scale };
    const int8_t *shifts[4] = { &l->le_uflow_shift, &l->le_oflow_shift, &l->lo_uflow_shift,
                          &l->lo_oflow_shift };
    for (int i = 0; i < 4; i++) {
        put_s16(&c, (uint64_t)*scales[i]);
        put_u8(&c, (uint64_t)*shifts[i]);
        pad(&c, 1);
    }
    put_u8(&c, (uint64_t)l->hybrid_priority);
    put_u8(&c, (uint64_t)l->underflow_priority);
    put_u8(&c, (uint64_t)l->overflow_priority);
    put_u8(&c, (uint64_t)l->method);
}
